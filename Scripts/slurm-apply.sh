#!/usr/bin/env bash
# A batch on a real Slurm: starts a one-node Slurm (Debian's slurm-wlm, with munge) in a
# scratch folder, submits `darkroom apply --shard i/N` as a job array, kills one array task's
# process with SIGKILL in the middle of its share (as a crash would) and cancels another with
# scancel, submits the tasks left incomplete again, and merges the reports: every input done exactly once, every output whole, nothing partial.
#
# Usage (as root, or with sudo: it installs slurm-wlm and munge, and starts slurmctld, slurmd
# and, if none runs, munged; what it started is stopped at the end):
#   Scripts/slurm-apply.sh [PHOTOS] [SHARDS]        (defaults: 240 photos, 4 shards)
# DARKROOM=path/to/darkroom uses that build (default: the release build, made if missing).
# The daemons read only the scratch folder's slurm.conf: /etc/slurm is not touched.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PHOTOS="${1:-240}"
SHARDS="${2:-4}"
LAST=$((SHARDS - 1))
KILLED=1    # the array task whose process is killed with SIGKILL
CANCELLED=0 # the array task cancelled with scancel

"$ROOT/Scripts/install-deps.sh" slurm-wlm munge libvips-tools
DARKROOM="${DARKROOM:-$ROOT/.build/release/darkroom}"
[ -x "$DARKROOM" ] || "$ROOT/Scripts/release-build.sh" --product darkroom >&2

W="$(mktemp -d /tmp/darkroom-slurm.XXXXXX)"
chmod 755 "$W"
IN="$W/in"
OUT="$W/out"
mkdir -p "$IN" "$OUT" "$W/reports" "$W/logs" "$W/state" "$W/spool"
export SLURM_CONF="$W/slurm.conf"

STARTED_MUNGE=""
stop() {
  for daemon in slurmd slurmctld; do
    if [ -f "$W/$daemon.pid" ]; then kill "$(cat "$W/$daemon.pid")" 2>/dev/null || true; fi
  done
  if [ -n "$STARTED_MUNGE" ]; then pkill -x munged || true; fi
}
trap stop EXIT

# munge authenticates Slurm's daemons and commands to each other (its package makes the key).
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  install -d -o munge -g munge -m 0755 /run/munge
  runuser -u munge -- /usr/sbin/munged
  STARTED_MUNGE=1
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi

# One node, this machine, as `slurmd -C` describes it; processes tracked without cgroups (a
# container may have none to give).
node="$(slurmd -C | head -n 1)"
host="$(hostname -s)"
cat > "$SLURM_CONF" << EOF
ClusterName=darkroom
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/logs/slurmctld.log
SlurmdLogFile=$W/logs/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$W/logs/jobcomp.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
$node State=UNKNOWN
PartitionName=photos Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do
  sinfo -h -o %T 2>/dev/null | grep -q -E '^(idle|mixed)' && break
  sleep 0.2
done
echo "slurm: $(sinfo -h -o '%P %D node(s) %T %c cpus')"

# The inputs: PHOTOS different 2400x1600 JPEGs, in two folders.
echo "making $PHOTOS photos"
vips resize "$ROOT/Samples/orientation-1.jpg" "$W/base.v" 4 --kernel linear
mkdir -p "$IN/a" "$IN/b"
for i in $(seq 1 "$PHOTOS"); do
  folder=a
  [ $((i % 2)) -eq 0 ] && folder=b
  vips linear "$W/base.v" "$IN/$folder/p$i.jpg[Q=90]" 1 "$((i % 40))" --uchar
done
rm -f "$W/base.v"

cat > "$W/apply.sbatch" << 'EOF'
#!/bin/sh
# One share of the batch; JSON lines of progress go to the task's log.
exec "$DARKROOM" apply --filter noir "$IN" -o "$OUT" --jobs 1 --progress json \
  --shard "$SLURM_ARRAY_TASK_ID/$SHARDS" --report "$REPORTS/$SLURM_ARRAY_TASK_ID.json"
EOF
export DARKROOM IN OUT SHARDS REPORTS="$W/reports"

start=$(date +%s.%N)
job=$(sbatch --parsable --array="0-$LAST" --cpus-per-task=1 --output="$W/logs/%A_%a.out" \
  "$W/apply.sbatch")
echo "submitted job array $job (tasks 0-$LAST)"

# Two interruptions, once each task has done 10 files: task KILLED's darkroom is killed with
# SIGKILL (a crash: no chance to finish a file or write its report), and task CANCELLED is
# cancelled through Slurm (SIGTERM: the files under way finish, the report says how many
# were not started).
started_files() {
  local n
  n=$(grep -c '"status":"done"' "$W/logs/${job}_$1.out" 2>/dev/null) || true
  echo "${n:-0}"
}
for _ in $(seq 6000); do
  [ "$(started_files $KILLED)" -ge 10 ] && [ "$(started_files $CANCELLED)" -ge 10 ] && break
  sleep 0.05
