#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs scripts/cluster/calibrate.sbatch under a real single-node Slurm that this test starts
# itself in a temporary folder (munged with a fresh key, slurmctld and slurmd on free local ports,
# their own slurm.conf), and checks what the job leaves behind:
#   1. a job whose capplan does not exist fails (exit 127) and says "capplan not found";
#   2. `sbatch -N1 -n2 calibrate.sbatch --backend host --quick` completes and leaves exactly
#      profile.json, profile.records.json, job.json and calibrate.log in its output folder: the
#      profile and the records come from the host backend on 2 ranks (with collective fits),
#      job.json names the job, its node and its 2 ranks.
# Every daemon it started is stopped on exit (and any process left in its folder), then the
# folder is removed (CAPPLAN_CLUSTER_TEST_KEEP=1 keeps it).
#
#   tests/cluster/slurm_calibrate.sh CAPPLAN SBATCH_SCRIPT     (as root; ctest -L cluster runs it)
#
# Needs root (slurmd starts the job's processes), Debian's slurm-wlm and munge, Open MPI and
# python3 (scripts/install_deps.sh installs them). Without them it prints "SKIPPED: <why>" and
# exits 77, which ctest reports as skipped; with CAPPLAN_CLUSTER_TESTS_REQUIRED=1 (CI sets it) it
# fails instead. CAPPLAN_CLUSTER_TEST_JOB_TIMEOUT_S bounds the wait for the calibration job
# (default 120 s).
set -uo pipefail

