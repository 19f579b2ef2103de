"""Auto on real photos (issue 54): each photo as shot and in six damaged versions (two stops
under, one and a half over, a warm, a cool, a green and a tungsten cast, each made in linear
light), edited
with `darkroom edit --filter auto`, and measured as the issue asks:

- under and over: the 2nd-98th percentile of the encoded luminance spans at least 80% of the
  range after Auto (the version's span before, and the photo's own, are printed beside it);
- the casts: the cast falls by at least 70%: the cast the version added (the distance in CIE
  1976 u'v' between its mean linear colour and the photo's) against what is left of it after
  Auto (the distance between Auto's result of the version and Auto's result of the photo, so
  that Auto's tone changes, made to both, are not counted as a cast); beside it the grey-world cast (the mean's distance from D65), which the issue names,
  and which Auto cannot take away from a photo whose own colour is far from grey (a blue sky, a
  forest, a sunset) without taking that colour too;
- as shot: the mean CIEDE2000 between Auto's result and the photo is under 2.

Usage: /opt/darkroom-test-python/bin/python auto.py PHOTOS_DIR WORK_DIR DARKROOM
PHOTOS_DIR holds the photos as PNGs; each row is a photo. Prints a table and exits 1 when a goal
is missed. Needs numpy and the vips command."""

import json
import os
import subprocess
import sys

import numpy as np

