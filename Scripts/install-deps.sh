#!/usr/bin/env bash
# Installs the system libraries Darkroom builds against (Debian/Ubuntu), if any are missing.
# Usage: Scripts/install-deps.sh [extra apt packages...]
set -euo pipefail

# chromium and chromium-driver are for the tests only: the gallery's browser tests drive them;
# exiftool (libimage-exiftool-perl) and exiv2 write the sidecars and tags the metadata tests read;
# libvips-tools' vips makes the JPEG XL file a gallery test uploads.
# FFmpeg's libraries decode videos' poster frames and HEICs' tiles (the -dev packages for
# their headers); the ffmpeg command makes the videos the tests read (and, through x265,
# Scripts/make-heic.py their HEIC grids), libavif-bin's avifenc their HDR photos.
# libheif-dev's header lets Darkroom write HEIC through libheif (x265's preset chosen);
# libheif-examples' heif-enc makes the tests' HEICs.
# libraw-dev: LibRaw's header (camera RAW files; the library is loaded when a RAW is read);
# python3-venv: the RAW tests' Python (rawpy, pidng and numpy from PyPI, below).
# libpq-dev: PostgreSQL's client (a catalog in PostgreSQL, --catalog); postgresql: the server
# the catalog tests start in a temporary folder of their own.
packages=(libvips-dev libexif-dev libseccomp-dev libsqlite3-dev libsodium-dev zlib1g-dev pkg-config libavformat-dev libavcodec-dev libswscale-dev chromium chromium-driver libimage-exiftool-perl exiv2 libvips-tools ffmpeg libavif-bin libheif-dev libheif-examples libraw-dev libpq-dev postgresql libjs-leaflet python3-venv "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The RAW tests make their DNGs with pidng and compare Darkroom's demosaic with rawpy's
# (LibRaw): a virtual environment of Debian's Python, where the tests look for it.
venv=/opt/darkroom-test-python
if ! "$venv/bin/python3" -c "import rawpy, pidng, numpy" 2>/dev/null; then
  echo "install-deps: making $venv (rawpy, pidng, numpy)" >&2
  $sudo /usr/bin/python3 -m venv "$venv"
  $sudo "$venv/bin/pip" install --quiet 'rawpy>=0.21' 'pidng>=4.0.9' numpy
fi
