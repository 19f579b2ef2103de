# Shared by the benchmark scripts: peers, a release build, and a scratch folder.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${BENCH_DIR:-$ROOT/bench-out}"
mkdir -p "$WORK"

# Installs the peers if any is missing (Debian packages and pyvips from PyPI).
install_peers() {
  "$ROOT/Scripts/install-deps.sh" libvips-tools imagemagick libimage-exiftool-perl \
    python3-pil libjpeg-turbo-progs hyperfine time
  /usr/bin/python3 -c 'import pyvips' 2>/dev/null \
    || /usr/bin/python3 -m pip install -q --break-system-packages pyvips 2>/dev/null \
    || true
}

build_darkroom() {
  (cd "$ROOT" && swift build -c release --product darkroom >&2)
  DARKROOM="$ROOT/.build/release/darkroom"
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
