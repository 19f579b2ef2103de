#!/usr/bin/env bash
# darkroom render --rep fullscreen|thumbnail on a 24-megapixel JPEG with EXIF orientation 6,
# cold (empty cache) and warm (cached), against vipsthumbnail, ImageMagick and Pillow, in one
# run: whole processes, median of several runs, and peak memory of one run each.
# Usage: Benchmarks/render.sh [runs=15]
source "$(dirname "$0")/common.sh"
RUNS="${1:-15}"
install_peers
build_darkroom

SRC="$WORK/phone-24mp-o6.jpg"
make_phone_photo "$SRC"
echo "input: $(vipsheader "$SRC") ($(du -h "$SRC" | cut -f1)), EXIF orientation 6"
OUT="$WORK/out"
CACHE="$WORK/cache"
mkdir -p "$OUT"
Q=85

bench() {  # name, hyperfine args...
  local name="$1"
  shift
  hyperfine -N --warmup 2 --runs "$RUNS" --export-json "$WORK/render-$name.json" "$@" >/dev/null 2>&1
  median_ms "$WORK/render-$name.json"
}

report() {  # title, then name=command pairs measured above
  printf '\n%s\n%-28s %10s %8s %12s %8s\n' "$1" "command" "median ms" "x vips" "peak KiB" "x vips"
}

for rep in fullscreen thumbnail; do
  if [ "$rep" = fullscreen ]; then
    dr_args=(render "$SRC" --rep fullscreen --quality $Q)
    vt_args=(vipsthumbnail "$SRC" -s 1080x1920 -o "$OUT/vt.jpg[Q=$Q]")
    im_args=(convert -define jpeg:size=3240x2160 "$SRC" -auto-orient -resize 1080x1920 -quality $Q "$OUT/im.jpg")
    pil_args=(/usr/bin/python3 "$ROOT/Benchmarks/pillow_render.py" fullscreen "$SRC" "$OUT/pil.jpg" 1920 $Q)
  else
    dr_args=(render "$SRC" --rep thumbnail --size 256 --quality $Q)
    vt_args=(vipsthumbnail "$SRC" -s 256x256 --smartcrop centre -o "$OUT/vt.jpg[Q=$Q]")
    im_args=(convert -define jpeg:size=512x512 "$SRC" -auto-orient -thumbnail '256x256^' -gravity center -extent 256x256 -quality $Q "$OUT/im.jpg")
    pil_args=(/usr/bin/python3 "$ROOT/Benchmarks/pillow_render.py" thumbnail "$SRC" "$OUT/pil.jpg" 256 $Q)
  fi
  cold_cmd="$DARKROOM ${dr_args[*]} -o $OUT/dr.jpg --cache-dir $CACHE"
  cold=$(bench "$rep-cold" --prepare "rm -rf $CACHE" "$cold_cmd")
  "$DARKROOM" "${dr_args[@]}" -o "$OUT/dr.jpg" --cache-dir "$CACHE" >/dev/null
  warm=$(bench "$rep-warm" "$cold_cmd")
  vt=$(bench "$rep-vt" "${vt_args[*]}")
  im=$(bench "$rep-im" "${im_args[*]}")
  pil=$(bench "$rep-pil" "${pil_args[*]}")

  rm -rf "$CACHE"
  m_cold=$(peak_kb "$DARKROOM" "${dr_args[@]}" -o "$OUT/dr.jpg" --cache-dir "$CACHE")
  m_warm=$(peak_kb "$DARKROOM" "${dr_args[@]}" -o "$OUT/dr.jpg" --cache-dir "$CACHE")
  m_vt=$(peak_kb "${vt_args[@]}")
  m_im=$(peak_kb "${im_args[@]}")
  m_pil=$(peak_kb "${pil_args[@]}")

  echo
  echo "--rep $rep: output $(vipsheader "$OUT/dr.jpg" | cut -d: -f2 | cut -d, -f1) (darkroom), $(vipsheader "$OUT/vt.jpg" | cut -d: -f2 | cut -d, -f1) (vipsthumbnail)"
  printf '%-28s %10s %8s %12s %8s\n' "command" "median ms" "x vips" "peak KiB" "x vips"
  for row in "darkroom cold:$cold:$m_cold" "darkroom warm (cached):$warm:$m_warm" \
    "vipsthumbnail:$vt:$m_vt" "ImageMagick convert:$im:$m_im" "Pillow:$pil:$m_pil"; do
    IFS=: read -r name ms kb <<<"$row"
    printf '%-28s %10s %8s %12s %8s\n' "$name" "$ms" "$(ratio "$ms" "$vt")" "$kb" "$(ratio "$kb" "$m_vt")"
  done
  target=$([ "$rep" = fullscreen ] && echo 0.85 || echo 0.90)
  echo "targets: cold <= ${target}x vipsthumbnail time ($(ratio "$cold" "$vt")) and <= 1.2x its memory ($(ratio "$m_cold" "$m_vt"));" \
    "warm <= 0.15x ($(ratio "$warm" "$vt")); >= 4x faster than ImageMagick ($(ratio "$im" "$cold")x)"
done
