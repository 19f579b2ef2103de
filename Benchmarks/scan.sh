#!/usr/bin/env bash
# darkroom scan of a library of N JPEG files (10,000 of 0.3 to 1 MB, camera EXIF, YYYY/MM/
# folders of 100, made by scan_library.py), in one run, against the floor of reading every
# byte (find -exec cat) and exiftool -r -j -fast: the first scan's time, MB/s and peak
# memory, a rescan with nothing changed, and the first scan's peak memory at 1,000 files
# against N. Every measured run starts from the same cache: the page cache dropped when this
# runs as root (cold), or else everything read once first (warm).
# Usage: Benchmarks/scan.sh, with optional variables:
#   SCAN_FILES=10000  files in the library
#   SCAN_RUNS=3       runs of each measurement (median time, largest peak memory)
#   SCAN_CACHE=cold|warm  (default: cold if the page cache can be dropped)
#   SCAN_SKIP_BUILD=1 use $DARKROOM (default .build/release/darkroom) and $DARKROOM_BENCH
#                     as they are, without building
source "$(dirname "$0")/common.sh"
# The scan alone: no thumbnail pass started in the background when it is done (it outlived
# the run and raced the next run's removal of .darkroom/).
export DARKROOM_NO_BACKGROUND=1
N="${SCAN_FILES:-10000}"
RUNS="${SCAN_RUNS:-3}"
install_peers
if [ "${SCAN_SKIP_BUILD:-}" = 1 ]; then
  DARKROOM="${DARKROOM:-$ROOT/.build/release/darkroom}"
  DARKROOM_BENCH="${DARKROOM_BENCH:-$ROOT/.build/release/DarkroomBench}"
else
  build_darkroom
fi

# make_library DIR COUNT: the library in DIR, made once for a count and a version of
# scan_library.py (the same files for the same count, so the 1,000-file library is the
# first 1,000 files of any larger one).
make_library() {
  local dir="$1" count="$2" stamp
  stamp="$count $(sha1sum <"$ROOT/Benchmarks/scan_library.py" | cut -c1-12)"
  if [ "$(cat "$dir.made" 2>/dev/null)" = "$stamp" ] &&
    [ "$(find "$dir" -name '*.jpg' 2>/dev/null | wc -l)" = "$count" ]; then
    return
  fi
  rm -rf "$dir" "$dir.made"
  echo "making $count JPEG files in $dir" >&2
  /usr/bin/python3 "$ROOT/Benchmarks/scan_library.py" "$WORK/scan-bases" "$dir" "$count"
  echo "$stamp" >"$dir.made"
}
LIB="$WORK/scan-lib"
SMALL="$WORK/scan-1k"
make_library "$LIB" "$N"
make_library "$SMALL" 1000
rm -rf "$LIB/.darkroom" "$SMALL/.darkroom"

bytes() { find "$1" -name '*.jpg' -printf '%s\n' | awk '{ s += $1 } END { print s }'; }
LIB_BYTES=$(bytes "$LIB")
SMALL_BYTES=$(bytes "$SMALL")

CACHE="${SCAN_CACHE:-auto}"
if [ "$CACHE" = auto ]; then
  if sync && (echo 3 >/proc/sys/vm/drop_caches) 2>/dev/null; then CACHE=cold; else CACHE=warm; fi
fi
if [ "$CACHE" = cold ]; then
  prepare_cache() { sync && echo 3 >/proc/sys/vm/drop_caches; }
  cache_note="page cache dropped before every run"
else
  prepare_cache() { :; }
  find "$LIB" "$SMALL" -name '*.jpg' -exec cat {} + >/dev/null
  cache_note="warm: every file read once first"
fi

median() { /usr/bin/python3 -c 'import statistics, sys; print("%.3f" % statistics.median(map(float, sys.argv[1:])))' "$@"; }
mbps() { /usr/bin/python3 -c "import sys; print('%.0f' % (float(sys.argv[1]) / 1e6 / float(sys.argv[2])))" "$1" "$2"; }

