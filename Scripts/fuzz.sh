#!/usr/bin/env bash
# Runs each libFuzzer target (Fuzz/) for a bounded time with AddressSanitizer.
# Usage: Scripts/fuzz.sh [seconds per target=60]. Crashes land in Fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/../Fuzz"
mkdir -p .deps && ln -sfn ../.. .deps/darkroom
SECONDS_PER_TARGET="${1:-60}"
swift build -c debug --scratch-path ../.build-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library >&2
mkdir -p artifacts work/graph work/metadata
status=0
for target in graph metadata; do
  binary="../.build-fuzz/debug/Fuzz$(tr '[:lower:]' '[:upper:]' <<<"${target:0:1}")${target:1}"
  echo "== $target: ${SECONDS_PER_TARGET}s" >&2
  "$binary" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix=artifacts/ -print_final_stats=1 "work/$target" "corpus/$target" 2>&1 \
    | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY)" \
    || status=$?
done
ls artifacts | grep -q . && { echo "crashes found: Fuzz/artifacts/" >&2; exit 1; }
exit 0
