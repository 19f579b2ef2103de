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

# real_photos DIR: three real 12-megapixel photos (4032x3024, a phone's size) as PNGs in DIR,
# each beside a noir edit of it (NAME-noir.png, by $DARKROOM): kleiber.png, a crop of a
# 20-megapixel photo of a nuthatch on bark (lomiri-wallpapers-20.04's Kleiber_by_Lukas_Baubkus.jpg);
# boats.png and cups.png, 2x2 mosaics of KDE's 2560x1600 photo wallpapers
# (plasma-workspace-wallpapers: EveningGlow, OneStandsOut, Path, FallenLeaf; BytheWater,
# ColorfulCups, Grey, Kite), cropped. The Debian packages are downloaded, not installed.
# wallpapers DEBS: downloads Debian's lomiri-wallpapers-20.04 and plasma-workspace-wallpapers
# into DEBS and unpacks them into DEBS/x (not installed).
wallpapers() {
  mkdir -p "$1"
  (cd "$1" && apt-get download -q lomiri-wallpapers-20.04 plasma-workspace-wallpapers >&2)
  for deb in "$1"/*.deb; do dpkg-deb -x "$deb" "$1/x"; done
}

real_photos() {
  local dir="$1" debs="$1/debs"
  [ -f "$dir/cups-noir.png" ] && return
  wallpapers "$debs"
  local wallpapers="$debs/x/usr/share/wallpapers"
  vips extract_area "$debs/x/usr/share/backgrounds/Kleiber_by_Lukas_Baubkus.jpg" \
    "$dir/kleiber.png" 1400 200 4032 3024
  mosaic() {  # NAME WALLPAPER x4
    local name="$1"
    shift
    vips arrayjoin "$(for w in "$@"; do printf '%s ' "$wallpapers/$w/contents/images/2560x1600.jpg"; done)" \
      "$dir/mosaic.v" --across 2
    vips extract_area "$dir/mosaic.v" "$dir/$name.png" 544 88 4032 3024
    rm -f "$dir/mosaic.v"
  }
  mosaic boats EveningGlow OneStandsOut Path FallenLeaf
  mosaic cups BytheWater ColorfulCups Grey Kite
  for name in kleiber boats cups; do
    mkdir -p "$dir/noir"
    cp "$dir/$name.png" "$dir/noir/$name.png"
    "$DARKROOM" edit "$dir/noir/$name.png" --filter noir >/dev/null
    mv "$dir/noir/$name.png" "$dir/$name-noir.png"
    rm -rf "$dir/noir"
  done
  rm -rf "$debs"
}

# auto_photos DIR: twelve real photos as PNGs in DIR, 2048 pixels on the long side, from the
# wallpapers of lomiri-wallpapers-20.04 (Kleiber, a nuthatch on bark) and
# plasma-workspace-wallpapers (the eleven of its wallpapers that are photos, not drawings):
# skies, water, a forest, fog, a blue hour, a black-and-white building, leaves, cups.
auto_photos() {
  local dir="$1" debs="$1/debs"
  [ -f "$dir/summer_1am.png" ] && return
  wallpapers "$debs"
  vips thumbnail "$debs/x/usr/share/backgrounds/Kleiber_by_Lukas_Baubkus.jpg" "$dir/Kleiber.png" 2048
  local name
  for name in BytheWater ColdRipple ColorfulCups DarkestHour EveningGlow FallenLeaf Grey Kite \
    OneStandsOut Path summer_1am; do
    vips thumbnail "$debs/x/usr/share/wallpapers/$name/contents/images/2560x1600.jpg" \
      "$dir/$name.png" 2048
  done
  rm -rf "$debs"
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
