#!/usr/bin/env bash
# Rate and distortion of HEIF encoder settings on three real 12-megapixel photos and their
# noir edits (issue 58): aom's speeds 9-5 for AVIF, x265's presets ultrafast-slow for HEIC,
# each at several qualities, against what libvips writes by default (speed 5; slow). The
# table it prints is how ImageFormat.editEffort was chosen (see Benchmarks/README). It takes
# about 35 minutes on two cores; results are kept in bench-out/encoder-rd/results.json, so a
# second run only prints (delete the file to measure again).
# Usage: Benchmarks/encoder_rd.sh [avif|heic ...]   (RD_SKIP_BUILD=1 uses the release build as it is)
source "$(dirname "$0")/common.sh"
"$ROOT/Scripts/install-deps.sh" libvips-tools libheif-examples ffmpeg
[ -n "${RD_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="$ROOT/.build/release/darkroom"
PHOTOS="$WORK/real-photos"
real_photos "$PHOTOS"
mkdir -p "$WORK/encoder-rd"
/usr/bin/python3 "$ROOT/Benchmarks/encoder_rd.py" "$PHOTOS" "$WORK/encoder-rd/results.json" "$@"
