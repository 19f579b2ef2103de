#!/usr/bin/env bash
# What reading Lightroom's edits costs `scan` and `info` (issue 30: "reading XMP adds under 5%"),
# in one run, on the same 1,000 photos (scan_library.py), in three trees of hard links to them:
#  - none:      no sidecars;
#  - plain:     a NAME.xmp beside every photo with a rating, a description and keywords;
#  - other:     the same sidecar with two dozen more properties in a namespace Darkroom does
#               not read: the bytes of Lightroom's settings, byte for byte, under another URI;
#  - lightroom: the same sidecar with Lightroom's settings (crop, grayscale, exposure,
#               contrast and the rest of the `crs:` properties Camera Raw writes).
# Medians of RUNS: the first scan of each tree into an empty catalog (no background pass), and
# `info --json` of its first 200 photos. lightroom/other is the cost of reading the settings,
# the same XMP read either way (the goal: under 1.05); other/plain that of a larger packet,
# plain/none that of a sidecar at all. exiftool -r -j -fast over the lightroom tree (the same
# reads) is the peer.
# Usage: Benchmarks/xmp.sh [RUNS]   (XMP_SKIP_BUILD=1 DARKROOM=...: a build at hand)
source "$(dirname "$0")/common.sh"
RUNS="${1:-11}"
install_peers
if [ -z "${XMP_SKIP_BUILD:-}" ]; then release_build --product darkroom; fi
DARKROOM="${DARKROOM:-$ROOT/.build/release/darkroom}"

BASE="$WORK/xmp-base"
if [ "$(find "$BASE" -name '*.jpg' 2>/dev/null | wc -l)" != 1000 ]; then
  rm -rf "$BASE"
  /usr/bin/python3 "$ROOT/Benchmarks/scan_library.py" "$WORK/scan-bases" "$BASE" 1000
fi
for tree in none plain other lightroom; do
  rm -rf "$WORK/xmp-$tree"
  cp -al "$BASE" "$WORK/xmp-$tree"
done
/usr/bin/python3 - "$WORK" <<'EOF'
import pathlib, sys
work = pathlib.Path(sys.argv[1])
head = """<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
 <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"
  xmlns:crs="{crs}" xmp:Rating="{rating}"{settings}>
  <dc:description><rdf:Alt><rdf:li xml:lang="x-default">Photo {n}, a description</rdf:li></rdf:Alt></dc:description>
  <dc:subject><rdf:Bag><rdf:li>bench</rdf:li><rdf:li>keyword {k}</rdf:li></rdf:Bag></dc:subject>
 </rdf:Description></rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>
"""
lightroom = """
  crs:Version="15.0" crs:ProcessVersion="11.0" crs:WhiteBalance="As Shot" crs:Temperature="5500"
  crs:Tint="+4" crs:Exposure2012="+0.50" crs:Contrast2012="+12" crs:Highlights2012="-30"
  crs:Shadows2012="+25" crs:Whites2012="0" crs:Blacks2012="-5" crs:Clarity2012="+10"
  crs:Vibrance="+8" crs:Saturation="0" crs:ConvertToGrayscale="True" crs:HasCrop="True"
  crs:CropTop="0.1" crs:CropLeft="0.05" crs:CropBottom="0.9" crs:CropRight="0.95" crs:CropAngle="0"
  crs:HasSettings="True" crs:AlreadyApplied="False\""""
adobe = "http://ns.adobe.com/camera-raw-settings/1.0/"
other = "http://ns.example.com/other-settings/1.0000/"  # as long as Adobe's URI
for tree, settings, crs in (("plain", "", adobe), ("other", lightroom, other), ("lightroom", lightroom, adobe)):
    for n, photo in enumerate(sorted((work / ("xmp-" + tree)).rglob("*.jpg"))):
        text = head.format(rating=n % 6, n=n, k=n % 17, settings=settings, crs=crs)
        photo.with_suffix(".xmp").write_text(text)
EOF
find "$WORK"/xmp-none "$WORK"/xmp-plain "$WORK"/xmp-other "$WORK"/xmp-lightroom -type f \
  -exec cat {} + >/dev/null

medians() {
  /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(" ".join("%.1f" % (x["median"]*1000) for x in r))' "$1"
}
scans=()
infos=()
for tree in none plain other lightroom; do
  scans+=("$DARKROOM scan $WORK/xmp-$tree --progress none --no-background")
  files="$(find "$WORK/xmp-$tree" -name '*.jpg' | sort | awk 'NR <= 200' | tr '\n' ' ')"
  infos+=("$DARKROOM info --json $files")
done
prepare="rm -rf $WORK/xmp-none/.darkroom $WORK/xmp-plain/.darkroom $WORK/xmp-other/.darkroom $WORK/xmp-lightroom/.darkroom"
hyperfine -N --warmup 1 --runs "$RUNS" --prepare "$prepare" --export-json "$WORK/xmp-scan.json" \
  "${scans[@]}" >/dev/null
