#!/usr/bin/env bash
# An HDR photo's fullscreen (issue 29): a 3681x5594 10-bit PQ AVIF in BT.2020 (made here with
# avifenc from the phone photo's pixels, coded with --cicp 9/16/9), darkroom render --rep
# fullscreen --no-cache (converted from PQ to sRGB) against vipsthumbnail of the same file to
# the same size (which ignores the nclx box: less work, the wrong picture), in one run: median
# time of several runs and peak memory (Benchmarks/peak_tree.py: darkroom decodes in a worker).
# Goals: time within 1.5x of vipsthumbnail; memory under 250 MB.
# Usage: Benchmarks/hdr.sh [runs=5]   (HDR_SKIP_BUILD=1 uses the release build as it is)
source "$(dirname "$0")/common.sh"
RUNS="${1:-5}"
"$ROOT/Scripts/install-deps.sh" libavif-bin libvips-tools hyperfine time
[ -n "${HDR_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="$ROOT/.build/release/darkroom"
SRC="$WORK/hdr-pq-20mp.avif"
if [ ! -f "$SRC" ]; then
  make_phone_photo "$WORK/phone-24mp-o6.jpg"
  # 3681x5594 upright, 16 bits a band: the photo's signal scaled to PQ code values, its white
  # at 38250 of 65535 (203 cd/m2, diffuse white).
  vips rot "$WORK/phone-24mp-o6.jpg" "$WORK/hdr-r.v" d90
  vips resize "$WORK/hdr-r.v" "$WORK/hdr-s.v" 0.9203 --vscale 0.9323
  vips linear "$WORK/hdr-s.v" "$WORK/hdr-l.v" 150 0
  vips cast "$WORK/hdr-l.v" "$WORK/hdr-c.v" ushort
  # 16 bits only when tagged so (PNG's saver makes 8-bit sRGB otherwise); no EXIF, which
  # avifenc would turn the picture by.
  vips copy "$WORK/hdr-c.v" "$WORK/hdr-16.png[strip]" --interpretation rgb16
  avifenc --cicp 9/16/9 -d 10 -s 8 -j all "$WORK/hdr-16.png" "$SRC" >/dev/null
  rm -f "$WORK"/hdr-*.v "$WORK/hdr-16.png"
fi
OUT="$WORK/hdr-out"
mkdir -p "$OUT"
echo "input: $(vipsheader "$SRC" 2>/dev/null) ($(du -h "$SRC" | cut -f1)); darkroom info: $("$DARKROOM" info "$SRC" | grep 'Coded colour')"
dr=("$DARKROOM" render "$SRC" --rep fullscreen --no-cache --quality 85 -o "$OUT/dr.jpg")
vt=(vipsthumbnail "$SRC" -s 1080x1920 -o "$OUT/vt.jpg[Q=85]")
hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$WORK/hdr-dr.json" "${dr[*]}" >/dev/null 2>&1
hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$WORK/hdr-vt.json" "${vt[*]}" >/dev/null 2>&1
d=$(median_ms "$WORK/hdr-dr.json")
v=$(median_ms "$WORK/hdr-vt.json")
dm=$(/usr/bin/python3 "$ROOT/Benchmarks/peak_tree.py" "${dr[@]}" | cut -d' ' -f2)
vm=$(/usr/bin/python3 "$ROOT/Benchmarks/peak_tree.py" "${vt[@]}" 2>/dev/null | cut -d' ' -f2)
printf '%-16s %10s %10s %14s\n' "" "median ms" "peak KiB" "output"
printf '%-16s %10s %10s %14s\n' darkroom "$d" "$dm" "$(vipsheader "$OUT/dr.jpg" | cut -d: -f2 | cut -d, -f1)"
printf '%-16s %10s %10s %14s\n' vipsthumbnail "$v" "$vm" "$(vipsheader "$OUT/vt.jpg" 2>/dev/null | cut -d: -f2 | cut -d, -f1)"
echo "time: $(ratio "$d" "$v")x vipsthumbnail (goal: within 1.5x); memory: $((dm / 1024)) MB (goal: under 250 MB)"
