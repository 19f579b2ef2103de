#!/usr/bin/env bash
# A cached thumbnail behind nginx, in one run (issue 31): nginx in front of darkroom serve
# --accel-redirect, as the README configures it (darkroom answers the request, nginx sends
# the cached file with sendfile), against the same nginx serving the same bytes as a static
# file, and against darkroom serve alone. nginx and darkroom share core 0 (taskset), wrk
# runs on core 1 (one thread, 32 connections, DURATION seconds each): requests/s and p99.
# Goal: nginx + darkroom >= 0.8x nginx alone, p99 < 10 ms. And signed addresses (issue 58,
# `serve --signed-renditions`): nginx checking them itself with docs/server.md's block (njs,
# a 1-minute cache) >= 0.9x nginx static; darkroom alone answering one >= 0.5x.
# Usage: Benchmarks/accel.sh   (DURATION=20; ACCEL_SKIP_BUILD=1 uses the release build as it is)
source "$(dirname "$0")/common.sh"
DURATION="${DURATION:-20}"
"$ROOT/Scripts/install-deps.sh" libvips-tools libimage-exiftool-perl wrk nginx libnginx-mod-http-js curl time
[ -n "${ACCEL_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="$ROOT/.build/release/darkroom"

LIB="$WORK/accel-lib"
SRC="$WORK/phone-24mp-o6.jpg"
make_phone_photo "$SRC"
rm -rf "$LIB" && mkdir -p "$LIB" && cp "$SRC" "$LIB/p1.jpg"
"$DARKROOM" scan "$LIB" --no-background >/dev/null 2>&1
TOKEN="bench-token-0123456789abcdef"
echo "write $TOKEN" >"$WORK/accel-tokens"
chmod 600 "$WORK/accel-tokens"
AUTH="Authorization: Bearer $TOKEN"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$WORK/accel-nginx.pid" ] && kill "$(cat "$WORK/accel-nginx.pid")" 2>/dev/null || true
}
trap cleanup EXIT

taskset -c 0 "$DARKROOM" serve "$LIB" --port 18092 --token-file "$WORK/accel-tokens" --rate-limit 0 \
  --no-background --accel-redirect /_darkroom_cache/ --log-level warning >"$WORK/accel-serve.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do curl -sf http://127.0.0.1:18092/healthz >/dev/null && break; sleep 0.1; done
# The same library served a second time without --accel-redirect, behind nginx's own cache.
taskset -c 0 "$DARKROOM" serve "$LIB" --port 18094 --token-file "$WORK/accel-tokens" --rate-limit 0 \
  --no-background --signed-renditions --log-level warning >"$WORK/accel-serve2.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do curl -sf http://127.0.0.1:18094/healthz >/dev/null && break; sleep 0.1; done
rm -rf "$WORK/accel-nginx-cache" "$WORK/accel-signed-cache0" "$WORK/accel-signed-cache1"
# docs/server.md's two nginx blocks for signed addresses (0: nginx keeps what darkroom
# checked; 1: nginx checks with njs), as written there but for their paths.
# The key in hex for nginx, as docs/server.md writes it (readable by nginx's workers, here
# another user).
printf 'set $darkroom_signing_key %s;\n' "$(od -An -v -tx1 "$LIB/.darkroom/signing.key" | tr -d ' \n')" \
  >"$WORK/accel-signing-key.conf"
