#!/usr/bin/env python3
"""Makes small test DNGs (a Bayer mosaic, with and without an embedded JPEG preview) and checks
them with rawpy (LibRaw). Run: python3 Samples/make-dngs.py OUTDIR

Needs numpy, pidng and rawpy from PyPI and libvips-tools' vips (for the preview JPEG); exiftool,
when present, checks the previews too. Deterministic: the same bytes on every run.

  mosaic.dng           the raw CFA image in IFD0, Orientation 1, no preview
  mosaic-orient6.dng   the same mosaic, Orientation 6 (turn 90 degrees clockwise to show)
  preview.dng          IFD0 a 600x400 JPEG preview (NewSubFileType 1), the raw in its SubIFD
  preview-orient6.dng  the same, Orientation 6 (the preview is stored like the raw, unturned)
  dngs.json            each file's sizes, orientation and preview, and sample boxes in display
                       coordinates with the scene's sRGB colour and what rawpy showed there

The stored scene, 600x400: left half red-orange, right half blue, a grey band over the middle
third of the rows, and a white square near the top-left corner, so every turn and mirror shows.
The raw is 12-bit in 16-bit samples, RGGB, black 64, white 4095. The camera's primaries are
sRGB's (ColorMatrix1 is XYZ to linear sRGB, D65) and AsShotNeutral is (0.5, 1, 0.75), so the
colours come out right only with the camera's white balance (rawpy's use_camera_wb=True).
pidng's RAW2DNG writes one IFD (no SubIFD, so no preview) holding the raw as one 600-wide tile,
so the files are laid out here, with pidng's tag table and value packing (Tag, dngTag).
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import rawpy
from pidng.dng import Tag, Type, dngTag

WIDTH, HEIGHT, BLACK, WHITE = 600, 400, 64, 4095
NEUTRAL = [(1, 2), (1, 1), (3, 4)]  # AsShotNeutral, as rationals
XYZ_TO_SRGB = [3.2404542, -1.5371385, -0.4985314, -0.9692660, 1.8760108, 0.0415560,
               0.0556434, -0.2040259, 1.0572252]  # ColorMatrix1 (D65)
COLOURS = {"left": (225, 90, 40), "right": (40, 90, 210), "band": (128, 128, 128),
           "marker": (255, 255, 255)}
BOXES = {"left": (100, 300, 200, 380), "right": (400, 300, 500, 380),  # x0, y0, x1, y1 (end
         "band": (100, 170, 500, 230), "marker": (35, 35, 85, 85)}     # excluded), stored
SUBIFDS, YCBCR_SUBSAMPLING = (330, Type.Long), (530, Type.Short)  # (pidng's SubIFD type breaks)
FILES = [("mosaic.dng", 1, False), ("mosaic-orient6.dng", 6, False),
         ("preview.dng", 1, True), ("preview-orient6.dng", 6, True)]


def scene():
    image = np.empty((HEIGHT, WIDTH, 3), np.uint8)
    image[:, :WIDTH // 2], image[:, WIDTH // 2:] = COLOURS["left"], COLOURS["right"]
    image[HEIGHT // 3:2 * HEIGHT // 3] = COLOURS["band"]
    image[20:100, 20:100] = COLOURS["marker"]
    return image


def mosaic(image):
    """The RGGB sensor data of an sRGB image: linear light times the as-shot neutral."""
    v = image / 255.0
    linear = np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)
    camera = BLACK + np.rint(linear * [n / d for n, d in NEUTRAL] * (WHITE - BLACK))
    cfa = np.empty(image.shape[:2], np.uint16)
    cfa[0::2, 0::2], cfa[0::2, 1::2] = camera[0::2, 0::2, 0], camera[0::2, 1::2, 1]
    cfa[1::2, 0::2], cfa[1::2, 1::2] = camera[1::2, 0::2, 1], camera[1::2, 1::2, 2]
    return cfa


def jpeg(image):
    """A baseline 4:2:0 JPEG of the image, through vips (no metadata)."""
    with tempfile.TemporaryDirectory() as tmp:
        ppm, out = os.path.join(tmp, "in.ppm"), os.path.join(tmp, "out.jpg")
        with open(ppm, "wb") as f:
            f.write(b"P6 %d %d 255\n" % (image.shape[1], image.shape[0]) + image.tobytes())
        subprocess.run(["vips", "jpegsave", ppm, out, "--Q", "90", "--strip",
                        "--subsample-mode", "on"], check=True)
        with open(out, "rb") as f:
            return f.read()


def ifd_bytes(entries, at):
    """A little-endian IFD at file offset `at` (a multiple of 4), its long values after it.
    `entries` are (pidng tag, value) pairs; the next-IFD link is 0 (DNG uses SubIFD trees)."""
    tags = sorted((dngTag(t, [v] if isinstance(v, int) else v) for t, v in entries),
                  key=lambda t: t.TagId)
    head, data = struct.pack("<H", len(tags)), b""
    data_at = at + (2 + 12 * len(tags) + 4 + 3) // 4 * 4
    for t in tags:  # dngTag.Value is packed and padded to 4 bytes
        inline = len(t.Value) <= 4
        head += struct.pack("<HHI", t.TagId, t.DataType[0], t.DataCount)
        head += t.Value if inline else struct.pack("<I", data_at + len(data))
        data += b"" if inline else t.Value
    return (head + b"\0" * 4).ljust(data_at - at, b"\0") + data


def dng(cfa, orientation, preview=None):
    """The DNG's bytes: header, IFD0 (and the raw's SubIFD), then the JPEG and the raw. The
    raw's size is the mosaic's, the preview's its JPEG's (Benchmarks/raw_dngs.py makes large
    ones)."""
    raw, (height, width) = cfa.astype("<u2").tobytes(), cfa.shape
    shown_width, shown_height = jpeg_size(preview) if preview else (0, 0)
    camera = [(Tag.Make, "Darkroom"), (Tag.Model, "Test Mosaic"), (Tag.Orientation, orientation),
              (Tag.Software, "Darkroom make-dngs.py"), (Tag.DateTime, "2024:06:01 12:00:00"),
              (Tag.DNGVersion, [1, 4, 0, 0]), (Tag.DNGBackwardVersion, [1, 1, 0, 0]),
              (Tag.UniqueCameraModel, "Darkroom Test Mosaic"), (Tag.CalibrationIlluminant1, 21),
              (Tag.ColorMatrix1, [(round(v * 10000), 10000) for v in XYZ_TO_SRGB]),
              (Tag.AsShotNeutral, NEUTRAL)]

    def ifds(sub_at, preview_at, raw_at):
        image = [(Tag.NewSubfileType, 0), (Tag.ImageWidth, width), (Tag.ImageLength, height),
                 (Tag.BitsPerSample, 16), (Tag.Compression, 1), (Tag.SamplesPerPixel, 1),
                 (Tag.PhotometricInterpretation, 32803), (Tag.PlanarConfiguration, 1),
                 (Tag.RowsPerStrip, height), (Tag.StripOffsets, raw_at),
                 (Tag.StripByteCounts, len(raw)), (Tag.CFARepeatPatternDim, [2, 2]),
                 (Tag.CFAPattern, [0, 1, 1, 2]), (Tag.CFAPlaneColor, [0, 1, 2]),
                 (Tag.CFALayout, 1), (Tag.BlackLevel, BLACK), (Tag.WhiteLevel, WHITE)]
        if preview is None:
            return [camera + image]
        shown = [(Tag.NewSubfileType, 1), (Tag.ImageWidth, shown_width),
                 (Tag.ImageLength, shown_height),
                 (Tag.BitsPerSample, [8, 8, 8]), (Tag.Compression, 7), (Tag.SamplesPerPixel, 3),
                 (Tag.PhotometricInterpretation, 6), (Tag.PlanarConfiguration, 1),
                 (Tag.RowsPerStrip, shown_height), (Tag.StripOffsets, preview_at),
                 (Tag.StripByteCounts, len(preview)), (YCBCR_SUBSAMPLING, [2, 2]),
                 (Tag.PreviewColorSpace, 2), (SUBIFDS, sub_at)]
        return [camera + shown, image]

    # Every offset is one inline LONG, so the sizes measured with zeros are the final ones.
    starts = [8]
    for entries in ifds(0, 0, 0):
        starts.append(starts[-1] + len(ifd_bytes(entries, starts[-1])))
    jpeg_bytes = (preview or b"") + b"\0" * (-len(preview or b"") % 4)
    final = ifds(starts[1], starts[-1], starts[-1] + len(jpeg_bytes))
    head = struct.pack("<2sHI", b"II", 42, 8)
    return head + b"".join(ifd_bytes(e, at) for e, at in zip(final, starts)) + jpeg_bytes + raw


def display_box(box, orientation):
    """A stored box in display coordinates (orientation 6: stored (x, y) shows at (H-1-y, x))."""
    x0, y0, x1, y1 = box
    return list(box) if orientation == 1 else [HEIGHT - y1, x0, HEIGHT - y0, x1]


def jpeg_size(data):
    """(width, height) from a JPEG's SOF marker."""
    at = 2
    while at < len(data):
        marker, length = data[at + 1], struct.unpack(">H", data[at + 2:at + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return width, height
        at += 2 + length
    return None


def mean(image, box):
    x0, y0, x1, y1 = box
    return [round(float(v)) for v in image[y0:y1, x0:x1].reshape(-1, 3).mean(0)]


def check(path, entry, preview):
    """Reads a file back with rawpy (and exiftool); records rawpy's colours; prints a row."""
    with rawpy.imread(path) as raw:
        s = raw.sizes
        assert (s.raw_width, s.raw_height, s.width, s.height) == (WIDTH, HEIGHT, WIDTH, HEIGHT)
        assert s.flip == {1: 0, 6: 6}[entry["orientation"]], s.flip
        rgb = raw.postprocess(use_camera_wb=True, output_bps=8)
        assert rgb.shape == (entry["display_height"], entry["display_width"], 3), rgb.shape
        # LibRaw's default output curve is BT.709's, darker than sRGB's in the mid-tones; with
        # sRGB's curve the scene's colours come back almost exactly.
        srgb = raw.postprocess(use_camera_wb=True, output_bps=8, gamma=(2.4, 12.92))
        for name, region in entry["regions"].items():
            region["rawpy"] = mean(rgb, region["box"])
            for got, tolerance in ((region["rawpy"], 30), (mean(srgb, region["box"]), 6)):
                assert max(abs(a - b) for a, b in zip(got, region["srgb"])) < tolerance, name
        try:
            thumb = raw.extract_thumb()
            thumb = (thumb.format.name, jpeg_size(thumb.data))
        except rawpy.LibRawNoThumbnailError:
            thumb = None
    assert thumb == (("JPEG", (WIDTH, HEIGHT)) if preview else None), thumb
    if shutil.which("exiftool"):
        shown = subprocess.run(["exiftool", "-b", "-PreviewImage", path], capture_output=True)
        assert shown.stdout == (preview or b""), len(shown.stdout)
    colours = [r["rawpy"] for r in entry["regions"].values()]
    print(f"{os.path.basename(path):20} {s.raw_width}x{s.raw_height} {s.flip:4} "
          f"{rgb.shape[1]}x{rgb.shape[0]} {str(thumb):20} {colours}")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make-dngs.py OUTDIR")
    if not shutil.which("vips"):
        sys.exit("make-dngs: needs vips (apt-get install libvips-tools)")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    image = scene()
    cfa, jpeg_bytes = mosaic(image), jpeg(image)
    truth = {"scene": "stored 600x400: left half red-orange, right half blue, a grey band over"
                      " rows 133-265, a white square at x, y 20-99; colours are sRGB",
             "cfa": "RGGB", "bits": 12, "bits_per_sample": 16, "black_level": BLACK,
             "white_level": WHITE,
             "as_shot_neutral": [n / d for n, d in NEUTRAL], "files": {},
             "rawpy": "postprocess(use_camera_wb=True, output_bps=8) with LibRaw "
                      + ".".join(map(str, rawpy.libraw_version))}
    print(f"rawpy {rawpy.__version__}, LibRaw {'.'.join(map(str, rawpy.libraw_version))}")
    print(f"{'file':20} raw     flip render  {'thumbnail':20} colours: left, right, band, marker")
    for name, orientation, with_preview in FILES:
        preview, turned = jpeg_bytes if with_preview else None, orientation == 6
        entry = truth["files"][name] = {
            "raw_width": WIDTH, "raw_height": HEIGHT, "orientation": orientation,
            "display_width": HEIGHT if turned else WIDTH,
            "display_height": WIDTH if turned else HEIGHT,
            "preview": {"format": "jpeg", "width": WIDTH, "height": HEIGHT,
                        "bytes": len(preview)} if preview else None,
            "regions": {k: {"box": display_box(BOXES[k], orientation), "srgb": COLOURS[k]}
                        for k in BOXES}}
        path = os.path.join(out, name)
        with open(path, "wb") as f:
            f.write(dng(cfa, orientation, preview))
        assert os.path.getsize(path) < 1_000_000
        check(path, entry, preview)
    with open(os.path.join(out, "dngs.json"), "w") as f:
        # One line for each list of numbers.
        f.write(re.sub(r"\[[-\d.,\s]+\]", lambda m: json.dumps(json.loads(m[0])),
                       json.dumps(truth, indent=1)) + "\n")


if __name__ == "__main__":
    main()