VERSIONS = {
    "under": ("exposure", 0.25),
    "over": ("exposure", 2 ** 1.5),
    "warm": ("cast", (1.25, 1.0, 0.72)),
    "cool": ("cast", (0.8, 0.97, 1.25)),
    "green": ("cast", (0.88, 1.1, 0.9)),
    "tungsten": ("cast", (1.55, 1.0, 0.5)),
}
CASTS = ["warm", "cool", "green", "tungsten"]
D65 = np.array([0.19784, 0.46832])  # u', v'
RGB_TO_XYZ = np.array(
    [[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]
)


def read(path, scratch):
    """8-bit RGB pixels of an image file, through vips (PPM)."""
    ppm = os.path.join(scratch, "read.ppm")
    subprocess.run(["vips", "copy", path, ppm], check=True)
    with open(ppm, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:  # magic, width, height, maxval, with comments skipped
        while data[pos : pos + 1].isspace():
            pos += 1
        if data[pos : pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while not data[end : end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P6" or fields[3] != b"255":
        sys.exit(f"{path}: not 8-bit RGB ({fields[0].decode()}, maxval {fields[3].decode()})")
    width, height = int(fields[1]), int(fields[2])
    pixels = np.frombuffer(data, np.uint8, width * height * 3, pos + 1)
    return pixels.reshape(height, width, 3)


def write(path, rgb, scratch):
    ppm = os.path.join(scratch, "write.ppm")
    with open(ppm, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (rgb.shape[1], rgb.shape[0]))
        f.write(np.ascontiguousarray(rgb).tobytes())
    subprocess.run(["vips", "copy", ppm, path], check=True)


def decode(rgb):
    v = rgb.astype(np.float64) / 255
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def encode(linear):
    v = np.clip(linear, 0, 1)
    encoded = np.where(v <= 0.0031308, v * 12.92, 1.055 * v ** (1 / 2.4) - 0.055)
    return np.clip(np.round(encoded * 255), 0, 255).astype(np.uint8)


def span(rgb):
    y = decode(rgb) @ RGB_TO_XYZ[1]
    encoded = np.where(y <= 0.0031308, y * 12.92, 1.055 * np.clip(y, 0, 1) ** (1 / 2.4) - 0.055)
    low, high = np.percentile(encoded, [2, 98])
    return high - low


def chromaticity(mean_linear):
    x, y, z = RGB_TO_XYZ @ mean_linear
    d = x + 15 * y + 3 * z
    return np.array([4 * x / d, 9 * y / d])


def cast(rgb):
    """The grey-world cast: u'v' distance of the mean linear colour from D65's."""
    return float(np.linalg.norm(chromaticity(decode(rgb).reshape(-1, 3).mean(0)) - D65))


def shift(rgb, reference):
    """u'v' distance between two images' mean linear colours."""
    a = chromaticity(decode(rgb).reshape(-1, 3).mean(0))
    b = chromaticity(decode(reference).reshape(-1, 3).mean(0))
    return float(np.linalg.norm(a - b))


def lab(rgb):
    xyz = decode(rgb).reshape(-1, 3) @ RGB_TO_XYZ.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], 1)


def ciede2000(lab1, lab2):
    l1, a1, b1 = lab1.T
    l2, a2, b2 = lab2.T
    c1, c2 = np.hypot(a1, b1), np.hypot(a2, b2)
    cm7 = ((c1 + c2) / 2) ** 7
    g = 0.5 * (1 - np.sqrt(cm7 / (cm7 + 25.0**7)))
    a1p, a2p = a1 * (1 + g), a2 * (1 + g)
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360
    dl, dc = l2 - l1, c2p - c1p
    dh = h2p - h1p
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(c1p * c2p == 0, 0, dh)
    dhh = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    lm, cm = (l1 + l2) / 2, (c1p + c2p) / 2
    hs = h1p + h2p
    hm = np.where(
        c1p * c2p == 0,
        hs,
        np.where(np.abs(h1p - h2p) <= 180, hs / 2, np.where(hs < 360, (hs + 360) / 2, (hs - 360) / 2)),
    )
    t = (
        1
        - 0.17 * np.cos(np.radians(hm - 30))
        + 0.24 * np.cos(np.radians(2 * hm))
        + 0.32 * np.cos(np.radians(3 * hm + 6))
        - 0.20 * np.cos(np.radians(4 * hm - 63))
    )
    sl = 1 + 0.015 * (lm - 50) ** 2 / np.sqrt(20 + (lm - 50) ** 2)
    sc, sh = 1 + 0.045 * cm, 1 + 0.015 * cm * t
    cm7p = cm**7
    rt = -2 * np.sqrt(cm7p / (cm7p + 25.0**7)) * np.sin(np.radians(60 * np.exp(-(((hm - 275) / 25) ** 2))))
    return np.sqrt((dl / sl) ** 2 + (dc / sc) ** 2 + (dhh / sh) ** 2 + rt * (dc / sc) * (dhh / sh))


def damaged(rgb, kind, value):
    linear = decode(rgb)
    if kind == "exposure":
        return encode(linear * value)
    return encode(linear * np.array(value))


def main():
    photos_dir, work, darkroom = sys.argv[1:4]
    scratch = os.path.join(work, "scratch")
    edits = os.path.join(work, "edits")
    os.makedirs(scratch, exist_ok=True)
    names = sorted(n[:-4] for n in os.listdir(photos_dir) if n.endswith(".png"))
    photos = {n: read(os.path.join(photos_dir, n + ".png"), scratch) for n in names}

    # Every version of every photo, edited in one run (a fresh folder: no earlier edit).
    subprocess.run(["rm", "-rf", edits], check=True)
    os.makedirs(edits)
    files = []
    for name, rgb in photos.items():
        for version, (kind, value) in [("shot", ("exposure", 1.0))] + list(VERSIONS.items()):
            path = os.path.join(edits, f"{name}-{version}.png")
            write(path, rgb if version == "shot" else damaged(rgb, kind, value), scratch)
            files.append(path)
    before = {f: read(f, scratch) for f in files}
    out = subprocess.run(
        [darkroom, "edit", "--filter", "auto", "--json", *files],
        check=True, capture_output=True, text=True,
    ).stdout
    chosen = {}
    for line in out.splitlines():
        doc = json.loads(line)
        nodes = doc.get("graph", {}).get("nodes", [])
        summary = []
        for node in nodes:
            params = " ".join(
                f"{k}={v:g}" for k, v in sorted(node["params"].items()) if v != 0
            )
            summary.append(f"{node['op']} {params}".strip())
        chosen[doc["original"]["fileName"]] = " | ".join(summary) or "(nothing)"

    missed = []
    rows = []
    print("photo          as shot: dE00   under and over: span (the photo's) -> after   "
          "warm, cool, green, tungsten: the cast added -> left (fall), grey world -> after")
    for name, rgb in photos.items():
        after = {v: read(os.path.join(edits, f"{name}-{v}.png"), scratch) for v in ["shot", *VERSIONS]}
        de = float(ciede2000(lab(rgb), lab(after["shot"])).mean())
        if de >= 2:
            missed.append(f"{name} as shot: mean dE00 {de:.2f}")
        cells = [f"{de:5.2f}"]
        row = {"photo": name, "shot_de00": de, "photo_span": span(rgb)}
        for version in ["under", "over"]:
            s0 = span(before[os.path.join(edits, f"{name}-{version}.png")])
            s1 = span(after[version])
            row[version] = {"span_before": s0, "span_after": s1}
            cells.append(f"{s0:.2f} ({row['photo_span']:.2f}) -> {s1:.2f}")
            if s1 < 0.8:
                missed.append(f"{name} {version}: span {s1:.2f}")
        for version in CASTS:
            damaged_version = before[os.path.join(edits, f"{name}-{version}.png")]
            added, left = shift(damaged_version, rgb), shift(after[version], after["shot"])
            fall = 1 - left / added
            c0, c1 = cast(damaged_version), cast(after[version])
            row[version] = {
                "cast_added": added, "cast_left": left, "fall": fall,
                "grey_world_before": c0, "grey_world_after": c1,
            }
            cells.append(f"{added:.3f}->{left:.3f} ({fall:4.0%}) {c0:.3f}->{c1:.3f}")
            if fall < 0.7:
                missed.append(f"{name} {version}: the cast fell {fall:.0%}")
        row["chosen"] = {v: chosen.get(f"{name}-{v}.png", "?") for v in ["shot", *VERSIONS]}
        rows.append(row)
        print(f"{name:14} {'   '.join(cells)}")
    print()
    print("What Auto chose:")
    for row in rows:
        for version, text in row["chosen"].items():
            print(f"  {row['photo']}-{version}: {text}")
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump(rows, f, indent=1)
    total = len(rows) * (3 + len(CASTS))
    print()
    print(f"goals met: {total - len(missed)} of {total}")
    for line in missed:
        print(f"  missed: {line}")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