signed_block() {  # N: the Nth nginx block of the section, its paths made this run's
  awk -v want="$1" '/^## Signed addresses/ { s = 1 } s && /^```nginx/ { n++; b = (n == want + 1); next } b && /^```/ { b = 0 } b' "$ROOT/docs/server.md" |
    sed -e "s|/etc/nginx/darkroom-signed.js|$ROOT/docs/nginx/darkroom-signed.js|" \
      -e "s|/var/cache/nginx/darkroom-signed|$WORK/accel-signed-cache$1|" \
      -e "s|keys_zone=darkroom_signed|keys_zone=darkroom_signed$1|" \
      -e "s|proxy_cache darkroom_signed;|proxy_cache darkroom_signed$1;|" \
      -e "s|/etc/nginx/darkroom-signing-key.conf|$WORK/accel-signing-key.conf|" \
      -e "s|http://darkroom;|http://darkroom_signed;|" \
      -e "s|\\\$darkroom_unsigned|\\\$darkroom_unsigned$1|g" \
      -e "s|\\\$darkroom_unmarked|\\\$darkroom_unmarked$1|g"
}
KEEPS=$(signed_block 0)
CHECKS=$(signed_block 1)
KEEPS_HTTP=$(printf '%s\n' "$KEEPS" | sed -n '1,/^# in server/p' | sed '$d')
KEEPS_LOCATION=$(printf '%s\n' "$KEEPS" | sed -n '/^# in server/,$p')
CHECKS_HTTP=$(printf '%s\n' "$CHECKS" | sed -n '1,/^# in server/p' | sed '$d')
CHECKS_LOCATION=$(printf '%s\n' "$CHECKS" | sed -n '/^# in server/,$p')
[ -n "$KEEPS_LOCATION" ] && [ -n "$CHECKS_LOCATION" ] || { echo "no signed blocks in docs/server.md" >&2; exit 1; }
mkdir -p "$WORK/accel-static"
cat >"$WORK/accel-nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ngx_http_js_module.so;
worker_processes 1;
pid $WORK/accel-nginx.pid;
error_log $WORK/accel-nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  include /etc/nginx/mime.types;
  upstream darkroom { server 127.0.0.1:18092; keepalive 64; }
  upstream darkroom_plain { server 127.0.0.1:18094; keepalive 64; }
  # The README's second block: nginx keeps versioned renditions (immutable URLs) per
  # credential for a minute, so a repeated request never reaches darkroom.
  proxy_cache_path $WORK/accel-nginx-cache levels=1:2 keys_zone=darkroom:10m max_size=1g inactive=10m use_temp_path=off;
  map \$arg_v \$darkroom_unversioned { "" 1; default 0; }
  server {
    listen 18093;
    location /static/ { alias $WORK/accel-static/; }
    # The README's block: everything to darkroom, cached renditions sent from its cache.
    location / {
      proxy_pass http://darkroom;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$host;
      proxy_set_header X-Forwarded-Proto \$scheme;
    }
    location /_darkroom_cache/ {
      internal;
      alias $LIB/.darkroom/cache/;
      add_header X-Content-Type-Options nosniff;
      add_header Vary Accept;
    }
  }
  upstream darkroom_signed { server 127.0.0.1:18094; keepalive 64; }
  $KEEPS_HTTP
  $CHECKS_HTTP
  server {
    listen 18096;
    $CHECKS_LOCATION
  }
  server {
    listen 18097;
    $KEEPS_LOCATION
  }
  server {
    listen 18095;
    location / {
      proxy_pass http://darkroom_plain;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$host;
    }
    location ~ ^/api/assets/[^/]+/(thumbnail|aspect-thumbnail|fullscreen|exif-thumbnail)\$ {
      proxy_pass http://darkroom_plain;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$host;
      proxy_cache darkroom;
      proxy_cache_key "\$http_authorization|\$cookie_darkroom_session|\$http_accept|\$request_uri";
      proxy_cache_valid 200 1m;
      proxy_no_cache \$darkroom_unversioned;
      proxy_cache_bypass \$darkroom_unversioned;
    }
  }
}
CONF
taskset -c 0 nginx -c "$WORK/accel-nginx.conf"
sleep 0.5
ID=$("$DARKROOM" list --library "$LIB" --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
VERSION=$(curl -sf -H "$AUTH" "http://127.0.0.1:18092/api/assets/$ID" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
PATH_Q="/api/assets/$ID/thumbnail?size=256&v=$VERSION"
curl -sf -H "$AUTH" -o "$WORK/accel-static/thumb.jpg" "http://127.0.0.1:18093$PATH_Q"   # renders it
curl -sf -H "$AUTH" -o "$WORK/accel-via.jpg" -D "$WORK/accel-headers.txt" "http://127.0.0.1:18093$PATH_Q"
cmp -s "$WORK/accel-static/thumb.jpg" "$WORK/accel-via.jpg" || { echo "nginx sent other bytes than darkroom" >&2; exit 1; }
grep -qi '^content-type: image/jpeg' "$WORK/accel-headers.txt" || { echo "no image/jpeg type" >&2; exit 1; }
curl -sf -H "$AUTH" -o /dev/null -D "$WORK/accel-direct.txt" "http://127.0.0.1:18092$PATH_Q"
grep -qi '^x-accel-redirect: /_darkroom_cache/objects/' "$WORK/accel-direct.txt" || { echo "darkroom did not redirect" >&2; exit 1; }
echo "thumbnail: $(stat -c %s "$WORK/accel-static/thumb.jpg") bytes, the same through nginx + darkroom as from darkroom (which answers X-Accel-Redirect)"

SIGNED_Q=$(curl -sf -H "$AUTH" "http://127.0.0.1:18094/api/assets/$ID" | /usr/bin/python3 -c '
import json, sys
a = json.load(sys.stdin)
print("/api/assets/%s/thumbnail?size=256&v=%s&e=%d&sig=%s" % (a["id"], a["version"], a["signed"]["expires"], a["signed"]["thumbnail"]))')
for port in 18096 18097; do
  curl -sf -o "$WORK/accel-signed.jpg" "http://127.0.0.1:$port$SIGNED_Q"
  cmp -s "$WORK/accel-static/thumb.jpg" "$WORK/accel-signed.jpg" || { echo "the signed address gave other bytes" >&2; exit 1; }
  curl -s -o /dev/null -D "$WORK/accel-signed-headers.txt" "http://127.0.0.1:$port$SIGNED_Q"
  grep -qi '^x-cache-status: HIT' "$WORK/accel-signed-headers.txt" || { echo "nginx ($port) did not keep the signed thumbnail" >&2; exit 1; }
  BAD_Q="${SIGNED_Q%???}xyz"
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$BAD_Q")" = 403 ] || { echo "nginx ($port) let a wrong signature in" >&2; exit 1; }
done
echo "signed: $SIGNED_Q (nginx keeps it; a wrong signature is 403)"

rps() { sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$1"; }
p99() { awk '$1 == "99%" { print $2 }' "$1"; }
errors() { sed -n 's/.*Non-2xx or 3xx responses: *\([0-9]*\).*/\1/p' "$1" | grep . || echo 0; }
run() {  # NAME URL [HEADER]
  taskset -c 1 wrk -t1 -c32 -d"${DURATION}s" --latency -H "${3:-$AUTH}" "$2" >"$WORK/accel-$1.txt"
  printf '%-34s %12s %10s %8s\n' "$1" "$(rps "$WORK/accel-$1.txt")" "$(p99 "$WORK/accel-$1.txt")" "$(errors "$WORK/accel-$1.txt")"
}
printf '%-34s %12s %10s %8s\n' "" "requests/s" "p99" "errors"
run nginx-static "http://127.0.0.1:18093/static/thumb.jpg"
run nginx+darkroom-accel "http://127.0.0.1:18093$PATH_Q"
run darkroom-alone "http://127.0.0.1:18094$PATH_Q"
curl -sf -H "$AUTH" -o /dev/null "http://127.0.0.1:18095$PATH_Q"
run nginx-cache+darkroom "http://127.0.0.1:18095$PATH_Q"
run nginx-keeps-signed "http://127.0.0.1:18097$SIGNED_Q" "Accept: image/*"
run nginx-checks-signed "http://127.0.0.1:18096$SIGNED_Q" "Accept: image/*"
run darkroom-alone-signed "http://127.0.0.1:18094$SIGNED_Q" "Accept: image/*"
echo
echo "nginx + darkroom (X-Accel-Redirect) / nginx static: $(ratio "$(rps "$WORK/accel-nginx+darkroom-accel.txt")" "$(rps "$WORK/accel-nginx-static.txt")")x (goal >= 0.8x)"
echo "nginx's cache + darkroom / nginx static: $(ratio "$(rps "$WORK/accel-nginx-cache+darkroom.txt")" "$(rps "$WORK/accel-nginx-static.txt")")x (goal >= 0.8x)"
echo "darkroom alone / nginx static: $(ratio "$(rps "$WORK/accel-darkroom-alone.txt")" "$(rps "$WORK/accel-nginx-static.txt")")x (goal >= 0.5x)"
echo "nginx keeping signed answers darkroom checked / nginx static: $(ratio "$(rps "$WORK/accel-nginx-keeps-signed.txt")" "$(rps "$WORK/accel-nginx-static.txt")")x (goal >= 0.9x)"
echo "nginx checking signed addresses (njs) + its cache / nginx static: $(ratio "$(rps "$WORK/accel-nginx-checks-signed.txt")" "$(rps "$WORK/accel-nginx-static.txt")")x (goal >= 0.9x)"
echo "darkroom alone, signed address / nginx static: $(ratio "$(rps "$WORK/accel-darkroom-alone-signed.txt")" "$(rps "$WORK/accel-nginx-static.txt")")x (goal >= 0.5x)"
