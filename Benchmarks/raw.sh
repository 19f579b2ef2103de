#!/usr/bin/env bash
# Camera RAW (issue 30): a 24-megapixel DNG (6000x4000 RGGB, 12 bits in 16, made by
# raw_dngs.py with Samples/make-dngs.py's layout), once with a full-size 6000x4000 JPEG preview
# (as most Canon, Nikon and Sony raws carry) and once without, rendered by darkroom to JPEG Q85
# against the usual tools doing the same, in one run: whole processes (hyperfine -N), median of
# several runs, and peak memory (Benchmarks/peak_tree.py: the summed resident memory of the
# process tree, since darkroom reads RAWs in a worker; for a pipeline, all of its processes).
#   fullscreen, preview: darkroom render --rep fullscreen --screen 1920x1080 (the preview, shrunk)
#     against exiftool -b -PreviewImage | vipsthumbnail stdin --size 1920x1080 (in bash -c,
#     whose start is counted for the peer). Goal: <= 0.5x.
#   fullscreen, no preview: darkroom's half-size LibRaw develop and libvips resize against
#     rawpy postprocess(use_camera_wb=True, output_bps=8, half_size=True), Pillow's LANCZOS
#     thumbnail to the same box and Pillow's save (rawpy_render.py). Goal: <= 1.0x.
#   full: darkroom render --rep full --format jpeg (a full-size develop) against the same
#     without half_size and without resizing. Goal: <= 1.0x.
# Every output is 1620x1080 (fullscreen) or 6000x4000 (full), sRGB, JPEG Q85 4:2:0. rawpy
# bundles its own LibRaw (0.22 in rawpy 0.28) where darkroom loads Debian's (0.20): the line
# above the table says which.
# Usage: Benchmarks/raw.sh [runs=10]   (RAW_SKIP_BUILD=1 uses $DARKROOM, by default the release
# build, as it is)
source "$(dirname "$0")/common.sh"
RUNS="${1:-10}"
SCREEN=1920x1080 # darkroom's default box, given to every tool
PY=/opt/darkroom-test-python/bin/python3 # the RAW tests' venv: rawpy, pidng, numpy
"$ROOT/Scripts/install-deps.sh" libvips-tools libimage-exiftool-perl hyperfine time
"$PY" -c 'import PIL' 2>/dev/null || "$PY" -m pip install -q Pillow
if [ -n "${RAW_SKIP_BUILD:-}" ]; then
  DARKROOM="${DARKROOM:-$ROOT/.build/release/darkroom}"
else
  release_build --product darkroom
  DARKROOM="$ROOT/.build/release/darkroom"
fi

bench() { # name, hyperfine args...
  local name="$1"
  shift
  hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$WORK/raw-$name.json" "$@" >/dev/null 2>&1
  median_ms "$WORK/raw-$name.json"
}
peak_mb() { /usr/bin/python3 "$ROOT/Benchmarks/peak_tree.py" "$@" | awk '{printf "%.0f", $2 / 1024}'; }
size() { echo "$(vipsheader -f width "$1")x$(vipsheader -f height "$1")"; }
mb() { stat -c %s "$1" | awk '{printf "%.1f", $1 / 1e6}'; }
# mad A B: the mean absolute difference of two images' pixels (0-255).
mad() {
  vips subtract "$1" "$2" "$OUT/diff.v" && vips abs "$OUT/diff.v" "$OUT/abs.v" && vips avg "$OUT/abs.v" | awk '{printf "%.1f", $1}'
  rm -f "$OUT/diff.v" "$OUT/abs.v"
}

# The inputs, made again only when the generator or make-dngs.py changes (about 30 s, 3.5 GB).
stamp=$(cat "$ROOT/Benchmarks/raw_dngs.py" "$ROOT/Samples/make-dngs.py" | sha256sum | cut -c1-16)
if [ "$(cat "$WORK/raw-dngs.stamp" 2>/dev/null)" != "$stamp" ]; then
  "$PY" "$ROOT/Benchmarks/raw_dngs.py" "$WORK"
  echo "$stamp" >"$WORK/raw-dngs.stamp"