done
pkill -KILL -f -- "--shard $KILLED/$SHARDS "
scancel "${job}_$CANCELLED"
echo "killed task $KILLED with SIGKILL after $(started_files $KILLED) files;" \
  "cancelled task $CANCELLED (scancel) after $(started_files $CANCELLED)"

while squeue -h -j "$job" 2>/dev/null | grep -q .; do sleep 0.2; done
done_before=$(($(started_files $KILLED) + $(started_files $CANCELLED)))

# A task is complete when its report says every file of its share is done or was already:
# those without a report (killed) or with files not started (cancelled) or failed are
# submitted again, and re-running skips what they finished.
incomplete=()
for i in $(seq 0 "$LAST"); do
  /usr/bin/python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
sys.exit(0 if s["done"] + s["skipped"] == s["total"] else 1)' "$W/reports/$i.json" 2>/dev/null ||
    incomplete+=("$i")
done
echo "incomplete tasks: ${incomplete[*]:-none}"
[ "${#incomplete[@]}" -gt 0 ] || {
  echo "every task finished before it was interrupted: use more photos" >&2
  exit 1
}
ids=$(
  IFS=,
  echo "${incomplete[*]}"
)
again=$(sbatch --parsable --array="$ids" --cpus-per-task=1 --output="$W/logs/%A_%a.out" \
  "$W/apply.sbatch")
echo "submitted job array $again (tasks $ids)"
while squeue -h -j "$again" 2>/dev/null | grep -q .; do sleep 0.2; done
end=$(date +%s.%N)

echo "task states:"
sed -E 's/.*JobState=([A-Z]+).*ArrayJobId=([0-9]+) ArrayTaskId=([0-9]+).*ExitCode=([0-9:]+).*/  array \2 task \3: \1 (exit code:signal \4)/' \
  "$W/logs/jobcomp.log"

# The merge: the reports together name every input exactly once, none failed; what the
# re-run skipped is what the killed task had done; every output is a whole JPEG; nothing
# temporary is left.
/usr/bin/python3 - "$IN" "$OUT" "$W/reports" "$SHARDS" "$done_before" << 'EOF'
import json, os, subprocess, sys
inp, out, reports, shards, done_before = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
inputs = sorted(os.path.relpath(os.path.join(d, f), inp) for d, _, fs in os.walk(inp) for f in fs)
seen, status = {}, {"done": 0, "skipped": 0, "failed": 0}
for i in range(shards):
    for f in json.load(open(os.path.join(reports, f"{i}.json")))["files"]:
        name = os.path.relpath(f["file"], inp) if os.path.isabs(f["file"]) else f["file"]
        assert name not in seen, f"{name} is in the reports of shards {seen[name]} and {i}"
        seen[name] = i
        status[f["status"]] += 1
missing = set(inputs) - set(seen)
assert not missing, f"{len(missing)} inputs in no report, e.g. {sorted(missing)[:3]}"
assert status["failed"] == 0, f"{status['failed']} failed"
# A file whose output was renamed into place just before SIGKILL, its progress line not yet
# printed, is skipped by the re-run too: at most one (the killed task ran one at a time).
assert 0 <= status["skipped"] - done_before <= 1, f"re-runs skipped {status['skipped']}, interrupted tasks had done {done_before}"
assert status["done"] + status["skipped"] == len(inputs)
leftovers = [os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs if f.endswith(".tmp")]
assert not leftovers, f"temporary files left: {leftovers[:3]}"
outputs = [os.path.relpath(os.path.join(d, f), out) for d, _, fs in os.walk(out) if "/.darkroom" not in d + "/" for f in fs]
outputs = [o for o in outputs if not o.startswith(".darkroom")]
assert sorted(outputs) == inputs, f"{len(outputs)} outputs for {len(inputs)} inputs"
for o in outputs:
    subprocess.run(["vipsheader", os.path.join(out, o)], check=True, stdout=subprocess.DEVNULL)
print(f"merged {shards} reports: {len(inputs)} inputs, each in one report; "
      f"{status['done']} done by the reports, {done_before} done by the interrupted tasks "
      f"(skipped by their re-runs), 0 failed; {len(outputs)} whole outputs, no temporary files")
EOF
echo "logs, reports and outputs: $W"
awk -v a="$start" -v b="$end" 'BEGIN { printf "wall time, both submissions: %.1f s\n", b - a }'
