#!/usr/bin/python3
"""Rate and distortion of HEIF encoder settings on real photos (issue 58), for choosing
the effort Darkroom's HEIC and AVIF edits are written at (ImageFormat.editEffort).

For each photo, each setting and each quality: libheif's heif-enc encodes the photo (as
Darkroom and libvips do, through libheif: RGB in, chroma 4:4:4 at quality 90 and above, else
4:2:0, as libvips chooses), libvips decodes it, and ffmpeg's SSIM (all planes) compares it
with the photo. Each setting's points make a curve of SSIM against log(bytes); a setting's
deficit at one quality is how much lower its SSIM is than the reference setting's curve at
the same bytes (interpolated between the reference's qualities). The reference is what
libvips writes by default: aom's speed 5 (its effort 4) for AVIF, x265's `slow` (libheif's
default preset) for HEIC. Encode time is heif-enc's own (the PNG read is not counted).

Usage: encoder_rd.py PHOTOS_DIR RESULTS.json [avif|heic ...]
Results are kept in RESULTS.json, so an interrupted run goes on where it stopped.
"""
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict

PHOTOS = ["kleiber", "boats", "cups"]  # each also as "-noir" (a noir edit's pixels)
MEGAPIXELS = 4032 * 3024 / 1e6  # as common.sh's real_photos makes them
PLANS = {
    "avif": {
        "settings": ["speed=9", "speed=8", "speed=7", "speed=6", "speed=5"],
        "reference": "speed=5",
        "qualities": [45, 55, 65, 75, 85, 92],
    },
    "heic": {
        # x265's fast, faster and veryfast differ only in how they predict between frames:
        # for a still picture they write the same bytes.
        "settings": ["preset=ultrafast", "preset=superfast", "preset=veryfast", "preset=medium",
                     "preset=slow"],
        "reference": "preset=slow",
        "qualities": [45, 65, 85, 92],
    },
}


def ssim(a, b):
    run = subprocess.run(["ffmpeg", "-nostats", "-i", a, "-i", b, "-lavfi", "ssim", "-f", "null",
                          "-"], capture_output=True, text=True, check=True)
    return float(re.search(r"All:([0-9.]+)", run.stderr).group(1))


def encode(photo, kind, setting, quality, scratch):
    out = os.path.join(scratch, "out." + kind)
    args = ["heif-enc", "--benchmark", "-q", str(quality), "-p", setting, "-o", out, photo]
    if kind == "avif":
        args.insert(1, "-A")
    if quality >= 90:
        args[1:1] = ["-p", "chroma=444"]
    run = subprocess.run(args, capture_output=True, text=True, check=True)
    seconds = float(re.search(r"time: ([0-9.]+)", run.stdout + run.stderr).group(1))
    decoded = os.path.join(scratch, "decoded.png")
    subprocess.run(["vips", "copy", out, decoded], capture_output=True, check=True)
    return os.path.getsize(out), ssim(decoded, photo), seconds


def measure(folder, results_path, kinds):
    results = json.load(open(results_path)) if os.path.exists(results_path) else []
    done = {(r["kind"], r["photo"], r["setting"], r["q"]) for r in results}
    with tempfile.TemporaryDirectory() as scratch:
        for kind in kinds:
            plan = PLANS[kind]
            for name in [p + suffix for p in PHOTOS for suffix in ("", "-noir")]:
                for setting in plan["settings"]:
                    for q in plan["qualities"]:
                        if (kind, name, setting, q) in done:
                            continue
                        photo = os.path.join(folder, name + ".png")
                        size, score, seconds = encode(photo, kind, setting, q, scratch)
                        row = dict(kind=kind, photo=name, setting=setting, q=q, bytes=size,
                                   ssim=score, seconds=seconds)
                        print(f"  {kind} {name} {setting} Q{q}: {size} bytes, SSIM {score:.6f}, "
                              f"{seconds:.1f} s", file=sys.stderr, flush=True)
                        results.append(row)
                        with open(results_path + ".tmp", "w") as out:
                            json.dump(results, out, indent=0)
                        os.replace(results_path + ".tmp", results_path)
    return results


def at_bytes(curve, size):
    """The curve's SSIM at `size` bytes: linear in log(bytes) between its neighbours."""
    points = sorted((math.log(p["bytes"]), p["ssim"]) for p in curve)
    x = math.log(size)
    pairs = list(zip(points, points[1:]))
    (x0, y0), (x1, y1) = next(((a, b) for a, b in pairs if a[0] <= x <= b[0]),
                              pairs[0] if x < points[0][0] else pairs[-1])
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def report(results, kinds):
    for kind in kinds:
        plan = PLANS[kind]
        rows = [r for r in results if r["kind"] == kind]
        curves = defaultdict(list)
        for r in rows:
            curves[(r["photo"], r["setting"])].append(r)
        qs = plan["qualities"]
        print(f"\n{kind.upper()}: SSIM deficit against {plan['reference']} at the same bytes, "
              f"worst of {len({r['photo'] for r in rows})} photos at each quality; encode "
              "seconds, median (max); the most seconds per megapixel at the qualities phones "
              "write (45-65)")
        print(f"{'setting':<18}" + "".join(f"{'Q' + str(q):>9}" for q in qs)
              + f"{'worst':>9}{'mean':>9}   seconds     s/MP")
        for setting in plan["settings"]:
            deficits, seconds, phone = defaultdict(list), [], []
            for (photo, name), curve in curves.items():
                if name != setting:
                    continue
                for p in curve:
                    reference = curves[(photo, plan["reference"])]
                    deficits[p["q"]].append(at_bytes(reference, p["bytes"]) - p["ssim"])
                    seconds.append(p["seconds"])
                    if 45 <= p["q"] <= 65:
                        phone.append(p["seconds"] / MEGAPIXELS)
            if not seconds:
                continue
            every = [d for ds in deficits.values() for d in ds]
            print(f"{setting:<18}"
                  + "".join(f"{max(deficits[q]):>+9.4f}" if deficits[q] else f"{'-':>9}"
                            for q in qs)
                  + f"{max(every):>+9.4f}{statistics.mean(every):>+9.4f}   "
                  + f"{statistics.median(seconds):.1f} ({max(seconds):.1f})".ljust(12)
                  + (f"{max(phone):.2f}" if phone else "-"))


if __name__ == "__main__":
    folder, results_path = sys.argv[1], sys.argv[2]
    kinds = sys.argv[3:] or ["avif", "heic"]
    report(measure(folder, results_path, kinds), kinds)
