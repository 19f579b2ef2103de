#!/usr/bin/env bash
# The gallery's duplicates page over a large library, in one run: a release build of darkroom
# serve on COUNT small photos with the same pixels and bytes of their own (dated_library.py:
# every one a look-alike of every other, the case that once made one page of 10,331 images),
# plus COPIES exact copies of some of them (COPIES groups of two). It prints the first
# `darkroom duplicates --near` (which makes every fingerprint), then the median of 5 of
# /duplicates and /duplicates?near=1 (each asked once before, unmeasured), their sizes and
# image counts, against the issue's goal (1 s a page). No peer has such a page to measure.
# Usage: Benchmarks/duplicates_page.sh   (COUNT=10000 COPIES=500; DUP_PAGE_SKIP_BUILD=1 to use
# .build/release/darkroom as it is)
source "$(dirname "$0")/common.sh"
COUNT="${COUNT:-10000}"
COPIES="${COPIES:-500}"
"$ROOT/Scripts/install-deps.sh" libvips-tools curl
[ -n "${DUP_PAGE_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="$ROOT/.build/release/darkroom"

LIB="$WORK/dup-page-$COUNT-$COPIES"
BASE="$WORK/gallery-base.jpg"
# 96 x 64 pixels, no metadata: the date is the file's.
[ -f "$BASE" ] || vips thumbnail "$ROOT/Samples/orientation-1.jpg" "$BASE[Q=80,strip]" 96
if [ ! -f "$LIB.made" ]; then
  rm -rf "$LIB"
  mkdir -p "$LIB/copies"
  /usr/bin/python3 "$ROOT/Benchmarks/dated_library.py" "$BASE" "$LIB" "$COUNT" 10
  find "$LIB" -name "p*.jpg" | sort | sed -n "1,${COPIES}p" | while read -r f; do
    cp -p "$f" "$LIB/copies/$(basename "$f")"
  done
  touch "$LIB.made"
fi
# A new catalog each run: the first `duplicates --near` makes every fingerprint.
rm -rf "$LIB/.darkroom"
"$DARKROOM" scan "$LIB" --no-background >/dev/null 2>&1
start=$(date +%s.%N)
groups=$("$DARKROOM" duplicates --library "$LIB" --near --json | /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
end=$(date +%s.%N)
echo "library: $((COUNT + COPIES)) photos; darkroom duplicates --near (every fingerprint made): $groups groups in $(/usr/bin/python3 -c "print('%.1f' % ($end - $start))") s"

TOKEN="bench-token-0123456789abcdef"
echo "read $TOKEN" >"$WORK/dup-page-tokens"
chmod 600 "$WORK/dup-page-tokens"
"$DARKROOM" serve "$LIB" --port 0 --token-file "$WORK/dup-page-tokens" --rate-limit 0 \
  >"$WORK/dup-page-serve.out" 2>"$WORK/dup-page-serve.log" &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  PORT=$(sed -n 's|.*open http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$WORK/dup-page-serve.out" 2>/dev/null)
  [ -n "$PORT" ] && break
  sleep 0.1
done
[ -n "$PORT" ] || { echo "darkroom serve did not start" >&2; exit 1; }

printf '%-26s %10s %10s %8s %8s %s\n' page "median ms" "max ms" KB images "goal 1000 ms"
for path in "/duplicates" "/duplicates?near=1" "/duplicates?page=2"; do
  url="http://127.0.0.1:$PORT$path"
  curl -sf -H "Authorization: Bearer $TOKEN" -o "$WORK/dup-page.html" "$url"
  times=()
  for _ in 1 2 3 4 5; do
    times+=("$(curl -sf -H "Authorization: Bearer $TOKEN" -o "$WORK/dup-page.html" -w '%{time_total}' "$url")")
  done
  bytes=$(wc -c <"$WORK/dup-page.html")
  images=$(grep -o '<img ' "$WORK/dup-page.html" | wc -l)
  /usr/bin/python3 - "$path" "$bytes" "$images" "${times[@]}" <<'EOF'
import statistics, sys
path, size, images, times = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), [float(t) * 1000 for t in sys.argv[4:]]
median = statistics.median(times)
print("%-26s %10.1f %10.1f %8.0f %8d %s" % (path, median, max(times), size / 1024, images, "met" if median < 1000 else "MISSED"))
EOF
done
