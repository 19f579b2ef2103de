#!/usr/bin/env bash
# What containment costs, in one run:
#  1. darkroom apply --jobs 2 (noir + tone + crop, full resolution, JPEG Q=92) over 100 copies
#     of a 24-megapixel phone photo, with worker processes (the default) and --in-process (the
#     path before workers): throughput, and the peak of the summed memory of darkroom and its
#     workers (Benchmarks/peak_tree.py; GNU time's %M sees one process only);
#  2. the same over 1,000 small photos (2 megapixels) against 100: peak memory stays flat
#     because workers are recycled every 200 jobs;
#  3. darkroom render --rep fullscreen of the 24-megapixel photo, against vipsthumbnail (one
#     file renders in process: workers cost it nothing).
# Usage: Benchmarks/workers.sh
source "$(dirname "$0")/common.sh"
install_peers
build_darkroom

make_apply_inputs
SMALL="$WORK/small-in"
mkdir -p "$SMALL"
[ -f "$WORK/small.jpg" ] || vips resize "$SRC" "$WORK/small.jpg[Q=90]" 0.29
for i in $(seq -w 1 1000); do [ -f "$SMALL/s$i.jpg" ] || cp "$WORK/small.jpg" "$SMALL/s$i.jpg"; done
FILTERS=(--filter noir --filter "tone exposure=0.5 contrast=0.2" --filter "crop aspect=4:5")

# run NAME FOLDER N [FLAGS...]: "seconds peak_kib" of darkroom apply over the first N files.
run() {
  local name="$1" folder="$2" n="$3"
  shift 3
  local out="$WORK/workers-out-$name"
  rm -rf "$out"
  local files=("$folder"/*.jpg)
  /usr/bin/python3 "$ROOT/Benchmarks/peak_tree.py" "$DARKROOM" apply --jobs 2 "$@" "${FILTERS[@]}" \
    --progress none -o "$out" "${files[@]:0:$n}" | cut -d' ' -f1,2
}

echo "1. apply --jobs 2, 100 x $(vipsheader "$SRC" | cut -d: -f2 | cut -d, -f1) JPEG; 2 cores"
read -r w_s w_kb <<<"$(run workers "$IN" 100)"
read -r p_s p_kb <<<"$(run inproc "$IN" 100 --in-process)"
printf '%-34s %9s %9s %12s\n' "" "seconds" "files/s" "peak KiB"
printf '%-34s %9s %9s %12s\n' "workers (default)" "$w_s" "$(ratio 100 "$w_s")" "$w_kb"
printf '%-34s %9s %9s %12s\n' "--in-process (before workers)" "$p_s" "$(ratio 100 "$p_s")" "$p_kb"
echo "   throughput workers / in-process: $(ratio "$p_s" "$w_s")x; memory: $(ratio "$w_kb" "$p_kb")x"

echo
echo "2. apply --jobs 2 over small photos ($(vipsheader "$WORK/small.jpg" | cut -d: -f2 | cut -d, -f1)), workers recycled every 200 jobs"
read -r s100_s s100_kb <<<"$(run small100 "$SMALL" 100)"
read -r s1000_s s1000_kb <<<"$(run small1000 "$SMALL" 1000)"
printf '%-34s %9s %9s %12s\n' "100 files" "$s100_s" "$(ratio 100 "$s100_s")" "$s100_kb"
printf '%-34s %9s %9s %12s\n' "1,000 files" "$s1000_s" "$(ratio 1000 "$s1000_s")" "$s1000_kb"
echo "   peak memory 1,000 / 100 files: $(ratio "$s1000_kb" "$s100_kb")x (target: flat)"

echo
echo "3. render --rep fullscreen, one 24-megapixel file (in process), against vipsthumbnail"
hyperfine -N --warmup 3 --runs 25 --export-json "$WORK/workers-render.json" \
  "$DARKROOM render $SRC --rep fullscreen --quality 85 --no-cache -o $WORK/w-dr.jpg" \
  "vipsthumbnail $SRC -s 1080x1920 -o $WORK/w-vt.jpg[Q=85]" >/dev/null 2>&1
/usr/bin/python3 - "$WORK/workers-render.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
dr, vt = (r["median"] * 1000 for r in results)
print("   darkroom %.1f ms, vipsthumbnail %.1f ms: %.2fx" % (dr, vt, dr / vt))
PY
