#!/usr/bin/env bash
# The catalog in SQLite and in PostgreSQL, side by side in one run (issue 32), over COUNT
# (100,000) photos as cameras write them (million_library.py, the photos million.sh uses):
#   - the first scan into each (no catalog before): seconds and µs a file, and the ratio;
#   - `darkroom catalog copy` of the SQLite catalog into a new PostgreSQL database;
#   - `GET /api/assets` pages of 100 by cursor at depths 0, COUNT/10 and COUNT*9/10 for the
#     date, name and size orders and a camera filter, p50 and p99 (page_times.py; goal p99
#     < 20 ms on both), the server over SQLite and then over the copy (the same asset ids, so
#     the same cursors);
#   - `darkroom list --sort -date --limit 100`, the whole process, on each.
# PostgreSQL runs on this machine (Benchmarks/postgres.sh: a scratch server, Unix socket,
# synchronous_commit=off to match SQLite's WAL with synchronous=NORMAL).
# Usage: Benchmarks/catalogs.sh   (COUNT=20000 for a quick run; CATALOGS_SKIP_BUILD=1 to use the
#        release build as it is)
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/postgres.sh"
COUNT="${COUNT:-100000}"
"$ROOT/Scripts/install-deps.sh" libvips-tools time
[ -n "${CATALOGS_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="$ROOT/.build/release/darkroom"

BASE="$WORK/gallery-base.jpg"
THUMB="$WORK/million-thumb.jpg"
[ -f "$BASE" ] || vips thumbnail "$ROOT/Samples/orientation-1.jpg" "${BASE}[Q=80,strip]" 96
[ -f "$THUMB" ] || vips thumbnail "$ROOT/Samples/orientation-1.jpg" "${THUMB}[Q=70,strip]" 160
LIB="$WORK/catalogs-lib"
stamp="$COUNT $(sha1sum <"$ROOT/Benchmarks/million_library.py" | cut -c1-12)"
if [ "$(cat "$LIB.made" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$LIB"
  echo "making $COUNT photos in $LIB" >&2
  /usr/bin/python3 "$ROOT/Benchmarks/million_library.py" "$BASE" "$THUMB" "$LIB" "$COUNT"
  echo "$stamp" >"$LIB.made"
fi

PID=""
cleanup() {
  [ -z "$PID" ] || kill "$PID" 2>/dev/null || true
  stop_postgres
}
trap cleanup EXIT
start_postgres
unset DARKROOM_CATALOG

# scan_once [--catalog URL]: a first scan, printing its seconds.
scan_once() {
  rm -rf "$LIB/.darkroom"
  sync
  /usr/bin/time -f "%e" -o "$WORK/catalogs-time" "$DARKROOM" scan "$LIB" --progress none --no-background "$@" >/dev/null
  cat "$WORK/catalogs-time"
}
per_file() { /usr/bin/python3 -c "print('%.1f' % ($1 / $COUNT * 1e6))"; }
SCANNED=$(new_database darkroom_scanned)
pg_scan=$(scan_once --catalog "$SCANNED")
sqlite_scan=$(scan_once)
echo "first scan of $COUNT photos:"
echo "  SQLite     $sqlite_scan s ($(per_file "$sqlite_scan") µs a file)"
echo "  PostgreSQL $pg_scan s ($(per_file "$pg_scan") µs a file): $(ratio "$pg_scan" "$sqlite_scan")x SQLite's"

COPY=$(new_database darkroom_copy)
/usr/bin/time -f "%e" -o "$WORK/catalogs-time" "$DARKROOM" catalog copy "$LIB/.darkroom/catalog.sqlite" "$COPY" >"$WORK/catalogs-copy.out"
echo "catalog copy, SQLite to PostgreSQL: $(cat "$WORK/catalogs-time") s ($(tail -1 "$WORK/catalogs-copy.out"))"
# The copy left .darkroom/catalog.location (the library's catalog is now the copy): it is put
# aside for the SQLite runs and back for the PostgreSQL ones. Both databases are vacuumed
# and analysed, and a checkpoint written, now, so that neither autovacuum nor the timed
# checkpoint (every 5 minutes: the scans' and the copy's pages) runs during the timings.
mv "$LIB/.darkroom/catalog.location" "$WORK/catalogs-location"
for url in "$SCANNED" "$COPY"; do psql -q "$url" -c "VACUUM (ANALYZE)" >/dev/null; done
psql -q "$COPY" -c "CHECKPOINT" >/dev/null

TOKEN="bench-token-0123456789abcdef"
echo "write $TOKEN" >"$WORK/catalogs-tokens"
chmod 600 "$WORK/catalogs-tokens"
# pages NAME [--catalog URL]: the server over the library, page_times.py, list; then stops.
pages() {
  local name=$1
  shift
  "$DARKROOM" serve "$LIB" --port 0 --token-file "$WORK/catalogs-tokens" --rate-limit 0 --no-background "$@" \
    >"$WORK/catalogs-serve.out" 2>"$WORK/catalogs-serve.log" &
  PID=$!
  local port=""
  for _ in $(seq 1 300); do
    port=$(sed -n 's|.*open http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$WORK/catalogs-serve.out" 2>/dev/null)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "darkroom serve did not start" >&2; exit 1; }
  echo
  echo "$name: GET /api/assets?limit=100 by cursor, 200 pages from each depth:"
  /usr/bin/python3 "$ROOT/Benchmarks/page_times.py" "127.0.0.1:$port" "$TOKEN" "$LIB/.darkroom/catalog.sqlite" "0,$((COUNT / 10)),$((COUNT * 9 / 10))" 200
  kill "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  PID=""
  local times=()
  for _ in 1 2 3 4 5 6 7 8 9 10 11; do
    local start
    start=$(date +%s%N)
    (cd "$LIB" && "$DARKROOM" list --sort -date --limit 100 "$@" >/dev/null)
    times+=($(( ($(date +%s%N) - start) / 1000000 )))
  done
  echo "$name: list --sort -date --limit 100, whole process: median $(printf '%s\n' "${times[@]}" | sort -n | sed -n 6p) ms of 11"
}
pages SQLite
mv "$WORK/catalogs-location" "$LIB/.darkroom/catalog.location"
pages PostgreSQL --catalog "$COPY"
