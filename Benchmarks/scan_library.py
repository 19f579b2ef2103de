#!/usr/bin/python3
"""Makes a photo library for scan.sh: COUNT JPEG files of 0.3 to 1 MB with camera EXIF, in
YYYY/MM/ folders of 100 files each (one month a folder from January 2016 on).

The pixels come from 20 base photos (the sample scene enlarged, with film-like grain, of
different sizes), made with vips and given their EXIF (make, model, lens, exposure,
orientation; GPS for half of them) with one exiftool call each. Every file is a base with
its dates rewritten in place (DateTimeOriginal, CreateDate and ModifyDate: same length, so
no offset moves) and a JPEG comment segment (FF FE) holding its number inserted after the
APPn segments, so that no two files have the same bytes; its modification time is its
capture date. The output is the same for the same COUNT: the first 1,000 files of any
library are the 1,000-file library.

Usage: Benchmarks/scan_library.py BASES_DIR OUT_DIR COUNT
"""
import calendar
import hashlib
import os
import struct
import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "Samples" / "orientation-1.jpg"
BASES = 20
PER_FOLDER = 100
PLACEHOLDER = b"1999:12:31 23:59:58"  # the bases' dates, rewritten in every file

# make, model, lens, file name prefix
CAMERAS = [
    ("Apple", "iPhone 13 Pro", "iPhone 13 Pro back triple camera 5.7mm f/1.5", "IMG_"),
    ("Canon", "Canon EOS R6", "RF24-105mm F4 L IS USM", "IMG_"),
    ("SONY", "ILCE-7M3", "FE 35mm F1.8", "DSC"),
    ("FUJIFILM", "X-T4", "XF23mmF2 R WR", "DSCF"),
    ("NIKON CORPORATION", "NIKON Z 6", "NIKKOR Z 24-70mm f/4 S", "DSC_"),
    ("Google", "Pixel 7", "Pixel 7 back camera 6.81mm f/1.85", "PXL_"),
    ("Apple", "iPhone 15", "iPhone 15 back dual wide camera 6.86mm f/1.6", "IMG_"),
    ("Canon", "Canon EOS 5D Mark IV", "EF70-200mm f/2.8L IS III USM", "IMG_"),
]
ORIENTATIONS = [1, 6, 1, 1, 8, 1, 3, 6, 1, 1]
# latitude, longitude, altitude (m): Paris, New York, Tokyo, Sydney, Cape Town, Reykjavik,
# Rio de Janeiro, Berlin, San Francisco, Mumbai
PLACES = [
    (48.8584, 2.2945, 35), (40.7484, -73.9857, 10), (35.6586, 139.7454, 40),
    (-33.8568, 151.2153, 5), (-33.9249, 18.4241, 20), (64.1466, -21.9426, 15),
    (-22.9519, -43.2105, 700), (52.5163, 13.3777, 34), (37.8199, -122.4783, 67),
    (19.0760, 72.8777, 14),
]
EXPOSURES = [("1/60", 2.8, 400, 24), ("1/250", 4.0, 100, 35), ("1/1000", 5.6, 200, 70),
             ("1/30", 1.8, 1600, 6), ("1/125", 8.0, 100, 50)]


def run(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)


