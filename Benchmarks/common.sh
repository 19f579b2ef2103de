# Shared by the benchmark scripts: peers, a release build, and a scratch folder.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${BENCH_DIR:-$ROOT/bench-out}"
mkdir -p "$WORK"

# Installs the peers if any is missing (Debian packages and pyvips from PyPI).
install_peers() {
  "$ROOT/Scripts/install-deps.sh" libvips-tools imagemagick libimage-exiftool-perl \
    python3-pil libjpeg-turbo-progs hyperfine time
  # pyvips (built against libvips-dev) for the python3 first on PATH; Pillow is Debian's,
  # for /usr/bin/python3.
  python3 -c 'import pyvips' 2>/dev/null || python3 -m pip install -q pyvips
}

# release_build ARGS: the release build Scripts/install.sh makes (Scripts/release-build.sh: the
# runtime linked in, the code laid out, DT_RELR). Every release build here uses the same
# flags: a build with other flags rebuilds everything.
release_build() {
  "$ROOT/Scripts/release-build.sh" "$@" >&2
}

build_darkroom() {
  release_build --product darkroom && release_build --product DarkroomBench
  DARKROOM="$ROOT/.build/release/darkroom"
  DARKROOM_BENCH="$ROOT/.build/release/DarkroomBench"
}

# make_phone_photo PATH: a phone's 24-megapixel portrait photo, 6000x4000 stored sideways
# with EXIF orientation 6 (4000x6000 upright): the sample scene with film-like grain, so
# that it compresses like a photo.
make_phone_photo() {
  [ -f "$1" ] && return
  vips resize "$ROOT/Samples/orientation-1.jpg" "$WORK/big.v" 10 --kernel linear
  vips gaussnoise "$WORK/noise.v" 6000 4000 --sigma 14 --mean 0
  vips add "$WORK/big.v" "$WORK/noise.v" "$WORK/sum.v"
  vips cast "$WORK/sum.v" "$1[Q=92]" uchar
  rm -f "$WORK"/*.v
  exiftool -q -overwrite_original -Orientation#=6 -Make=Bench -Model=Camera "$1"
}

# make_apply_inputs: 100 copies of the phone photo in $WORK/apply-in (sets SRC and IN), the
# inputs of apply.sh and workers.sh.
make_apply_inputs() {
  SRC="$WORK/phone-24mp-o6.jpg"
  make_phone_photo "$SRC"
  IN="$WORK/apply-in"
  mkdir -p "$IN"
  for i in $(seq -w 1 100); do [ -f "$IN/p$i.jpg" ] || cp "$SRC" "$IN/p$i.jpg"; done
}

# ssim A.png REF.png: ffmpeg's SSIM over all planes.
ssim() {
  ffmpeg -nostats -i "$1" -i "$2" -lavfi ssim -f null - 2>&1 | sed -n 's/.*All:\([0-9.]*\).*/\1/p'
}

# median_ms NAME: the median of a hyperfine JSON export, in milliseconds.
median_ms() {
  /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.1f" % (r["median"]*1000))' "$1"
}

# peak_kb CMD...: the peak resident memory of one run, in KiB.
peak_kb() {
  /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -n 1
}

ratio() { /usr/bin/python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }
