#!/usr/bin/env bash
# Instructions of a cold fullscreen render (issue 58), counted by callgrind (exact, and the
# same on a busy machine): the 24-megapixel phone photo (EXIF 6) to 1080x1620 at Q85,
# `darkroom render --rep fullscreen --no-cache` (a stripped copy of the release build:
# valgrind 3.19 cannot read Swift's debug info) against `vipsthumbnail --size 1080x1620`
# doing the same work to the same output; the costliest functions of darkroom's run; and how
# near darkroom's pixels are (PNG, lossless) to an exact Lanczos-3 of the same decode (libjpeg
# at 1/2, libvips' resize in float, rounded once) and to vipsthumbnail's.
# Goals: <= 2.4 G instructions, <= 0.65x vipsthumbnail's.
# Usage: Benchmarks/instructions.sh   (INSTR_SKIP_BUILD=1 uses the release build as it is)
source "$(dirname "$0")/common.sh"
"$ROOT/Scripts/install-deps.sh" valgrind libvips-tools ffmpeg exiftool
[ -n "${INSTR_SKIP_BUILD:-}" ] || release_build --product darkroom
SRC="$WORK/phone-24mp-o6.jpg"
make_phone_photo "$SRC"
OUT="$WORK/instructions"
mkdir -p "$OUT"
strip -o "$OUT/darkroom" "$ROOT/.build/release/darkroom"

count() {  # name, command...: the instructions callgrind counts
  local name="$1"
  shift
  valgrind --tool=callgrind --callgrind-out-file="$OUT/$name.callgrind" "$@" 2>&1 |
    sed -n 's/.*I *refs: *//p' | tr -d ,
}
d=$(count darkroom "$OUT/darkroom" render "$SRC" --rep fullscreen --quality 85 --no-cache \
  -o "$OUT/darkroom.jpg")
v=$(count vipsthumbnail vipsthumbnail "$SRC" --size 1080x1620 -o "$OUT/vipsthumbnail.jpg[Q=85]")
echo "input: $(vipsheader "$SRC"), EXIF orientation 6"
echo "outputs: $(vipsheader "$OUT/darkroom.jpg" | cut -d: -f2) and $(vipsheader "$OUT/vipsthumbnail.jpg" | cut -d: -f2)"
printf '\n%-34s %16s\n' "fullscreen, cold" "instructions"
printf '%-34s %16s\n' "darkroom render" "$d" "vipsthumbnail" "$v"
printf '%-34s %16s\n' "ratio" "$(ratio "$d" "$v")"
echo
echo "darkroom's costliest functions (addresses in a stripped binary are Darkroom's own):"
callgrind_annotate "$OUT/darkroom.callgrind" 2>/dev/null | sed -n '/file:function/,$p' |
  sed -n '3,10p'

# Pixels, lossless: darkroom's and vipsthumbnail's fullscreen, and the exact reference.
"$OUT/darkroom" render "$SRC" --rep fullscreen --no-cache -o "$OUT/darkroom.png" >/dev/null
vipsthumbnail "$SRC" --size 1080x1620 -o "$OUT/vipsthumbnail.png"
vips jpegload "$SRC" "$OUT/half.v" --shrink 2
vips cast "$OUT/half.v" "$OUT/float.v" float
vips resize "$OUT/float.v" "$OUT/resized.v" "$(/usr/bin/python3 -c 'print(1620 / 3000)')" \
  --kernel lanczos3
vips round "$OUT/resized.v" "$OUT/rounded.v" rint
vips cast "$OUT/rounded.v" "$OUT/exact.v" uchar
vips rot "$OUT/exact.v" "$OUT/exact.png" d90
rm -f "$OUT"/*.v
ssim() { ffmpeg -v info -i "$1" -i "$2" -lavfi ssim -f null - 2>&1 | sed -n 's/.*All:\([0-9.]*\).*/\1/p'; }
/usr/bin/python3 - "$OUT/darkroom.png" "$OUT/exact.png" <<'EOF'
import sys
from PIL import Image
a = Image.open(sys.argv[1]).convert("RGB").tobytes()
b = Image.open(sys.argv[2]).convert("RGB").tobytes()
d = [abs(x - y) for x, y in zip(a, b)]
print("\ndarkroom against the exact Lanczos-3: mean %.3f, largest %d levels" % (sum(d) / len(d), max(d)))
EOF
echo "SSIM against the exact Lanczos-3: $(ssim "$OUT/darkroom.png" "$OUT/exact.png")"
echo "SSIM against vipsthumbnail's:     $(ssim "$OUT/darkroom.png" "$OUT/vipsthumbnail.png")"