# measure NAME CLEAN COMMAND...: runs COMMAND $RUNS times, each after removing
# CLEAN/.darkroom (unless CLEAN is -) and preparing the cache, its standard output to
# /dev/null and its standard error to $WORK/scan-NAME.log; sets M_SECONDS to the median wall
# seconds and M_KIB to the largest peak resident memory (KiB) of the runs.
measure() {
  local log="$WORK/scan-$1.log" clean="$2" times=() start end k r
  shift 2
  M_KIB=0
  for ((r = 0; r < RUNS; r++)); do
    [ "$clean" = - ] || rm -rf "$clean/.darkroom"
    prepare_cache
    start=$(date +%s.%N)
    if ! /usr/bin/time -o "$WORK/scan-time.txt" -f '%M' "$@" >/dev/null 2>"$log"; then
      echo "failed: $*" >&2
      tail -n 20 "$log" >&2
      exit 1
    fi
    end=$(date +%s.%N)
    times+=("$(/usr/bin/python3 -c "print($end - $start)")")
    k=$(tail -n 1 "$WORK/scan-time.txt")
    if [ "$k" -gt "$M_KIB" ]; then M_KIB=$k; fi
  done
  M_SECONDS=$(median "${times[@]}")
}

echo "measuring: $RUNS runs each, $CACHE cache" >&2
measure floor - bash -c 'find "$1" -name "*.jpg" -exec cat {} + >/dev/null' _ "$LIB"
floor_s=$M_SECONDS floor_kb=$M_KIB
measure exiftool - exiftool -r -j -fast "$LIB"
exif_s=$M_SECONDS exif_kb=$M_KIB
measure first "$LIB" "$DARKROOM" scan "$LIB" --progress none
first_s=$M_SECONDS first_kb=$M_KIB
assets=$("$DARKROOM" list --library "$LIB" | wc -l)
[ "$assets" -eq "$N" ] || { echo "the catalog lists $assets assets, not $N" >&2; exit 1; }
measure rescan - "$DARKROOM" scan "$LIB" --progress none
re_s=$M_SECONDS re_kb=$M_KIB
measure 1k "$SMALL" "$DARKROOM" scan "$SMALL" --progress none
small_s=$M_SECONDS small_kb=$M_KIB

read -r min_mb max_mb <<<"$(find "$LIB" -name '*.jpg' -printf '%s\n' | sort -n | sed -n '1p;$p' |
  awk '{ printf "%.2f ", $1 / 1e6 }')"
echo "inputs: $N JPEG files of $min_mb to $max_mb MB, $(mbps "$LIB_BYTES" 1) MB in all," \
  "in $(find "$LIB" -mindepth 2 -type d | wc -l) folders of $LIB"
echo "darkroom: $DARKROOM; $(nproc) cores; $cache_note"
echo "first scan says: $(tail -n 1 "$WORK/scan-first.log")"
echo "rescan says:     $(tail -n 1 "$WORK/scan-rescan.log")"
echo
printf '%-44s %9s %8s %10s\n' "measurement (median of $RUNS, $CACHE)" "seconds" "MB/s" "peak KiB"
printf '%-44s %9s %8s %10s\n' "read floor: find -exec cat ($N files)" "$floor_s" "$(mbps "$LIB_BYTES" "$floor_s")" "$floor_kb"
printf '%-44s %9s %8s %10s\n' "exiftool -r -j -fast ($N files)" "$exif_s" "$(mbps "$LIB_BYTES" "$exif_s")" "$exif_kb"
printf '%-44s %9s %8s %10s\n' "darkroom scan, first ($N files)" "$first_s" "$(mbps "$LIB_BYTES" "$first_s")" "$first_kb"
printf '%-44s %9s %8s %10s\n' "darkroom scan, nothing changed ($N files)" "$re_s" "-" "$re_kb"
printf '%-44s %9s %8s %10s\n' "darkroom scan, first (1000 files)" "$small_s" "$(mbps "$SMALL_BYTES" "$small_s")" "$small_kb"
echo
echo "darkroom first scan:                  $(mbps "$LIB_BYTES" "$first_s") MB/s"
echo "exiftool / darkroom first scan:       $(ratio "$exif_s" "$first_s")x (target >= 10)"
echo "darkroom first scan / read floor:     $(ratio "$first_s" "$floor_s")x (target <= 2)"
echo "rescan with nothing changed:          $re_s s (target < 0.5)"
echo "first scan peak memory, $N / 1000 files: $first_kb / $small_kb KiB = $(ratio "$first_kb" "$small_kb")x (target: flat, <= 1.2)"

# The catalog benchmarks of the Swift API, once DarkroomBench has them.
bench_help=$("$DARKROOM_BENCH" help 2>&1 || true)
if grep -q catalog <<<"$bench_help"; then
  echo
  echo "DarkroomBench catalog-query:"
  "$DARKROOM_BENCH" catalog-query
  echo
  echo "DarkroomBench catalog-scale $SMALL:"
  "$DARKROOM_BENCH" catalog-scale "$SMALL"
else
  echo "(no catalog benchmarks in $DARKROOM_BENCH yet: catalog-query and catalog-scale skipped)"
fi
