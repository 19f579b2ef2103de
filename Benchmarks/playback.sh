#!/usr/bin/env bash
# Videos' playback version and edits (issue 55), in one run, against ffmpeg doing the same work
# to the same output:
# - a 30 s 1080p HEVC clip with AAC sound to the `medium` playback version (H.264 High,
#   yuv420p, 1280x720, x264 veryfast, CRF 23, sound copied, fragmented MP4): darkroom
#   render --rep playback --delivery medium against ffmpeg -c:v libx264 -preset veryfast -crf 23
#   with the same scale, profile and container; time (median), bytes, SSIM of each against
#   the source scaled to 1280x720 by the same filter, and peak memory (darkroom's summed over
#   its worker: Benchmarks/peak_tree.py). Targets: time <= 1.0x, bytes within 10% at the same
#   SSIM, memory under 300 MB.
# - noir on the same clip (darkroom edit --filter noir: every frame through the graph, x264
#   medium, CRF 20, in the clip's MOV) against ffmpeg -vf hue=s=0 with the same encoder
#   settings (target: <= 1.2x), and against ffmpeg doing noir's own work (grey through its
#   S-curve, lutyuv), with the bytes each writes.
# - time to the first bytes of a 5-minute 1080p HEVC clip's `medium` playback version through
#   darkroom serve (curl's time_starttransfer; the rendition streams as it is made), and the
#   time to the whole of it; a second request (from the cache). Target: first bytes < 2 s.
# Usage: Benchmarks/playback.sh [runs=3]   (VIDEO_SKIP_BUILD=1 uses the release build as it is)
source "$(dirname "$0")/common.sh"
RUNS="${1:-3}"
"$ROOT/Scripts/install-deps.sh" ffmpeg hyperfine time curl
[ -n "${VIDEO_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="$ROOT/.build/release/darkroom"
OUT="$WORK/playback-out"
mkdir -p "$OUT"

SRC="$WORK/hevc-1080p-30s.mov"
[ -f "$SRC" ] || ffmpeg -v error -y -f lavfi -i "testsrc2=s=1920x1080:r=30:d=30,noise=alls=8:allf=t" \
  -f lavfi -i "sine=frequency=440:duration=30" -c:v libx265 -preset fast \
  -x265-params log-level=error -tag:v hvc1 -pix_fmt yuv420p -c:a aac -shortest "$SRC"
echo "input: $(ffprobe -v error -select_streams v:0 -show_entries stream=codec_name,width,height,duration -of csv=p=0 "$SRC"), AAC sound, $(du -h "$SRC" | cut -f1)"

bench() {  # name, command
  hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$WORK/playback-$1.json" "$2" >/dev/null 2>&1
  median_ms "$WORK/playback-$1.json"
}
ssim() {  # output: its SSIM against the source scaled to 1280x720
  ffmpeg -v info -i "$1" -i "$SRC" -lavfi "[1:v]scale=1280:720[ref];[0:v][ref]ssim" -f null - 2>&1 |
    sed -n 's/.*All:\([0-9.]*\).*/\1/p' | tail -1
}

dr=("$DARKROOM" render --rep playback --delivery medium "$SRC" -o "$OUT/dr.mp4")
ff=(ffmpeg -v error -y -i "$SRC" -vf scale=1280:720 -c:v libx264 -preset veryfast -crf 23
  -profile:v high -pix_fmt yuv420p -c:a copy
  -movflags +frag_keyframe+empty_moov+delay_moov+default_base_moof "$OUT/ff.mp4")
d=$(bench dr "${dr[*]}")
f=$(bench ff "${ff[*]}")
dm=$(/usr/bin/python3 "$ROOT/Benchmarks/peak_tree.py" "${dr[@]}" | cut -d' ' -f2)
fm=$(/usr/bin/python3 "$ROOT/Benchmarks/peak_tree.py" "${ff[@]}" | cut -d' ' -f2)
db=$(stat -c %s "$OUT/dr.mp4")
fb=$(stat -c %s "$OUT/ff.mp4")
ds=$(ssim "$OUT/dr.mp4")
fs=$(ssim "$OUT/ff.mp4")
echo
printf '%-30s %10s %10s %7s\n' "medium playback version" "darkroom" "ffmpeg" "ratio"
printf '%-30s %10s %10s %7s\n' "time (ms, median)" "$d" "$f" "$(ratio "$d" "$f")"
printf '%-30s %10s %10s %7s\n' "bytes" "$db" "$fb" "$(ratio "$db" "$fb")"
printf '%-30s %10s %10s\n' "SSIM against the source" "$ds" "$fs"
printf '%-30s %10s %10s %7s\n' "peak memory (KiB)" "$dm" "$fm" "$(ratio "$dm" "$fm")"

# noir: each run edits a fresh copy (in a folder of its own: the edit keeps its original there).
prepare="rm -rf $OUT/edit && mkdir -p $OUT/edit && cp $SRC $OUT/edit/clip.mov"
hyperfine --warmup 1 --runs "$RUNS" --prepare "$prepare" --export-json "$WORK/playback-noir-dr.json" \
  "$DARKROOM edit --filter noir $OUT/edit/clip.mov" >/dev/null 2>&1
n=$(median_ms "$WORK/playback-noir-dr.json")
hyperfine --warmup 1 --runs "$RUNS" --export-json "$WORK/playback-noir-ff.json" \
  "ffmpeg -v error -y -i $SRC -vf hue=s=0 -c:v libx264 -preset medium -crf 20 -profile:v high -pix_fmt yuv420p -c:a copy $OUT/noir-ff.mov" >/dev/null 2>&1
m=$(median_ms "$WORK/playback-noir-ff.json")
# The same work as noir, in ffmpeg: grey (hue=s=0's chroma) through noir's own S-curve
# (y = 0.35x + 0.65 smoothstep(x), on full-range values) on the luma plane.
CURVE="st(0,clip((val-16)/219,0,1));16+219*(0.35*ld(0)+0.65*if(lt(ld(0),0.5),2*ld(0)*ld(0),1-2*(1-ld(0))*(1-ld(0))))"
hyperfine --warmup 1 --runs "$RUNS" --export-json "$WORK/playback-noir-curve.json" \
  "ffmpeg -v error -y -i $SRC -vf \"lutyuv=y='$CURVE':u=128:v=128\" -c:v libx264 -preset medium -crf 20 -profile:v high -pix_fmt yuv420p -c:a copy $OUT/noir-curve.mov" >/dev/null 2>&1
c=$(median_ms "$WORK/playback-noir-curve.json")
printf '%-30s %10s %10s %7s\n' "noir edit (ms) / hue=s=0" "$n" "$m" "$(ratio "$n" "$m")"
printf '%-30s %10s %10s %7s\n' "noir edit (ms) / its curve" "$n" "$c" "$(ratio "$n" "$c")"
nb=$(stat -c %s "$OUT/edit/clip.mov")
cb=$(stat -c %s "$OUT/noir-curve.mov")
printf '%-30s %10s %10s %7s\n' "noir bytes / its curve" "$nb" "$cb" "$(ratio "$nb" "$cb")"

# Time to first bytes through the server, a 5-minute clip not yet made.
LIB="$WORK/playback-lib"
mkdir -p "$LIB"
LONG="$LIB/long.mov"
[ -f "$LONG" ] || ffmpeg -v error -y -f lavfi -i "testsrc2=s=1920x1080:r=30:d=300" \
  -f lavfi -i "sine=frequency=440:duration=300" -c:v libx265 -preset ultrafast \
  -x265-params log-level=error -tag:v hvc1 -pix_fmt yuv420p -c:a aac -shortest "$LONG"
rm -rf "$LIB/.darkroom"
"$DARKROOM" scan "$LIB" >/dev/null 2>&1
ID=$("$DARKROOM" list "$LIB" --json | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print((d[0] if isinstance(d, list) else d['assets'][0])['id'])")
TOKEN="bench-token-0123456789abcdef"
echo "read $TOKEN" >"$WORK/playback-tokens"
chmod 600 "$WORK/playback-tokens"
rm -f "$WORK/playback-serve.out"
"$DARKROOM" serve "$LIB" --port 0 --token-file "$WORK/playback-tokens" --rate-limit 0 \
  >"$WORK/playback-serve.out" 2>"$WORK/playback-serve.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  PORT=$(sed -n 's|.*open http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$WORK/playback-serve.out" 2>/dev/null)
  [ -n "$PORT" ] && break
  sleep 0.1
done
URL="http://127.0.0.1:$PORT/api/assets/$ID/playback?delivery=medium"
first=$(curl -s -o "$OUT/streamed.mp4" -H "Authorization: Bearer $TOKEN" \
  -w '%{time_starttransfer} %{time_total} %{http_code}' "$URL")
again=$(curl -s -o "$OUT/cached.mp4" -H "Authorization: Bearer $TOKEN" \
  -w '%{time_starttransfer} %{time_total} %{http_code}' "$URL")
echo
echo "5-minute 1080p HEVC clip, medium playback through darkroom serve (seconds)"
printf '%-30s %12s %12s %6s\n' "request" "first bytes" "whole" "status"
printf '%-30s %12s %12s %6s\n' "first (made as it streams)" $first
printf '%-30s %12s %12s %6s\n' "second (from the cache)" $again
cmp -s "$OUT/streamed.mp4" "$OUT/cached.mp4" && echo "the streamed bytes are the cached file's" ||
  echo "the streamed bytes differ from the cached file's" >&2
