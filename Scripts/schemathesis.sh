#!/usr/bin/env bash
# Checks `darkroom serve` against docs/openapi.yaml with Schemathesis: makes a small library
# from Samples/*.jpg, serves it with a write token and a read token, and runs `st run` with
# the token and every check: server errors, responses (status, content type, headers, body)
# the document does not describe, requests it allows that are refused or that it forbids
# that are accepted, methods a path does not take, auth ignored, resources that vanish.
# Exits with Schemathesis's status: 0 only when no check failed.
#
#   Scripts/schemathesis.sh                          # the darkroom on PATH
#   DARKROOM=.build/debug/darkroom Scripts/schemathesis.sh
#   MAX_EXAMPLES=50 Scripts/schemathesis.sh -- --phases fuzzing   # extra `st run` options
#   Scripts/schemathesis.sh -- --exclude-checks unsupported_method
#
# Environment: DARKROOM (the binary), MAX_EXAMPLES (test cases per operation, 50),
# WORKERS (1), SEED (a fixed seed for a reproducible run), REPORT_DIR (where JUnit and NDJSON
# reports go; none unless set), KEEP=1 (keep the temporary folder, its path is printed).
# Needs Python 3 with pip: Schemathesis is installed with `pip install schemathesis` when
# `st` is missing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
darkroom=${DARKROOM:-darkroom}
max_examples=${MAX_EXAMPLES:-50}
workers=${WORKERS:-1}
schema="$root/docs/openapi.yaml"
extra=()
if [[ ${1:-} == "--" ]]; then
  shift
  extra=("$@")
