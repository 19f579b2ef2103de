#!/usr/bin/env bash
# In-place edits of phone formats (issue 29): a noir edit of a 12-megapixel HEIC and of a
# 12-megapixel AVIF, in one run. For each:
#   - `darkroom edit` as it is (the source's own quality for a HEIC, 92 for an AVIF; effort 0:
#     x265 ultrafast, aom's fastest speed): median time of whole processes;
#   - the same at --quality 92 (today's quality), and at each quality through libvips' own
#     saver (`vips copy`, its default effort: what Darkroom's edits used before), encoding the
#     same edited pixels: encode time only, so the decode and filter are not counted for it.
# Every output's bytes, and its SSIM (ffmpeg's, on all planes) against the lossless edit: the
# same noir edit of a PNG of the source's decoded pixels. Goal: an edit under 3 s, and at the
# same quality no larger and no worse than libvips' saver.
# The photo: the sample scene, upscaled, with fractal texture (clouds) and a fine grain, so
# that it compresses like a photo. The HEIC is written by libheif's heif-enc at quality 50
# with its default preset (slow), as a phone's is about; the AVIF by libvips at Q50.
# Usage: Benchmarks/encode.sh [runs=3]   (ENCODE_SKIP_BUILD=1 uses the release build as it is)
source "$(dirname "$0")/common.sh"
RUNS="${1:-3}"
"$ROOT/Scripts/install-deps.sh" libvips-tools libheif-examples ffmpeg hyperfine time
[ -n "${ENCODE_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="$ROOT/.build/release/darkroom"
E="$WORK/encode"
mkdir -p "$E"

PHOTO="$E/photo-12mp.png"
if [ ! -f "$PHOTO" ]; then
  vips resize "$ROOT/Samples/orientation-1.jpg" "$E/big.v" 7.56 --kernel cubic
  vips extract_area "$E/big.v" "$E/crop.v" 200 0 4032 3024
  vips fractsurf "$E/f.v" 4032 3024 2.4
  vips linear "$E/f.v" "$E/f1.v" 0.3 0
  vips bandjoin "$E/f1.v $E/f1.v $E/f1.v" "$E/f3.v"
  vips add "$E/crop.v" "$E/f3.v" "$E/t.v"
  vips gaussnoise "$E/n.v" 4032 3024 --sigma 4 --mean 0 --seed 29
  vips add "$E/t.v" "$E/n.v" "$E/t2.v"
  vips cast "$E/t2.v" "$PHOTO" uchar
  rm -f "$E"/*.v
fi
[ -f "$E/source.heic" ] || heif-enc -q 50 "$PHOTO" -o "$E/source.heic" >/dev/null
[ -f "$E/source.avif" ] || vips copy "$PHOTO" "$E/source.avif[Q=50,compression=av1]"

# decoded FILE: a PNG of its pixels, beside it.
decoded() { vips copy "$1" "${1%.*}.png" 2>/dev/null && echo "${1%.*}.png"; }

printf '%-5s %-44s %9s %10s %8s\n' "" "case" "median ms" "bytes" "SSIM"
for kind in heic avif; do
  SRC="$E/source.$kind"
  # The lossless edit: the source's decoded pixels, edited as a PNG.
  vips copy "$SRC" "$E/ref.png" 2>/dev/null
  "$DARKROOM" edit "$E/ref.png" --filter noir >/dev/null
  rm -rf "$E/.darkroom"
  # The quality darkroom picks for this source (its own, or 92), from an edit of a copy.
  rm -rf "$E/probe" && mkdir -p "$E/probe" && cp "$SRC" "$E/probe/x.$kind"
  quality=$("$DARKROOM" edit "$E/probe/x.$kind" --filter noir --json \
    | /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["result"]["quality"])')
  rm -rf "$E/probe"
  line() {  # name, ms, file
    printf '%-5s %-44s %9s %10s %8s\n' "$kind" "$1" "$2" "$(stat -c %s "$3")" \
      "$(ssim "$(decoded "$3")" "$E/ref.png")"
  }
  for q in own 92; do
    args=()
    [ "$q" = own ] || args=(--quality 92)
    prepare="rm -rf $E/ed && mkdir -p $E/ed && cp $SRC $E/ed/x.$kind"
    hyperfine --warmup 1 --runs "$RUNS" --prepare "$prepare" --export-json "$E/t.json" \
      "$DARKROOM edit $E/ed/x.$kind --filter noir ${args[*]}" >/dev/null 2>&1
    name="darkroom edit, Q$([ "$q" = own ] && echo "$quality (source's)" || echo 92), effort 0"
    line "$name" "$(median_ms "$E/t.json")" "$E/ed/x.$kind"
  done
  for q in "$quality" 92; do
    saver="$E/libvips-$q.$kind[Q=$q$([ "$kind" = avif ] && echo ",compression=av1" || true)]"
    hyperfine --warmup 0 --runs "$RUNS" --export-json "$E/t.json" \
      "vips copy $E/ref.png '$saver'" >/dev/null 2>&1
    line "libvips saver, Q$q, its default effort (encode)" "$(median_ms "$E/t.json")" \
      "$E/libvips-$q.$kind"
  done
done
echo "source: $(vipsheader "$E/source.heic" 2>/dev/null) HEIC $(stat -c %s "$E/source.heic") bytes, AVIF $(stat -c %s "$E/source.avif") bytes"