skip() {
  if [[ "${CAPPLAN_CLUSTER_TESTS_REQUIRED:-0}" == 1 ]]; then
    echo "FAIL: $* (CAPPLAN_CLUSTER_TESTS_REQUIRED=1: this test must run here)" >&2
    exit 1
  fi
  echo "SKIPPED: $*"
  exit 77
}
[[ $# -eq 2 ]] || {
  echo "usage: $0 CAPPLAN SBATCH_SCRIPT" >&2
  exit 2
}
capplan="$1"
script="$2"
job_timeout="${CAPPLAN_CLUSTER_TEST_JOB_TIMEOUT_S:-120}"
[[ -x "$capplan" ]] || {
  echo "FAIL: capplan '$capplan' is not an executable file" >&2
  exit 1
}
[[ -f "$script" ]] || {
  echo "FAIL: batch script '$script' not found" >&2
  exit 1
}

# The daemons live in sbin, which a non-login PATH may lack.
PATH="$PATH:/usr/sbin:/sbin"
[[ $EUID -eq 0 ]] || skip "not root (slurmd must run as root to start jobs)"
for tool in munged slurmctld slurmd sbatch scontrol squeue scancel sinfo; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not found (install slurm-wlm and munge: scripts/install_deps.sh)"
done
command -v mpirun >/dev/null 2>&1 || skip "mpirun not found (install openmpi-bin: scripts/install_deps.sh)"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (it reads the profile's JSON)"

t_start=$(date +%s)
tmp="$(mktemp -d "${TMPDIR:-/tmp}/capplan-slurm.XXXXXX")"
# munged wants every folder above its socket searchable by all.
chmod 755 "$tmp"
mkdir -p "$tmp/munge" "$tmp/run" "$tmp/state" "$tmp/spool" "$tmp/log" "$tmp/jobs"
chmod 700 "$tmp/munge"
munged_pid=""
slurmctld_pid=""
slurmd_pid=""
export SLURM_CONF="$tmp/slurm.conf"

dump_logs() {
  for f in "$tmp"/log/* "$tmp"/jobs/*.out "$tmp"/jobs/*/calibrate.log; do
    [[ -f "$f" ]] || continue
    echo "---- ${f#"$tmp"/} (last 40 lines)"
    tail -n 40 "$f"
  done
}

stop_pid() {  # TERM, up to 10 s, then KILL; the process is this script's child
  local pid="$1"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return 0
}

cleanup() {
  local rc=$?
  trap - EXIT
  cd /
  if [[ -n "$slurmctld_pid" ]] && kill -0 "$slurmctld_pid" 2>/dev/null; then
    # Cancel whatever is still queued or running, and let slurmd end its steps.
    mapfile -t jobs < <(squeue -h -o %i 2>/dev/null)
    if ((${#jobs[@]})); then
      scancel "${jobs[@]}" 2>/dev/null
      for _ in $(seq 1 50); do
        [[ -z "$(squeue -h -o %i 2>/dev/null)" ]] && break
        sleep 0.2
      done
    fi
  fi
  # A job step's slurmstepd keeps a socket (<node>_<job>.<step>) in the spool folder until it ends.
  for _ in $(seq 1 100); do
    compgen -G "$tmp/spool/*_[0-9]*.[0-9]*" >/dev/null || break
    sleep 0.1
  done
  stop_pid "$slurmd_pid"
  stop_pid "$slurmctld_pid"
  stop_pid "$munged_pid"
  # Anything still working in this test's folder was started by it (a job's ranks): end it.
  local left=()
  for p in /proc/[0-9]*; do
    [[ "$(readlink "$p/cwd" 2>/dev/null)" == "$tmp"* ]] && left+=("${p#/proc/}")
  done
  if ((${#left[@]})); then
    echo "note: ending processes left in the test folder: ${left[*]}"
    kill -KILL "${left[@]}" 2>/dev/null
  fi
  if ((rc != 0 && rc != 77)); then dump_logs; fi
  if [[ "${CAPPLAN_CLUSTER_TEST_KEEP:-0}" == 1 ]]; then
    echo "kept: $tmp"
  else
    rm -rf "$tmp"
  fi
  echo "slurm test: $(($(date +%s) - t_start)) s in all"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Two free TCP ports in a random range (a Slurm already running here keeps its own).
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=$((20000 + RANDOM % 20000))
while ! port_free "$port" || ! port_free $((port + 1)); do port=$((port + 2)); done

# munge: a fresh key and a private socket.
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
munged -F --socket="$tmp/run/munge.socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/run/munged.pid" --seed-file="$tmp/munge/munged.seed" --log-file="$tmp/log/munged.log" \
  >"$tmp/log/munged.out" 2>&1 &
munged_pid=$!
for _ in $(seq 1 50); do
  [[ -S "$tmp/run/munge.socket" ]] && break
  kill -0 "$munged_pid" 2>/dev/null || fail "munged exited at start"
  sleep 0.1
done
[[ -S "$tmp/run/munge.socket" ]] || fail "munged did not create its socket"

host="$(hostname -s)"
node_line="$(slurmd -C 2>/dev/null | head -n 1)"
[[ "$node_line" == NodeName=* ]] || fail "slurmd -C printed no node line: '$node_line'"
node_hw="${node_line#NodeName=* }"  # CPUs=... Boards=... RealMemory=...
cat >"$SLURM_CONF" <<EOF
# Single-node Slurm for capplan's cluster test (written by tests/cluster/slurm_calibrate.sh).
ClusterName=capplantest
SlurmctldHost=${host}(127.0.0.1)
SlurmctldPort=${port}
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=${tmp}/run/munge.socket
CredType=cred/munge
StateSaveLocation=${tmp}/state
SlurmdSpoolDir=${tmp}/spool
SlurmctldPidFile=${tmp}/run/slurmctld.pid
SlurmdPidFile=${tmp}/run/slurmd.pid
SlurmctldLogFile=${tmp}/log/slurmctld.log
SlurmdLogFile=${tmp}/log/slurmd.log
PlugStackConfig=${tmp}/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobContainerType=job_container/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
NodeName=${host} NodeAddr=127.0.0.1 ${node_hw} State=UNKNOWN
PartitionName=capplantest Nodes=${host} Default=YES MaxTime=INFINITE State=UP
EOF
: >"$tmp/plugstack.conf"

slurmctld -D -i -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
slurmctld_pid=$!
slurmd -D -f "$SLURM_CONF" >"$tmp/log/slurmd.out" 2>&1 &
slurmd_pid=$!
ready=""
for _ in $(seq 1 150); do
  kill -0 "$slurmctld_pid" 2>/dev/null || fail "slurmctld exited at start"
  kill -0 "$slurmd_pid" 2>/dev/null || fail "slurmd exited at start"
  if [[ "$(sinfo -h -n "$host" -o %t 2>/dev/null)" == idle ]]; then
    ready=1
    break
  fi
  sleep 0.2
done
[[ -n "$ready" ]] || fail "node $host did not become idle within 30 s: $(sinfo 2>&1)"
echo "slurm up in $(($(date +%s) - t_start)) s (ports $port, $((port + 1)))"

# Waits for job $1 to end (at most $2 s); prints "STATE EXITCODE", e.g. "COMPLETED 0:0".
wait_job() {
  local id="$1" limit="$2" line state code t0
  t0=$(date +%s)
  while :; do
    line="$(scontrol show job -o "$id" 2>/dev/null)"
    state="$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$line")"
    code="$(sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' <<<"$line")"
    case "$state" in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED | BOOT_FAIL | DEADLINE)
        echo "$state $code"
        return 0
        ;;
    esac
    if (($(date +%s) - t0 > limit)); then
      echo "UNFINISHED(${state:-unknown}) -"
      return 1
    fi
    sleep 0.5
  done
}

# The user-facing script must not see a calibrate configuration from the caller's environment.
unset CAPPLAN_OUT CAPPLAN_QUICK CAPPLAN_BACKEND CAPPLAN_BIN CAPPLAN_RANKS_PER_NODE CAPPLAN_LAUNCHER \
  CAPPLAN_RESUME CAPPLAN_CALIBRATE_ARGS CAPPLAN_LAUNCHER_ARGS
cd "$tmp/jobs" || fail "cannot enter $tmp/jobs"

# 1. capplan missing: the job fails with 127 and names what is missing.
id="$(CAPPLAN_BIN="$tmp/no-such-dir/capplan" sbatch --parsable -N1 -n1 -o "$tmp/jobs/missing.out" \
  "$script" --backend host --quick --out "$tmp/jobs/missing")" || fail "sbatch refused the job"
result="$(wait_job "${id%%;*}" 60)"
echo "job without capplan: $result"
[[ "$result" == "FAILED 127:0" ]] || fail "a job whose capplan is missing must fail with exit 127; got $result"
grep -q "capplan not found" "$tmp/jobs/missing.out" ||
  fail "the job's output does not say 'capplan not found': $(cat "$tmp/jobs/missing.out")"

# 2. The real calibration: 2 ranks of the host backend on the one node. Open MPI refuses root
# unless told; the batch script passes these through from the submitting environment.
out="$tmp/jobs/calibration"
t_job=$(date +%s)
id="$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CAPPLAN_BIN="$capplan" CAPPLAN_OUT="$out" \
  sbatch --parsable -N1 -n2 -o "$tmp/jobs/calibrate.out" "$script" --backend host --quick)" ||
  fail "sbatch refused the job"
id="${id%%;*}"
result="$(wait_job "$id" "$job_timeout")"
echo "calibration job $id: $result in $(($(date +%s) - t_job)) s"
[[ "$result" == "COMPLETED 0:0" ]] || fail "the calibration job must complete with exit 0; got $result"

python3 - "$out" "$id" "$host" <<'EOF' || fail "the job's output folder is not what it must be"
import json, os, sys

out, job_id, host = sys.argv[1:4]
problems = []
names = sorted(os.listdir(out))
expected = ["calibrate.log", "job.json", "profile.json", "profile.records.json"]
if names != expected:
    problems.append(f"files: expected {expected}; got {names}")

def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        problems.append(f"{name}: {e}")
        return None

# Exactly one profile and one records file, whatever their names.
schemas = {}
for name in names:
    if name.endswith(".json"):
        doc = load(name)
        schemas.setdefault(doc.get("schema") if isinstance(doc, dict) else None, []).append(name)
if schemas.get("capplan-profile") != ["profile.json"]:
    problems.append(f"profiles: expected exactly profile.json; got {schemas.get('capplan-profile')}")
if schemas.get("capplan-records") != ["profile.records.json"]:
    problems.append(f"records: expected exactly profile.records.json; got {schemas.get('capplan-records')}")

profile = load("profile.json") or {}
ctx = profile.get("context", {})
if ctx.get("backend") != "host" or ctx.get("ranks") != 2:
    problems.append(f"profile context: expected backend host, ranks 2; got {ctx.get('backend')}, {ctx.get('ranks')}")
if not profile.get("gemm"):
    problems.append("profile: no GEMM fit")
if not any(c.get("ranks") == 2 for c in profile.get("collectives", [])):
    problems.append("profile: no collective fitted over 2 ranks")

records = load("profile.records.json") or {}
rctx = records.get("context", {})
if rctx.get("backend") != "host" or rctx.get("ranks") != 2 or not records.get("collectives"):
    problems.append(f"records: expected host, 2 ranks and collectives; got {rctx.get('backend')}, {rctx.get('ranks')}, "
                    f"{len(records.get('collectives', []))} collective records")

job = load("job.json") or {}
want = {"job_id": job_id, "nodes": 1, "hosts": [host], "ranks": 2, "ranks_per_node": 2, "backend": "host",
        "quick": True, "exit_code": 0}
for key, value in want.items():
    if job.get(key) != value:
        problems.append(f"job.json#/{key}: expected {value!r}; got {job.get(key)!r}")
for key in ("started_utc", "finished_utc", "launcher"):
    if not job.get(key):
        problems.append(f"job.json#/{key}: missing")

with open(os.path.join(out, "calibrate.log")) as f:
    log = f.read()
if "Calibrated" not in log or "done: " not in log:
    problems.append("calibrate.log: no calibrate summary or no 'done:' line")

for p in problems:
    print("  " + p)
if problems:
    sys.exit(1)
print(f"output folder: {', '.join(names)}; profile: host, 2 ranks, "
      f"{len(profile.get('collectives', []))} collective fits")
EOF
echo "PASS"