elif (( $# > 0 )); then
  echo "usage: Scripts/schemathesis.sh [-- ST_RUN_OPTIONS...]" >&2
  exit 2
fi

if ! command -v "$darkroom" >/dev/null 2>&1; then
  echo "schemathesis.sh: no darkroom binary '$darkroom' (set DARKROOM)" >&2
  exit 2
fi
darkroom=$(command -v "$darkroom")
if ! command -v st >/dev/null 2>&1; then
  echo "schemathesis.sh: installing schemathesis" >&2
  python3 -m pip install --quiet schemathesis
  hash -r
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/darkroom-schemathesis.XXXXXX")
server_pid=""
cleanup() {
  local status=$?
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    # A graceful stop waits for the requests and batch jobs under way; give it 20 s.
    for _ in $(seq 1 200); do
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$server_pid" 2>/dev/null; then
      echo "schemathesis.sh: the server did not stop on SIGTERM; killing it" >&2
      kill -KILL "$server_pid" 2>/dev/null || true
    fi
    wait "$server_pid" 2>/dev/null || true
  fi
  if [[ ${KEEP:-0} == 1 ]]; then
    echo "schemathesis.sh: kept $work (server log: $work/server.err)" >&2
  else
    rm -rf "$work"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# 1. A small library: the sample JPEGs in two folders, and two of them again elsewhere (so
#    there are duplicates to find).
library="$work/library"
mkdir -p "$library/2024/trip" "$library/2024/home" "$library/copies"
samples=("$root"/Samples/*.jpg)
if [[ ! -e ${samples[0]} ]]; then
  echo "schemathesis.sh: no Samples/*.jpg in $root" >&2
  exit 2
fi
for (( i = 0; i < ${#samples[@]}; i++ )); do
  if (( i % 2 == 0 )); then cp "${samples[i]}" "$library/2024/trip/"; else cp "${samples[i]}" "$library/2024/home/"; fi
done
cp "${samples[0]}" "${samples[1]}" "$library/copies/"
"$darkroom" scan "$library" >"$work/scan.log"

# 2. Tokens: a write token (used for the run) and a read token.
token=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')
read_token=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')
printf 'write %s\nread %s\n' "$token" "$read_token" >"$work/tokens"
chmod 600 "$work/tokens"

# 3. A folder of encrypted spaces (cheap Argon2id), so that the space routes answer as they
#    do when served (a bearer token cannot unlock one: those answers are 403s).
printf 'schemathesis\n' >"$work/space-password"
"$darkroom" space create "$work/spaces" --password-file "$work/space-password" \
  --kdf-passes 1 --kdf-memory 8 >/dev/null

# 4. The server, on a free port, without the rate limit (Schemathesis is one busy client).
"$darkroom" serve "$library" --port 0 --token-file "$work/tokens" --rate-limit 0 \
  --spaces "$work/spaces" --signed-renditions \
  >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
port=""
for _ in $(seq 1 300); do
  port=$(sed -n 's|^  open http://127\.0\.0\.1:\([0-9]*\)/$|\1|p' "$work/server.out" | head -n 1)
  [[ -n $port ]] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "schemathesis.sh: the server did not start:" >&2
    cat "$work/server.err" >&2
    exit 2
  fi
  sleep 0.1
done
if [[ -z $port ]]; then
  echo "schemathesis.sh: the server printed no port in 30 s:" >&2
  cat "$work/server.out" "$work/server.err" >&2
  exit 2
fi
base="http://127.0.0.1:$port"
echo "schemathesis.sh: serving $library at $base" >&2

# Real asset ids, so that generated requests reach real assets as well as missing ones.
ids=$(curl -fsS -H "Authorization: Bearer $token" "$base/api/assets?limit=100" \
  | python3 -c 'import json, sys; print(" ".join(a["id"] for a in json.load(sys.stdin)["assets"]))')
if [[ -z $ids ]]; then
  echo "schemathesis.sh: the library has no assets" >&2
  exit 2
fi
values=$(printf '"%s", ' $ids)

# The configuration: the real ids as a dictionary for asset ids in paths and bodies, the
# tokens for the login form, and a short time limit for the event streams (the change
# feed never ends when it follows).
cat >"$work/schemathesis.toml" <<EOF
[dictionaries.assets]
values = [${values%, }]

[dictionaries.token]
values = ["$token", "$read_token"]

[parameters]
"path.id" = { dictionary = "assets", probability = 0.5 }
"query.after" = { dictionary = "assets", probability = 0.5 }
"body.ids[*]" = { dictionary = "assets", probability = 0.5 }
"body.token" = { dictionary = "token", probability = 0.5 }

# The event streams: a short time limit (the change feed never ends when it follows). The
# change feed is the one operation with a header parameter (Last-Event-ID), and Schemathesis
# 4.32 counts any header it does not declare as invalid data the server should refuse; no
# HTTP server refuses unknown headers (schemathesis/schemathesis#2726, #4762).
[[operations]]
include-path = "/api/changes"
request-timeout = 3.0
max-stream-events = 20
checks.negative_data_rejection.enabled = false

[[operations]]
include-path = "/api/jobs/{id}/events"
request-timeout = 3.0
max-stream-events = 20

# Bodies the schema allows that the library refuses for what a schema cannot state: a crop
# that reaches outside the image (x + width > 1, or past its pixels), curve points whose x
# do not rise, a version past the edit's history, a title another album has, a preset both
# from an asset and of filters (400), bytes that are no image (422), an upload folder with a
# component over 255 bytes of UTF-8 (a pattern counts characters; 400).
[[operations]]
include-path = ["/api/assets/{id}/edit", "/api/assets/{id}/preview", "/api/assets/{id}/auto", "/api/assets/{id}/revert", "/api/albums", "/api/jobs", "/api/presets"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "429"]

[[operations]]
include-path = "/api/uploads"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409", "413", "422", "429"]
EOF

# 5. Schemathesis, with every check: its default, which the configuration above narrows
#    where a schema cannot say what the server rightly does (an option `--checks all` would
#    override the configuration, so none is given).
st_args=(
  --url "$base"
  --header "Authorization: Bearer $token"
  --max-examples "$max_examples"
  --workers "$workers"
  --max-redirects 0
  --request-timeout 30
  --generation-database none
  --suppress-health-check too_slow,filter_too_much
)
[[ -n ${SEED:-} ]] && st_args+=(--seed "$SEED")
if [[ -n ${REPORT_DIR:-} ]]; then
  mkdir -p "$REPORT_DIR"
  st_args+=(--report junit,ndjson --report-dir "$(cd "$REPORT_DIR" && pwd)")
fi
echo "schemathesis.sh: $(st --version)" >&2
# Run from the temporary folder, so that Schemathesis' own cache (.schemathesis/) goes there.
set +e
(cd "$work" && st --config-file "$work/schemathesis.toml" run "$schema" "${st_args[@]}" "${extra[@]}")
status=$?
set -e

# 6. The server stops on SIGTERM (in cleanup); its 5xx, if any, are in its log.
if grep -q ' 5[0-9][0-9] [0-9.]* ms$' "$work/server.err"; then
  echo "schemathesis.sh: the server answered with 5xx:" >&2
  grep ' 5[0-9][0-9] [0-9.]* ms$' "$work/server.err" | sort | uniq -c | sort -rn | head -n 20 >&2
fi
exit "$status"
