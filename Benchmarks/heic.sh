#!/usr/bin/env bash
# A phone's HEICs to grid thumbnails (issue 58): 40 iPhone-sized HEICs (4032x3024 as 48
# tiles of 512x512, 3.0 MB, with a 320x240 thumbnail item, as an iPhone lays one out; made by
# Scripts/make-heic.py from libheif's public examples/example.heic, scaled up, with grain so
# that it codes like a photo; each copy with a byte of its ftyp changed), to 256-pixel square
# thumbnails: `darkroom render --rep thumbnail --size 256` (FFmpeg's HEVC decoder, tiles on
# both cores) against `vipsthumbnail --size 256 --smartcrop centre` (libheif and libde265),
# both over the 40 files in one command, in one run; then one file's thumbnail and
# fullscreen each way, and SSIM of Darkroom's pixels against libheif's at the same size.
# Goals: <= 0.6x vipsthumbnail's time; SSIM >= 0.995.
# Usage: Benchmarks/heic.sh [runs=5]   (HEIC_SKIP_BUILD=1 uses the release build as it is)
source "$(dirname "$0")/common.sh"
RUNS="${1:-5}"
"$ROOT/Scripts/install-deps.sh" ffmpeg libvips-tools libheif-examples hyperfine curl
[ -n "${HEIC_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="$ROOT/.build/release/darkroom"
H="$WORK/heic"
mkdir -p "$H/in" "$H/dr" "$H/vt"
PHOTO="$H/phone-12mp.heic"
if [ ! -f "$PHOTO" ]; then
  [ -f "$H/example.heic" ] || curl -fsSL -o "$H/example.heic" \
    https://raw.githubusercontent.com/strukturag/libheif/master/examples/example.heic
  vips copy "$H/example.heic" "$H/example.png" 2>/dev/null
  vips resize "$H/example.png" "$H/big.v" 3.15
  vips crop "$H/big.v" "$H/crop.v" 0 0 4032 2690
  vips embed "$H/crop.v" "$H/emb.v" 0 0 4032 3024 --extend mirror
  vips gaussnoise "$H/noise.v" 4032 3024 --sigma 6 --mean 0
  vips add "$H/emb.v" "$H/noise.v" "$H/sum.v"
  vips cast "$H/sum.v" "$H/phone-12mp.png" uchar
  rm -f "$H"/*.v
  python3 "$ROOT/Scripts/make-heic.py" "$H/phone-12mp.png" "$PHOTO" --thumbnail 320 --crf 10
fi
for i in $(seq -w 1 40); do
  # ftyp's minor version (bytes 12-15): another file each, decoded the same.
  [ -f "$H/in/p$i.heic" ] || { cp "$PHOTO" "$H/in/p$i.heic" &&
    printf "\\x$(printf %02x "$((10#$i))")" | dd of="$H/in/p$i.heic" bs=1 seek=15 conv=notrunc status=none; }
done
echo "input: 40 x $(vipsheader "$PHOTO" 2>/dev/null | cut -d: -f2) ($(du -h "$PHOTO" | cut -f1)), $(heif-info "$PHOTO" | grep -c 'thumbnail:') thumbnail item; $(nproc) cores"

# The same output: a JPEG at quality 85 each.
dr=("$DARKROOM" render "$H"/in/*.heic --rep thumbnail --size 256 --no-cache --format jpeg
  --quality 85 -o "$H/dr/")
vt=(vipsthumbnail "$H"/in/*.heic --size 256 --smartcrop centre -o "$H/vt/%s.jpg[Q=85]")
hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$WORK/heic-dr.json" "${dr[*]}" >/dev/null 2>&1
hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$WORK/heic-vt.json" "${vt[*]}" >/dev/null 2>&1
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
d=$(median_ms "$WORK/heic-dr.json")
v=$(median_ms "$WORK/heic-vt.json")
printf '%-44s %10s %8s\n' "" "median ms" "ratio"
printf '%-44s %10s %8s\n' "40 thumbnails, darkroom render" "$d" "$(ratio "$d" "$v")"
printf '%-44s %10s %8s\n' "40 thumbnails, vipsthumbnail" "$v" "1.00x"

one() {  # one NAME DARKROOM-ARGS -- VIPSTHUMBNAIL-ARGS
  local name=$1
  shift
  local args=() peer=()
  while [ "$1" != "--" ]; do args+=("$1"); shift; done
  shift
  peer=("$@")
  hyperfine -N --warmup 2 --runs $((RUNS * 2)) --export-json "$WORK/heic-1dr.json" \
    "$DARKROOM render $PHOTO ${args[*]} --no-cache -o $H/one-dr.png" >/dev/null 2>&1
  hyperfine -N --warmup 2 --runs $((RUNS * 2)) --export-json "$WORK/heic-1vt.json" \
    "vipsthumbnail $PHOTO ${peer[*]} -o $H/one-vt.png" >/dev/null 2>&1
  local a b
  a=$(median_ms "$WORK/heic-1dr.json")
  b=$(median_ms "$WORK/heic-1vt.json")
  printf '%-44s %10s %8s   SSIM against libheif %s\n' "one $name, darkroom / vipsthumbnail" \
    "$a / $b" "$(ratio "$a" "$b")" "$(ssim "$H/one-dr.png" "$H/one-vt.png")"
}
one "256 thumbnail" --rep thumbnail --size 256 -- --size 256 --smartcrop centre
one "1920x1080 fullscreen" --rep fullscreen -- --size 1920x1080
