#!/usr/bin/env bash
# Full-resolution noir + tone + crop on a 24-megapixel JPEG (EXIF orientation 6), in one run:
# `darkroom edit` (in place, original stored), the same through the Swift API without a
# library (DarkroomBench), pyvips doing the same operations (identical pixels), and
# ImageMagick doing the nearest equivalent. Whole processes, median of several runs.
# Usage: Benchmarks/edit.sh [runs=10]
source "$(dirname "$0")/common.sh"
RUNS="${1:-10}"
install_peers
build_darkroom

SRC="$WORK/phone-24mp-o6.jpg"
make_phone_photo "$SRC"
E="$WORK/edit"
FILTERS=(--filter noir --filter "tone exposure=0.5 contrast=0.2" --filter "crop aspect=4:5")
echo "input: $(vipsheader "$SRC") ($(du -h "$SRC" | cut -f1)), orientation 6; output 4000x5000 JPEG Q=92"

time_ms() {  # name, prepare, command (a shell string)
  hyperfine --warmup 1 --runs "$RUNS" --prepare "$2" --export-json "$WORK/edit-$1.json" "$3" >/dev/null 2>&1
  median_ms "$WORK/edit-$1.json"
}
fresh="rm -rf $E && mkdir -p $E && cp $SRC $E/x.jpg"
dr=$(time_ms darkroom "$fresh" "$DARKROOM edit $E/x.jpg --filter noir --filter 'tone exposure=0.5 contrast=0.2' --filter 'crop aspect=4:5' >/dev/null")
api=$(time_ms api "$fresh" "$DARKROOM_BENCH $SRC $E/api.jpg noir 'tone exposure=0.5 contrast=0.2' 'crop aspect=4:5'")
py=$(time_ms pyvips "$fresh" "python3 $ROOT/Benchmarks/pyvips_edit.py $SRC $E/py.jpg")
im=$(time_ms imagemagick "$fresh" "convert $SRC -auto-orient -colorspace Gray -sigmoidal-contrast 3,50% -evaluate multiply 1.3 -gravity center -crop 4000x5000+0+0 +repage -quality 92 $E/im.jpg")

eval "$fresh"
m_dr=$(peak_kb "$DARKROOM" edit "$E/x.jpg" "${FILTERS[@]}")
m_py=$(peak_kb python3 "$ROOT/Benchmarks/pyvips_edit.py" "$SRC" "$E/py.jpg")
m_im=$(peak_kb convert "$SRC" -auto-orient -colorspace Gray -sigmoidal-contrast 3,50% -evaluate multiply 1.3 -gravity center -crop 4000x5000+0+0 +repage -quality 92 "$E/im.jpg")
"$DARKROOM_BENCH" "$SRC" "$E/api.jpg" noir "tone exposure=0.5 contrast=0.2" "crop aspect=4:5"
python3 "$ROOT/Benchmarks/pyvips_edit.py" "$SRC" "$E/py.jpg"
vips subtract "$E/api.jpg" "$E/py.jpg" "$WORK/d.v" && vips abs "$WORK/d.v" "$WORK/a.v"
same=$(vips max "$WORK/a.v")
rm -f "$WORK"/d.v "$WORK"/a.v

printf '%-40s %10s %9s %10s\n' "command" "median ms" "x pyvips" "peak KiB"
printf '%-40s %10s %9s %10s\n' "darkroom edit (in place, store)" "$dr" "$(ratio "$dr" "$py")" "$m_dr"
printf '%-40s %10s %9s %10s\n' "Swift API, no library (DarkroomBench)" "$api" "$(ratio "$api" "$py")" "-"
printf '%-40s %10s %9s %10s\n' "pyvips, same operations" "$py" "1.00" "$m_py"
printf '%-40s %10s %9s %10s\n' "ImageMagick convert, nearest equivalent" "$im" "$(ratio "$im" "$py")" "$m_im"
echo "largest pixel difference, Swift API vs pyvips: $same"
echo "targets: darkroom edit <= 1.1x pyvips ($(ratio "$dr" "$py")x); >= 4x faster than ImageMagick ($(ratio "$im" "$dr")x)"
