#!/usr/bin/env bash
# What reading metadata as other tools write it costs a scan (issue 33), in one run, on the
# same 2,000 photos (scan_library.py: camera EXIF with no offset tags, GPS at ten cities for
# half of them), a NAME.EXT.xmp sidecar beside every other photo (a rating, a description,
# keywords), warm page cache:
#  - the first scan by BASE (a build from before sidecars, zones and places) and by NEW, each
#    into an empty catalog, median of 11 (fewer swing by ±8% here): NEW/BASE per file;
#  - exiftool -r -j -fast over the same folder (the same reads: EXIF, XMP, sidecars; no places
#    or zones), median of 3: exiftool/NEW;
#  - the nearest-place and time-zone lookups on their own (DarkroomBench places: 200,000
#    populated positions, median of 5 passes), microseconds each.
# Usage: Benchmarks/metadata.sh BASE_BINARY [NEW_BINARY]
#   NEW defaults to a release build of this tree (Scripts/release-build.sh); BASE is built the
#   same way in a git worktree of the older commit. Needs Scripts/install-geodata.sh's data.
source "$(dirname "$0")/common.sh"
[ $# -ge 1 ] || { echo "usage: Benchmarks/metadata.sh BASE_BINARY [NEW_BINARY]" >&2; exit 2; }
BASE="$(realpath "$1")"
install_peers
"$ROOT/Scripts/install-geodata.sh"
release_build --product DarkroomBench
if [ $# -ge 2 ]; then NEW="$(realpath "$2")"; else release_build --product darkroom; NEW="$ROOT/.build/release/darkroom"; fi
BENCH="$ROOT/.build/release/DarkroomBench"

LIB="$WORK/metadata-lib"
if [ "$(find "$LIB" -name '*.jpg' 2>/dev/null | wc -l)" != 2000 ]; then
  rm -rf "$LIB"
  /usr/bin/python3 "$ROOT/Benchmarks/scan_library.py" "$WORK/scan-bases" "$LIB" 2000
fi
# Sidecars as darktable and `darkroom meta` name them, beside every other photo.
/usr/bin/python3 - "$LIB" <<'EOF'
import pathlib, sys
template = """<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
 <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/" xmp:Rating="{rating}">
  <dc:description><rdf:Alt><rdf:li xml:lang="x-default">Photo {n}, a description</rdf:li></rdf:Alt></dc:description>
  <dc:subject><rdf:Bag><rdf:li>bench</rdf:li><rdf:li>keyword {k}</rdf:li></rdf:Bag></dc:subject>
 </rdf:Description></rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>
"""
for n, photo in enumerate(sorted(pathlib.Path(sys.argv[1]).rglob("*.jpg"))):
    if n % 2 == 0:
        sidecar = photo.with_name(photo.name + ".xmp")
        text = template.format(rating=n % 6, n=n, k=n % 17)
        if not sidecar.exists() or sidecar.read_text() != text:
            sidecar.write_text(text)
EOF
find "$LIB" -type f -exec cat {} + >/dev/null

json() { echo "$WORK/metadata-$1.json"; }
medians() {
  /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(" ".join("%.1f" % (x["median"]*1000) for x in r))' "$1"
}
hyperfine -N --warmup 1 --runs 11 --export-json "$(json scan)" --prepare "rm -rf $LIB/.darkroom" \
  "$BASE scan $LIB --progress none" "$NEW scan $LIB --progress none" >/dev/null
read -r base new <<<"$(medians "$(json scan)")"
hyperfine --runs 3 --export-json "$(json exiftool)" \
  "exiftool -r -j -fast $LIB > /dev/null" >/dev/null
read -r exif <<<"$(medians "$(json exiftool)")"

# What the new scan read, so the figures are known to be of the same work.
"$NEW" scan "$LIB" --progress none >/dev/null
counts=$(cd "$LIB" && "$NEW" list --json | /usr/bin/python3 -c '
import json, sys
assets = json.load(sys.stdin)
print(len(assets), sum(1 for a in assets if a.get("rating") is not None),
      sum(1 for a in assets if a.get("timeZone")), sum(1 for a in assets if a.get("place")))')
read -r total rated zoned placed <<<"$counts"

per() { /usr/bin/python3 -c "import sys; print('%.3f' % (float(sys.argv[1]) / 2000))" "$1"; }
echo "2,000 photos, 1,000 sidecars; the new scan catalogued $total: $rated rated (sidecars), $zoned with a zone, $placed with a place"
printf '%-46s %10s %10s\n' "" "ms" "ms/file"
echo "base: $BASE"
printf '%-46s %10s %10s\n' "first scan, base" "$base" "$(per "$base")"
printf '%-46s %10s %10s\n' "first scan, new" "$new" "$(per "$new")"
printf '%-46s %10s %10s\n' "exiftool -r -j -fast" "$exif" "$(per "$exif")"
echo "new/base: $(ratio "$new" "$base")   (goal: under 1.10)"
echo "exiftool/new: $(ratio "$exif" "$new")   (goal: at least 10)"
"$BENCH" places 200000
