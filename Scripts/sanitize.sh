#!/usr/bin/env bash
# Runs the test suite under AddressSanitizer and ThreadSanitizer, each in its own build folder.
# Usage: Scripts/sanitize.sh [address|thread ...]   (default: both). Takes several minutes each.
set -euo pipefail
cd "$(dirname "$0")/.."
for sanitizer in "${@:-address thread}"; do
  for s in $sanitizer; do
    echo "== swift test --sanitize=$s" >&2
    # libvips is loaded with dlopen and not instrumented; ASan's leak checker would report
    # GLib's process-lifetime caches, so leaks are checked by the VIPS_LEAK test instead.
    ASAN_OPTIONS=detect_leaks=0 TSAN_OPTIONS="report_signal_unsafe=0" \
      swift test --disable-xctest --sanitize="$s" --scratch-path ".build-$s"
  done
done
