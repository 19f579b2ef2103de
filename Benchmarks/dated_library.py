#!/usr/bin/env python3
"""Writes COUNT small distinct JPEGs into ROOT (folders of 1,000), dated by their modification
times evenly over YEARS years up to a fixed day (2025-06-30), so that a library spans that many
years of months. Each is BASE (a small JPEG without metadata) with a comment segment of its own
after the start marker: the same pixels, distinct bytes.

Usage: dated_library.py BASE ROOT COUNT [YEARS]"""
import os
import sys

base, root, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
years = float(sys.argv[4]) if len(sys.argv) > 4 else 10.0
data = open(base, "rb").read()
assert data[:2] == b"\xff\xd8", "BASE is not a JPEG"
newest = 1_751_241_600  # 2025-06-30T00:00:00Z
apart = years * 365.25 * 86400 / count
for index in range(count):
    folder = os.path.join(root, "d%04d" % (index // 1000))
    if index % 1000 == 0:
        os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "p%07d.jpg" % index)
    if os.path.exists(path):
        continue
    tag = b"photo %d" % index
    segment = b"\xff\xfe" + (len(tag) + 2).to_bytes(2, "big") + tag
    with open(path, "wb") as out:
        out.write(data[:2] + segment + data[2:])
    seconds = newest - index * apart
    os.utime(path, (seconds, seconds))
