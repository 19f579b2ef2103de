#!/usr/bin/env bash
# In-place edits of phone formats (issues 29 and 58): a noir edit of three real 12-megapixel
# photos (common.sh's real_photos), each as a HEIC and as an AVIF, in one run. For each:
#   - `darkroom edit --filter noir` as it is (the source's own quality, the format's edit
#     effort: ImageFormat.editEffort): median time of whole processes (hyperfine), the bytes,
#     and the SSIM (ffmpeg's, all planes) against the lossless edit (the same noir edit of a
#     PNG of the source's decoded pixels);
#   - libvips' own saver at its default effort (x265's `slow` for HEIC, aom's speed 5 for
#     AVIF) encoding the lossless edit's pixels at the highest quality whose file is no larger
#     than Darkroom's: its SSIM, and Darkroom's deficit against it.
# Goal (issue 58): every edit under 3 s, and its SSIM within 0.001 of libvips' at no more bytes.
# The sources: heif-enc at quality 50 with its default preset (slow), as a phone's HEIC is
# about; libvips' AVIF at Q50.
# Usage: Benchmarks/encode.sh [runs=3]   (ENCODE_SKIP_BUILD=1 uses the release build as it is)
source "$(dirname "$0")/common.sh"
RUNS="${1:-3}"
"$ROOT/Scripts/install-deps.sh" libvips-tools libheif-examples ffmpeg hyperfine time
[ -n "${ENCODE_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="$ROOT/.build/release/darkroom"
PHOTOS="$WORK/real-photos"
real_photos "$PHOTOS"
E="$WORK/encode"
mkdir -p "$E"

# decoded FILE: a PNG of its pixels, beside it.
decoded() { vips copy "$1" "${1%.*}.png" 2>/dev/null && echo "${1%.*}.png"; }

# libvips_at KIND Q: libvips' saver's file of the lossless edit at quality Q (made once).
libvips_at() {
  local out="$E/libvips-$1-$2.$1"
  [ -f "$out" ] ||
    vips copy "$E/ref.png" "$out[Q=$2$([ "$1" = avif ] && echo ",compression=av1" || true)]" 2>/dev/null
  echo "$out"
}

printf '%-5s %-8s %4s %3s %9s %9s %9s %5s %9s %9s %8s\n' "" photo Q effort "median ms" bytes SSIM \
  "vQ" "vips B" "vips SSIM" deficit
worst=0
for name in kleiber boats cups; do
  for kind in heic avif; do
    SRC="$E/$name.$kind"
    if [ ! -f "$SRC" ]; then
      if [ "$kind" = heic ]; then
        heif-enc -q 50 "$PHOTOS/$name.png" -o "$SRC" >/dev/null 2>&1
      else
        vips copy "$PHOTOS/$name.png" "$SRC[Q=50,compression=av1]"
      fi
    fi
    rm -f "$E"/libvips-*
    # The lossless edit: the source's decoded pixels, edited as a PNG.
    vips copy "$SRC" "$E/ref.png" 2>/dev/null
    "$DARKROOM" edit "$E/ref.png" --filter noir >/dev/null
    rm -rf "$E/.darkroom"
    prepare="rm -rf $E/ed && mkdir -p $E/ed && cp $SRC $E/ed/x.$kind"
    hyperfine --warmup 1 --runs "$RUNS" --prepare "$prepare" --export-json "$E/t.json" \
      "$DARKROOM edit $E/ed/x.$kind --filter noir" >/dev/null 2>&1
    eval "$("$DARKROOM" adjustments "$E/ed/x.$kind" | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
print("quality=%d effort=%s" % (r["quality"], r["effort"]))')"
    bytes=$(stat -c %s "$E/ed/x.$kind")
    score=$(ssim "$(decoded "$E/ed/x.$kind")" "$E/ref.png")
    # libvips' highest quality whose file is no larger than Darkroom's.
    q=$quality
    while [ "$q" -gt 1 ] && [ "$(stat -c %s "$(libvips_at "$kind" "$q")")" -gt "$bytes" ]; do
      q=$((q - 1))
    done
    while [ "$q" -lt 100 ] && [ "$(stat -c %s "$(libvips_at "$kind" $((q + 1)))")" -le "$bytes" ]; do
      q=$((q + 1))
    done
    theirs="$(libvips_at "$kind" "$q")"
    their_score=$(ssim "$(decoded "$theirs")" "$E/ref.png")
    deficit=$(/usr/bin/python3 -c "print(f'{$their_score - $score:+.4f}')")
    worst=$(/usr/bin/python3 -c "print(max($worst, $their_score - $score))")
    printf '%-5s %-8s %4s %3s %9s %9s %9s %5s %9s %9s %8s\n' "$kind" "$name" "$quality" "$effort" \
      "$(median_ms "$E/t.json")" "$bytes" "$score" "$q" "$(stat -c %s "$theirs")" "$their_score" \
      "$deficit"
  done
done
/usr/bin/python3 -c "print(f'worst deficit: {$worst:+.4f} (goal: +0.0010 or less)')"
