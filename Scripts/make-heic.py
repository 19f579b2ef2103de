#!/usr/bin/env python3
"""Writes a HEIC laid out as a phone writes one: the picture cut into square tiles, each an
independent HEVC picture (x265, through the ffmpeg command), joined by a `grid` item, with
the transformative properties HEIF allows (clean aperture, rotation, mirror), an optional
alpha plane (an auxiliary image, itself a grid) and an optional thumbnail item.

Debian's heif-enc (libheif 1.15) writes no grids, and Darkroom's HEIC decoder is tested and
measured against libheif on grids; this writes them from any picture ffmpeg reads.

    make-heic.py INPUT OUTPUT [--tile 512] [--crf 22] [--depth 8|10] [--clap W H]
                 [--rotate 0-3] [--mirror 0|1] [--alpha] [--thumbnail 320]
                 [--limited] [--no-nclx] [--icc PROFILE] [--single]

Only the standard library and the ffmpeg command are used. The layout follows ISO/IEC
23008-12 (HEIF) and ISO/IEC 14496-15 (hvcC); the grid's own data is in `idat`, as an
iPhone writes it.
"""

import argparse
import struct
import subprocess
import sys


def box(kind, payload):
    return struct.pack(">I4s", 8 + len(payload), kind.encode()) + payload


def full_box(kind, version, flags, payload):
    return box(kind, struct.pack(">I", (version << 24) | flags) + payload)


def probe_size(path):
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
         "stream=width,height", "-of", "csv=p=0", path],
        check=True, capture_output=True, text=True).stdout.strip().split("\n")[0]
    width, height = out.split(",")[:2]
    return int(width), int(height)


def nal_units(stream):
    """The NAL units of an Annex B stream, without their start codes."""
    starts = []
    i = 0
    while True:
        i = stream.find(b"\x00\x00\x01", i)
        if i < 0:
            break
        starts.append(i + 3)
        i += 3
    units = []
    for n, start in enumerate(starts):
        end = starts[n + 1] - 3 if n + 1 < len(starts) else len(stream)
        unit = stream[start:end]
        while unit.endswith(b"\x00"):  # a four-byte start code's leading zero, trailing zeros
            unit = unit[:-1]
        units.append(unit)
    return units


def rbsp(unit):
    """A NAL unit's payload with its emulation-prevention bytes removed."""
    out = bytearray()
    zeros = 0
    for byte in unit:
        if zeros >= 2 and byte == 3:
            zeros = 0
            continue
        out.append(byte)
        zeros = zeros + 1 if byte == 0 else 0
    return bytes(out)


def encode(path, filters, pixel_format, crf, tiles, colour):
    """Encodes the frames `filters` makes of `path` as intra pictures; returns the parameter
    sets (VPS, SPS, PPS) and each picture's slice NAL units, in order."""
    command = ["ffmpeg", "-v", "error", "-i", path, "-vf", filters, "-pix_fmt", pixel_format,
               *colour, "-c:v", "libx265", "-crf", str(crf), "-preset", "medium",
               "-x265-params", "keyint=1:open-gop=0:repeat-headers=0:info=0:log-level=error",
               "-frames:v", str(tiles), "-f", "hevc", "-"]
    stream = subprocess.run(command, check=True, capture_output=True).stdout
    parameters = {32: [], 33: [], 34: []}
    pictures = []
    for unit in nal_units(stream):
        kind = (unit[0] >> 1) & 0x3F
        if kind in parameters:
            if unit not in parameters[kind]:
                parameters[kind].append(unit)
        elif kind < 32:  # a slice: the first of a picture has first_slice_segment_in_pic_flag
            if unit[2] & 0x80 or not pictures:
                pictures.append([])
            pictures[-1].append(unit)
    if len(pictures) != tiles:
        sys.exit(f"make-heic: ffmpeg made {len(pictures)} pictures, not {tiles}")
    return parameters, pictures


def hvcc(parameters, chroma, depth):
    """An hvcC box: the SPS's profile, tier and level, and the parameter sets."""
    sps = rbsp(parameters[33][0])
    ptl = sps[3:15]  # after the NAL header and the byte of VPS id and sub-layer count
    body = bytes([1]) + ptl[0:1] + ptl[1:5] + ptl[5:11] + ptl[11:12]
    body += struct.pack(">HBBBBHB", 0xF000, 0xFC, 0xFC | chroma, 0xF8 | (depth - 8),
                        0xF8 | (depth - 8), 0, 0x0F)  # lengthSizeMinusOne 3
    arrays = [(32, parameters[32]), (33, parameters[33]), (34, parameters[34])]
    body += bytes([len(arrays)])
    for kind, units in arrays:
        body += bytes([0x80 | kind]) + struct.pack(">H", len(units))
        for unit in units:
            body += struct.pack(">H", len(unit)) + unit
    return box("hvcC", body)


