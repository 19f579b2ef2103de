#!/usr/bin/env python3
"""Writes COUNT small distinct JPEGs into ROOT, in folders of 1,000 (d0000/p0000000.jpg), as a
phone or camera writes them: an EXIF block with the make and model (eight cameras in turn),
the time taken (evenly over ten years up to 2025-06-30, newest first) and an embedded
thumbnail (IFD1, as cameras write), then BASE's pixels (a small JPEG without metadata) behind
a comment of its own whose length varies, so that every file has distinct bytes and the files
differ in size. The modification time is the capture time. Files already there are kept.

Usage: million_library.py BASE THUMB ROOT COUNT"""
import os
import struct
import sys
import time

base_path, thumb_path, root, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
base = open(base_path, "rb").read()
thumb = open(thumb_path, "rb").read()
assert base[:2] == b"\xff\xd8" and thumb[:2] == b"\xff\xd8", "BASE and THUMB must be JPEGs"
cameras = [
    ("Canon", "Canon EOS R5"), ("NIKON CORPORATION", "NIKON Z 6"), ("FUJIFILM", "X100V"),
    ("Apple", "iPhone 15"), ("SONY", "ILCE-7M4"), ("Google", "Pixel 8"),
    ("OLYMPUS", "E-M10"), ("Panasonic", "DC-G9"),
]
newest = 1_751_241_600  # 2025-06-30T00:00:00Z
apart = 10 * 365.25 * 86400 / count


def ascii_entry(tag, text):
    return (tag, 2, text.encode() + b"\0")


def exif(make, model, taken):
    """A big-endian TIFF block: IFD0 (make, model, orientation, Exif pointer), the Exif IFD
    (DateTimeOriginal) and IFD1 (the thumbnail)."""
    # Offsets are from the TIFF header; each IFD is 2 + 12n + 4 bytes, values after it.
    def ifd(entries, start, next_offset):
        head = struct.pack(">H", len(entries))
        data = b""
        value_at = start + 2 + 12 * len(entries) + 4
        for tag, kind, value in entries:
            if kind == 2:  # ASCII
                if len(value) <= 4:
                    head += struct.pack(">HHI", tag, 2, len(value)) + value.ljust(4, b"\0")
                else:
                    head += struct.pack(">HHII", tag, 2, len(value), value_at + len(data))
                    data += value + (b"\0" if len(value) % 2 else b"")
            elif kind == 3:  # SHORT
                head += struct.pack(">HHIHH", tag, 3, 1, value, 0)
            else:  # LONG
                head += struct.pack(">HHII", tag, 4, 1, value)
        return head + struct.pack(">I", next_offset) + data

    ifd0_entries = [ascii_entry(0x010F, make), ascii_entry(0x0110, model), (0x0112, 3, 1), (0x8769, 4, 0)]
    size0 = len(ifd(ifd0_entries, 8, 0))
    exif_at = 8 + size0
    exif_entries = [ascii_entry(0x9003, taken)]
    size_exif = len(ifd(exif_entries, exif_at, 0))
    ifd1_at = exif_at + size_exif
    ifd1_entries = [(0x0103, 3, 6), (0x0201, 4, 0), (0x0202, 4, len(thumb))]
    size1 = len(ifd(ifd1_entries, ifd1_at, 0))
    thumb_at = ifd1_at + size1
    ifd1_entries[1] = (0x0201, 4, thumb_at)
    ifd0_entries[3] = (0x8769, 4, exif_at)
    tiff = (b"MM\0\x2a" + struct.pack(">I", 8) + ifd(ifd0_entries, 8, ifd1_at)
            + ifd(exif_entries, exif_at, 0) + ifd(ifd1_entries, ifd1_at, 0) + thumb)
    body = b"Exif\0\0" + tiff
    return b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body


for index in range(count):
    folder = os.path.join(root, "d%04d" % (index // 1000))
    if index % 1000 == 0:
        os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "p%07d.jpg" % index)
    if os.path.exists(path):
        continue
    seconds = newest - index * apart
    make, model = cameras[index % len(cameras)]
    taken = time.strftime("%Y:%m:%d %H:%M:%S", time.gmtime(seconds))
    tag = b"photo %d " % index + b"." * ((index * 7919) % 3000)
    comment = b"\xff\xfe" + struct.pack(">H", len(tag) + 2) + tag
    with open(path, "wb") as out:
        out.write(base[:2] + exif(make, model, taken) + comment + base[2:])
    os.utime(path, (seconds, seconds))
