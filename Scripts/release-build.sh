#!/usr/bin/env bash
# The one release build of Darkroom: Scripts/install.sh and every benchmark call this, so that
# they measure what users install (a build with other flags rebuilds everything).
# Usage: Scripts/release-build.sh [swift build arguments...]   e.g. --product darkroom, --show-bin-path
#
# What the flags are for (figures: Benchmarks/README.md, "How the binary is linked"):
# - --static-swift-stdlib: the Swift runtime and Foundation are linked in; a process starts
#   about 18 ms sooner and runs without the toolchain's libraries.
# - function sections, and lld with Scripts/darkroom.order: the code a render runs is laid out
#   together at the start of the text, so a process maps a few hundred kilobytes of it instead
#   of touching pages all over 26 MB (the kernel maps 64 KiB around every page it faults in).
# - pack-relative-relocs (DT_RELR, glibc 2.36 or later): the 123,000 relative relocations
#   the loader reads at every start take 23 KB instead of 2.8 MB.
# - --no-export-dynamic: the toolchain's static link exports all of Darkroom's 33,000
#   symbols, which every symbol lookup of libvips' libraries then searches first; nothing
#   looks Darkroom's symbols up by name.
set -euo pipefail
cd "$(dirname "$0")/.."

flags=(-c release --static-swift-stdlib
  -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections
  -Xlinker --no-export-dynamic)

swiftc_dir="$(dirname "$(readlink -f "$(command -v swiftc)")")"
if [ -x "$swiftc_dir/ld.lld" ]; then
  flags+=(-Xswiftc -use-ld=lld
    -Xlinker "--symbol-ordering-file=$PWD/Scripts/darkroom.order" -Xlinker --no-warn-symbol-ordering)
  glibc="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
  if [ -n "$glibc" ] && [ "$(printf '%s\n2.36\n' "$glibc" | sort -V | head -n 1)" = "2.36" ]; then
    flags+=(-Xlinker -z -Xlinker pack-relative-relocs)
  fi
else
  echo "release-build: the toolchain has no ld.lld; linking with the system linker, code not laid out" >&2
fi

case " $* " in *" --show-bin-path "*) exec swift build "${flags[@]}" "$@" ;; esac

# SwiftPM does not compile Swift modules again when only these flags change, nor link again
# when only the order file does: a build made with other flags is removed first, and a binary
# older than the order file is linked again.
bin="$(swift build "${flags[@]}" --show-bin-path)"
stamp="$bin/.darkroom-release-flags"
if [ -d "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" != "${flags[*]}" ]; then
  echo "release-build: the release flags changed; building everything again" >&2
  rm -rf "$bin"
fi
[ -e "$bin/darkroom" ] && [ Scripts/darkroom.order -nt "$bin/darkroom" ] && rm -f "$bin/darkroom"
swift build "${flags[@]}" "$@"
mkdir -p "$bin"
printf '%s' "${flags[*]}" >"$stamp"