fi
WITH="$WORK/raw-preview.dng"
PLAIN="$WORK/raw-plain.dng"
OUT="$WORK/raw-out"
mkdir -p "$OUT"
echo "inputs: $(basename "$WITH") ($(mb "$WITH") MB, its preview $(exiftool -s3 -PreviewImageLength "$WITH" | awk '{printf "%.1f", $1 / 1e6}') MB), $(basename "$PLAIN") ($(mb "$PLAIN") MB)"
echo "LibRaw: darkroom Debian's $(dpkg-query -W -f '${Version}' libraw20 2>/dev/null || echo '?'), rawpy $("$PY" -c 'import rawpy; print(rawpy.__version__, "bundles", ".".join(map(str, rawpy.libraw_version)))'); $(vips --version); Pillow $("$PY" -c 'import PIL; print(PIL.__version__)')"

printf '%-24s %12s %10s %7s %6s %7s %9s %11s  %s\n' case "darkroom ms" "peer ms" ratio goal \
  "dr MB" "peer MB" output peer
row() { # label, goal, darkroom output, peer output, peer name, then the darkroom command, --, the peer's
  local label="$1" goal="$2" dr_out="$3" peer_out="$4" peer="$5" dr=() other=()
  shift 5
  while [ "$1" != -- ]; do dr+=("$1") && shift; done
  shift
  other=("$@")
  local d p dm pm
  d=$(bench "$label-dr" "$(printf '%q ' "${dr[@]}")")
  p=$(bench "$label-peer" "$(printf '%q ' "${other[@]}")")
  dm=$(peak_mb "${dr[@]}")
  pm=$(peak_mb "${other[@]}")
  [ "$(size "$dr_out")" = "$(size "$peer_out")" ] ||
    echo "$label: sizes differ: $(size "$dr_out") against $(size "$peer_out")" >&2
  printf '%-24s %12s %10s %7s %6s %7s %9s %11s  %s\n' "$label" "$d" "$p" "$(ratio "$d" "$p")x" \
    "<=$goal" "$dm" "$pm" "$(size "$dr_out")" "$peer"
}

row fullscreen-preview 0.5 "$OUT/prev-dr.jpg" "$OUT/prev-peer.jpg" "exiftool | vipsthumbnail" \
  "$DARKROOM" render "$WITH" --rep fullscreen --screen "$SCREEN" --no-cache --quality 85 -o "$OUT/prev-dr.jpg" -- \
  bash -c "exiftool -b -PreviewImage $(printf %q "$WITH") | vipsthumbnail stdin --size $SCREEN -o $(printf %q "$OUT/prev-peer.jpg[Q=85]")"
row fullscreen-no-preview 1.0 "$OUT/half-dr.jpg" "$OUT/half-peer.jpg" "rawpy half_size + Pillow" \
  "$DARKROOM" render "$PLAIN" --rep fullscreen --screen "$SCREEN" --no-cache --quality 85 -o "$OUT/half-dr.jpg" -- \
  "$PY" "$ROOT/Benchmarks/rawpy_render.py" fullscreen "$PLAIN" "$OUT/half-peer.jpg" "$SCREEN" 85
row full 1.0 "$OUT/full-dr.jpg" "$OUT/full-peer.jpg" "rawpy + Pillow" \
  "$DARKROOM" render "$PLAIN" --rep full --format jpeg --no-cache --quality 85 -o "$OUT/full-dr.jpg" -- \
  "$PY" "$ROOT/Benchmarks/rawpy_render.py" full "$PLAIN" "$OUT/full-peer.jpg" "$SCREEN" 85

# Which path darkroom took for the file with a preview: its output is within a level or so of
# the peer's (the same JPEG, shrunk) and several levels from its own develop of the same raw.
near=$(mad "$OUT/prev-dr.jpg" "$OUT/prev-peer.jpg")
far=$(mad "$OUT/prev-dr.jpg" "$OUT/half-dr.jpg")
echo "darkroom's fullscreen of $(basename "$WITH") differs from the shrunk preview by $near and from its develop by $far (mean levels): $(awk -v a="$near" -v b="$far" 'BEGIN { print (a < b / 4) ? "the preview was used" : "NOT the preview" }')"
echo "goals: fullscreen from the preview <= 0.5x exiftool | vipsthumbnail; demosaics <= 1.0x rawpy"
