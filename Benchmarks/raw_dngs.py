#!/usr/bin/env python3
"""Makes Benchmarks/raw.sh's inputs: a 24-megapixel DNG, 6000x4000 RGGB, 12 bits in 16-bit
samples, uncompressed, of a synthetic landscape (sky gradient and clouds, textured hills with
haze, trees, grain; numpy, seeded: the same bytes on every run), laid out by Samples/make-dngs.py
(its mosaic(), jpeg() and dng(): IFD0 the preview, the raw in its SubIFD), twice:

  raw-preview.dng  with a full-size 6000x4000 JPEG preview (Q90, 4:2:0), as most Canon, Nikon
                   and Sony raws carry (some DNGs carry only a 1024-pixel one)
  raw-plain.dng    the same raw without a preview

The mosaic is the scene through make-dngs.py's camera (sRGB primaries, as-shot neutral
(0.5, 1, 0.75)) with sensor noise added (read noise and shot noise), so that the demosaic and
every JPEG coder see a photo's detail. Usage: raw_dngs.py OUTDIR  (rawpy, pidng, numpy; vips)
"""
import importlib.util
import os
import sys

import numpy as np
import rawpy

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("make_dngs", os.path.join(HERE, "../Samples/make-dngs.py"))
dngs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dngs)

W, H = 6000, 4000
rng = np.random.default_rng(20240601)


def smooth(cells_y, cells_x):
    """Value noise: a (cells_y+2)x(cells_x+2) grid of normal values, smoothly interpolated to HxW."""
    grid = rng.standard_normal((cells_y + 2, cells_x + 2)).astype(np.float32)
    y, x = np.arange(H, dtype=np.float32) * cells_y / H, np.arange(W, dtype=np.float32) * cells_x / W
    y0, x0 = y.astype(np.int32), x.astype(np.int32)
    fy, fx = (y - y0)[:, None], (x - x0)[None, :]
    fy, fx = fy * fy * (3 - 2 * fy), fx * fx * (3 - 2 * fx)
    rows = grid[y0] * (1 - fy) + grid[y0 + 1] * fy
    return rows[:, x0] * (1 - fx) + rows[:, x0 + 1] * fx


def fbm(cells, octaves, gain=0.5):
    """Fractal noise: octaves of value noise from `cells` rows of cells, each twice as fine."""
    total = np.zeros((H, W), np.float32)
    for i in range(octaves):
        total += smooth(cells << i, (cells << i) * 3 // 2) * gain ** i
    return total


def scene():
    """The landscape, sRGB, HxWx3 uint8."""
    ys = np.arange(H, dtype=np.float32)[:, None] / H
    xs = np.linspace(0, 1, W, dtype=np.float32)
    ridge = sum(np.interp(xs, np.linspace(0, 1, n + 1), rng.standard_normal(n + 1)) / n ** 0.7
                for n in (3, 7, 17, 41, 97, 233))
    horizon = (0.45 + 0.05 * ridge)[None, :]
    sky_t = np.clip(ys / horizon, 0, 1)[..., None]
    sky = (1 - sky_t) * [50, 100, 185] + sky_t * [195, 212, 232]
    cloud = np.clip(fbm(3, 7) * 0.7 - 0.1, 0, 1)[..., None]
    sky = sky * (1 - cloud) + cloud * [242, 242, 246] * (0.8 + 0.2 * (1 - ys[..., None]))
    texture = fbm(4, 10)
    below = np.clip((ys - horizon) / (1 - horizon), 0, 1)
    field = np.clip(texture * 0.5 + 0.5, 0, 1)[..., None]
    land = (1 - field) * [55, 95, 40] + field * [135, 115, 70]
    detail = fbm(48, 5, 0.8)  # grass and stones: cells of 80 down to 5 pixels
    land *= ((0.75 + 0.25 * np.tanh(texture * 2)) * (0.8 + 0.4 * below) * (1 + 0.2 * detail))[..., None]
    haze = np.exp(-below / 0.12)[..., None]
    land = land * (1 - 0.6 * haze) + 0.6 * haze * [170, 185, 205]
    image = np.where((ys < horizon)[..., None], sky, land).astype(np.float32)
    del sky, land, cloud, field, haze
    for _ in range(60):  # trees: a trunk and a textured crown, nearer ones larger
        base = horizon[0, int(rng.integers(W))]
        cx, by = int(rng.integers(W)), int((base + rng.uniform(0.02, 0.5)) * H)
        size = int(40 + 500 * (by / H - base))
        trunk = slice(max(0, cx - size // 16), cx + size // 16 + 1)
        image[max(0, by - size):min(H, by), trunk] = [60, 45, 35]
        cy, r = by - size, size // 2
        y0, x0, y1, x1 = max(0, cy - r), max(0, cx - r), min(H, cy + r), min(W, cx + r)
        yy, xx = np.mgrid[y0:y1, x0:x1]
        crown = ((yy - cy) ** 2 + (xx - cx) ** 2 < r * r * (0.8 + 0.4 * texture[y0:y1, x0:x1]))
        leaves = 1 + 0.3 * texture[y0:y1, x0:x1][crown] + 0.4 * detail[y0:y1, x0:x1][crown]
        image[y0:y1, x0:x1][crown] = [30, 60, 25] * leaves[:, None]
    image += rng.normal(0, 3, image.shape).astype(np.float32)  # the preview's grain
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


def sensor(cfa):
    """The mosaic with read noise (2 DN) and shot noise, clipped to the sensor's range."""
    signal = cfa.astype(np.float32) - dngs.BLACK
    sd = np.sqrt(4 + 0.25 * np.maximum(signal, 0))
    noisy = cfa + rng.standard_normal(cfa.shape, dtype=np.float32) * sd
    return np.clip(np.rint(noisy), 0, dngs.WHITE).astype(np.uint16)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: raw_dngs.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    image = scene()
    preview, cfa = dngs.jpeg(image), sensor(dngs.mosaic(image))
    del image
    for name, shown in (("raw-preview.dng", preview), ("raw-plain.dng", None)):
        path = os.path.join(out, name)
        with open(path + ".tmp", "wb") as f:
            f.write(dngs.dng(cfa, 1, shown))
        os.replace(path + ".tmp", path)
        with rawpy.imread(path) as raw:
            s = raw.sizes
            assert (s.raw_width, s.raw_height, s.width, s.height) == (W, H, W, H), s
            try:
                thumb = raw.extract_thumb()
                thumb = dngs.jpeg_size(thumb.data)
            except rawpy.LibRawNoThumbnailError:
                thumb = None
        assert thumb == ((W, H) if shown else None), thumb
        print(f"{name}: raw {W}x{H}, preview {thumb and '%dx%d' % thumb} "
              f"({len(shown or b'') / 1e6:.1f} MB), file {os.path.getsize(path) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
