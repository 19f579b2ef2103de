#!/usr/bin/env bash
# What the locks of issue 53 cost, in one run: this tree's release build against BASE's
# (a commit before them, built in a worktree of its own beside this one), on the same
# inputs, alternating A B A B so that drift in the machine falls on both:
# - a cached 256 px thumbnail over HTTP, darkroom serve alone (wrk, 32 connections, one
#   thread on core 1, serve on core 0, DURATION seconds a round, ROUNDS rounds);
# - darkroom apply over 20 copies of a 24 MP phone photo (noir, tone, crop; hyperfine).
# Goal: each within 3% of BASE's. Usage: Benchmarks/locks.sh  (BASE=f58ec36 DURATION=10 ROUNDS=3)
source "$(dirname "$0")/common.sh"
BASE="${BASE:-f58ec36}"
DURATION="${DURATION:-10}"
ROUNDS="${ROUNDS:-3}"
install_peers
"$ROOT/Scripts/install-deps.sh" wrk curl
release_build --product darkroom
NEW="$ROOT/.build/release/darkroom"

# BASE, built with the same script in a worktree (its own .build: a scratch copy).
TREE="$WORK/locks-base"
if [ ! -x "$TREE/.build/release/darkroom" ] || [ "$(git -C "$TREE" rev-parse HEAD 2>/dev/null)" != "$(git -C "$ROOT" rev-parse "$BASE")" ]; then
  git -C "$ROOT" worktree remove --force "$TREE" 2>/dev/null || rm -rf "$TREE"
  git -C "$ROOT" worktree add --detach "$TREE" "$BASE" >&2
  (cd "$TREE" && Scripts/release-build.sh --product darkroom >&2)
fi
OLD="$TREE/.build/release/darkroom"

make_apply_inputs
LIB="$WORK/locks-lib"
rm -rf "$LIB" && mkdir -p "$LIB" && cp "$SRC" "$LIB/p1.jpg"
"$NEW" scan "$LIB" --no-background >/dev/null 2>&1
TOKEN="bench-token-0123456789abcdef"
echo "write $TOKEN" >"$WORK/locks-tokens"
chmod 600 "$WORK/locks-tokens"

# serve_rate BINARY: requests/s of a cached thumbnail from a server of BINARY.
serve_rate() {
  taskset -c 0 "$1" serve "$LIB" --port 18097 --token-file "$WORK/locks-tokens" --rate-limit 0 \
    --no-background --log-level warning >"$WORK/locks-serve.out" 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do curl -sf http://127.0.0.1:18097/healthz >/dev/null && break; sleep 0.1; done
  local id
  id=$(curl -sf -H "Authorization: Bearer $TOKEN" 'http://127.0.0.1:18097/api/assets' |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["assets"][0]["id"])')
  local url="http://127.0.0.1:18097/api/assets/$id/thumbnail?size=256"
  curl -sf -H "Authorization: Bearer $TOKEN" -o /dev/null "$url"  # made once, then cached
  local before after
  before=$(cpu_ticks "$pid")
  taskset -c 1 wrk -t1 -c32 -d"${DURATION}s" -H "Authorization: Bearer $TOKEN" "$url" \
    >"$WORK/locks-wrk.out"
  after=$(cpu_ticks "$pid")
  # requests/s, and the server's CPU time per request in microseconds (less moved by
  # another tenant's load on the machine than the rate is).
  awk -v ticks=$((after - before)) -v hz="$(getconf CLK_TCK)" '
    /requests in/ {n = $1} /Requests\/sec/ {rate = $2}
    END {printf "%s %.1f\n", rate, ticks / hz * 1e6 / n}' "$WORK/locks-wrk.out"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}

# cpu_ticks PID: user and system clock ticks the process has used.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

declare -a old_rates new_rates old_cpus new_cpus
for round in $(seq 1 "$ROUNDS"); do
  read -r rate cpu < <(serve_rate "$OLD")
  old_rates+=("$rate") old_cpus+=("$cpu")
  read -r rate cpu < <(serve_rate "$NEW")
  new_rates+=("$rate") new_cpus+=("$cpu")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
old_rate=$(median "${old_rates[@]}")
new_rate=$(median "${new_rates[@]}")
old_cpu=$(median "${old_cpus[@]}")
new_cpu=$(median "${new_cpus[@]}")

FILTERS=(--filter noir --filter "tone exposure=0.5 contrast=0.2" --filter "crop aspect=4:5")
files=("$IN"/p*.jpg)
files=("${files[@]:0:20}")
hyperfine --runs 3 --export-json "$WORK/locks-apply.json" \
  -n base "rm -rf $WORK/locks-out && $OLD apply ${FILTERS[*]@Q} ${files[*]} -o $WORK/locks-out --progress none" \
  -n new "rm -rf $WORK/locks-out && $NEW apply ${FILTERS[*]@Q} ${files[*]} -o $WORK/locks-out --progress none" >&2
read -r old_apply new_apply < <(/usr/bin/python3 -c '
import json,sys; r={x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
print("%.2f %.2f" % (r["base"], r["new"]))' "$WORK/locks-apply.json")

echo "base $BASE, this tree $(git -C "$ROOT" rev-parse --short HEAD)"
printf '%-44s %10s %10s %7s\n' "" "base" "this" "ratio"
printf '%-44s %10s %10s %7s\n' "cached thumbnail over HTTP (req/s, median)" "$old_rate" "$new_rate" \
  "$(/usr/bin/python3 -c "print('%.3fx' % ($new_rate/$old_rate))")"
printf '%-44s %10s %10s %7s\n' "  server CPU per request (us, median)" "$old_cpu" "$new_cpu" \
  "$(/usr/bin/python3 -c "print('%.3fx' % ($new_cpu/$old_cpu))")"
printf '%-44s %10s %10s %7s\n' "apply, 20 x 24 MP (s, median of 3)" "$old_apply" "$new_apply" \
  "$(/usr/bin/python3 -c "print('%.3fx' % ($new_apply/$old_apply))")"
echo "rates by round: base ${old_rates[*]}; this ${new_rates[*]}"
echo "CPU us per request by round: base ${old_cpus[*]}; this ${new_cpus[*]}"
