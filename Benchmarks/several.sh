#!/usr/bin/env bash
# Two `darkroom serve` processes over one library (one machine, the SQLite catalog): how
# soon an upload through A is in B's change feed (issue 32's goal: under 1 s). B's feed
# polls the catalog every 250 ms, so the delay is expected between 0 and about 250 ms.
# Usage: Benchmarks/several.sh [UPLOADS]   (default 100 distinct photos)
source "$(dirname "$0")/common.sh"
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
"$DARKROOM" scan "$LIB" >/dev/null
TOKEN="bench-token-0123456789abcdef"
echo "write $TOKEN" >"$WORK/several-tokens"
chmod 600 "$WORK/several-tokens"

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
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
start a
A=$PORT
start b
B=$PORT
uploads=()
for i in $(seq 1 "$UPLOADS"); do uploads+=("$PHOTOS/u$i.jpg"); done
/usr/bin/python3 "$ROOT/Benchmarks/change_delay.py" "$A" "$B" "$TOKEN" "${uploads[@]}"
