#!/usr/bin/env bash
# darkroom apply on 20 and 100 copies of a 24-megapixel JPEG with EXIF orientation 6
# (noir + tone + crop at full resolution, JPEG Q=92), in one run, against: a pyvips script
# doing the same operations (identical pixels) with a pool of 2 processes, a strictly
# sequential darkroom run (--jobs 1, one libvips thread), and ImageMagick's convert per file.
# Prints throughput, ratios and peak memory. Usage: Benchmarks/apply.sh
source "$(dirname "$0")/common.sh"
install_peers
build_darkroom

make_apply_inputs
FILTERS=(--filter noir --filter "tone exposure=0.5 contrast=0.2" --filter "crop aspect=4:5")

# measure NAME N COMMAND...: wall seconds and peak KiB (all processes) of one run over the
# first N files.
measure() {
  local name="$1" n="$2"
  shift 2
  local out="$WORK/apply-out-$name"
  rm -rf "$out" && mkdir -p "$out"
  local files=("$IN"/p*.jpg)
  files=("${files[@]:0:$n}")
  local cmd=("${@//@OUT@/$out}")
  # The summed memory of the process and its children: darkroom's workers and the pyvips
  # pool's processes (GNU time's %M would see one process).
  /usr/bin/python3 "$ROOT/Benchmarks/peak_tree.py" "${cmd[@]}" "${files[@]}" | cut -d' ' -f1,2
}

row() {  # label n seconds kib baseline_rate
  local rate
  rate=$(/usr/bin/python3 -c "print('%.2f' % ($2 / $3))")
  printf '%-44s %5s %9s %10s %9s %11s\n' "$1" "$2" "$3" "$rate" "$(ratio "$rate" "$5")" "$4"
}

echo "input: $(vipsheader "$SRC") ($(du -h "$SRC" | cut -f1)) x N, orientation 6; 2 cores"
printf '%-44s %5s %9s %10s %9s %11s\n' "command" "files" "seconds" "files/s" "x pyvips" "peak KiB"
for n in 20 100; do
  read -r py_s py_kb <<<"$(measure py "$n" python3 "$ROOT/Benchmarks/pyvips_edit.py" --pool 2 --threads 1 @OUT@)"
  py_rate=$(/usr/bin/python3 -c "print($n / $py_s)")
  read -r dr_s dr_kb <<<"$(measure dr "$n" "$DARKROOM" apply --jobs 2 "${FILTERS[@]}" -o @OUT@)"
  read -r seq_s seq_kb <<<"$(measure seq "$n" "$DARKROOM" apply --jobs 1 --vips-threads 1 "${FILTERS[@]}" -o @OUT@)"
  row "darkroom apply --jobs 2" "$n" "$dr_s" "$dr_kb" "$py_rate"
  row "pyvips, pool of 2 processes (1 thread each)" "$n" "$py_s" "$py_kb" "$py_rate"
  row "darkroom apply --jobs 1 --vips-threads 1" "$n" "$seq_s" "$seq_kb" "$py_rate"
  echo "  darkroom --jobs 2 vs strictly sequential: $(ratio "$seq_s" "$dr_s")x (target >= 1.5)"
  eval "dr_kb_$n=$dr_kb"
done
# ImageMagick, per file, on 10 files (it is slow; its rate does not depend on the count).
start=$(date +%s.%N)
for f in $(ls "$IN"/p*.jpg | head -10); do
  convert "$f" -auto-orient -colorspace Gray -sigmoidal-contrast 3,50% -evaluate multiply 1.3 \
    -gravity center -crop 4000x5000+0+0 +repage -quality 92 "$WORK/im.jpg"
done
im_s=$(/usr/bin/python3 -c "import time; print('%.1f' % ($(date +%s.%N) - $start))")
row "ImageMagick convert per file (10 files)" 10 "$im_s" "-" "$py_rate"
echo "peak memory, darkroom --jobs 2: 20 files ${dr_kb_20} KiB, 100 files ${dr_kb_100} KiB ($(ratio "$dr_kb_100" "$dr_kb_20")x; target < 600 MB and within 1.10x)"
