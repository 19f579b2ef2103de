#!/usr/bin/env bash
# Near-duplicate detection: `darkroom duplicates --near` against findimagedupes (Debian) and
# imagehash's dHash (PyPI), in one run, on the same set made by duplicates_set.py: N
# originals in scenes of five similar shots (panned twice, zoomed in, zoomed out) and seven
# copies of each (resized to 50% and 25%, JPEG Q60, PNG, WebP, cropped 2-5%, brightened
# 15-25%), with opaque names. For each tool: pairwise precision and recall against the truth (a pair
# of files is a duplicate iff both come from one original; a tool's pairs are all pairs
# within each group it reports), seconds for the whole run on warm files, and files per
# second. Then DarkroomBench fingerprint-index, once DarkroomBench has it.
# Usage: Benchmarks/duplicates.sh, with optional variables:
#   DUP_ORIGINALS=60        originals (8 files each)
#   DUP_THRESHOLD=N         pass --threshold N to darkroom (default: darkroom's own, 12)
#   DUP_DHASH_THRESHOLD=10  imagehash's cut-off in bits (the best-F1 one is reported too)
#   DUP_SWEEP="4 6 8 12 14 16"  darkroom thresholds also scored on the stored fingerprints
#                           (empty: none)
#   DUP_INDEX_N=100000      fingerprints for DarkroomBench fingerprint-index
#   DUP_SKIP_BUILD=1        use $DARKROOM (default .build/release/darkroom) and
#                           $DARKROOM_BENCH as they are, without building
#   DUP_SKIP_DARKROOM=1     no build and no darkroom: the set and the peers only
set -euo pipefail
source "$(dirname "$0")/common.sh"
ORIGINALS="${DUP_ORIGINALS:-60}"
FILES=$((ORIGINALS * 8))
DHASH_T="${DUP_DHASH_THRESHOLD:-10}"
SWEEP="${DUP_SWEEP-4 6 8 12 14 16}"
INDEX_N="${DUP_INDEX_N:-100000}"
HELPER="$ROOT/Benchmarks/duplicates_set.py"

# The peers: findimagedupes and Pillow from Debian, imagehash from PyPI for the python3
# first on PATH.
"$ROOT/Scripts/install-deps.sh" findimagedupes python3-pil
if ! python3 -c 'import imagehash' 2>/dev/null; then
  python3 -m pip install -q imagehash 2>/dev/null ||
    python3 -m pip install -q --break-system-packages imagehash
fi

if [ "${DUP_SKIP_DARKROOM:-}" = 1 ]; then
  DARKROOM_BENCH="${DARKROOM_BENCH:-$ROOT/.build/release/DarkroomBench}"
elif [ "${DUP_SKIP_BUILD:-}" = 1 ]; then
  DARKROOM="${DARKROOM:-$ROOT/.build/release/darkroom}"
  DARKROOM_BENCH="${DARKROOM_BENCH:-$ROOT/.build/release/DarkroomBench}"
else
  build_darkroom
fi

# The set, made again only when the count or the generator (duplicates_set.py up to its
# end-of-generator line) changes.
SET="$WORK/dup-set"
PHOTOS="$SET/photos"
stamp="$ORIGINALS $(sed '/^# === end of the generator/q' "$HELPER" | sha1sum | cut -c1-12)"
if [ "$(cat "$SET.made" 2>/dev/null)" != "$stamp" ] ||
  [ "$(find "$PHOTOS" -maxdepth 1 -type f 2>/dev/null | wc -l)" != "$FILES" ]; then
  rm -rf "$SET" "$SET.made"
  echo "making $FILES files from $ORIGINALS originals in $SET" >&2
  /usr/bin/python3 "$HELPER" make "$SET" "$ORIGINALS"
  echo "$stamp" >"$SET.made"
fi
# dHash and pHash of every file for the notes on how hard the set is (not timed).
[ -f "$SET/hashes.json" ] || python3 "$HELPER" hashes "$SET"
LIST="$WORK/dup-files.txt"
find "$PHOTOS" -maxdepth 1 -type f \( -name '*.jpg' -o -name '*.png' -o -name '*.webp' \) | sort >"$LIST"
[ "$(wc -l <"$LIST")" = "$FILES" ] || { echo "expected $FILES files in $PHOTOS" >&2; exit 1; }

# timed NAME COMMAND...: runs COMMAND once with every file of the set read just before (warm
# cache), its standard error to $WORK/dup-NAME.log; sets T_SECONDS to its wall seconds.
# Exit status 1 is a warning for findimagedupes, so only a status above 1 fails.
timed() {
  local name="$1" log="$WORK/dup-$1.log" start end rc=0
  shift
  xargs -d '\n' cat <"$LIST" >/dev/null
  start=$(date +%s.%N)
  "$@" 2>"$log" || rc=$?
  end=$(date +%s.%N)
  if [ "$rc" -gt 1 ] || { [ "$rc" -eq 1 ] && [ "$name" != findimagedupes ]; }; then
    echo "failed ($rc): $*" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  T_SECONDS=$(/usr/bin/python3 -c "print('%.3f' % ($end - $start))")
}

