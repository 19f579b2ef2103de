#!/usr/bin/env bash
# Two builds of darkroom side by side, in one run, on the same inputs: what a change costs.
#  - render: a cold fullscreen and a cold 256 px thumbnail of a 24-megapixel photo (EXIF 6),
#    no cache, median of 20;
#  - apply: noir + tone + a 4:5 crop over 20 such photos into -o, 2 jobs, median of 5;
#  - scan: the first scan of 1,000 photos (0.3 to 1 MB; warm page cache), median of 5, and a
#    rescan with nothing changed, median of 20;
#  - serve: a cached thumbnail and an asset's JSON under wrk (8 connections, 10 s each), the
#    server on core 0 and wrk on core 1: requests/s.
# Each figure is printed for both builds with NEW/BASE (below 1: the new build is faster;
# for requests/s, above 1 is faster).
# Usage: Benchmarks/against.sh BASE_BINARY NEW_BINARY   (ONLY="scan serve": those parts)
#   Build both with Scripts/release-build.sh (the previous main in a git worktree).
source "$(dirname "$0")/common.sh"
# No thumbnail pass in the background: the scans below would each start one, and a pass left
# running (at nice 19, on either core) cost the serve figures up to 30% and made them differ
# between builds by the order they ran in.
export DARKROOM_NO_BACKGROUND=1
BASE="$(realpath "$1")"
NEW="$(realpath "$2")"
install_peers
"$ROOT/Scripts/install-deps.sh" wrk curl

SRC="$WORK/phone-24mp-o6.jpg"
make_phone_photo "$SRC"
json() { echo "$WORK/against-$1.json"; }
ONLY="${ONLY:-render apply scan serve}"
part() { [[ " $ONLY " == *" $1 "* ]]; }
# medians FILE: the two medians of a two-command hyperfine export, in ms.
medians() {
  /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(" ".join("%.1f" % (x["median"]*1000) for x in r))' "$1"
}
row() { printf '%-44s %10s %10s   %s\n' "$1" "$2" "$3" "$(ratio "$3" "$2")"; }
printf '%-44s %10s %10s   %s\n' "" "base" "new" "new/base"

# Render.
part render && for rep in fullscreen thumbnail; do
  size=""
  [ "$rep" = thumbnail ] && size="--size 256"
  hyperfine -N --warmup 2 --runs 20 --export-json "$(json "$rep")" \
    "$BASE render --no-cache --rep $rep $size $SRC -o $WORK/against-base.jpg" \
    "$NEW render --no-cache --rep $rep $size $SRC -o $WORK/against-new.jpg" >/dev/null
  read -r b n <<<"$(medians "$(json "$rep")")"
  row "render $rep (ms)" "$b" "$n"
done

# Apply.
if part apply; then
IN="$WORK/against-apply-in"
mkdir -p "$IN"
for i in $(seq -w 1 20); do [ -f "$IN/p$i.jpg" ] || cp "$SRC" "$IN/p$i.jpg"; done
filters=(--filter noir --filter 'tone exposure=0.3' --filter 'crop aspect=4:5')
hyperfine --runs 5 --export-json "$(json apply)" \
  --prepare "rm -rf $WORK/against-apply-out" \
  "$BASE apply --jobs 2 ${filters[*]@Q} $IN -o $WORK/against-apply-out --progress none" \
  "$NEW apply --jobs 2 ${filters[*]@Q} $IN -o $WORK/against-apply-out --progress none" >/dev/null
read -r b n <<<"$(medians "$(json apply)")"
row "apply 20 photos, 2 jobs (ms)" "$b" "$n"
fi

# Scan.
LIB="$WORK/against-scan-lib"
if [ "$(find "$LIB" -name '*.jpg' 2>/dev/null | wc -l)" != 1000 ]; then
  rm -rf "$LIB"
  /usr/bin/python3 "$ROOT/Benchmarks/scan_library.py" "$WORK/scan-bases" "$LIB" 1000
fi
cat $(find "$LIB" -name '*.jpg') >/dev/null
if part scan; then
hyperfine -N --runs 5 --export-json "$(json scan)" --prepare "rm -rf $LIB/.darkroom" \
  "$BASE scan $LIB --progress none" "$NEW scan $LIB --progress none" >/dev/null
read -r b n <<<"$(medians "$(json scan)")"
row "first scan, 1,000 photos (ms)" "$b" "$n"
"$NEW" scan "$LIB" --progress none >/dev/null
hyperfine -N --warmup 2 --runs 20 --export-json "$(json rescan)" \
  "$BASE scan $LIB --progress none" "$NEW scan $LIB --progress none" >/dev/null
read -r b n <<<"$(medians "$(json rescan)")"
row "rescan, nothing changed (ms)" "$b" "$n"
fi

# Serve.
TOKEN="against-token-0123456789abcdef"
printf 'write %s\n' "$TOKEN" >"$WORK/against-tokens"
chmod 600 "$WORK/against-tokens"
serve_rate() {  # BINARY PATH: requests/s of PATH on a server of BINARY
  local binary="$1" path="$2" port=18431 pid rate
  taskset -c 0 "$binary" serve "$LIB" --port "$port" --token-file "$WORK/against-tokens" \
    >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  curl -sf -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$port$path" >/dev/null
  rate=$(taskset -c 1 wrk -t1 -c8 -d10s -H "Authorization: Bearer $TOKEN" \
    "http://127.0.0.1:$port$path" | awk '/Requests\/sec/ {print $2}')
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  echo "$rate"
}
"$NEW" scan "$LIB" --progress none >/dev/null
ID=$(cd "$LIB" && "$NEW" list --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
part serve && for what in "thumbnail:/api/assets/$ID/thumbnail" "asset JSON:/api/assets/$ID"; do
  b=$(serve_rate "$BASE" "${what#*:}")
  n=$(serve_rate "$NEW" "${what#*:}")
  row "serve ${what%%:*} (requests/s)" "$b" "$n"
done
