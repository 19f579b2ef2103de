#!/usr/bin/env bash
# What people wait for while the server makes thumbnails in the background, on a machine
# that is also busy with other work: two builds of darkroom side by side, in one run.
#  - the library: 1,000 small photos (scan_library.py), never scanned for thumbnails, so that
#    `serve` starts its background pass at once;
#  - other work: one busy process a core, at the default priority (what a batch job or a
#    build would be);
#  - people: 20 fullscreen renders of distinct photos, asked one after another (curl), each
#    timed; the median and the slowest are printed for each build, and NEW/BASE.
# Before ba5e221 the background pass's first worker set the niceness of every worker, so a
# person's render ran at 19 beside the busy processes.
# Usage: Benchmarks/priority.sh BASE_BINARY NEW_BINARY
source "$(dirname "$0")/common.sh"
BASE="$(realpath "$1")"
NEW="$(realpath "$2")"
"$ROOT/Scripts/install-deps.sh" curl
LIB="$WORK/priority-lib"
if [ "$(find "$LIB" -name '*.jpg' 2>/dev/null | wc -l)" != 1000 ]; then
  rm -rf "$LIB"
  /usr/bin/python3 "$ROOT/Benchmarks/scan_library.py" "$WORK/scan-bases" "$LIB" 1000
fi
TOKEN="priority-token-0123456789abcdef"
printf 'write %s\n' "$TOKEN" >"$WORK/priority-tokens"
chmod 600 "$WORK/priority-tokens"

hogs=()
for _ in $(seq "$(nproc)"); do
  /usr/bin/python3 -c 'while True: pass' &
  hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null || true' EXIT

# render_times BINARY: "median slowest" in ms of 20 fullscreen renders on a fresh server.
render_times() {
  local binary="$1" port=18441 pid
  rm -rf "$LIB/.darkroom"
  DARKROOM_NO_BACKGROUND=1 "$binary" scan "$LIB" --progress none >/dev/null
  "$binary" serve "$LIB" --port "$port" --token-file "$WORK/priority-tokens" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  sleep 2  # the background pass under way
  local ids
  ids=$(cd "$LIB" && "$binary" list --json | /usr/bin/python3 -c \
    'import json,sys; print(" ".join(a["id"] for a in json.load(sys.stdin)[-20:]))')
  for id in $ids; do
    curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -H "Authorization: Bearer $TOKEN" \
      "http://127.0.0.1:$port/api/assets/$id/fullscreen" || echo "failed 0"
  done | /usr/bin/python3 -c '
import sys, statistics as s
r = [line.split() for line in sys.stdin]
assert len(r) == 20 and all(code == "200" for code, _ in r), "a render failed: %s" % r
t = [float(x) * 1000 for _, x in r]
print("%.0f %.0f" % (s.median(t), max(t)))'
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}
read -r bm bw <<<"$(render_times "$BASE")"
read -r nm nw <<<"$(render_times "$NEW")"
read -r bm2 bw2 <<<"$(render_times "$BASE")"
read -r nm2 nw2 <<<"$(render_times "$NEW")"
printf '%-40s %10s %10s   %s\n' "" base new new/base
printf '%-40s %10s %10s   %s\n' "fullscreen, median ms (run 1)" "$bm" "$nm" "$(ratio "$nm" "$bm")"
printf '%-40s %10s %10s   %s\n' "fullscreen, slowest ms (run 1)" "$bw" "$nw" "$(ratio "$nw" "$bw")"
printf '%-40s %10s %10s   %s\n' "fullscreen, median ms (run 2)" "$bm2" "$nm2" "$(ratio "$nm2" "$bm2")"
printf '%-40s %10s %10s   %s\n' "fullscreen, slowest ms (run 2)" "$bw2" "$nw2" "$(ratio "$nw2" "$bw2")"
