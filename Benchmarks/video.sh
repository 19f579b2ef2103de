#!/usr/bin/env bash
# A video's cold poster (issue 29): darkroom render --rep aspect-thumbnail --size 512 --no-cache
# against ffmpeg seeking to the same frame and scaling it to the same size, both writing PNG
# (lossless, 3 bands: the same output, no encoder quality to match), in one run: whole
# processes, median of several runs, and peak memory (Benchmarks/peak_tree.py: the summed
# resident memory of a process and those under it, since darkroom decodes in a worker).
# Inputs, made here by ffmpeg: a 1920x1080 H.264 clip of 10 s (testsrc2 with grain), the same
# as a phone's portrait clip (turned 90 degrees by its matrix: ffmpeg turns it with a filter), the same starting with a second of black (darkroom looks on to 1 s; ffmpeg
# is told -ss 1), and a 4K HLG clip (HEVC 10-bit, BT.2020; darkroom tone-maps it, ffmpeg does
# not: it does less work). Goal: darkroom <= 1.0x ffmpeg.
# Usage: Benchmarks/video.sh [runs=10]   (VIDEO_SKIP_BUILD=1 uses the release build as it is)
source "$(dirname "$0")/common.sh"
RUNS="${1:-10}"
"$ROOT/Scripts/install-deps.sh" ffmpeg hyperfine time libvips-tools
[ -n "${VIDEO_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="$ROOT/.build/release/darkroom"
OUT="$WORK/video-out"
mkdir -p "$OUT"

make() {  # name, ffmpeg arguments...
  local name="$1"
  shift
  [ -f "$WORK/$name" ] || ffmpeg -v error -y "$@" "$WORK/$name"
}
noise="testsrc2=s=1920x1080:r=30:d=10,noise=alls=12:allf=t"
make video-landscape.mp4 -f lavfi -i "$noise" -c:v libx264 -pix_fmt yuv420p
# ffmpeg 5 writes the rotate tag into the track matrix only when it copies the stream.
make video-phone.mp4 -i "$WORK/video-landscape.mp4" -c copy -metadata:s:v:0 rotate=90
make video-fade.mp4 -f lavfi -i "color=c=black:s=1920x1080:r=30:d=1" -f lavfi -i "$noise" \
  -filter_complex "[0:v][1:v]concat=n=2:v=1[v]" -map "[v]" -c:v libx264 -pix_fmt yuv420p
make video-hlg-4k.mp4 -f lavfi -i "testsrc2=s=3840x2160:r=30:d=3,noise=alls=12:allf=t" \
  -vf "zscale=tin=bt709:min=bt709:pin=bt709:rin=full:t=arib-std-b67:m=bt2020nc:p=bt2020:r=limited:npl=203,format=yuv420p10le" \
  -c:v libx265 -x265-params "log-level=error:colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc" \
  -pix_fmt yuv420p10le

bench() {  # name, hyperfine args...
  local name="$1"
  shift
  hyperfine -N --warmup 2 --runs "$RUNS" --export-json "$WORK/video-$name.json" "$@" >/dev/null 2>&1
  median_ms "$WORK/video-$name.json"
}

printf '%-34s %12s %12s %7s %10s %10s\n' "input" "darkroom ms" "ffmpeg ms" "ratio" "dr KiB" "ff KiB"
for row in "video-landscape.mp4:0:512:288" "video-phone.mp4:0:288:512" "video-fade.mp4:1:512:288" \
  "video-hlg-4k.mp4:0:512:288"; do
  IFS=: read -r name at width height <<<"$row"
  dr=("$DARKROOM" render "$WORK/$name" --rep aspect-thumbnail --size 512 --no-cache -o "$OUT/dr.png")
  ff=(ffmpeg -v error -y -ss "$at" -i "$WORK/$name" -frames:v 1 -vf "scale=$width:$height"
    -pix_fmt rgb24 "$OUT/ff.png")
  d=$(bench "$name-dr" "${dr[*]}")
  f=$(bench "$name-ff" "${ff[*]}")
  dm=$(/usr/bin/python3 "$ROOT/Benchmarks/peak_tree.py" "${dr[@]}" | cut -d' ' -f2)
  fm=$(/usr/bin/python3 "$ROOT/Benchmarks/peak_tree.py" "${ff[@]}" | cut -d' ' -f2)
  size_dr=$(vipsheader "$OUT/dr.png" | cut -d: -f2 | cut -d, -f1)
  size_ff=$(vipsheader "$OUT/ff.png" | cut -d: -f2 | cut -d, -f1)
  [ "$size_dr" = "$size_ff" ] || echo "sizes differ: $size_dr against $size_ff" >&2
  printf '%-34s %12s %12s %7s %10s %10s\n' "$name ($size_dr)" "$d" "$f" "$(ratio "$d" "$f")" "$dm" "$fm"
done
