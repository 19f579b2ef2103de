#!/usr/bin/env bash
# Writes Scripts/darkroom.order: the functions of the darkroom binary that its common commands
# run, most common first, for the linker to lay out together (Scripts/release-build.sh).
# Run it after large changes to the render path and commit the result; a stale list costs
# memory, never correctness (functions it names that no longer exist are skipped).
#
# How: callgrind (valgrind) runs a release build, stripped of its debug information (which
# valgrind 3.19 cannot read for Swift), on each command below and lists every function of the
# binary that ran, by its symbol name. Takes about a minute after the build (59 s here).
# Usage: Scripts/make-order-file.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
source "$ROOT/Benchmarks/common.sh"
"$ROOT/Scripts/install-deps.sh" valgrind libvips-tools libimage-exiftool-perl
release_build --product darkroom
bin="$("$ROOT/Scripts/release-build.sh" --show-bin-path)/darkroom"

work="$WORK/order"
rm -rf "$work"
mkdir -p "$work/files"
photo="$WORK/phone-24mp-o6.jpg"
make_phone_photo "$photo"
cp "$ROOT"/Samples/orientation-6.jpg "$ROOT"/Samples/display-p3.jpg "$work/files/"
strip --strip-debug -o "$work/darkroom" "$bin"

profile() {  # name, darkroom arguments...: appends the functions that ran to $work/all.txt
  local name="$1"
  shift
  (cd "$work/files" && valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/$name.cg" \
    "$work/darkroom" "$@" >/dev/null 2>"$work/$name.log") || {
    echo "make-order-file: darkroom $* failed under valgrind; see $work/$name.log" >&2
    exit 1
  }
  /usr/bin/python3 - "$work/$name.cg" "$work/darkroom" >>"$work/all.txt" <<'EOF'
import re, sys
# callgrind names each object (ob=) and function (fn=) once in full, then by (number).
names, objects, obj = {}, {}, None
def name(value, table):
    m = re.match(r"\((\d+)\)(?: (.*))?$", value)
    if not m:
        return value
    if m.group(2) is not None:
        table[m.group(1)] = m.group(2)
    return table.get(m.group(1))
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("ob="):
        obj = name(line[3:], objects)
    elif line.startswith("cob="):
        name(line[4:], objects)
    elif line.startswith(("fn=", "cfn=")):
        fn = name(line[line.index("=") + 1:], names)
        if line.startswith("fn=") and obj == sys.argv[2] and fn and not fn.startswith("0x"):
            print(re.sub(r"'\d+$", "", fn))  # 'N marks a recursion depth
EOF
}

profile thumbnail render "$photo" --rep thumbnail --size 256 -o "$work/t.jpg" --cache-dir "$work/cache"
profile fullscreen render "$photo" --rep fullscreen -o "$work/f.jpg" --cache-dir "$work/cache"
profile cached render "$photo" --rep fullscreen -o "$work/f.jpg" --cache-dir "$work/cache"
profile info info --json orientation-6.jpg display-p3.jpg
profile edit edit orientation-6.jpg --filter noir --filter 'tone exposure=0.3' --filter 'crop aspect=4:5'
profile apply apply display-p3.jpg --filter noir --in-process -o "$work/applied"

# First appearance wins: the thumbnail's functions lead, then what each later command adds.
awk '!seen[$0]++' "$work/all.txt" >"$ROOT/Scripts/darkroom.order"
echo "make-order-file: $(wc -l <"$ROOT/Scripts/darkroom.order") functions in Scripts/darkroom.order" >&2
