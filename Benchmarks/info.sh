#!/usr/bin/env bash
# darkroom info --json over 500 JPEG files, against exiftool -j and vipsheader -a, in one run.
# Usage: Benchmarks/info.sh [files=500]
source "$(dirname "$0")/common.sh"
N="${1:-500}"
install_peers
build_darkroom

DIR="$WORK/info-$N"
if [ ! -f "$DIR/done" ]; then
  rm -rf "$DIR" && mkdir -p "$DIR"
  # A 12-megapixel photo with camera EXIF: headers are small, pixels are not.
  vips black "$DIR/black.v" 4000 3000 --bands 3
  vips gaussnoise "$DIR/noise.v" 4000 3000 --sigma 40
  vips add "$DIR/black.v" "$DIR/noise.v" "$DIR/base.v"
  vips copy "$DIR/base.v" "$DIR/base.jpg[Q=90]"
  rm -f "$DIR"/*.v
  exiftool -q -overwrite_original -Orientation#=6 -Make=Bench -Model=Camera \
    -DateTimeOriginal="2024:01:02 03:04:05" -GPSLatitude=51.5 -GPSLatitudeRef=N \
    -GPSLongitude=0.12 -GPSLongitudeRef=W -ExposureTime=0.01 -FNumber=4 -ISO=400 "$DIR/base.jpg"
  for i in $(seq -w 1 "$N"); do cp "$DIR/base.jpg" "$DIR/photo-$i.jpg"; done
  rm "$DIR/base.jpg"
  touch "$DIR/done"
fi
echo "inputs: $N JPEG files of $(du -h "$DIR/photo-$(seq -w 1 "$N" | head -1).jpg" | cut -f1), 4000x3000, in $DIR"
cd "$DIR"
hyperfine -N --warmup 2 --runs 10 --export-json "$WORK/info-darkroom.json" \
  "$DARKROOM info --json $(echo photo-*.jpg)" >/dev/null
hyperfine -N --warmup 1 --runs 5 --export-json "$WORK/info-exiftool.json" \
  "exiftool -j -q $(echo photo-*.jpg)" >/dev/null
hyperfine -N --warmup 2 --runs 10 --export-json "$WORK/info-vipsheader.json" \
  "vipsheader -a $(echo photo-*.jpg)" >/dev/null

d=$(median_ms "$WORK/info-darkroom.json")
e=$(median_ms "$WORK/info-exiftool.json")
v=$(median_ms "$WORK/info-vipsheader.json")
printf '%-34s %10s %10s\n' "command ($N files)" "median ms" "ratio"
printf '%-34s %10s %10s\n' "darkroom info --json" "$d" "1.00"
printf '%-34s %10s %10s\n' "exiftool -j" "$e" "$(ratio "$e" "$d")"
printf '%-34s %10s %10s\n' "vipsheader -a" "$v" "$(ratio "$v" "$d")"
echo "darkroom is $(ratio "$e" "$d")x faster than exiftool (target >= 5) and $(ratio "$v" "$d")x faster than vipsheader (target > 1)"
echo "peak memory KiB: darkroom $(peak_kb "$DARKROOM" info --json photo-*.jpg)," \
  "exiftool $(peak_kb exiftool -j -q photo-*.jpg), vipsheader $(peak_kb vipsheader -a photo-*.jpg)"