def length_prefixed(units):
    return b"".join(struct.pack(">I", len(unit)) + unit for unit in units)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--tile", type=int, default=512)
    parser.add_argument("--crf", type=int, default=22)
    parser.add_argument("--depth", type=int, choices=[8, 10], default=8)
    parser.add_argument("--clap", type=int, nargs=2, metavar=("WIDTH", "HEIGHT"))
    parser.add_argument("--rotate", type=int, choices=[0, 1, 2, 3], default=0,
                        help="irot: quarter turns anticlockwise")
    parser.add_argument("--mirror", type=int, choices=[0, 1],
                        help="imir: 0 top and bottom swapped, 1 left and right")
    parser.add_argument("--alpha", action="store_true", help="keep the input's alpha")
    parser.add_argument("--thumbnail", type=int, help="a thumbnail item this wide")
    parser.add_argument("--limited", action="store_true", help="limited-range YUV")
    parser.add_argument("--no-nclx", action="store_true",
                        help="no colr box: the bitstream's VUI says the colour")
    parser.add_argument("--icc", help="an ICC profile for a colr box of type prof (as an "
                        "iPhone writes Display P3), instead of nclx")
    parser.add_argument("--single", action="store_true", help="one picture, no grid")
    args = parser.parse_args()

    width, height = probe_size(args.input)
    tile = args.tile
    if args.single:
        columns, rows, tile_w, tile_h = 1, 1, width + width % 2, height + height % 2
    else:
        columns, rows, tile_w, tile_h = -(-width // tile), -(-height // tile), tile, tile
    tiles = columns * rows
    range_name = "tv" if args.limited else "pc"
    colour = ["-color_range", range_name, "-colorspace", "smpte170m",
              "-color_primaries", "bt709", "-color_trc", "iec61966-2-1"]
    scale = f"scale=out_color_matrix=bt601:out_range={range_name}"
    cut = f"pad={columns * tile_w}:{rows * tile_h}:0:0:black"
    if tiles > 1:
        cut += f",untile={columns}x{rows}"
    main_format = "yuv420p10le" if args.depth == 10 else "yuv420p"
    images = [encode(args.input, f"{scale},format={main_format},{cut}", main_format, args.crf,
                     tiles, colour)]
    if args.alpha:
        grey = "gray10le" if args.depth == 10 else "gray"
        images.append(encode(args.input, f"alphaextract,format={grey},{cut}", grey, args.crf,
                             tiles, ["-color_range", "pc"]))
    thumb = None
    if args.thumbnail:
        thumb_h = max(2, round(height * args.thumbnail / width) // 2 * 2)
        thumb = encode(args.input, f"scale={args.thumbnail}:{thumb_h},{scale},format=yuv420p",
                       "yuv420p", args.crf, 1, colour)

    # Items: 1 the primary (grid, or the picture), then the tiles, the alpha's, the thumbnail.
    properties = []  # boxes of ipco, in order; associations index them from 1

    def prop(data):
        if data not in properties:
            properties.append(data)
        return properties.index(data) + 1

    items = []  # (id, type, hidden, data, in_idat, associations)
    references = []  # (kind, from, [to])
    next_id = [1]

    def new_id():
        next_id[0] += 1
        return next_id[0] - 1

    def add_image(parameters, pictures, chroma, depth, extra):
        """Adds a picture or a grid of them; returns the id that stands for it."""
        config = prop(hvcc(parameters, chroma, depth))
        tile_size = prop(full_box("ispe", 0, 0, struct.pack(">II", tile_w, tile_h)))
        whole = prop(full_box("ispe", 0, 0, struct.pack(">II", width, height)))
        pixi = prop(full_box("pixi", 0, 0, bytes([1 if chroma == 0 else 3])
                             + bytes([depth] * (1 if chroma == 0 else 3))))
        if len(pictures) == 1:
            image = new_id()
            items.append((image, "hvc1", False, length_prefixed(pictures[0]), False,
                          [config, tile_size, pixi] + extra))
            return image
        grid = new_id()
        descriptor = struct.pack(">BBBBHH", 0, 0, rows - 1, columns - 1, width, height)
        items.append((grid, "grid", False, descriptor, True, [whole, pixi] + extra))
        parts = []
        for picture in pictures:
            part = new_id()
            items.append((part, "hvc1", True, length_prefixed(picture), False,
                          [config, tile_size]))
            parts.append(part)
        references.append(("dimg", grid, parts))
        return grid

    transforms = []
    if args.clap:
        clap_w, clap_h = args.clap
        # Centred 7 pixels right and 5 down of the picture's centre (both ways shown).
        transforms.append(prop(box("clap", struct.pack(
            ">IIIIiIiI", clap_w, 1, clap_h, 1, 14, 2, 5, 1))))
    if args.rotate:
        transforms.append(prop(box("irot", bytes([args.rotate]))) | 0x80)
    if args.mirror is not None:
        transforms.append(prop(box("imir", bytes([args.mirror]))) | 0x80)
    if args.icc:
        with open(args.icc, "rb") as profile:
            nclx = [prop(box("colr", b"prof" + profile.read()))]
    else:
        nclx = [] if args.no_nclx else [prop(box("colr", b"nclx" + struct.pack(
            ">HHHB", 1, 13, 6, 0 if args.limited else 0x80)))]
    primary = add_image(*images[0], 1, args.depth, nclx + transforms)
    if args.alpha:
        urn = prop(full_box("auxC", 0, 0, b"urn:mpeg:hevc:2015:auxid:1\x00"))
        alpha = add_image(*images[1], 0, args.depth, [urn] + transforms)
        references.append(("auxl", alpha, [primary]))
    if thumb:
        saved = (width, height, tile_w, tile_h)
        width, tile_w = args.thumbnail, args.thumbnail
        height = tile_h = max(2, round(saved[1] * args.thumbnail / saved[0]) // 2 * 2)
        small = add_image(*thumb, 1, 8, nclx + transforms)
        width, height, tile_w, tile_h = saved
        references.append(("thmb", small, [primary]))

    def infe(item_id, kind, hidden):
        return full_box("infe", 2, 1 if hidden else 0,
                        struct.pack(">HH4s", item_id, 0, kind.encode()) + b"\x00")

    iinf = full_box("iinf", 0, 0, struct.pack(">H", len(items))
                    + b"".join(infe(i, k, h) for i, k, h, _, _, _ in items))
    iref = full_box("iref", 0, 0, b"".join(
        box(kind, struct.pack(">HH", source, len(targets))
            + b"".join(struct.pack(">H", t) for t in targets))
        for kind, source, targets in references))
    ipma_entries = b""
    for item_id, _, _, _, _, associations in items:
        ipma_entries += struct.pack(">HB", item_id, len(associations))
        ipma_entries += bytes(associations)  # each index, the essential bit set for transforms
    ipma = full_box("ipma", 0, 0, struct.pack(">I", len(items)) + ipma_entries)
    iprp = box("iprp", box("ipco", b"".join(properties)) + ipma)
    idat_payload = b"".join(data for _, _, _, data, in_idat, _ in items if in_idat)

    def layout(mdat_start):
        entries = b""
        idat_at = 0
        mdat_at = mdat_start
        for item_id, _, _, data, in_idat, _ in items:
            if in_idat:
                entries += struct.pack(">HHHHII", item_id, 1, 0, 1, idat_at, len(data))
                idat_at += len(data)
            else:
                entries += struct.pack(">HHHHII", item_id, 0, 0, 1, mdat_at, len(data))
                mdat_at += len(data)
        iloc = full_box("iloc", 1, 0, bytes([0x44, 0x00]) + struct.pack(">H", len(items))
                        + entries)
        hdlr = full_box("hdlr", 0, 0, struct.pack(">I4s12x", 0, b"pict") + b"\x00")
        pitm = full_box("pitm", 0, 0, struct.pack(">H", primary))
        meta = full_box("meta", 0, 0, hdlr + pitm + iloc + iinf + iref + iprp
                        + (box("idat", idat_payload) if idat_payload else b""))
        ftyp = box("ftyp", b"heic" + struct.pack(">I", 0) + b"mif1heic")
        return ftyp + meta

    head = layout(0)
    head = layout(len(head) + 8)
    mdat = box("mdat", b"".join(data for _, _, _, data, in_idat, _ in items if not in_idat))
    with open(args.output, "wb") as out:
        out.write(head + mdat)


if __name__ == "__main__":
    main()
