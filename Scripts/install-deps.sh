#!/usr/bin/env bash
# Installs the system libraries Darkroom builds against (Debian/Ubuntu), if any are missing.
# Usage: Scripts/install-deps.sh [extra apt packages...]
set -euo pipefail

# chromium and chromium-driver are for the tests only: the gallery's browser tests drive them;
# exiftool (libimage-exiftool-perl) and exiv2 write the sidecars and tags the metadata tests read;
# libvips-tools' vips makes the JPEG XL file a gallery test uploads.
# FFmpeg's libraries decode videos' poster frames (the -dev packages for their headers); the
# ffmpeg command makes the videos the tests read, libavif-bin's avifenc their HDR photos.
# libheif-dev's header lets Darkroom write HEIC through libheif (x265's preset chosen);
# libheif-examples' heif-enc makes the tests' HEICs.
packages=(libvips-dev libexif-dev libseccomp-dev libsqlite3-dev libsodium-dev pkg-config libavformat-dev libavcodec-dev libswscale-dev chromium chromium-driver libimage-exiftool-perl exiv2 libvips-tools ffmpeg libavif-bin libheif-dev libheif-examples "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}" >&2
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