echo "measuring: one run each, files read once just before every run" >&2
# findimagedupes at its default threshold (90% = 25 of 256 bits), printing its fingerprints
# too (-v fp) so that other thresholds can be scored without another run.
timed findimagedupes bash -c 'findimagedupes -q -t 90% -v fp -- - <"$1" >"$2"' _ \
  "$LIST" "$WORK/dup-findimagedupes.txt"
fid_s=$T_SECONDS
timed imagehash python3 "$HELPER" dhash "$SET" "$WORK/dup-imagehash.json" "$DHASH_T"
ih_s=$T_SECONDS

score=(--files "$FILES"
  --findimagedupes "$WORK/dup-findimagedupes.txt" "$fid_s" 25
  --imagehash "$WORK/dup-imagehash.json" "$ih_s")
if [ "${DUP_SKIP_DARKROOM:-}" = 1 ]; then
  score+=(--darkroom-skipped " (DUP_SKIP_DARKROOM=1)")
  darkroom_note="darkroom: skipped (DUP_SKIP_DARKROOM=1)"
else
  threshold=()
  label="default (12 bits)"
  if [ -n "${DUP_THRESHOLD:-}" ]; then
    threshold=(--threshold "$DUP_THRESHOLD")
    label="--threshold $DUP_THRESHOLD"
  fi
  # A fresh catalog, then duplicates twice: the first run fingerprints every file, the
  # second finds the fingerprints stored.
  rm -rf "$PHOTOS/.darkroom"
  timed darkroom-scan "$DARKROOM" scan "$PHOTOS" --progress none
  scan_s=$T_SECONDS
  assets=$("$DARKROOM" list --library "$PHOTOS" | wc -l)
  [ "$assets" -eq "$FILES" ] ||
    echo "warning: the catalog lists $assets assets, not $FILES: the others count as missed" >&2
  timed darkroom bash -c '"$@" >"$0"' "$WORK/dup-darkroom.json" \
    "$DARKROOM" duplicates --near "${threshold[@]}" --json --library "$PHOTOS"
  dr_s=$T_SECONDS
  timed darkroom-stored bash -c '"$@" >"$0"' "$WORK/dup-darkroom-stored.json" \
    "$DARKROOM" duplicates --near "${threshold[@]}" --json --library "$PHOTOS"
  dr2_s=$T_SECONDS
  score+=(--darkroom "$WORK/dup-darkroom.json" "$dr_s" "$scan_s"
    --darkroom-stored "$WORK/dup-darkroom-stored.json" "$dr2_s" --darkroom-threshold "$label")
  if [ -n "$SWEEP" ]; then
    sweep=()
    for t in $SWEEP; do
      out="$WORK/dup-darkroom-t$t.json"
      "$DARKROOM" duplicates --near --threshold "$t" --json --library "$PHOTOS" >"$out" \
        2>"$WORK/dup-darkroom-t$t.log" || rm -f "$out"
      sweep+=("$t=$out")
    done
    score+=(--darkroom-sweep "${sweep[@]}")
  fi
  darkroom_note="darkroom: $DARKROOM; catalog of $assets assets"
fi

read -r min_w max_w <<<"$(/usr/bin/python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))["originals"].values()
print(min(v["size"][0] for v in o), max(v["size"][0] for v in o))' "$SET/truth.json")"
echo "inputs: $FILES files in $PHOTOS: $ORIGINALS originals ($min_w to $max_w px wide, JPEG Q90)" \
  "in $(((ORIGINALS + 4) / 5)) scenes, and 7 copies of each; $(du -sm "$PHOTOS" | cut -f1) MB"
echo "$darkroom_note; $(nproc) cores; one run of each tool, warm"
echo "findimagedupes $(dpkg-query -W -f='${Version}' findimagedupes)," \
  "imagehash $(python3 -c 'import imagehash; print(imagehash.__version__)') ($(command -v python3))"
echo
/usr/bin/python3 "$HELPER" score "$SET" "${score[@]}"

# The fingerprint index of the Swift API, once DarkroomBench has it.
bench_help=""
[ -x "${DARKROOM_BENCH:-}" ] && bench_help=$("$DARKROOM_BENCH" help 2>&1 || true)
echo
if grep -q fingerprint-index <<<"$bench_help"; then
  echo "DarkroomBench fingerprint-index $INDEX_N:"
  "$DARKROOM_BENCH" fingerprint-index "$INDEX_N"
else
  echo "(no fingerprint-index in ${DARKROOM_BENCH:-DarkroomBench} yet: skipped)"
fi
