#!/usr/bin/env python3
"""Times pages of `GET /api/assets` by cursor, as a client walks a listing: for each order and
filter, at each depth, the cursor is the asset at that place (read from the catalog file,
read-only), then RUNS pages of 100 are read one after the other by their `next`, on one
keep-alive connection. Prints the median and 99th percentile of each, and the worst p99.

Usage: page_times.py HOST:PORT TOKEN CATALOG DEPTHS [RUNS]   (DEPTHS: 0,100000,900000)"""
import http.client
import json
import sqlite3
import statistics
import sys
import time
import urllib.parse

host, token, catalog, depths = sys.argv[1], sys.argv[2], sys.argv[3], [int(d) for d in sys.argv[4].split(",")]
runs = int(sys.argv[5]) if len(sys.argv) > 5 else 200
db = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)
visible = "trashedAt IS NULL AND hidden = 0"
orders = [
    ("-date", {"sort": "-date"}, f"WHERE {visible} ORDER BY sortDate DESC, id DESC"),
    ("date", {"sort": "date"}, f"WHERE {visible} ORDER BY sortDate, id"),
    ("name", {"sort": "name"}, f"WHERE {visible} ORDER BY name, id"),
    ("size", {"sort": "size"}, f"WHERE {visible} ORDER BY byteSize, id"),
    ("camera=nikon, -date", {"sort": "-date", "camera": "nikon"},
     f"WHERE {visible} AND camera LIKE '%nikon%' ORDER BY sortDate DESC, id DESC"),
]
total = db.execute(f"SELECT count(*) FROM asset WHERE {visible}").fetchone()[0]
connection = http.client.HTTPConnection(host)
headers = {"Authorization": "Bearer " + token}


def get(parameters):
    connection.request("GET", "/api/assets?" + urllib.parse.urlencode(parameters), headers=headers)
    response = connection.getresponse()
    body = response.read()
    if response.status != 200:
        raise SystemExit(f"{response.status}: {body[:300]!r}")
    return json.loads(body)


worst = 0.0
print(f"{'order':<22} {'depth':>9} {'p50 ms':>8} {'p99 ms':>8}")
for name, parameters, sql in orders:
    for depth in depths:
        if depth >= total:
            continue
        parameters = dict(parameters, limit="100")
        if depth > 0:
            row = db.execute(f"SELECT id FROM asset {sql} LIMIT 1 OFFSET ?", (depth - 1,)).fetchone()
            if row is None:
                continue
            parameters["after"] = row[0]
        get(parameters)  # one untimed page: the connection and the statement warm
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            page = get(parameters)
            times.append((time.perf_counter() - start) * 1000)
            if not page.get("next"):
                break
            parameters["after"] = page["next"]
        times.sort()
        p99 = times[min(len(times) - 1, len(times) * 99 // 100)]
        worst = max(worst, p99)
        print(f"{name:<22} {depth:>9} {statistics.median(times):>8.2f} {p99:>8.2f}")
print(f"worst p99 over every order and depth: {worst:.2f} ms (goal < 20 ms)")
