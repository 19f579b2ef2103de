#!/usr/bin/python3
"""Makes Darkroom's sample photos. Run from anywhere: /usr/bin/python3 Samples/make-samples.py

Needs Debian's python3-pil, libimage-exiftool-perl and libvips-tools (the script checks).
The sample videos need ffmpeg, and are skipped without it; `make-samples.py videos` makes
only them.
Everything is drawn here; nothing is downloaded. The outputs are committed, so tests do not
need these tools; re-run this only to change the samples, and update the tests with them.

The scene is 600x400 (landscape) and asymmetric: each corner has its own colour
(top-left red, top-right green, bottom-left blue, bottom-right yellow), so any wrong
rotation or flip shows as a wrong colour in a known corner.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from PIL import Image, ImageDraw, ImageOps

HERE = os.path.dirname(os.path.abspath(__file__))
WIDTH, HEIGHT = 600, 400
CORNERS = {  # upright corner colours, sampled by the tests 20 px in from each corner
    "top-left": (220, 30, 30),
    "top-right": (30, 170, 60),
    "bottom-left": (30, 60, 220),
    "bottom-right": (240, 210, 40),
}

# The transform that stores an upright picture so that EXIF orientation N shows it upright:
# the inverse of what a viewer applies (ImageOps.exif_transpose is checked against it below).
STORE = {
    1: None,
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_90,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_270,
}


def scene():
    image = Image.new("RGB", (WIDTH, HEIGHT))
    draw = ImageDraw.Draw(image)
    for y in range(HEIGHT):  # a sky-to-ground gradient, so resampling has work to do
        t = y / (HEIGHT - 1)
        draw.line([(0, y), (WIDTH, y)], fill=(int(90 + 100 * t), int(140 + 60 * t), int(200 - 120 * t)))
    size = 90
    boxes = {
        "top-left": (0, 0),
        "top-right": (WIDTH - size, 0),
        "bottom-left": (0, HEIGHT - size),
        "bottom-right": (WIDTH - size, HEIGHT - size),
    }
    for name, (x, y) in boxes.items():
        draw.rectangle([x, y, x + size - 1, y + size - 1], fill=CORNERS[name])
    # A large "F": it reads differently under every rotation and mirror.
    draw.rectangle([250, 100, 290, 320], fill=(255, 255, 255))
    draw.rectangle([250, 100, 390, 140], fill=(255, 255, 255))
    draw.rectangle([250, 190, 350, 225], fill=(255, 255, 255))
    draw.ellipse([460, 120, 530, 190], fill=(255, 230, 120))  # a sun, top right
    return image


def exiftool(path, *args):
    subprocess.run(["exiftool", "-q", "-overwrite_original", *args, path], check=True)


def save_jpeg(image, path):
    image.save(path, "JPEG", quality=90, subsampling=0, optimize=True)


def main():
    for tool in ("exiftool", "vips"):
        if not shutil.which(tool):
            sys.exit(f"make-samples: needs {tool} (apt-get install libimage-exiftool-perl libvips-tools)")
    upright = scene()

    for n, transform in STORE.items():
        stored = upright if transform is None else upright.transpose(transform)
        path = os.path.join(HERE, f"orientation-{n}.jpg")
        save_jpeg(stored, path)
        exiftool(path, f"-Orientation#={n}", f"-DateTimeOriginal=2024:06:0{n} 10:0{n}:00",
                 "-Make=Darkroom", "-Model=Sample Scene")
        # Prove the stored pixels are right: a viewer applying the tag sees the upright scene.
        with Image.open(path) as check:
            shown = ImageOps.exif_transpose(check).convert("RGB")
            assert shown.size == (WIDTH, HEIGHT), (n, shown.size)
            for corner, colour in CORNERS.items():
                x = 20 if "left" in corner else WIDTH - 21
                y = 20 if "top" in corner else HEIGHT - 21
                got = shown.getpixel((x, y))
                assert all(abs(a - b) < 12 for a, b in zip(got, colour)), (n, corner, got)

    # GPS, capture date with offset, camera and exposure, and an embedded EXIF thumbnail.
    path = os.path.join(HERE, "gps.jpg")
    save_jpeg(upright, path)
    with tempfile.TemporaryDirectory() as tmp:
        thumb = os.path.join(tmp, "thumb.jpg")
        save_jpeg(upright.resize((160, 107)), thumb)
        exiftool(path, "-Orientation#=1", "-GPSLatitude=22.951916", "-GPSLatitudeRef=S",
                 "-GPSLongitude=43.210487", "-GPSLongitudeRef=W", "-GPSAltitude=700",
                 "-GPSAltitudeRef#=0", "-DateTimeOriginal=2023:12:31 23:59:58",
                 "-SubSecTimeOriginal=250", "-OffsetTimeOriginal=-03:00", "-Make=Darkroom",
                 "-Model=Field Camera", "-LensMake=Darkroom", "-LensModel=Prime 35mm F1.4",
                 "-ExposureTime=1/250", "-FNumber=5.6", "-ISO=100", "-FocalLength=35",
                 f"-ThumbnailImage<={thumb}")

    # Display P3: the scene's colours converted into P3 with its profile embedded, so a
    # renderer that drops the profile without converting shows them washed out.
    path = os.path.join(HERE, "display-p3.jpg")
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "scene.png")
        upright.save(source)
        subprocess.run(["vips", "icc_transform", source, f"{path}[Q=90,subsample_mode=off]", "p3",
                        "--input-profile", "srgb", "--intent", "relative"], check=True)
    exiftool(path, "-GPSLatitude=35.658581", "-GPSLatitudeRef=N", "-GPSLongitude=139.745433",
             "-GPSLongitudeRef=E", "-GPSAltitude=10", "-GPSAltitudeRef#=1",
             "-DateTimeOriginal=2022:03:15 08:30:00")

    # PNG with alpha: the scene inside a rounded window, transparent outside it.
    rgba = upright.convert("RGBA")
    mask = Image.new("L", (WIDTH, HEIGHT), 0)
    ImageDraw.Draw(mask).rounded_rectangle([40, 40, WIDTH - 41, HEIGHT - 41], radius=60, fill=255)
    rgba.putalpha(mask)
    rgba.save(os.path.join(HERE, "alpha.png"), optimize=True)
    make_heif()
    make_videos()
    print("made samples in", HERE)


def make_heif():
    """A HEIC of the upright scene whose EXIF says Orientation 6, as iPhones write: HEIF
    orients its pixels with the container's own transformations (none here), so the EXIF
    value is informational and a reader that applies it turns the picture sideways."""
    path = os.path.join(HERE, "heif-exif-6.heic")
    subprocess.run(["vips", "heifsave", os.path.join(HERE, "orientation-1.jpg"),
                    path, "--Q", "60", "--strip"], check=True)
    exiftool(path, "-Orientation#=6", "-Make=Darkroom", "-Model=HEIF Sample")


# Sample videos: (file, stored width, height, seconds, clockwise rotation, creation time).
VIDEOS = [
    ("video-rotated.mp4", 64, 48, 1.5, 90, "2024-05-06T07:08:09Z"),
    ("clip.mov", 48, 32, 2.0, 0, "2023-01-02T03:04:05Z"),
]

# Ways to turn a track 90 degrees clockwise when remuxing, newest ffmpeg first, as (input
# options, output options). ffmpeg 6 has -display_rotation (degrees anticlockwise); ffmpeg 5
# turns a "rotate" tag into a display matrix, also anticlockwise; ffmpeg 4 and older wrote
# the tag's angle clockwise. Each is checked against the matrix it writes.
ROTATE_90 = [
    (["-display_rotation:v:0", "-90"], []),
    ([], ["-metadata:s:v:0", "rotate=270"]),
    ([], ["-metadata:s:v:0", "rotate=90"]),
]
# The track matrix (a, b, c, d) of each clockwise rotation, as phones write it.
MATRIX = {0: (1, 0, 0, 1), 90: (0, 1, -1, 0), 180: (-1, 0, 0, -1), 270: (0, -1, 1, 0)}


def ffmpeg(*args):
    return subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                           *args], capture_output=True, text=True)


def track_matrix(path):
    """The rotation part (a, b, c, d) of the first tkhd box's matrix, in whole units."""
    with open(path, "rb") as f:
        data = f.read()
    at = data.index(b"tkhd") + 4
    version = data[at]
    matrix = at + 4 + (32 if version == 1 else 20) + 16
    a, b, _, c, d = struct.unpack(">5i", data[matrix:matrix + 20])
    return tuple(v // 65536 for v in (a, b, c, d))


def make_videos():
    """Tiny H.264 videos, for the video header reader: video-rotated.mp4 is stored
    landscape and turned 90 degrees clockwise by its track matrix, as phones write portrait
    video (moov first, "faststart"); clip.mov is upright QuickTime with its moov box after
    the media data. Skipped, with a message, without ffmpeg."""
    if not shutil.which("ffmpeg"):
        print("make-samples: no ffmpeg, so no sample videos (apt-get install ffmpeg)")
        return
    for name, width, height, seconds, rotation, created in VIDEOS:
        path = os.path.join(HERE, name)
        with tempfile.TemporaryDirectory() as tmp:
            encoded = os.path.join(tmp, "encoded.mp4")
            result = ffmpeg("-f", "lavfi",
                            "-i", f"testsrc2=size={width}x{height}:rate=10:duration={seconds}",
                            "-c:v", "libx264", "-preset", "veryslow", "-crf", "35", "-bf", "0",
                            "-pix_fmt", "yuv420p", "-fflags", "+bitexact",
                            "-flags:v", "+bitexact", encoded)
            if result.returncode != 0:
                sys.exit(f"make-samples: ffmpeg cannot encode H.264:\n{result.stderr}")
            # Remux without re-encoding: no metadata but the creation time, no encoder tag.
            output = ["-map", "0:v", "-c", "copy", "-map_metadata", "-1",
                      "-metadata", f"creation_time={created}", "-fflags", "+bitexact"]
            if name.endswith(".mp4"):
                output += ["-movflags", "+faststart"]
            for before, after in ROTATE_90 if rotation == 90 else [([], [])]:
                result = ffmpeg(*before, "-i", encoded, *output, *after, path)
                if result.returncode == 0 and track_matrix(path) == MATRIX[rotation]:
                    break
            else:
                sys.exit(f"make-samples: ffmpeg did not write a {rotation} degree matrix in {name}")
        check_video(path, width, height, seconds, rotation, created)


def check_video(path, width, height, seconds, rotation, created):
    """Checks a sample video as ffprobe sees it."""
    assert os.path.getsize(path) < 20_000, (path, os.path.getsize(path))
    probe = json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-print_format", "json", "-show_format", "-show_streams",
         path], check=True, capture_output=True, text=True).stdout)
    stream = probe["streams"][0]
    assert (stream["codec_name"], stream["width"], stream["height"]) == ("h264", width, height)
    assert abs(float(probe["format"]["duration"]) - seconds) < 0.001, probe["format"]
    assert probe["format"]["tags"]["creation_time"].startswith(created[:-1]), probe["format"]
    # ffprobe gives the display matrix's angle anticlockwise.
    turns = [d.get("rotation") for d in stream.get("side_data_list", []) if "rotation" in d]
    assert turns == ([-rotation] if rotation else []), (path, turns)


if __name__ == "__main__":
    if sys.argv[1:] == ["videos"]:
        make_videos()
    else:
        main()
