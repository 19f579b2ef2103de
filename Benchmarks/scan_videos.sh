#!/usr/bin/env bash
# Scan speed with videos (issue 29), in one run: the first scan of scan.sh's 1,000-photo
# library alone, and of the same photos with 200 videos among them: 100 MP4 clips (the
# 1080p, 10 s H.264 clip video.sh makes) and 100 MOVs named as photos (Live Photo pairs,
# which the scan pairs with their stills), warm page cache, median of N runs (hyperfine).
# Prints what a video adds to a scan against what a photo costs, per file and per byte (the
# scan hashes every byte of both), and exiftool -r -j -fast over both folders for scale. The
# clip is 83 MB (grain is costly to compress): the folders take 17 GB while it runs.
# Usage: Benchmarks/scan_videos.sh [runs=5]   (SCAN_SKIP_BUILD=1 uses the release build as it is)
source "$(dirname "$0")/common.sh"
RUNS="${1:-5}"
export DARKROOM_NO_BACKGROUND=1  # the scan alone, no thumbnail pass after it
"$ROOT/Scripts/install-deps.sh" ffmpeg hyperfine libimage-exiftool-perl
[ -n "${SCAN_SKIP_BUILD:-}" ] || release_build --product darkroom
DARKROOM="$ROOT/.build/release/darkroom"
SMALL="$WORK/scan-1k"
[ -d "$SMALL" ] || { echo "run Benchmarks/scan.sh first (it makes $SMALL)" >&2; exit 1; }
CLIP="$WORK/video-landscape.mp4"
[ -f "$CLIP" ] || ffmpeg -v error -y -f lavfi -i "testsrc2=s=1920x1080:r=30:d=10,noise=alls=12:allf=t" \
  -c:v libx264 -pix_fmt yuv420p "$CLIP"
MOV="$WORK/scan-live.mov"
[ -f "$MOV" ] || ffmpeg -v error -y -i "$CLIP" -c copy "$MOV"
PLAIN="$WORK/scan-1k-plain"
MIXED="$WORK/scan-1k-videos"
rm -rf "$PLAIN" "$MIXED"
cp -al "$SMALL" "$PLAIN"
cp -al "$SMALL" "$MIXED"
rm -rf "$PLAIN/.darkroom" "$MIXED/.darkroom"
mkdir -p "$MIXED/videos"
for i in $(seq -w 1 100); do cp "$CLIP" "$MIXED/videos/clip$i.mp4"; printf '%s' "$i" >>"$MIXED/videos/clip$i.mp4"; done
find "$MIXED" -name '*.jpg' | sort >"$WORK/scanv-photos.txt"
while read -r photo; do cp "$MOV" "${photo%.*}.MOV"; done < <(head -100 "$WORK/scanv-photos.txt")
photos=$(find "$PLAIN" -name '*.jpg' | wc -l)
videos=$(find "$MIXED" \( -name '*.mp4' -o -name '*.MOV' \) | wc -l)
for dir in "$PLAIN" "$MIXED"; do cat $(find "$dir" -type f) >/dev/null; done  # warm
time_scan() {
  hyperfine -N --warmup 1 --runs "$RUNS" --prepare "rm -rf $1/.darkroom" \
    --export-json "$WORK/scanv.json" "$DARKROOM scan $1 --progress none" >/dev/null 2>&1
  median_ms "$WORK/scanv.json"
}
time_exiftool() {
  hyperfine -N -i --runs 3 --export-json "$WORK/scanv-e.json" "exiftool -r -j -fast $1" >/dev/null 2>&1
  median_ms "$WORK/scanv-e.json"
}
p=$(time_scan "$PLAIN")
m=$(time_scan "$MIXED")
ep=$(time_exiftool "$PLAIN")
em=$(time_exiftool "$MIXED")
summary=$("$DARKROOM" scan "$MIXED" --progress none 2>&1 | tail -1)
printf '%-44s %10s %12s\n' "" "darkroom ms" "exiftool ms"
printf '%-44s %10s %12s\n' "$photos photos" "$p" "$ep"
printf '%-44s %10s %12s\n' "the same with $videos videos (100 Live Photo MOVs)" "$m" "$em"
photo_bytes=$(find "$PLAIN" -name '*.jpg' -printf '%s\n' | awk '{ s += $1 } END { print s }')
video_bytes=$(find "$MIXED" \( -name '*.mp4' -o -name '*.MOV' \) -printf '%s\n' | awk '{ s += $1 } END { print s }')
/usr/bin/python3 - "$p" "$m" "$photos" "$videos" "$photo_bytes" "$video_bytes" <<'PY'
import sys
p, m = float(sys.argv[1]), float(sys.argv[2])
photos, videos, pb, vb = (int(float(x)) for x in sys.argv[3:7])
per_photo, per_video = p / photos, (m - p) / videos
print("per photo: %.2f ms; each video adds %.2f ms (%.1fx a photo, %.0f times its bytes)"
      % (per_photo, per_video, per_video / per_photo, (vb / videos) / (pb / photos)))
print("throughput: photos %.0f MB/s, videos %.0f MB/s (the scan hashes every byte)"
      % (pb / 1e6 / (p / 1000), vb / 1e6 / ((m - p) / 1000)))
PY
echo "a rescan of the mixed folder says: $summary"
rm -rf "$PLAIN" "$MIXED"  # copies: 200 clips of this size fill disks
