#!/usr/bin/env bash
# The editor's filters (issue 54) on a 24-megapixel JPEG (orientation 6), in one run:
# - each filter's cost: `darkroom apply --filter F` minus the same apply with a filter that
#   changes nothing (`tone`: the decode, turn and encode every apply pays);
# - the whole panel (every filter at once) against today's `noir | tone` apply (target 1.5x);
# - the same panel through pyvips' nearest operations (colourspace, gaussblur, sharpen,
#   linear, mapim), as a peer doing comparable work (one run: it takes about 20 s);
# - the editor's preview of a slider change at screen size (target: median under 100 ms).
# Whole processes, median of several runs (hyperfine).
# Usage: Benchmarks/editor.sh [runs=5]
source "$(dirname "$0")/common.sh"
RUNS="${1:-5}"
install_peers
build_darkroom

SRC="$WORK/phone-24mp-o6.jpg"
make_phone_photo "$SRC"
E="$WORK/editor"
mkdir -p "$E"
echo "input: $(vipsheader "$SRC") ($(du -h "$SRC" | cut -f1)), orientation 6; output JPEG at the source's quality"

time_apply() {  # name, filters...
  local name="$1"
  shift
  local args=()
  for f in "$@"; do args+=(--filter "'$f'"); done
  hyperfine --warmup 1 --runs "$RUNS" --prepare "rm -rf $E/out-$name" \
    --export-json "$E/$name.json" \
    "$DARKROOM apply $SRC -o $E/out-$name --progress none ${args[*]} 2>/dev/null" >/dev/null 2>&1
  median_ms "$E/$name.json"
}

base=$(time_apply base "tone")
echo
printf '%-52s %10s %10s\n' "apply --filter" "median ms" "filter ms"
printf '%-52s %10s %10s\n' "tone (changes nothing: decode, turn, encode)" "$base" "0"
PANEL=(
  "balance temperature=5200 tint=0.1" "tone exposure=0.3 contrast=0.1"
  "light brilliance=0.3 whites=0.1 blacks=-0.05" "curve rgb=0:0,0.3:0.25,0.7:0.78,1:1"
  "vibrance 0.25" "hsl blue-saturation=-0.3 orange-luminance=0.2"
  "definition 0.3" "texture 0.2" "denoise luminance=0.2 colour=0.3"
  "sharpen amount=0.8 radius=1.2 detail=0.4" "vignette amount=-0.3" "grain amount=0.2"
  "perspective vertical=0.1"
)
i=0
for f in "${PANEL[@]}" "noir"; do
  i=$((i + 1))
  t=$(time_apply "f$i" "$f")
  printf '%-52s %10s %10s\n' "$f" "$t" "$(/usr/bin/python3 -c "print('%.1f' % ($t - $base))")"
done
old=$(time_apply old "noir" "tone exposure=0.3 contrast=0.1")
panel=$(time_apply panel "${PANEL[@]}")
printf '%-52s %10s\n' "noir | tone (today's apply)" "$old"
printf '%-52s %10s\n' "the whole panel (13 filters)" "$panel"
py=$(
  hyperfine --warmup 0 --runs 1 --export-json "$E/py.json" \
    "python3 $ROOT/Benchmarks/pyvips_panel.py $SRC $E/py.jpg" >/dev/null 2>&1
  median_ms "$E/py.json"
)
printf '%-52s %10s\n' "pyvips, nearest operations of the panel" "$py"
echo
echo "whole panel / noir|tone: $(ratio "$panel" "$old")x (target <= 1.5x); / pyvips: $(ratio "$panel" "$py")x"
"$DARKROOM_BENCH" preview "$SRC" 30
