#!/usr/bin/env bash
# Two `darkroom serve` processes over one library: how soon an upload through A is in B's
# change feed (issue 32's goal: under 1 s), with the catalog in SQLite and then in PostgreSQL,
# in one run. Over SQLite, B's feed reads the change log every 250 ms, so the delay is between
# 0 and about 250 ms; over PostgreSQL, A's commit is announced (NOTIFY) and B's feed wakes
# at once.
# Usage: Benchmarks/several.sh [UPLOADS]   (default 100 distinct photos)
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/postgres.sh"
UPLOADS="${1:-100}"
"$ROOT/Scripts/install-deps.sh" libvips-tools
[ -n "${SEVERAL_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="$ROOT/.build/release/darkroom"

LIB="$WORK/several-lib"
PHOTOS="$WORK/several-photos"
rm -rf "$LIB" && mkdir -p "$LIB" "$PHOTOS"
cp "$ROOT/Samples/orientation-1.jpg" "$LIB/"
for i in $(seq 1 "$UPLOADS"); do
  [ -f "$PHOTOS/u$i.jpg" ] || vips linear "$ROOT/Samples/gps.jpg" "$PHOTOS/u$i.jpg" 1 "$((i % 200))" --uchar
done
TOKEN="bench-token-0123456789abcdef"
echo "write $TOKEN" >"$WORK/several-tokens"
chmod 600 "$WORK/several-tokens"

PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  stop_postgres
}
trap cleanup EXIT
start() {  # NAME: starts a server on LIB; sets PORT
  "$DARKROOM" serve "$LIB" --port 0 --token-file "$WORK/several-tokens" --rate-limit 0 \
    >"$WORK/several-$1.out" 2>"$WORK/several-$1.log" &
  PIDS+=("$!")
  for _ in $(seq 1 300); do
    PORT=$(sed -n 's|.*open http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$WORK/several-$1.out")
    [ -n "$PORT" ] && return
    sleep 0.1
  done
  echo "darkroom serve did not start" >&2
  exit 1
}
uploads=()
for i in $(seq 1 "$UPLOADS"); do uploads+=("$PHOTOS/u$i.jpg"); done
# measure NAME: a fresh library (one photo), two servers on it, the delays; then stops them.
measure() {
  rm -rf "$LIB/.darkroom" "$LIB/Uploads"
  "$DARKROOM" scan "$LIB" --no-background >/dev/null
  start a
  A=$PORT
  start b
  B=$PORT
  echo "catalog in $1:"
  /usr/bin/python3 "$ROOT/Benchmarks/change_delay.py" "$A" "$B" "$TOKEN" "${uploads[@]}"
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  PIDS=()
}
unset DARKROOM_CATALOG
measure SQLite
start_postgres
export DARKROOM_CATALOG
DARKROOM_CATALOG=$(new_database darkroom_several)
measure PostgreSQL
