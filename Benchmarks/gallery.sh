#!/usr/bin/env bash
# The gallery in Debian's chromium over a large library, in one run: a release build of
# darkroom serve on COUNT small distinct photos (100,000 by default) dated over ten years,
# chromium driven by Benchmarks/gallery_browser.py. It prints the first paint (cold and warm),
# scrubber jumps, the most elements the page ever holds while scrolling through every year,
# and failed requests, each against the issue's goal (500 ms, 300 ms, 3,000, none). No peer
# gallery installs here (Immich and PhotoPrism run in containers): the ratios are to the goals.
# Usage: Benchmarks/gallery.sh   (COUNT=100000; COUNT=20000 for a quick run)
source "$(dirname "$0")/common.sh"
COUNT="${COUNT:-100000}"
"$ROOT/Scripts/install-deps.sh" libvips-tools chromium chromium-driver time
[ -n "${GALLERY_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="$ROOT/.build/release/darkroom"

LIB="$WORK/gallery-$COUNT"
BASE="$WORK/gallery-base.jpg"
# 96 x 64 pixels, no metadata: the date is the file's.
[ -f "$BASE" ] || vips thumbnail "$ROOT/Samples/orientation-1.jpg" "$BASE[Q=80,strip]" 96
mkdir -p "$LIB"
start=$(date +%s.%N)
/usr/bin/python3 "$ROOT/Benchmarks/dated_library.py" "$BASE" "$LIB" "$COUNT" 10
made=$(date +%s.%N)
/usr/bin/time -f "%e s, %M KB peak" -o "$WORK/gallery-scan.time" "$DARKROOM" scan "$LIB" >"$WORK/gallery-scan.out" 2>&1
echo "library: $COUNT photos over ten years (written in $(echo "$made - $start" | bc) s); scan: $(tail -n 1 "$WORK/gallery-scan.out" | sed 's/.* in /in /') ($(cat "$WORK/gallery-scan.time"))"

TOKEN="bench-token-0123456789abcdef"
echo "write $TOKEN" >"$WORK/gallery-tokens"
chmod 600 "$WORK/gallery-tokens"
# The cache starts empty: thumbnails are made as the page asks for them.
rm -rf "$LIB/.darkroom/cache"
"$DARKROOM" serve "$LIB" --port 0 --token-file "$WORK/gallery-tokens" --rate-limit 0 \
  >"$WORK/gallery-serve.out" 2>"$WORK/gallery-serve.log" &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  PORT=$(sed -n 's|.*open http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$WORK/gallery-serve.out" 2>/dev/null)
  [ -n "$PORT" ] && break
  sleep 0.1
done
[ -n "$PORT" ] || { echo "darkroom serve did not start" >&2; exit 1; }
/usr/bin/python3 "$ROOT/Benchmarks/gallery_browser.py" "http://127.0.0.1:$PORT" "$TOKEN"
echo "server: $(ps -o rss= -p $PID | awk '{printf "%.0f MB resident", $1 / 1024}') at the end"
