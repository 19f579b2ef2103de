"""The nearest pyvips operations to Darkroom's whole editor panel (Benchmarks/editor.sh):
white balance and exposure in linear light, a tone curve, chroma in LCh (vibrance, HSL),
local contrast from a blur of a smaller copy, texture, denoise (a blurred chroma), sharpen,
a vignette mask, grain and a perspective warp (mapim). Not the same pixels: comparable work.
Usage: python3 pyvips_panel.py IN OUT"""
import sys

import pyvips

src, out = sys.argv[1], sys.argv[2]
image = pyvips.Image.new_from_file(src).autorot()
w, h = image.width, image.height

# Linear light: white balance (a diagonal gain) and exposure.
linear = image.colourspace("scrgb")
linear = linear.linear([1.08 * 1.23, 1.23, 0.9 * 1.23], [0, 0, 0])
image = linear.colourspace("srgb")
# A tone curve: a lookup table.
lut = pyvips.Image.identity().linear(0.9, 12).cast("uchar")
image = image.maplut(lut)
# Vibrance and HSL: chroma and hue in LCh.
lch = image.colourspace("lch")
l, c, hue = lch[0], lch[1], lch[2]
c = c * (1.25 - c / 400)
lch = l.bandjoin([c, hue])
image = lch.colourspace("srgb")
# Definition: the difference from a wide blur (of an eighth-size copy), added back; the
# image is computed into memory first, as each branch would otherwise compute it again.
image = image.copy_memory()
small = image.resize(1 / 8).gaussblur(10).copy_memory()
wide = small.resize(w / small.width, vscale=h / small.height)
image = (image + (image - wide) * 0.3).cast("uchar")
# Texture: the same with a narrow blur.
image = (image + (image - image.gaussblur(3)) * 0.2).cast("uchar")
# Denoise: chroma blurred in Lab.
lab = image.colourspace("lab")
lab = lab[0].bandjoin(lab[1:3].gaussblur(3))
image = lab.colourspace("srgb")
# Sharpen.
image = image.sharpen(sigma=1.2, m2=2)
# Vignette: a radial mask.
xy = pyvips.Image.xyz(w, h) - [w / 2, h / 2]
d = ((xy[0] * xy[0] + xy[1] * xy[1]) ** 0.5) / ((w * w + h * h) ** 0.5 / 2)
mask = 1 - 0.3 * (d - 0.5).relational_const("more", 0).ifthenelse((d - 0.5) * 2, 0)
image = (image * mask).cast("uchar")
# Grain.
image = (image + pyvips.Image.gaussnoise(w, h, sigma=6)).cast("uchar")
# Perspective: a keystone map, read from memory (mapim reads anywhere).
image = image.copy_memory()
index = pyvips.Image.xyz(w, h)
x, y = index[0], index[1]
scale = 1 - 0.05 * (1 - y / h)
index = ((x - w / 2) * scale + w / 2).bandjoin(y)
image = image.mapim(index)
image.write_to_file(out, Q=92)
