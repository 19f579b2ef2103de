#!/usr/bin/python3
"""The near-duplicate test set of duplicates.sh, the imagehash peer, and the scoring.

The set: ORIGINALS distinct photos (60 by default) and seven copies of each that any
duplicate finder should group with it: resized to 50% and 25%, recompressed at JPEG Q60,
converted to PNG and to WebP (Q80), cropped by 2 to 5% at each edge, brightened by 15 to
25%. The originals are 1200 to 2000 px wide (some portrait), JPEG Q90, in scenes of five
shots of one procedurally drawn panorama (mountains, a city, a seascape, a forest, a room,
flowers), so that distinct but similar photos abound, as in a real library:
  base   a window on the panorama;
  pan1   the window moved sideways by 15 to 30% of its width (and up to 4% vertically);
  pan2   moved on again by 15 to 30% (so it overlaps pan1 partly and base less);
  zoom   the base window zoomed in by 15 to 30%, off centre by up to 4%;
  wide   the base window zoomed out by 15 to 30%, off centre by up to 4%.
Every original has its own foreground object (a person, a balloon, a boat, a car, a tree,
an umbrella, a kite, a dog) drawn where it stands, its own grain, and the lens's vignette:
no two originals share a framing, only parts of one scene. The files have opaque shuffled
names (IMG_0001.jpg, .png, .webp) in SET/photos/; SET/truth.json maps each name to its
original, scene, shot and variant. Everything comes from seeded generators (Pillow only),
so the same version of this file makes the same set.

Usage:
  duplicates_set.py make SET ORIGINALS        make the set (/usr/bin/python3, Pillow)
  duplicates_set.py dhash SET OUT THRESHOLD   the imagehash peer: dHash of every file, groups
                                              at THRESHOLD bits (python3 with imagehash)
  duplicates_set.py hashes SET                dHash and pHash of every file into
                                              SET/hashes.json, for the notes (imagehash)
  duplicates_set.py score SET [options]       precision, recall and the table (any python3)
"""
import json
import math
import os
import random
import sys
from itertools import combinations
from pathlib import Path

SEED = "darkroom-duplicates-1"
SHOTS = ["base", "pan1", "pan2", "zoom", "wide"]
VARIANTS = ["original", "resized50", "resized25", "q60", "png", "webp", "crop", "bright"]
EXTENSIONS = {"png": ".png", "webp": ".webp"}


# ------------------------------------------------------------------------------------------
# Drawing helpers (Pillow only: no numpy in Debian's python3-pil).

def _pil():
    global Image, ImageChops, ImageDraw, ImageEnhance, ImageFilter, ImageOps
    from PIL import Image, ImageChops, ImageDraw, ImageEnhance, ImageFilter, ImageOps


def mix(a, b, t):
    return tuple(int(round(x + (y - x) * t)) for x, y in zip(a, b))


def jitter(rng, colour, amount):
    return tuple(max(0, min(255, int(c + rng.uniform(-amount, amount)))) for c in colour)


def gradient(w, h, stops, vertical=True):
    """A linear gradient through colour STOPS [(position 0..1, (r, g, b)), ...]."""
    n = h if vertical else w
    line = []
    for i in range(n):
        t = i / max(1, n - 1)
        for (p0, c0), (p1, c1) in zip(stops, stops[1:]):
            if t <= p1:
                line.append(mix(c0, c1, (t - p0) / max(1e-9, p1 - p0)))
                break
        else:
            line.append(stops[-1][1])
    strip = Image.new("RGB", (1, n) if vertical else (n, 1))
    strip.putdata(line)
    return strip.resize((w, h), Image.NEAREST)


def value_noise(rng, w, h, cell):
    """Smooth random values (L) with features about CELL pixels across."""
    gw, gh = w // cell + 4, h // cell + 4
    small = Image.frombytes("L", (gw, gh), rng.randbytes(gw * gh))
    big = small.resize((gw * cell, gh * cell), Image.BICUBIC)
    ox, oy = rng.randrange(cell), rng.randrange(cell)
    return big.crop((ox + cell, oy + cell, ox + cell + w, oy + cell + h))


def fractal(rng, w, h, cell=256, octaves=5, persistence=0.55):
    """Fractal noise (L), stretched to the full range."""
    out, total, amp = value_noise(rng, w, h, cell), 1.0, 1.0
    for _ in range(1, octaves):
        cell //= 2
        if cell < 2:
            break
        amp *= persistence
        total += amp
        out = Image.blend(out, value_noise(rng, w, h, cell), amp / total)
    return ImageOps.autocontrast(out, cutoff=0.5)


def textured(rng, w, h, dark, light, cell=128, octaves=5):
    return ImageOps.colorize(fractal(rng, w, h, cell, octaves), dark, light)


