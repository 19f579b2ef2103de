#!/usr/bin/env python3
"""Develops a camera RAW with rawpy (LibRaw) into an 8-bit RGB PNG: the reference a Darkroom
demosaic is compared with. Run: python3 Samples/rawpy-render.py IN OUT.png [--half]

The parameters are postprocess(use_camera_wb=True, output_bps=8, half_size=--half); the rest are
rawpy's defaults: AHD demosaic, sRGB primaries, BT.709 curve (gamma (2.222, 4.5)), automatic
brightening (no_auto_bright=False), highlights clipped, and the file's orientation applied.
Writes the PNG with Pillow when it is importable, else with the small writer below.
"""
import argparse
import struct
import zlib

import rawpy


def write_png(path, rgb):
    """An 8-bit RGB PNG of an (height, width, 3) uint8 array, each row unfiltered."""
    height, width, _ = rgb.shape

    def chunk(kind, data):
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    rows = b"".join(b"\0" + rgb[y].tobytes() for y in range(height))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def main():
    parser = argparse.ArgumentParser(description="Develops a RAW with rawpy into an 8-bit RGB PNG.")
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--half", action="store_true", help="half size: one pixel per 2x2 block")
    args = parser.parse_args()
    with rawpy.imread(args.input) as raw:
        rgb = raw.postprocess(use_camera_wb=True, output_bps=8, half_size=args.half)
    try:
        from PIL import Image
    except ImportError:
        write_png(args.output, rgb)
    else:
        Image.fromarray(rgb).save(args.output)


if __name__ == "__main__":
    main()
