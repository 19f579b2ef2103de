#!/usr/bin/env bash
# Auto on real photos (issue 54): twelve photos from Debian's wallpaper packages (downloaded,
# not installed), each as shot and made two stops under, one and a half over, and cast warm,
# cool, green and tungsten in linear light, edited with `darkroom edit --filter auto`; prints
# the issue's three measures per photo (the luminance span, the cast's fall, the change to a
# photo that needed nothing) and what Auto chose. Exits 1 when a goal is missed. See
# Benchmarks/README.
# Usage: Benchmarks/auto.sh   (AUTO_SKIP_BUILD=1 uses the release build as it is)
source "$(dirname "$0")/common.sh"
"$ROOT/Scripts/install-deps.sh" libvips-tools
[ -x /opt/darkroom-test-python/bin/python ] || python3 -m venv /opt/darkroom-test-python
/opt/darkroom-test-python/bin/python -c 'import numpy' 2>/dev/null ||
  /opt/darkroom-test-python/bin/pip install -q numpy
[ -n "${AUTO_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="${DARKROOM:-$ROOT/.build/release/darkroom}"
PHOTOS="$WORK/auto-photos"
auto_photos "$PHOTOS"
/opt/darkroom-test-python/bin/python "$ROOT/Benchmarks/auto.py" "$PHOTOS" "$WORK/auto" "$DARKROOM"