def soft_mask(w, h, draw_fn, blur, scale=4):
    """A blurred mask drawn at 1/SCALE size (cheap big blurs)."""
    sw, sh = max(1, w // scale), max(1, h // scale)
    m = Image.new("L", (sw, sh), 0)
    draw_fn(ImageDraw.Draw(m), 1 / scale)
    m = m.filter(ImageFilter.GaussianBlur(blur / scale))
    return m.resize((w, h), Image.BILINEAR)


def paste_colour(img, colour, mask):
    img.paste(Image.new("RGB", img.size, colour), (0, 0), mask)


def ridge(rng, w, y0, amp, rough=0.55, n=1024):
    """Points of a mountain ridge across width W (midpoint displacement)."""
    pts = [0.0] * (n + 1)
    pts[0], pts[n] = rng.uniform(-1, 1), rng.uniform(-1, 1)
    step, scale = n, 1.0
    while step > 1:
        half = step // 2
        for i in range(half, n, step):
            pts[i] = (pts[i - half] + pts[i + half]) / 2 + rng.uniform(-1, 1) * scale
        step, scale = half, scale * rough
    return [(i * w / n, y0 + amp * p) for i, p in enumerate(pts)]


def polygon_mask(w, h, points):
    m = Image.new("L", (w, h), 0)
    ImageDraw.Draw(m).polygon(points, fill=255)
    return m


def ellipse_points(cx, cy, rx, ry, angle=0.0, n=48):
    ca, sa = math.cos(angle), math.sin(angle)
    out = []
    for i in range(n):
        t = 2 * math.pi * i / n
        x, y = rx * math.cos(t), ry * math.sin(t)
        out.append((cx + x * ca - y * sa, cy + x * sa + y * ca))
    return out


def sky(rng, w, h, horizon):
    palettes = [
        [(0, (40, 90, 170)), (0.6, (120, 170, 220)), (1, (210, 225, 235))],    # clear day
        [(0, (40, 40, 90)), (0.5, (190, 90, 110)), (1, (250, 180, 90))],      # sunset
        [(0, (110, 115, 125)), (1, (190, 192, 195))],                          # overcast
        [(0, (20, 50, 110)), (0.7, (90, 150, 200)), (1, (240, 220, 180))],     # morning
    ]
    stops = [(p, jitter(rng, c, 18)) for p, c in rng.choice(palettes)]
    img = gradient(w, h, [(p * horizon / h, c) for p, c in stops] + [(1, stops[-1][1])])
    if rng.random() < 0.7:  # clouds
        cl = fractal(rng, w, h, cell=rng.choice([128, 256, 384]), octaves=6)
        cover = rng.uniform(0.35, 0.65)
        cut = int(255 * cover)
        cl = cl.point(lambda v: 0 if v < cut else min(255, int((v - cut) * 255 / max(1, 255 - cut) * 1.6)))
        fade = gradient(w, h, [(0, (255,) * 3), (min(1, horizon / h), (60,) * 3), (1, (0,) * 3)]).convert("L")
        cl = ImageChops.multiply(cl, fade)
        paste_colour(img, jitter(rng, (235, 235, 240), 15), cl)
    if rng.random() < 0.6:  # sun or glow
        sx, sy, r = rng.uniform(0, w), rng.uniform(0.1, 0.8) * horizon, rng.uniform(0.02, 0.05) * h
        glow = soft_mask(w, h, lambda d, s: d.ellipse([(sx - r * 4) * s, (sy - r * 4) * s,
                                                       (sx + r * 4) * s, (sy + r * 4) * s], fill=150), r * 3)
        paste_colour(img, (255, 230, 180), glow)
        disc = soft_mask(w, h, lambda d, s: d.ellipse([(sx - r) * s, (sy - r) * s,
                                                       (sx + r) * s, (sy + r) * s], fill=255), 3)
        paste_colour(img, (255, 248, 230), disc)
    return img


# ------------------------------------------------------------------------------------------
# Scenes: panoramas W x H.

def scene_mountains(rng, w, h):
    horizon = rng.uniform(0.45, 0.65) * h
    img = sky(rng, w, h, horizon)
    haze = img.getpixel((w // 2, int(horizon) - 1))
    layers = rng.randint(3, 5)
    near = jitter(rng, rng.choice([(45, 75, 35), (70, 60, 45), (40, 60, 50), (85, 80, 55)]), 15)
    lake = rng.random() < 0.5
    bottom = h * (0.8 if lake else 1.0)
    for i in range(layers):
        t = i / max(1, layers - 1)
        y0 = horizon - (0.2 - 0.22 * t) * h
        pts = ridge(rng, w, y0, rng.uniform(0.07, 0.14) * h * (1.2 - 0.6 * t), rng.uniform(0.5, 0.62))
        mask = polygon_mask(w, h, pts + [(w, h), (0, h)])
        colour = mix(mix(haze, (90, 100, 120), 0.4), near, 0.2 + 0.8 * t)
        tex = textured(rng, w, h, mix(colour, (0, 0, 0), 0.3), mix(colour, (255, 255, 255), 0.12),
                       cell=rng.choice([32, 64]))
        shade = gradient(w, h, [(0, (255,) * 3), (1, (170,) * 3)])
        img.paste(ImageChops.multiply(tex, shade), (0, 0), mask)
        if i == 0 and rng.random() < 0.7:  # snow on the far peaks
            snow = fractal(rng, w, h, 32, 4).point(lambda v: 255 if v > 120 else 0)
            line = min(y for _, y in pts) + rng.uniform(0.05, 0.1) * h
            top = polygon_mask(w, h, pts + [(w, line), (0, line)])
            paste_colour(img, (235, 238, 245), ImageChops.multiply(ImageChops.multiply(snow, top), mask)
                         .filter(ImageFilter.GaussianBlur(1.5)))
    if lake:
        y = int(bottom)
        above = img.crop((0, 2 * y - h, w, y)).transpose(Image.FLIP_TOP_BOTTOM)
        above = above.filter(ImageFilter.GaussianBlur(3))
        above = Image.blend(above, Image.new("RGB", above.size, (30, 50, 70)), 0.35)
        d = ImageDraw.Draw(above)
        for _ in range(int(w * (h - y) / 8000)):
            x0, yy = rng.uniform(0, w), rng.uniform(0, h - y)
            d.line([(x0, yy), (x0 + rng.uniform(20, 120), yy)], fill=mix(above.getpixel((int(x0) % w, int(yy))), (230, 235, 240), 0.35), width=1)
        img.paste(above, (0, y))
    else:  # a meadow in front
        pts = ridge(rng, w, 0.9 * h, 0.04 * h, 0.5)
        mask = polygon_mask(w, h, pts + [(w, h), (0, h)])
        img.paste(textured(rng, w, h, (30, 55, 20), (120, 150, 60), cell=16, octaves=4), (0, 0), mask)
    return img


def scene_city(rng, w, h):
    horizon = rng.uniform(0.75, 0.88) * h
    img = sky(rng, w, h, horizon)
    d = ImageDraw.Draw(img)
    haze = img.getpixel((w // 2, int(horizon) - 1))
    palette = [(120, 110, 100), (90, 95, 110), (150, 140, 125), (70, 70, 80), (160, 120, 100)]
    night = sum(haze) < 300
    for layer in range(3):
        t = (layer + 1) / 3
        x = -rng.uniform(0, 80)
        while x < w:
            bw = rng.uniform(0.03, 0.09) * w * (0.6 + 0.5 * t)
            top = horizon - rng.uniform(0.1, 0.55) * h * (1.3 - 0.4 * t)
            colour = mix(haze, jitter(rng, rng.choice(palette), 20), 0.3 + 0.7 * t)
            d.rectangle([x, top, x + bw, horizon], fill=colour)
            if rng.random() < 0.2:
                d.polygon([(x, top), (x + bw / 2, top - bw * 0.4), (x + bw, top)], fill=colour)
            if layer == 2 or rng.random() < 0.5:
                ww, wh = rng.uniform(6, 14) * (0.5 + t), rng.uniform(8, 18) * (0.5 + t)
                gap = ww * rng.uniform(0.6, 1.2)
                yy = top + gap
                while yy + wh < horizon - gap:
                    xx = x + gap
                    while xx + ww < x + bw - gap:
                        lit = rng.random() < (0.6 if night else 0.15)
                        fill = jitter(rng, (250, 210, 120), 20) if lit else mix(colour, (20, 25, 35), 0.5)
                        d.rectangle([xx, yy, xx + ww, yy + wh], fill=fill)
                        xx += ww + gap
                    yy += wh + gap
            x += bw + rng.uniform(-0.2, 0.3) * bw
    street = textured(rng, w, int(h - horizon) + 1, (40, 40, 45), (110, 105, 100), cell=16, octaves=4)
    img.paste(street, (0, int(horizon)))
    for _ in range(int(w / 150)):  # lamps and lane marks
        x = rng.uniform(0, w)
        d.line([(x, horizon + 0.5 * (h - horizon)), (x + 60, horizon + 0.5 * (h - horizon))], fill=(220, 220, 200), width=4)
    return img.filter(ImageFilter.GaussianBlur(0.8))


def scene_sea(rng, w, h):
    horizon = rng.uniform(0.35, 0.55) * h
    img = sky(rng, w, h, horizon)
    shore = rng.uniform(0.72, 0.85) * h
    top = jitter(rng, (40, 90, 130), 20)
    sea = gradient(w, int(shore - horizon) + 1, [(0, mix(top, (200, 210, 220), 0.3)), (1, mix(top, (0, 20, 30), 0.4))])
    d = ImageDraw.Draw(sea)
    sh = sea.size[1]
    for _ in range(int(w * sh / 2500)):
        y = rng.uniform(0, sh)
        x = rng.uniform(0, w)
        length = rng.uniform(10, 60) * (0.3 + y / sh)
        d.line([(x, y), (x + length, y)], fill=jitter(rng, (210, 225, 235) if rng.random() < 0.5 else (20, 40, 60), 25),
               width=max(1, int(3 * y / sh)))
    img.paste(sea.filter(ImageFilter.GaussianBlur(1.2)), (0, int(horizon)))
    pts = ridge(rng, w, shore, 0.03 * h, 0.5)
    mask = polygon_mask(w, h, pts + [(w, h), (0, h)])
    img.paste(textured(rng, w, h, (150, 130, 95), (235, 215, 175), cell=8, octaves=3), (0, 0), mask)
    foam = Image.new("L", (w, h), 0)
    ImageDraw.Draw(foam).line(pts, fill=230, width=int(0.012 * h))
    paste_colour(img, (245, 248, 250), foam.filter(ImageFilter.GaussianBlur(4)))
    d = ImageDraw.Draw(img)
    for _ in range(rng.randint(3, 9)):  # rocks
        cx, cy = rng.uniform(0, w), rng.uniform(shore - 0.05 * h, h)
        r = rng.uniform(0.02, 0.09) * h
        d.polygon(ellipse_points(cx, cy, r * rng.uniform(1, 2), r, rng.uniform(-0.3, 0.3), 9),
                  fill=jitter(rng, (60, 55, 50), 20))
    return img


def scene_forest(rng, w, h):
    img = gradient(w, h, [(0, jitter(rng, (170, 190, 170), 20)), (0.6, jitter(rng, (110, 130, 100), 20)),
                          (1, jitter(rng, (70, 60, 40), 15))])
    img = Image.blend(img, textured(rng, w, h, (60, 80, 50), (200, 210, 190), cell=256), 0.35)
    d = ImageDraw.Draw(img)
    for layer in range(4):
        t = (layer + 1) / 4
        fog = mix((180, 195, 180), (35, 30, 25), t)
        for _ in range(int(rng.uniform(10, 22) * w / 2000 / (0.5 + t))):
            x, tw = rng.uniform(-50, w), rng.uniform(0.006, 0.02) * w * (0.4 + 1.2 * t)
            ground = h * (0.75 + 0.2 * t + rng.uniform(-0.03, 0.03))
            lean = rng.uniform(-0.03, 0.03) * h
            d.polygon([(x, ground), (x + tw, ground), (x + tw * 0.7 + lean, 0), (x + tw * 0.3 + lean, 0)],
                      fill=jitter(rng, fog, 10))
    canopy = fractal(rng, w, h, 96, 5).point(lambda v: 255 if v > 140 else 0)
    fade = gradient(w, h, [(0, (255,) * 3), (0.35, (120,) * 3), (0.5, (0,) * 3), (1, (0,) * 3)]).convert("L")
    paste_colour(img, jitter(rng, (40, 70, 35), 15), ImageChops.multiply(canopy, fade).filter(ImageFilter.GaussianBlur(2)))
    rays = soft_mask(w, h, lambda dd, s: [dd.polygon([((x) * s, 0), ((x + 80) * s, 0), ((x + 400) * s, h * s), ((x + 250) * s, h * s)], fill=70)
                                          for x in [rng.uniform(0, w) for _ in range(rng.randint(2, 5))]], 30)
    paste_colour(img, (250, 245, 210), rays)
    return img


def scene_room(rng, w, h):
    wall = jitter(rng, rng.choice([(200, 190, 170), (170, 180, 190), (190, 170, 160), (215, 210, 200)]), 15)
    img = gradient(w, h, [(0, mix(wall, (0, 0, 0), 0.25)), (0.5, wall), (1, mix(wall, (0, 0, 0), 0.35))], vertical=False)
    img = Image.blend(img, textured(rng, w, h, mix(wall, (0, 0, 0), 0.3), wall, cell=32, octaves=4), 0.25)
    floor_y = rng.uniform(0.7, 0.82) * h
    floor = textured(rng, w, int(h - floor_y) + 1, (70, 45, 30), (150, 110, 70), cell=64, octaves=4)
    img.paste(floor, (0, int(floor_y)))
    d = ImageDraw.Draw(img)
    x = rng.uniform(0.02, 0.1) * w
    while x < w:  # windows, pictures, tables with things on them, along the room
        kind = rng.choice(["window", "picture", "table", "lamp"])
        if kind == "window":
            ww, wh = rng.uniform(0.08, 0.15) * w, rng.uniform(0.3, 0.45) * h
            top = rng.uniform(0.08, 0.2) * h
            view = gradient(int(ww), int(wh), [(0, (150, 190, 230)), (0.7, (225, 235, 240)), (1, (120, 150, 100))])
            img.paste(view, (int(x), int(top)))
            frame = jitter(rng, (240, 240, 235), 10)
            d.rectangle([x, top, x + ww, top + wh], outline=frame, width=int(ww * 0.05))
            d.line([(x + ww / 2, top), (x + ww / 2, top + wh)], fill=frame, width=int(ww * 0.03))
            light = soft_mask(w, h, lambda dd, s: dd.polygon([(x * s, (top + wh) * s), ((x + ww) * s, (top + wh) * s),
                                                                ((x + ww * 1.8) * s, h * s), ((x + ww * 0.6) * s, h * s)], fill=60), 40)
            paste_colour(img, (255, 250, 230), light)
            x += ww
        elif kind == "picture":
            pw, ph = rng.uniform(0.05, 0.12) * w, rng.uniform(0.15, 0.3) * h
            top = rng.uniform(0.1, 0.3) * h
            art = textured(rng, int(pw), int(ph), jitter(rng, (60, 40, 80), 40), jitter(rng, (230, 200, 120), 30), cell=32)
            img.paste(art, (int(x), int(top)))
            d.rectangle([x, top, x + pw, top + ph], outline=jitter(rng, (60, 40, 20), 20), width=int(pw * 0.06))
            x += pw
        elif kind == "table":
            tw = rng.uniform(0.12, 0.25) * w
            ty = floor_y - rng.uniform(0.15, 0.25) * h
            wood = jitter(rng, (110, 70, 40), 25)
            d.rectangle([x, ty, x + tw, ty + 0.03 * h], fill=wood)
            for lx in (x + 0.05 * tw, x + 0.9 * tw):
                d.rectangle([lx, ty, lx + 0.04 * tw, floor_y + 0.04 * h], fill=mix(wood, (0, 0, 0), 0.3))
            ox = x + 0.05 * tw
            while ox < x + 0.9 * tw:  # vases and fruit
                if rng.random() < 0.5:
                    vw, vh = rng.uniform(0.04, 0.08) * h, rng.uniform(0.08, 0.18) * h
                    colour = jitter(rng, rng.choice([(40, 80, 140), (180, 60, 40), (230, 230, 220), (60, 120, 80)]), 20)
                    d.polygon(ellipse_points(ox + vw / 2, ty - vh / 2, vw / 2, vh / 2, 0, 32), fill=colour)
                    d.rectangle([ox + vw * 0.3, ty - vh * 1.15, ox + vw * 0.7, ty - vh * 0.8], fill=colour)
                    ox += vw * 1.3
                else:
                    r = rng.uniform(0.015, 0.03) * h
                    d.ellipse([ox, ty - 2 * r, ox + 2 * r, ty], fill=jitter(rng, rng.choice([(200, 40, 30), (240, 170, 30), (120, 170, 40)]), 20))
                    ox += 2.2 * r
            x += tw
        else:  # a standing lamp
            lh = rng.uniform(0.35, 0.55) * h
            d.rectangle([x, floor_y - lh, x + 0.008 * w, floor_y], fill=(40, 40, 40))
            shade = [(x - 0.03 * w, floor_y - lh + 0.08 * h), (x + 0.038 * w, floor_y - lh + 0.08 * h),
                     (x + 0.02 * w, floor_y - lh), (x - 0.012 * w, floor_y - lh)]
            d.polygon(shade, fill=jitter(rng, (240, 220, 170), 15))
            glow = soft_mask(w, h, lambda dd, s: dd.ellipse([(x - 0.1 * w) * s, (floor_y - lh - 0.1 * h) * s,
                                                             (x + 0.1 * w) * s, (floor_y - lh + 0.25 * h) * s], fill=70), 60)
            paste_colour(img, (255, 230, 170), glow)
            x += 0.05 * w
        x += rng.uniform(0.03, 0.12) * w
    return img.filter(ImageFilter.GaussianBlur(1.0))


def scene_flowers(rng, w, h):
    img = gradient(w, h, [(0, jitter(rng, (90, 120, 70), 30)), (1, jitter(rng, (30, 50, 25), 15))])
    bokeh = Image.new("RGB", (w // 4, h // 4))
    bokeh.paste(img.resize(bokeh.size))
    d = ImageDraw.Draw(bokeh)
    for _ in range(int(60 * w / 2000)):
        cx, cy, r = rng.uniform(0, w / 4), rng.uniform(0, h / 4), rng.uniform(5, 40)
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=jitter(rng, rng.choice([(200, 220, 150), (250, 240, 200), (120, 160, 90), (230, 180, 200)]), 30))
    img = bokeh.filter(ImageFilter.GaussianBlur(6)).resize((w, h), Image.BICUBIC)
    d = ImageDraw.Draw(img)
    for _ in range(int(rng.uniform(8, 16) * w / 2000)):
        cx, cy = rng.uniform(0, w), rng.uniform(0.15, 0.75) * h
        r = rng.uniform(0.04, 0.12) * h
        green = jitter(rng, (50, 100, 40), 20)
        d.line([(cx, cy), (cx + rng.uniform(-0.05, 0.05) * h, h)], fill=green, width=max(3, int(r * 0.12)))
        for _ in range(2):
            ly = rng.uniform(cy + r, h)
            d.polygon(ellipse_points(cx + rng.choice([-1, 1]) * r * 0.6, ly, r * 0.7, r * 0.2, rng.uniform(-0.8, 0.8), 24), fill=green)
        petal = jitter(rng, rng.choice([(230, 60, 80), (250, 200, 40), (240, 240, 245), (180, 90, 200), (250, 130, 40)]), 20)
        n = rng.randint(5, 12)
        turn = rng.uniform(0, math.pi)
        for k in range(n):
            a = turn + 2 * math.pi * k / n
            d.polygon(ellipse_points(cx + math.cos(a) * r * 0.55, cy + math.sin(a) * r * 0.55, r * 0.55, r * 0.2, a, 24),
                      fill=jitter(rng, petal, 15), outline=mix(petal, (0, 0, 0), 0.25))
        d.ellipse([cx - r * 0.22, cy - r * 0.22, cx + r * 0.22, cy + r * 0.22], fill=jitter(rng, (120, 80, 20), 20))
    return img.filter(ImageFilter.GaussianBlur(0.8))


SCENES = [scene_mountains, scene_city, scene_sea, scene_forest, scene_room, scene_flowers]


# ------------------------------------------------------------------------------------------
# Foreground objects, drawn on a shot (W x H) where it is.

def draw_object(rng, img):
    w, h = img.size
    kind = rng.choice(["person", "balloon", "boat", "car", "tree", "umbrella", "kite", "dog"])
    s = rng.uniform(0.2, 0.38) * h
    x = rng.uniform(0.12, 0.88) * w
    y = rng.uniform(0.7, 0.95) * h  # where it stands
    colour = jitter(rng, rng.choice([(200, 40, 40), (30, 60, 160), (240, 200, 40), (30, 30, 30),
                                     (240, 240, 240), (40, 140, 70), (220, 110, 30)]), 25)
    dark = mix(colour, (0, 0, 0), 0.45)
    if kind in ("balloon", "kite"):
        y = rng.uniform(0.2, 0.5) * h
    else:  # a soft shadow on the ground
        sh = soft_mask(w, h, lambda d, k: d.ellipse([(x - s * 0.5) * k, (y - s * 0.06) * k,
                                                     (x + s * 0.6) * k, (y + s * 0.06) * k], fill=140), s * 0.05)
        paste_colour(img, (20, 20, 20), sh)
    d = ImageDraw.Draw(img)
    if kind == "person":
        skin = jitter(rng, rng.choice([(230, 190, 160), (150, 100, 70), (90, 60, 45)]), 10)
        d.rectangle([x - s * 0.08, y - s * 0.45, x - s * 0.01, y], fill=dark)
        d.rectangle([x + s * 0.01, y - s * 0.45, x + s * 0.08, y], fill=dark)
        d.rounded_rectangle([x - s * 0.13, y - s * 0.85, x + s * 0.13, y - s * 0.42], radius=s * 0.05, fill=colour)
        d.ellipse([x - s * 0.08, y - s, x + s * 0.08, y - s * 0.84], fill=skin)
    elif kind == "balloon":
        d.ellipse([x - s * 0.35, y - s * 0.45, x + s * 0.35, y + s * 0.35], fill=colour)
        d.polygon([(x - s * 0.3, y + s * 0.15), (x + s * 0.3, y + s * 0.15), (x + s * 0.08, y + s * 0.5), (x - s * 0.08, y + s * 0.5)], fill=colour)
        for k in range(-2, 3):
            d.line([(x + k * s * 0.12, y - s * 0.43 + abs(k) * s * 0.05), (x + k * s * 0.12, y + s * 0.33 - abs(k) * s * 0.05)],
                   fill=jitter(rng, (250, 250, 250), 10), width=max(2, int(s * 0.02)))
        d.rectangle([x - s * 0.06, y + s * 0.55, x + s * 0.06, y + s * 0.65], fill=(90, 60, 30))
    elif kind == "boat":
        d.polygon([(x - s * 0.6, y - s * 0.2), (x + s * 0.6, y - s * 0.2), (x + s * 0.45, y), (x - s * 0.45, y)], fill=colour)
        d.line([(x, y - s * 0.2), (x, y - s * 1.1)], fill=(60, 40, 20), width=max(2, int(s * 0.025)))
        d.polygon([(x + s * 0.03, y - s * 1.05), (x + s * 0.5, y - s * 0.28), (x + s * 0.03, y - s * 0.28)], fill=(245, 245, 240))
    elif kind == "car":
        d.rounded_rectangle([x - s * 0.7, y - s * 0.35, x + s * 0.7, y - s * 0.08], radius=s * 0.08, fill=colour)
        d.polygon([(x - s * 0.4, y - s * 0.35), (x - s * 0.25, y - s * 0.6), (x + s * 0.3, y - s * 0.6), (x + s * 0.45, y - s * 0.35)], fill=colour)
        d.polygon([(x - s * 0.33, y - s * 0.36), (x - s * 0.22, y - s * 0.54), (x + s * 0.27, y - s * 0.54), (x + s * 0.37, y - s * 0.36)], fill=(140, 170, 190))
        for wx in (x - s * 0.42, x + s * 0.42):
            d.ellipse([wx - s * 0.14, y - s * 0.22, wx + s * 0.14, y + s * 0.04], fill=(25, 25, 25))
    elif kind == "tree":
        d.rectangle([x - s * 0.06, y - s * 0.6, x + s * 0.06, y], fill=(80, 55, 35))
        green = jitter(rng, (40, 110, 40), 25)
        for _ in range(7):
            cx, cy, r = x + rng.uniform(-0.3, 0.3) * s, y - s * rng.uniform(0.6, 1.05), s * rng.uniform(0.18, 0.3)
            d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=jitter(rng, green, 15))
    elif kind == "umbrella":
        d.line([(x, y), (x, y - s * 0.9)], fill=(40, 40, 40), width=max(2, int(s * 0.03)))
        d.pieslice([x - s * 0.6, y - s * 1.2, x + s * 0.6, y - s * 0.6], 180, 360, fill=colour)
    elif kind == "kite":
        d.polygon([(x, y - s * 0.5), (x + s * 0.3, y), (x, y + s * 0.6), (x - s * 0.3, y)], fill=colour)
        d.line([(x, y + s * 0.6), (x + s * 0.4, y + s * 1.6)], fill=(250, 250, 250), width=2)
    else:  # a dog
        d.ellipse([x - s * 0.4, y - s * 0.45, x + s * 0.3, y - s * 0.18], fill=colour)
        d.ellipse([x + s * 0.2, y - s * 0.6, x + s * 0.45, y - s * 0.35], fill=colour)
        for lx in (x - s * 0.32, x - s * 0.2, x + s * 0.1, x + s * 0.2):
            d.rectangle([lx, y - s * 0.25, lx + s * 0.06, y], fill=dark)
    return kind


def vignette(img, strength):
    w, h = img.size
    g = Image.radial_gradient("L").resize((int(w * 1.5), int(h * 1.5)), Image.BILINEAR)
    g = g.crop((int(w * 0.25), int(h * 0.25), int(w * 0.25) + w, int(h * 0.25) + h))
    m = g.point(lambda v: int(255 - strength * 255 * (v / 255) ** 2))
    return ImageChops.multiply(img, Image.merge("RGB", (m, m, m)))


def grain(rng, img, sigma):
    """Film-like grain: luminance noise shared by the bands, plus some colour noise."""
    w, h = img.size

    def tri():
        a = Image.frombytes("L", (w, h), rng.randbytes(w * h))
        b = Image.frombytes("L", (w, h), rng.randbytes(w * h))
        return ImageChops.add(a, b, scale=2.0)

    lum = tri()
    k = sigma / 45.0
    lut = [max(0, min(255, int(round(128 + (v - 127.5) * k)))) for v in range(256)]
    out = []
    for band in img.split():
        n = Image.blend(lum, tri(), 0.35).point(lut)
        out.append(ImageChops.add(band, n, scale=1.0, offset=-128))
    return Image.merge("RGB", out)


# ------------------------------------------------------------------------------------------
# The set.

def plan(originals):
    """[(original id, scene index, shot)], scenes of five shots (the last may have fewer)."""
    out = []
    for i in range(originals):
        out.append((f"o{i + 1:03d}", i // len(SHOTS), SHOTS[i % len(SHOTS)]))
    return out


def make_scene(args):
    """Draws scene SCENE's panorama and its shots, and writes every shot's eight files."""
    scene, shots, staging = args
    _pil()
    rng = random.Random(f"{SEED}-scene-{scene}")
    draw = SCENES[scene % len(SCENES)]
    aspect = rng.choice([3 / 2, 3 / 2, 4 / 3, 16 / 9, 2 / 3, 3 / 4])
    w = rng.randrange(1200, 1400) if aspect < 1 else rng.randrange(1200, 2001)
    h = int(w / aspect)
    s1, s2 = rng.uniform(0.15, 0.30), rng.uniform(0.15, 0.30)
    v1, v2 = rng.uniform(-0.04, 0.04), rng.uniform(-0.04, 0.04)
    margin = 0.2  # room for the wide shot
    pw, ph = int(w * (1 + s1 + s2 + 2 * margin)), int(h * (1 + 2 * margin))
    pano = draw(rng, pw, ph)
    x0, y0 = margin * w, margin * h
    zoom, wide = rng.uniform(1.15, 1.30), rng.uniform(1.15, 1.30)
    zx, zy = rng.uniform(-0.04, 0.04) * w, rng.uniform(-0.04, 0.04) * h
    wx, wy = rng.uniform(-0.04, 0.04) * w, rng.uniform(-0.04, 0.04) * h
    zw, zh = w / zoom, h / zoom
    ww, wh = w * wide, h * wide
    windows = {
        "base": (x0, y0, x0 + w, y0 + h),
        "pan1": (x0 + s1 * w, y0 + v1 * h, x0 + (1 + s1) * w, y0 + (1 + v1) * h),
        "pan2": (x0 + (s1 + s2) * w, y0 + v2 * h, x0 + (1 + s1 + s2) * w, y0 + (1 + v2) * h),
        "zoom": (x0 + (w - zw) / 2 + zx, y0 + (h - zh) / 2 + zy, x0 + (w + zw) / 2 + zx, y0 + (h + zh) / 2 + zy),
        "wide": (x0 + (w - ww) / 2 + wx, y0 + (h - wh) / 2 + wy, x0 + (w + ww) / 2 + wx, y0 + (h + wh) / 2 + wy),
    }
    sigma = rng.uniform(5, 11)
    strength = rng.uniform(0.15, 0.35)
    made = []
    for original, shot, names in shots:
        srng = random.Random(f"{SEED}-{original}")
        box = tuple(int(round(v)) for v in windows[shot])
        img = pano.crop(box)
        if img.size != (w, h):
            img = img.resize((w, h), Image.LANCZOS)
        kind = draw_object(srng, img)
        img = grain(srng, vignette(img, strength), sigma)
        path = staging / names["original"]
        img.save(path, quality=90)
        made.append(variants(srng, path, names, staging))
        made[-1].update(original=original, scene=f"s{scene + 1:02d}", shot=shot,
                        scene_kind=draw.__name__[6:], object=kind, size=[w, h],
                        window=[round(v) for v in windows[shot]])
    return made


def variants(rng, path, names, staging):
    """The seven copies of the original at PATH, made from its decoded JPEG."""
    img = Image.open(path).convert("RGB")
    w, h = img.size
    img.resize((w // 2, h // 2), Image.LANCZOS).save(staging / names["resized50"], quality=90)
    img.resize((w // 4, h // 4), Image.LANCZOS).save(staging / names["resized25"], quality=90)
    img.save(staging / names["q60"], quality=60)
    img.save(staging / names["png"])
    img.save(staging / names["webp"], quality=80)
    cuts = [rng.uniform(0.02, 0.05) for _ in range(4)]
    img.crop((int(cuts[0] * w), int(cuts[1] * h), w - int(cuts[2] * w), h - int(cuts[3] * h))) \
        .save(staging / names["crop"], quality=90)
    factor = rng.uniform(1.15, 1.25)
    ImageEnhance.Brightness(img).enhance(factor).save(staging / names["bright"], quality=90)
    return {"crop": [round(c, 4) for c in cuts], "brighten": round(factor, 3)}


def make(set_dir, originals):
    from multiprocessing import Pool
    set_dir = Path(set_dir)
    photos = set_dir / "photos"
    staging = set_dir / "staging"
    staging.mkdir(parents=True, exist_ok=True)
    shots = plan(originals)
    files = [(o, v) for o, _, _ in shots for v in VARIANTS]
    order = list(range(len(files)))
    random.Random(f"{SEED}-names").shuffle(order)
    names = {}
    for n, i in enumerate(order):
        o, v = files[i]
        names.setdefault(o, {})[v] = f"IMG_{n + 1:04d}{EXTENSIONS.get(v, '.jpg')}"
    jobs = {}
    for o, scene, shot in shots:
        jobs.setdefault(scene, []).append((o, shot, names[o]))
    with Pool(os.cpu_count()) as pool:
        done = pool.map(make_scene, [(s, js, staging) for s, js in sorted(jobs.items())], chunksize=1)
    truth = {}
    for scene in done:
        for info in scene:
            for v in VARIANTS:
                truth[names[info["original"]][v]] = {
                    "original": info["original"], "scene": info["scene"], "shot": info["shot"],
                    "variant": v, "scene_kind": info["scene_kind"], "object": info["object"]}
    originals_info = {info["original"]: {k: v for k, v in info.items() if k != "original"}
                      for scene in done for info in scene}
    staging.rename(photos)
    (set_dir / "truth.json").write_text(json.dumps(
        {"files": dict(sorted(truth.items())), "originals": originals_info}, indent=1))

# === end of the generator (duplicates.sh makes the set again when the text above changes) ===


# ------------------------------------------------------------------------------------------
# imagehash (the python3 first on PATH, with imagehash from PyPI).

def image_files(set_dir):
    photos = Path(set_dir) / "photos"
    return sorted(p for p in photos.iterdir() if p.is_file() and p.suffix in (".jpg", ".png", ".webp"))


def groups_at(hashes, threshold):
    """Single-linkage groups (connected components) of the names whose hashes differ by at
    most THRESHOLD bits: how findimagedupes groups, and the grouping given to imagehash."""
    names = sorted(hashes)
    parent = {n: n for n in names}

    def find(n):
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    values = [hashes[n] for n in names]
    for i in range(len(names)):
        a = values[i]
        for j in range(i + 1, len(names)):
            if bin(a ^ values[j]).count("1") <= threshold:
                ri, rj = find(names[i]), find(names[j])
                if ri != rj:
                    parent[rj] = ri
    out = {}
    for n in names:
        out.setdefault(find(n), []).append(n)
    return [g for g in out.values() if len(g) > 1]


def run_dhash(set_dir, out, threshold):
    """The timed imagehash run: open every file, dHash (8x8), group."""
    import imagehash
    from PIL import Image
    hashes = {}
    for p in image_files(set_dir):
        with Image.open(p) as img:
            hashes[p.name] = int(str(imagehash.dhash(img, hash_size=8)), 16)
    groups = groups_at(hashes, threshold)
    Path(out).write_text(json.dumps({"threshold": threshold, "groups": groups,
                                     "hashes": {k: "%016x" % v for k, v in hashes.items()}}))


def run_hashes(set_dir):
    """dHash and pHash of every file, for the notes (not timed)."""
    import imagehash
    from PIL import Image
    out = {}
    for p in image_files(set_dir):
        with Image.open(p) as img:
            out[p.name] = {"dhash": str(imagehash.dhash(img)), "phash": str(imagehash.phash(img))}
    (Path(set_dir) / "hashes.json").write_text(json.dumps(out))


# ------------------------------------------------------------------------------------------
# Scoring.

def pairs_of(groups):
    out = set()
    for g in groups:
        for a, b in combinations(sorted(set(g)), 2):
            out.add((a, b))
    return out


class Truth:
    def __init__(self, set_dir):
        data = json.loads((Path(set_dir) / "truth.json").read_text())
        self.files = data["files"]
        self.originals = data["originals"]
        by_original = {}
        for name, info in self.files.items():
            by_original.setdefault(info["original"], []).append(name)
        self.pairs = pairs_of(by_original.values())
        self.by_original = by_original

    def score(self, groups):
        unknown = sorted({n for g in groups for n in g if n not in self.files})
        groups = [[n for n in g if n in self.files] for g in groups]
        predicted = pairs_of(groups)
        tp = len(predicted & self.pairs)
        precision = tp / len(predicted) if predicted else float("nan")
        recall = tp / len(self.pairs)
        f1 = 2 * precision * recall / (precision + recall) if predicted and tp else 0.0
        return {"precision": precision, "recall": recall, "f1": f1, "predicted": predicted,
                "tp": tp, "unknown": unknown}

    def details(self, s):
        """What a tool got wrong: original-copy pairs missed by kind of copy, and the distinct
        originals it merged, by how they are related."""
        missed = {}
        for o, names in self.by_original.items():
            orig = next(n for n in names if self.files[n]["variant"] == "original")
            for n in names:
                if n != orig and tuple(sorted((orig, n))) not in s["predicted"]:
                    missed[self.files[n]["variant"]] = missed.get(self.files[n]["variant"], 0) + 1
        merged = {}
        for a, b in s["predicted"] - self.pairs:
            fa, fb = self.files[a], self.files[b]
            key = (fa["original"], fb["original"]) if fa["original"] < fb["original"] else (fb["original"], fa["original"])
            merged[key] = merged.get(key, 0) + 1
        by_relation = {}
        for (oa, ob), n in merged.items():
            ia, ib = self.originals[oa], self.originals[ob]
            rel = ("same scene: " + "+".join(sorted((ia["shot"], ib["shot"])))) if ia["scene"] == ib["scene"] \
                else "different scenes"
            c = by_relation.setdefault(rel, [0, 0])
            c[0] += 1
            c[1] += n
        return missed, by_relation


def fmt(x, digits=3):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def parse_findimagedupes(path):
    """Groups (lines of paths) and fingerprints (-v fp: 'BASE64  path') in its output."""
    import base64
    import re
    groups, fps = [], {}
    fp_line = re.compile(r"^([A-Za-z0-9+/]{43}=)  (.+)$")
    for line in Path(path).read_text().splitlines():
        m = fp_line.match(line)
        if m:
            fps[Path(m.group(2)).name] = int.from_bytes(base64.b64decode(m.group(1)), "big")
        elif line.strip():
            groups.append([Path(p).name for p in line.split()])
    return groups, fps


def sweep(truth, hashes, thresholds):
    out = []
    for t in thresholds:
        s = truth.score(groups_at(hashes, t))
        out.append((t, s))
    return out


def best(rows, key):
    """The sweep row with the highest KEY (ties: the lower threshold)."""
    return max(rows, key=lambda r: (key(r[1]), -r[0]))


def recall_at_precision(rows, floor=0.99):
    ok = [(t, s) for t, s in rows if s["predicted"] and s["precision"] >= floor]
    return best(ok, lambda s: s["recall"]) if ok else None


def distances(truth, hashes):
    """Hamming distances: the farthest copies of one original, the closest distinct originals
    (same scene, and different scenes)."""
    names = sorted(n for n in hashes if n in truth.files)
    same, scene, other = [], [], []
    for a, b in combinations(names, 2):
        d = bin(hashes[a] ^ hashes[b]).count("1")
        fa, fb = truth.files[a], truth.files[b]
        if fa["original"] == fb["original"]:
            same.append((d, a, b))
        elif fa["scene"] == fb["scene"]:
            scene.append((d, a, b))
        else:
            other.append((d, a, b))
    return sorted(same), sorted(scene), sorted(other)


def label(truth, n):
    f = truth.files[n]
    return f"{f['original']}/{f['shot']}/{f['variant']}"


def score_main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="duplicates_set.py score")
    ap.add_argument("set_dir")
    ap.add_argument("--files", type=int, required=True)
    ap.add_argument("--findimagedupes", nargs=3, metavar=("OUT", "SECONDS", "BITS"))
    ap.add_argument("--imagehash", nargs=2, metavar=("OUT", "SECONDS"))
    ap.add_argument("--darkroom", nargs=3, metavar=("OUT", "SECONDS", "SCAN_SECONDS"))
    ap.add_argument("--darkroom-stored", nargs=2, metavar=("OUT", "SECONDS"))
    ap.add_argument("--darkroom-threshold", default="default (10)")
    ap.add_argument("--darkroom-sweep", nargs="*", default=[], metavar="BITS=OUT")
    ap.add_argument("--darkroom-skipped", default="")
    a = ap.parse_args(argv)
    truth = Truth(a.set_dir)
    nfiles = a.files
    rows, details, peers_best = [], [], []

    def row(tool, setting, s, seconds, fps=True):
        rows.append((tool, setting, s, seconds, nfiles / seconds if fps and seconds else None))

    if a.findimagedupes:
        out, seconds, bits = a.findimagedupes[0], float(a.findimagedupes[1]), int(a.findimagedupes[2])
        groups, fps = parse_findimagedupes(out)
        s = truth.score(groups)
        row("findimagedupes", f"{bits} of 256 bits (90%, default)", s, seconds)
        details.append(("findimagedupes", s))
        if fps:
            check = truth.score(groups_at(fps, bits))
            if check["predicted"] != s["predicted"]:
                print(f"note: regrouping findimagedupes' fingerprints at {bits} bits does not give its groups", file=sys.stderr)
            missing = nfiles - len(fps)
            if missing:
                print(f"note: findimagedupes fingerprinted {len(fps)} of {nfiles} files", file=sys.stderr)
            sw = sweep(truth, fps, range(0, 129))
            t, sb = best(sw, lambda s: s["f1"])
            row("findimagedupes", f"{t} bits: best F1 (tuned on the truth)", sb, seconds)
            peers_best.append(("findimagedupes", recall_at_precision(sw)))
    if a.imagehash:
        data = json.loads(Path(a.imagehash[0]).read_text())
        seconds = float(a.imagehash[1])
        hashes = {k: int(v, 16) for k, v in data["hashes"].items()}
        s = truth.score(data["groups"])
        row("imagehash dHash 8x8", f"{data['threshold']} of 64 bits (common cut-off)", s, seconds)
        details.append(("imagehash dHash", s))
        sw = sweep(truth, hashes, range(0, 33))
        t, sb = best(sw, lambda s: s["f1"])
        row("imagehash dHash 8x8", f"{t} bits: best F1 (tuned on the truth)", sb, seconds)
        peers_best.append(("imagehash dHash", recall_at_precision(sw)))
    dark = None
    if a.darkroom:
        out, seconds, scan_seconds = a.darkroom[0], float(a.darkroom[1]), float(a.darkroom[2])
        groups = [[Path(f).name for f in g["files"]] for g in json.loads(Path(out).read_text())]
        dark = truth.score(groups)
        row("darkroom duplicates --near", f"{a.darkroom_threshold}, after a fresh scan", dark, seconds)
        details.append(("darkroom", dark))
        if a.darkroom_stored:
            groups = [[Path(f).name for f in g["files"]] for g in json.loads(Path(a.darkroom_stored[0]).read_text())]
            s2 = truth.score(groups)
            row("darkroom duplicates --near", f"{a.darkroom_threshold}, fingerprints stored", s2,
                float(a.darkroom_stored[1]), fps=False)
            if s2["predicted"] != dark["predicted"]:
                print("note: darkroom's second run grouped differently from its first", file=sys.stderr)
        rows.append(("darkroom scan, timed apart", "into a fresh catalog", None, scan_seconds, nfiles / scan_seconds))

    print(f"{'tool':<28} {'threshold':<40} {'precision':>9} {'recall':>7} {'F1':>6} {'seconds':>8} {'files/s':>8}")
    for tool, setting, s, seconds, rate in rows:
        p, r, f = (s["precision"], s["recall"], s["f1"]) if s else (None, None, None)
        print(f"{tool:<28} {setting:<40} {fmt(p):>9} {fmt(r):>7} {fmt(f):>6} {seconds:>8.2f} {fmt(rate, 1):>8}")
    print()
    for tool, s in details:
        missed, merged = truth.details(s)
        n = len(truth.by_original)
        miss = ", ".join(f"{v} {n - missed.get(v, 0)}/{n}" for v in VARIANTS[1:])
        print(f"{tool}: original and copy grouped: {miss}")
        if merged:
            pairs = sum(c[0] for c in merged.values())
            files = sum(c[1] for c in merged.values())
            same = ", ".join(f"{rel[len('same scene: '):]} {c[0]}" for rel, c in sorted(merged.items())
                             if rel.startswith("same scene"))
            other = merged.get("different scenes", [0])[0]
            print(f"{tool}: distinct originals merged: {pairs} pair(s) of originals ({files} false file "
                  f"pairs): shots of one scene: {same or 'none'}; from different scenes: {other}")
        else:
            print(f"{tool}: distinct originals merged: none")
        if s["unknown"]:
            print(f"{tool}: {len(s['unknown'])} files not in the set ignored, e.g. {s['unknown'][0]}")
    for tool, r in [(t, r) for t, r in peers_best]:
        if r:
            print(f"{tool}: best recall at precision >= 0.99 (threshold tuned on the truth): "
                  f"{fmt(r[1]['recall'])} at {r[0]} bits")
        else:
            print(f"{tool}: no threshold reaches precision 0.99")
    if a.darkroom_sweep:
        parts = []
        for item in a.darkroom_sweep:
            t, _, out = item.partition("=")
            try:
                groups = [[Path(f).name for f in g["files"]] for g in json.loads(Path(out).read_text())]
            except (OSError, ValueError):
                parts.append(f"{t}: failed")
                continue
            s = truth.score(groups)
            parts.append(f"{t}: {fmt(s['precision'])}/{fmt(s['recall'])}")
        print("darkroom --threshold (precision/recall): " + ", ".join(parts))
    print()
    print("target: darkroom recall >= 0.95 at precision >= 0.99, ahead of both peers "
          "(above each peer's best recall at precision >= 0.99, its threshold tuned on the truth)")
    if dark is None:
        print(f"darkroom: not run{a.darkroom_skipped}")
    else:
        ok = not math.isnan(dark["precision"]) and dark["precision"] >= 0.99 and dark["recall"] >= 0.95
        ahead = all(r is None or dark["recall"] > r[1]["recall"] for _, r in peers_best)
        ahead = ahead and ok
        print(f"darkroom: precision {fmt(dark['precision'])}, recall {fmt(dark['recall'])}: "
              f"{'met' if ok else 'NOT met'}; ahead of the peers: {'yes' if ahead else 'NO'}")

    hashes_file = Path(a.set_dir) / "hashes.json"
    if hashes_file.exists():
        hs = json.loads(hashes_file.read_text())
        print()
        print(f"how hard the set is ({len(truth.by_original)} originals, {nfiles} files, "
              f"{len(truth.pairs)} true pairs; Hamming distances of imagehash's 64-bit hashes):")
        for kind, desc in [("dhash", "dHash"), ("phash", "pHash (darkroom's algorithm: 32x32 DCT, 8x8 vs median)")]:
            hashes = {k: int(v[kind], 16) for k, v in hs.items()}
            same, scene, other = distances(truth, hashes)
            d95 = [d for d, _, _ in same][int(0.95 * (len(same) - 1))]
            print(f"  {desc}:")
            print(f"    copies of one original: 95% within {d95}, farthest {same[-1][0]} "
                  f"({label(truth, same[-1][1])} vs {label(truth, same[-1][2])})")
            for name, lst in [("same scene", scene), ("different scenes", other)]:
                below = sum(1 for d, _, _ in lst if d <= 10)
                print(f"    distinct originals, {name}: closest {lst[0][0]} ({label(truth, lst[0][1])} vs "
                      f"{label(truth, lst[0][2])}); {below} of {len(lst)} file pairs within 10")
            if kind == "phash":
                s = truth.score(groups_at(hashes, 10))
                sw = sweep(truth, hashes, range(0, 33))
                t, sb = best(sw, lambda s: s["f1"])
                rp = recall_at_precision(sw)
                print(f"    grouped at 10 bits (a preview of darkroom's default, not darkroom): precision "
                      f"{fmt(s['precision'])}, recall {fmt(s['recall'])}; best F1 at {t} bits "
                      f"({fmt(sb['precision'])}/{fmt(sb['recall'])}); best recall at precision >= 0.99: "
                      + (f"{fmt(rp[1]['recall'])} at {rp[0]} bits" if rp else "none"))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd = sys.argv[1]
    if cmd == "make" and len(sys.argv) == 4:
        _pil()
        make(sys.argv[2], int(sys.argv[3]))
    elif cmd == "dhash" and len(sys.argv) == 5:
        run_dhash(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "hashes" and len(sys.argv) == 3:
        run_hashes(sys.argv[2])
    elif cmd == "score":
        score_main(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
