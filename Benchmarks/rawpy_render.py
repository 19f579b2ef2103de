"""rawpy peer for Benchmarks/raw.sh: LibRaw's develop as Darkroom asks for it (camera white
balance, sRGB, 8 bits; rawpy's other defaults: AHD, BT.709 curve, auto-brightening), at half
size for fullscreen and then fitted inside the box with Pillow (LANCZOS), saved as JPEG.
Usage: /opt/darkroom-test-python/bin/python3 rawpy_render.py full|fullscreen IN OUT WxH QUALITY"""
import sys

import rawpy
from PIL import Image

mode, source, out, box, quality = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
with rawpy.imread(source) as raw:
    rgb = raw.postprocess(use_camera_wb=True, output_bps=8, half_size=mode == "fullscreen")
im = Image.fromarray(rgb)
if mode == "fullscreen":
    im.thumbnail(tuple(int(v) for v in box.split("x")), Image.LANCZOS)
im.save(out, "JPEG", quality=quality)
