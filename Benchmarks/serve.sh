#!/usr/bin/env bash
# darkroom serve under load, in one run, on loopback:
#  1. a cached thumbnail: darkroom serve against Debian's nginx serving the same bytes as a
#     static file, each pinned to one core (taskset -c 0), wrk on the other: requests/s, p99;
#  2. cold fullscreen renders of distinct 24-megapixel photos through the server against
#     `darkroom render` of the same files to the same output (1920x1080 box, quality 85, no
#     metadata), both two at a time: renders/s;
#  3. a soak: wrk on a mix of cached thumbnails, asset JSON and list pages for SOAK seconds,
#     the server's resident memory sampled throughout: errors, and memory at the end
#     against memory after the first 30 s.
# Usage: Benchmarks/serve.sh   (SOAK=300 by default; COLD=24 photos; DURATION=20 s per wrk)
source "$(dirname "$0")/common.sh"
SOAK="${SOAK:-300}"
COLD="${COLD:-24}"
DURATION="${DURATION:-20}"
"$ROOT/Scripts/install-deps.sh" libvips-tools libimage-exiftool-perl wrk nginx curl time
[ -n "${SERVE_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="$ROOT/.build/release/darkroom"

LIB="$WORK/serve-lib"
SRC="$WORK/phone-24mp-o6.jpg"
make_phone_photo "$SRC"
mkdir -p "$LIB"
for i in $(seq -w 1 "$COLD"); do
  # Distinct content (a brightness step each), the same decoding work.
  [ -f "$LIB/p$i.jpg" ] || { vips linear "$SRC" "$LIB/p$i.jpg[Q=92]" 1 "$((10#$i))" --uchar; \
    exiftool -q -overwrite_original -Orientation#=6 "$LIB/p$i.jpg"; }
done
"$DARKROOM" scan "$LIB" >/dev/null
TOKEN="bench-token-0123456789abcdef"
echo "write $TOKEN" >"$WORK/serve-tokens"
chmod 600 "$WORK/serve-tokens"  # serve refuses a token file others may read
AUTH="Authorization: Bearer $TOKEN"

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

start_darkroom() {  # taskset prefix...; sets PORT and PID
  rm -f "$WORK/serve.out"
  "$@" "$DARKROOM" serve "$LIB" --port 0 --token-file "$WORK/serve-tokens" --rate-limit 0 \
    >"$WORK/serve.out" 2>"$WORK/serve.log" &
  PID=$!
  PIDS+=("$PID")
  for _ in $(seq 1 300); do
    PORT=$(sed -n 's|.*open http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$WORK/serve.out" 2>/dev/null)
    [ -n "$PORT" ] && return
    sleep 0.1
  done
  echo "darkroom serve did not start" >&2
  exit 1
}

rps() { sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$1"; }
p99() { awk '$1 == "99%" { print $2 }' "$1"; }
errors() { sed -n 's/.*Non-2xx or 3xx responses: *\([0-9]*\).*/\1/p' "$1" | grep . || echo 0; }

echo "input: $COLD photos of $(vipsheader "$SRC" | cut -d, -f1 | sed 's/.*: //') (EXIF orientation 6)"

# 1. A cached thumbnail.
start_darkroom taskset -c 0
ID=$("$DARKROOM" list --library "$LIB" --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
VERSION=$(curl -sf -H "$AUTH" "http://127.0.0.1:$PORT/api/assets/$ID" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
URL="http://127.0.0.1:$PORT/api/assets/$ID/thumbnail?size=256&v=$VERSION"
mkdir -p "$WORK/nginx-root"
curl -sf -H "$AUTH" "$URL" -o "$WORK/nginx-root/thumb.jpg"
echo "thumbnail: $(stat -c %s "$WORK/nginx-root/thumb.jpg") bytes"
cat >"$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log $WORK/nginx-access.log;
  types { image/jpeg jpg; }
  server {
    listen 127.0.0.1:18089;
    root $WORK/nginx-root;
    location / { add_header Cache-Control "public, max-age=31536000, immutable"; }
  }
}
CONF
taskset -c 0 nginx -c "$WORK/nginx.conf" &
PIDS+=("$!")
sleep 1
for c in 1 32; do
  taskset -c 1 wrk -t1 -c$c -d"${DURATION}s" --latency -H "$AUTH" "$URL" >"$WORK/wrk-dr-$c.txt"
  taskset -c 1 wrk -t1 -c$c -d"${DURATION}s" --latency "http://127.0.0.1:18089/thumb.jpg" >"$WORK/wrk-nginx-$c.txt"
done
kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
kill "$PID"; wait "$PID" 2>/dev/null || true
printf '\n1. cached thumbnail, one core each, wrk -t1 for %s s\n' "$DURATION"
printf '%-26s %12s %10s %8s\n' "server, connections" "requests/s" "p99" "errors"
for c in 1 32; do
  printf '%-26s %12s %10s %8s\n' "darkroom serve, $c" "$(rps "$WORK/wrk-dr-$c.txt")" "$(p99 "$WORK/wrk-dr-$c.txt")" "$(errors "$WORK/wrk-dr-$c.txt")"
  printf '%-26s %12s %10s %8s\n' "nginx, $c" "$(rps "$WORK/wrk-nginx-$c.txt")" "$(p99 "$WORK/wrk-nginx-$c.txt")" "$(errors "$WORK/wrk-nginx-$c.txt")"
  echo "  darkroom / nginx: $(ratio "$(rps "$WORK/wrk-dr-$c.txt")" "$(rps "$WORK/wrk-nginx-$c.txt")")x"
done

# 2. Cold fullscreen renders: the server (workers, both cores) against darkroom render.
rm -rf "$LIB/.darkroom/cache"
start_darkroom
IDS=$("$DARKROOM" list --library "$LIB" --json | /usr/bin/python3 -c 'import json,sys; print("\n".join(a["id"] for a in json.load(sys.stdin)))')
mkdir -p "$WORK/cold-out"
start=$(date +%s.%N)
echo "$IDS" | xargs -P 2 -I{} curl -sf -H "$AUTH" -o "$WORK/cold-out/{}.jpg" "http://127.0.0.1:$PORT/api/assets/{}/fullscreen"
served=$(/usr/bin/python3 -c "import sys; print('%.2f' % ($COLD / ($(date +%s.%N) - $start)))")
kill "$PID"; wait "$PID" 2>/dev/null || true
start=$(date +%s.%N)
printf '%s\n' "$LIB"/*.jpg | xargs -P 2 -I{} sh -c \
  'exec "$0" render "$1" --rep fullscreen --quality 85 --strip --no-cache -o "$2/cli-${1##*/}"' \
  "$DARKROOM" {} "$WORK/cold-out" >/dev/null
cli=$(/usr/bin/python3 -c "import sys; print('%.2f' % ($COLD / ($(date +%s.%N) - $start)))")
printf '\n2. cold fullscreen, %s distinct photos, two at a time\n' "$COLD"
printf '%-26s %12s\n' "darkroom serve" "$served/s" "darkroom render" "$cli/s"
echo "  serve / render: $(ratio "$served" "$cli")x"
/usr/bin/python3 - "$WORK/cold-out" <<'PY'
import os, sys
d = sys.argv[1]
sizes = [os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if not f.startswith("cli-")]
clis = [os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.startswith("cli-")]
print("  outputs: %d from the server, %d from render; mean bytes %d and %d" % (len(sizes), len(clis), sum(sizes) / max(1, len(sizes)), sum(clis) / max(1, len(clis))))
PY

# 3. Soak.
start_darkroom
cat >"$WORK/soak.lua" <<LUA
local ids = {}
for id in io.open("$WORK/soak-ids.txt"):lines() do ids[#ids + 1] = id end
local n = 0
request = function()
  n = n + 1
  local id = ids[(n % #ids) + 1]
  local kind = n % 4
  local path
  if kind == 0 then path = "/api/assets/" .. id .. "/thumbnail?size=256"
  elseif kind == 1 then path = "/api/assets/" .. id
  elseif kind == 2 then path = "/api/assets?limit=50"
  else path = "/api/assets/" .. id .. "/thumbnail?size=128" end
  return wrk.format("GET", path, { ["Authorization"] = "Bearer $TOKEN" })
end
LUA
echo "$IDS" >"$WORK/soak-ids.txt"
for id in $IDS; do  # warm the thumbnails the soak asks for
  curl -sf -o /dev/null -H "$AUTH" "http://127.0.0.1:$PORT/api/assets/$id/thumbnail?size=256"
  curl -sf -o /dev/null -H "$AUTH" "http://127.0.0.1:$PORT/api/assets/$id/thumbnail?size=128"
done
rss() { awk '/VmRSS/ { print $2 }' "/proc/$PID/status"; }
taskset -c 1 wrk -t1 -c16 -d"${SOAK}s" --latency -s "$WORK/soak.lua" "http://127.0.0.1:$PORT" >"$WORK/wrk-soak.txt" &
WRK=$!
sleep 30
early=$(rss)
samples="$early"
while kill -0 "$WRK" 2>/dev/null; do sleep 10; samples="$samples $(rss)"; done
late=$(rss)
kill "$PID"; wait "$PID" 2>/dev/null || true
printf '\n3. soak: %s s of wrk -c16 over thumbnails, asset JSON and list pages\n' "$SOAK"
echo "  requests/s $(rps "$WORK/wrk-soak.txt"), p99 $(p99 "$WORK/wrk-soak.txt"), non-2xx/3xx $(errors "$WORK/wrk-soak.txt"), socket errors: $(grep -c 'Socket errors' "$WORK/wrk-soak.txt")"
echo "  RSS KiB at 30 s: $early, at the end: $late (end / 30 s: $(ratio "$late" "$early")x); samples: $samples"