def make_base(index, path):
    """Base photo INDEX: 1.75x to 2.97x the 600x400 sample (0.3 to 1 MB at Q 90)."""
    scale = 1.75 + 1.22 * index / (BASES - 1)
    tmp = path.parent / f"tmp-{index}"
    tmp.mkdir(exist_ok=True)
    run("vips", "resize", str(SAMPLE), str(tmp / "big.v"), f"{scale:.4f}", "--kernel", "linear")
    width = subprocess.run(["vipsheader", "-f", "width", str(tmp / "big.v")], check=True,
                           capture_output=True, text=True).stdout.strip()
    height = subprocess.run(["vipsheader", "-f", "height", str(tmp / "big.v")], check=True,
                            capture_output=True, text=True).stdout.strip()
    run("vips", "gaussnoise", str(tmp / "noise.v"), width, height,
        "--sigma", str(12 + index % 5), "--mean", "0")
    run("vips", "add", str(tmp / "big.v"), str(tmp / "noise.v"), str(tmp / "sum.v"))
    run("vips", "cast", str(tmp / "sum.v"), str(tmp / "base.jpg") + "[Q=90]", "uchar")

    make, model, lens, _ = CAMERAS[index % len(CAMERAS)]
    exposure, f_number, iso, focal = EXPOSURES[index % len(EXPOSURES)]
    date = PLACEHOLDER.decode()
    tags = [f"-Make={make}", f"-Model={model}", f"-LensModel={lens}",
            f"-Orientation#={ORIENTATIONS[index % len(ORIENTATIONS)]}",
            f"-DateTimeOriginal={date}", f"-CreateDate={date}", f"-ModifyDate={date}",
            f"-ExposureTime={exposure}", f"-FNumber={f_number}", f"-ISO={iso}",
            f"-FocalLength={focal}", "-ExposureProgram=Program AE", "-Flash=No Flash",
            f"-Software=Bench {index}"]
    if (index + index // len(CAMERAS)) % 2 == 0:  # half of them, from every camera
        lat, lon, alt = PLACES[index % len(PLACES)]
        tags += [f"-GPSLatitude={abs(lat)}", f"-GPSLatitudeRef={'N' if lat >= 0 else 'S'}",
                 f"-GPSLongitude={abs(lon)}", f"-GPSLongitudeRef={'E' if lon >= 0 else 'W'}",
                 f"-GPSAltitude={alt}", "-GPSAltitudeRef=Above Sea Level"]
    run("exiftool", "-q", "-overwrite_original", *tags, str(tmp / "base.jpg"))
    os.replace(tmp / "base.jpg", path)
    for f in tmp.iterdir():
        f.unlink()
    tmp.rmdir()


def split(data, name):
    """(head, tail): the file up to the end of its APPn segments, and the rest."""
    if data[:2] != b"\xff\xd8":
        sys.exit(f"{name}: not a JPEG")
    p = 2
    while data[p] == 0xFF and 0xE0 <= data[p + 1] <= 0xEF:
        p += 2 + struct.unpack(">H", data[p + 2:p + 4])[0]
    head = data[:p]
    if head.count(PLACEHOLDER) != 3:
        sys.exit(f"{name}: expected 3 copies of the placeholder date in the EXIF, "
                 f"found {head.count(PLACEHOLDER)}")
    return head, data[p:]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    bases_dir, out, count = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    bases_dir.mkdir(parents=True, exist_ok=True)
    # The bases are made again when this script changes.
    version = hashlib.sha1(Path(__file__).read_bytes()).hexdigest()
    stamp = bases_dir / "version"
    fresh = stamp.exists() and stamp.read_text() == version
    bases = []
    for b in range(BASES):
        path = bases_dir / f"base-{b:02d}.jpg"
        if not fresh or not path.exists():
            make_base(b, path)
        bases.append(split(path.read_bytes(), path))
    stamp.write_text(version)

    width = max(5, len(str(count)))
    for i in range(count):
        folder, j = divmod(i, PER_FOLDER)
        year, month = 2016 + folder // 12, 1 + folder % 12
        day = 1 + j * min(28, calendar.monthrange(year, month)[1]) // PER_FOLDER
        hour, minute, second = 7 + (j * 7) % 14, (i * 13) % 60, (i * 31) % 60
        date = b"%04d:%02d:%02d %02d:%02d:%02d" % (year, month, day, hour, minute, second)
        b = (i * 7 + folder) % BASES
        head, tail = bases[b]
        comment = b"darkroom scan benchmark, file %d" % i
        directory = out / f"{year:04d}" / f"{month:02d}"
        if j == 0:
            directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{CAMERAS[b % len(CAMERAS)][3]}{i:0{width}d}.jpg"
        with open(path, "wb") as f:
            f.write(head.replace(PLACEHOLDER, date))
            f.write(b"\xff\xfe" + struct.pack(">H", len(comment) + 2) + comment)
            f.write(tail)
        when = calendar.timegm((year, month, day, hour, minute, second))
        os.utime(path, (when, when))


if __name__ == "__main__":
    main()