read -r scan_none scan_plain scan_other scan_lr <<<"$(medians "$WORK/xmp-scan.json")"
hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$WORK/xmp-info.json" "${infos[@]}" >/dev/null
read -r info_none info_plain info_other info_lr <<<"$(medians "$WORK/xmp-info.json")"
hyperfine --runs 3 --export-json "$WORK/xmp-exiftool.json" \
  "exiftool -r -j -fast $WORK/xmp-lightroom > /dev/null" >/dev/null
read -r exif <<<"$(medians "$WORK/xmp-exiftool.json")"

# The same work: every photo of the lightroom tree catalogued as edited in Lightroom.
"$DARKROOM" scan "$WORK/xmp-lightroom" --progress none --no-background >/dev/null 2>&1
marked="$(cd "$WORK/xmp-lightroom" && "$DARKROOM" list --json |
  /usr/bin/python3 -c 'import json,sys; print(sum(1 for a in json.load(sys.stdin) if (a.get("foreignSettings") or {}).get("program") == "lightroom"))')"
[ "$marked" = 1000 ] || { echo "only $marked of 1000 photos were read as edited in Lightroom" >&2; exit 1; }

# Showing it: a 24-megapixel phone photo (EXIF 6) with Lightroom's crop and grayscale in a
# NAME.xmp beside it, its fullscreen rendition (1920x1080 turned to the crop, JPEG Q85): darkroom
# (no cache: a render each time) against the same work written in pyvips, and against darkroom
# rendering the photo without the sidecar (what showing the edit costs).
PHOTO="$WORK/xmp-phone/phone.jpg"
mkdir -p "$WORK/xmp-phone"
make_phone_photo "$WORK/phone-24mp-o6.jpg"
cp "$WORK/phone-24mp-o6.jpg" "$PHOTO"
cp "$WORK/phone-24mp-o6.jpg" "$WORK/xmp-phone/plain.jpg"
rm -f "$WORK/xmp-phone/phone.xmp"
exiftool -q -XMP-crs:HasCrop=True -XMP-crs:CropLeft=0.2 -XMP-crs:CropTop=0.15 \
  -XMP-crs:CropRight=0.8 -XMP-crs:CropBottom=0.75 -XMP-crs:ConvertToGrayscale=True \
  "$WORK/xmp-phone/phone.xmp"
hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$WORK/xmp-render.json" \
  "$DARKROOM render $PHOTO --rep fullscreen --no-cache --quality 85 -o $WORK/xmp-phone/dr.jpg" \
  "python3 $ROOT/Benchmarks/pyvips_crop_render.py $PHOTO $WORK/xmp-phone/peer.jpg 0.2 0.15 0.8 0.75 1920 1080 85" \
  "$DARKROOM render $WORK/xmp-phone/plain.jpg --rep fullscreen --no-cache --quality 85 -o $WORK/xmp-phone/plain-dr.jpg" \
  >/dev/null
read -r render_dr render_peer render_plain <<<"$(medians "$WORK/xmp-render.json")"
# The same output: the crop's size (2400x3600 upright, fitted to 1080x1620), grey.
for out in dr peer; do
  size="$(vipsheader -f width "$WORK/xmp-phone/$out.jpg")x$(vipsheader -f height "$WORK/xmp-phone/$out.jpg")"
  [ "$size" = 1080x1620 ] || { echo "$out.jpg is $size, not 1080x1620" >&2; exit 1; }
done

ratio() { /usr/bin/python3 -c "print('%.3f' % ($1 / $2))"; }
echo "1,000 photos, medians of $RUNS (exiftool: 3)"
echo "scan:  none $scan_none ms, plain sidecars $scan_plain ms, other $scan_other ms, Lightroom $scan_lr ms"
echo "       Lightroom/other $(ratio "$scan_lr" "$scan_other")x (goal < 1.05), other/plain $(ratio "$scan_other" "$scan_plain")x, plain/none $(ratio "$scan_plain" "$scan_none")x"
echo "info (200 photos): none $info_none ms, plain $info_plain ms, other $info_other ms, Lightroom $info_lr ms"
echo "       Lightroom/other $(ratio "$info_lr" "$info_other")x (goal < 1.05), other/plain $(ratio "$info_other" "$info_plain")x, plain/none $(ratio "$info_plain" "$info_none")x"
echo "exiftool -r -j -fast (lightroom tree): $exif ms = $(ratio "$exif" "$scan_lr")x darkroom's scan"
echo "fullscreen of a 24 MP photo showing a Lightroom crop + grayscale: darkroom $render_dr ms,"
echo "       pyvips $render_peer ms ($(ratio "$render_dr" "$render_peer")x); the photo without its sidecar $render_plain ms"
