"""Pillow peer for Benchmarks/render.sh: draft-mode decode, EXIF transpose, resize, save.
Usage: /usr/bin/python3 pillow_render.py fullscreen|thumbnail IN OUT SIZE QUALITY"""
import sys

from PIL import Image, ImageOps

mode, source, out, size, quality = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
with Image.open(source) as im:
    if mode == "fullscreen":
        # The box, turned to the photo: draft sizes are in stored orientation.
        box = (size * 9 // 16, size)  # 1080x1920 for a portrait photo
        im.draft("RGB", (box[1], box[0]))
        im = ImageOps.exif_transpose(im)
        im.thumbnail(box, Image.LANCZOS)
    else:
        im.draft("RGB", (size * 2, size * 2))
        im = ImageOps.exif_transpose(im)
        im = ImageOps.fit(im, (size, size), Image.LANCZOS)
    im.save(out, "JPEG", quality=quality)
