"""pyvips peer for Benchmarks/xmp.sh: a photo's fullscreen rendition showing a Lightroom crop,
written directly in pyvips: shrink-on-load (libjpeg's, to just above what the crop needs),
autorot, the crop's rectangle of the upright image, grey (Rec. 709), a Lanczos fit into the
screen turned to the crop's shape, JPEG at the quality given.
Usage: python3 pyvips_crop_render.py IN OUT LEFT TOP RIGHT BOTTOM SCREEN_LONG SCREEN_SHORT QUALITY"""
import sys

import pyvips

source, out = sys.argv[1], sys.argv[2]
left, top, right, bottom = (float(v) for v in sys.argv[3:7])
long, short, quality = int(sys.argv[7]), int(sys.argv[8]), int(sys.argv[9])

header = pyvips.Image.new_from_file(source)
turned = header.get("orientation") in (5, 6, 7, 8) if header.get_typeof("orientation") else False
width, height = (header.height, header.width) if turned else (header.width, header.height)
crop_w, crop_h = (right - left) * width, (bottom - top) * height
box = (long, short) if crop_w >= crop_h else (short, long)
scale = min(box[0] / crop_w, box[1] / crop_h, 1)
shrink = next((s for s in (8, 4, 2) if 1 / scale >= s), 1)
image = pyvips.Image.new_from_file(source, shrink=shrink).autorot()
x, y = round(left * image.width), round(top * image.height)
w, h = round(crop_w * image.width / width), round(crop_h * image.height / height)
image = image.crop(x, y, min(w, image.width - x), min(h, image.height - y))
image = image.colourspace("b-w").colourspace("srgb")
image = image.thumbnail_image(box[0], height=box[1])
image.jpegsave(out, Q=quality, strip=True)
