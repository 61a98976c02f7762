#!/usr/bin/env bash
# Replays a slice of a job trace on the real one-machine Slurm cluster
# (tests/slurm/cluster.sh) with one placement policy, and writes what Slurm
# really did as a schedule that `topoctl score --schedule` reads.
#
# Usage:
#   tests/slurm/replay.sh --trace CSV --synthetic SPEC --policy tree|topo-aware
#                         --out SCHEDULE.json
#                         [--jobs N] [--first-job K] [--time-scale X]
#                         [--max-duration S] [--load X] [--build DIR] [--keep]
#
#   --trace         a CSV with job_id,submission_time,duration,num_gpu
#                   (tests/fixtures/traces/itp/clusterNN.csv)
#   --synthetic     the fabric, e.g. leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2
#                   (add ,naming=interleaved for names that do not follow leaves);
#                   one Slurm node per host, 8 GPUs each, in the fabric's host order
#   --policy        tree: select/cons_tres + topology/tree with the topology.conf
#                   `topoctl export --slurm-topology` writes for the fabric
#                   (loaded through select/topo_cons_tres, which hands every
#                   job without --network to cons_tres and times its tests);
#                   topo-aware: select/topo_cons_tres with a snapshot of the
#                   fabric, every job submitted with --network=topo-aware
#   --jobs          how many trace rows (default 40), from row --first-job
#                   (0-based, default 0)
#   --time-scale    submission offsets (relative to the first job) and
#                   durations are divided by this (default 60)
#   --max-duration  cap on a scaled duration in seconds (default 60)
#   --load          submission offsets are divided by this too (default 1):
#                   arrivals X times as dense for the same durations, X times
#                   the offered load (a trace slice that loads the cluster
#                   lightly, loaded until leaves fragment)
#   --build         the CMake build directory holding tools/topoctl
#                   and the plugins (default: the checkout's build/)
#   --keep          keep the cluster directory (logs, config) after the run
#
# A job of g <= 8 GPUs asks for --nodes=1 --gres=gpu:g; a larger one for
# --nodes=ceil(g/8) --gres=gpu:8 (whole hosts).  Each runs `sleep D` with a
# time limit a little above D, submitted at its scaled moment.
#
# Ring order per job: tree, the job's NodeList expanded (Slurm sorts it by
# name: the order srun and an MPI/NCCL launcher see); topo-aware, the ring
# order the plugin recorded (topoctl job).  Times in the schedule are wall
# seconds of this compressed run, relative to the first submission: submit
# from the submitter's clock before sbatch, start and end from the job
# script's own clock (date +%s.%N before and after its sleep), since Slurm's
# records have one-second resolution, too coarse for jobs of seconds; where
# a job wrote nothing, Slurm's StartTime and EndTime.
#
# Environment: TOPO_SLURM_DIR (default /tmp/topo-slurm-replay-$$) and
# TOPO_SLURM_PORT (default 18817; the nodes use the next ports), as for
# cluster.sh.  Root only.  Progress on stderr; exit 0 when every job ran to
# completion, 1 when some did not (they are listed in "rejected"), 2 on
# bad usage or when the cluster did not start.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cluster=$here/cluster.sh
gpus_per_host=8

trace="" spec="" policy="" out="" jobs=40 first=0 scale=60 max_duration=60 load=1 keep=0
build=$here/../../build

say() { printf 'replay: %s\n' "$*" >&2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
die() { say "error: $*"; exit 2; }
number() { [[ $2 =~ ^[0-9]+([.][0-9]+)?$ ]] || die "$1 takes a number, not '$2'"; }

while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage ;;
    --keep) keep=1; shift; continue ;;
  esac
  [ $# -ge 2 ] || die "$1 needs a value"
  case $1 in
    --trace) trace=$2 ;;
    --synthetic) spec=$2 ;;
    --policy) policy=$2 ;;
    --out) out=$2 ;;
    --jobs) [[ $2 =~ ^[1-9][0-9]*$ ]] || die "--jobs takes a positive count"; jobs=$2 ;;
    --first-job) [[ $2 =~ ^[0-9]+$ ]] || die "--first-job takes a row number"; first=$2 ;;
    --time-scale) number "$1" "$2"; scale=$2 ;;
    --max-duration) number "$1" "$2"; max_duration=$2 ;;
    --load) number "$1" "$2"; load=$2 ;;
    --build) build=$2 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift 2
done
[ -n "$trace" ] && [ -n "$spec" ] && [ -n "$policy" ] && [ -n "$out" ] ||
  die "--trace, --synthetic, --policy and --out are required (see --help)"
[ -r "$trace" ] || die "no trace file $trace"
case $policy in tree | topo-aware) ;; *) die "--policy takes tree or topo-aware, not '$policy'" ;; esac
[ "$(id -u)" = 0 ] || die "must run as root (the cluster's daemons)"
build=$(cd "$build" 2>/dev/null && pwd) || die "no build directory $build (--build)"
topoctl=$build/tools/topoctl
plugin_dir=$build/plugin/slurm
[ -x "$topoctl" ] || die "no $topoctl: build the topoctl target (--build)"
if [ "$policy" = topo-aware ]; then
  [ -f "$plugin_dir/select_topo_cons_tres.so" ] && [ -f "$plugin_dir/job_submit_topo_aware.so" ] ||
    die "no plugins in $plugin_dir: build select_topo_cons_tres and job_submit_topo_aware"
fi
out_dir=$(cd "$(dirname "$out")" 2>/dev/null && pwd) || die "no directory for --out $out"
out=$out_dir/$(basename "$out")

export TOPO_SLURM_DIR=${TOPO_SLURM_DIR:-/tmp/topo-slurm-replay-$$}
export TOPO_SLURM_PORT=${TOPO_SLURM_PORT:-18817}
dir=$TOPO_SLURM_DIR
export SLURM_CONF=$dir/etc/slurm.conf
work=$(mktemp -d /tmp/replay-work.XXXXXX)
started=$(date +%s)

finish() {
  local rc=$?
  bash "$cluster" stop >/dev/null 2>&1 || true
  if [ "$keep" = 1 ]; then say "kept $dir and $work"; else rm -rf "$work" "$dir"; fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

# --- the fabric and the jobs --------------------------------------------------

"$topoctl" show --synthetic "$spec" --json >"$work/fabric.json" 2>"$work/err" ||
  die "topoctl show --synthetic '$spec': $(cat "$work/err")"
# Host names in the fabric's order (leaf by leaf).
python3 - "$work/fabric.json" >"$work/hosts" <<'EOF' || die "no hosts in the fabric of --synthetic"
import json, re, sys
def expand(hostlist):
    # "gpu[001,005-007],x": the names, in the order written.
    out = []
    for item in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", hostlist):
        m = re.fullmatch(r"([^\[]*)\[([^\]]*)\](.*)", item)
        if not m:
            out.append(item)
            continue
        pre, ranges, post = m.groups()
        for r in ranges.split(","):
            lo, _, hi = r.partition("-")
            for n in range(int(lo), int(hi or lo) + 1):
                out.append(f"{pre}{n:0{len(lo)}d}{post}")
    return out
names = [h for leaf in json.load(open(sys.argv[1])).get("leaves", []) for h in expand(leaf.get("host_list", ""))]
if not names:
    sys.exit(1)
print("\n".join(names))
EOF
host_count=$(wc -l <"$work/hosts")

# One line per job: index trace_id gpus nodes gpus_per_node submit_offset_s duration_s time_limit_min
python3 - "$trace" "$first" "$jobs" "$scale" "$max_duration" "$gpus_per_host" "$host_count" "$load" >"$work/jobs" <<'EOF' ||
import csv, math, sys
path, first, count, scale, cap, per_host, hosts, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]), float(sys.argv[8])
if scale <= 0 or cap <= 0 or load <= 0:
    sys.exit("--time-scale, --max-duration and --load must be above 0")
rows = []
with open(path, newline="") as f:
    reader = csv.DictReader(f)
    missing = {"job_id", "submission_time", "duration", "num_gpu"} - set(reader.fieldnames or [])
    if missing:
        sys.exit(f"{path}:1: missing column(s) {', '.join(sorted(missing))}")
    for line, r in enumerate(reader, start=2):
        if line - 2 < first:
            continue
        if len(rows) == count:
            break
        try:
            t, d, g = float(r["submission_time"]), float(r["duration"]), int(r["num_gpu"])
        except (TypeError, ValueError):
            sys.exit(f"{path}:{line}: submission_time, duration and num_gpu must be numbers")
        if g < 1 or d < 0:
            sys.exit(f"{path}:{line}: num_gpu {g} or duration {d} out of range")
        rows.append((r["job_id"], t, d, g))
if not rows:
    sys.exit(f"{path}: no rows from row {first}")
t0 = rows[0][1]
for i, (jid, t, d, g) in enumerate(rows):
    nodes = 1 if g <= per_host else math.ceil(g / per_host)
    if nodes > hosts:
        sys.exit(f"{path}: job {jid} needs {nodes} hosts, the fabric has {hosts}")
    per_node = g if nodes == 1 else per_host
    dur = max(1, round(min(d / scale, cap)))
    limit = math.ceil((dur + 30) / 60)
    print(first + i, jid, g, nodes, per_node, f"{(t - t0) / scale / load:.3f}", dur, limit)
EOF
  die "bad trace"
job_count=$(wc -l <"$work/jobs")
trace_label="$(basename "$trace") jobs $first-$((first + job_count - 1)), time scale $scale, durations capped at ${max_duration}s"
[ "$load" = 1 ] || trace_label+=", arrivals ${load}x denser"
say "$policy on $spec: $host_count hosts, $trace_label"

# --- the cluster ---------------------------------------------------------------

cluster_args=(--nodes "$(paste -sd, "$work/hosts")" --timeout 180)
if [ "$policy" = tree ]; then
  "$topoctl" export --slurm-topology --synthetic "$spec" -o "$work/topology.conf" 2>"$work/err" ||
    die "topoctl export: $(cat "$work/err")"
  # cons_tres + topology/tree, reached through select/topo_cons_tres: jobs
  # without --network=topo-aware go to cons_tres untouched, and the wrapper
  # times its run-now tests, the "cons_tres alone" job_test figure.
  cluster_args+=(--select topo --plugin-dir "$plugin_dir" --topology "$work/topology.conf")
  network=()
  source_label="slurm $(slurmctld -V | awk '{ print $2 }') select/cons_tres + topology/tree (timed through select/topo_cons_tres)"
else
  printf 'DbPath=@DIR@/fabric.db\nCandidates=8\n' >"$work/topo_aware.conf"
  cluster_args+=(--select topo --plugin-dir "$plugin_dir" --topo-conf "$work/topo_aware.conf")
  network=(--network=topo-aware)
  source_label="slurm $(slurmctld -V | awk '{ print $2 }') select/topo_cons_tres"
fi
cluster_started=$(date +%s.%N)
bash "$cluster" start "${cluster_args[@]}" >/dev/null || { say "the cluster did not start"; exit 2; }
say "cluster up in $(awk -v s="$cluster_started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s"
if [ "$policy" = topo-aware ]; then
  "$topoctl" discover --synthetic "$spec" --db "$dir/fabric.db" >/dev/null 2>"$work/err" ||
    die "topoctl discover: $(cat "$work/err")"
  # The plugin loads the snapshot now, as it would at a production start-up,
  # rather than inside the first job's job_test.
  scontrol reconfigure >/dev/null 2>&1 || say "scontrol reconfigure failed"
fi
mkdir -p "$dir/out"

# --- submit at the scaled moments, wait, keep each finished job's record -------

terminal='JobState=(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE)'
# Finished jobs' records (scontrol -d: per-node GRES), saved as they finish:
# the controller forgets a job MinJobAge after it ends.
# A running job's record holds each node's GRES (a finished one only the
# job's total): the first one seen is kept too.
save_finished() {
  scontrol -d -o show job >"$work/now" 2>/dev/null || return 0
  grep -E " $terminal " "$work/now" |
    awk 'FILENAME != "-" { seen[$1] = 1; next } !seen[$1] { print }' "$work/records" - >>"$work/records" || true
  grep " JobState=RUNNING " "$work/now" |
    awk 'FILENAME != "-" { seen[$1] = 1; next } !seen[$1] { print }' "$work/running" - >>"$work/running" || true
}
: >"$work/records"
: >"$work/running"
: >"$work/submitted"
t0=$(date +%s.%N)
while read -r index jid gpus nodes per_node offset dur limit; do
  wait_s=$(awk -v t0="$t0" -v o="$offset" -v now="$(date +%s.%N)" 'BEGIN { w = t0 + o - now; print (w > 0 ? w : 0) }')
  sleep "$wait_s"
  at=$(date +%s.%N)
  if id=$(sbatch --parsable -J "replay-$index" -o "$dir/out/%j.txt" -e /dev/null --nodes="$nodes" \
      --gres="gpu:$per_node" --time="$limit" "${network[@]}" \
      --wrap "date +%s.%N; sleep $dur; date +%s.%N" 2>"$work/err"); then
    echo "$index $jid $gpus $nodes $per_node $dur $at ${id%%;*}" >>"$work/submitted"
  else
    say "job $index ($gpus GPUs) refused: $(head -n1 "$work/err")"
    echo "$index $jid $gpus $nodes $per_node $dur $at refused $(head -n1 "$work/err" | tr ' ' _)" >>"$work/submitted"
  fi
done <"$work/jobs" &
submitter=$!

# Serially, every job would end by the last submission plus the sum of durations.
limit_s=$(awk '{ last = $6; sum += $7 } END { printf "%d", last + sum + 180 }' "$work/jobs")
deadline=$(($(date +%s) + limit_s))
last_note=0
while :; do
  sleep 2
  save_finished
  submitted=$(wc -l <"$work/submitted")
  live=$(squeue -h -o %A 2>/dev/null | wc -l)
  if ! kill -0 "$submitter" 2>/dev/null && [ "$live" = 0 ]; then break; fi
  if [ $(($(date +%s) - last_note)) -ge 15 ]; then
    say "$(printf '%4d' $(($(date +%s) - ${t0%.*})))s: $submitted/$job_count submitted, $live queued or running, $(wc -l <"$work/records") finished"
    last_note=$(date +%s)
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    say "still $live jobs after ${limit_s}s: cancelling them"
    kill "$submitter" 2>/dev/null || true
    scancel --user=root 2>/dev/null || true
    sleep 3
    save_finished
    break
  fi
done
wait "$submitter" 2>/dev/null || true
save_finished
run_s=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
sdiag >"$work/sdiag.txt" 2>&1 || true
log=$dir/log/slurmctld.log

# --- ring orders -----------------------------------------------------------------

: >"$work/rings"
while read -r index jid gpus nodes per_node dur at id _; do
  [ "$id" = refused ] && continue
  if [ "$policy" = topo-aware ]; then
    if "$topoctl" job "$id" --db "$dir/fabric.db" --json >"$work/job.json" 2>/dev/null; then
      python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); r=j.get("ring_order") or []; print(sys.argv[2], "fallback" if j.get("fallback") else "placed", ",".join(r) if r else "-")' \
        "$work/job.json" "$id" >>"$work/rings"
    else
      echo "$id unrecorded -" >>"$work/rings"
    fi
  fi
done <"$work/submitted"

# The plugin logs its job_test figures every 100 tests and on reconfigure.
scontrol reconfigure >/dev/null 2>&1 || say "scontrol reconfigure failed: no job_test figures"
sleep 1

# --- the schedule ----------------------------------------------------------------

python3 - "$work" "$out" "$policy" "$source_label" "$spec" "$gpus_per_host" "$trace_label" "$run_s" "$log" "$dir/out" <<'EOF'
import json, re, sys, time, subprocess
work, out, policy, source, spec, per_host, trace_label, run_s, log, job_out = sys.argv[1:11]
per_host = int(per_host)

def expand(hostlist):
    if not hostlist or hostlist == "(null)":
        return []
    return subprocess.run(["scontrol", "show", "hostnames", hostlist], capture_output=True, text=True,
                          check=True).stdout.split()

def epoch(stamp):
    if not stamp or stamp in ("Unknown", "None", "N/A"):
        return None
    return time.mktime(time.strptime(stamp, "%Y-%m-%dT%H:%M:%S"))

def read_records(path):
    records = {}
    for line in open(path):
        m = re.match(r"JobId=(\d+) ", line)
        if not m:
            continue
        fields = dict(re.findall(r"(?:^| )([A-Za-z_:/]+)=(\S*)", line.split(" Nodes=")[0]))
        # -d adds "Nodes=<list> CPU_IDs=.. Mem=.. GRES=gpu:N(IDX:..)" per node
        # group while the job runs (empty GRES once it has ended).
        groups = re.findall(r" Nodes=(\S+) CPU_IDs=\S+ Mem=\S+ GRES=(\S*)", line)
        records[m.group(1)] = (fields, groups)
    return records
records = read_records(f"{work}/records")
running = read_records(f"{work}/running")

def gpu_count(gres):
    m = re.search(r"gpu(?::[^:(,]+)?:(\d+)", gres or "")
    return int(m.group(1)) if m else None

rings = {}
for line in open(f"{work}/rings"):
    id_, how, ring = line.split()
    rings[id_] = (how, [] if ring == "-" else ring.split(","))

jobs, rejected, submitted = [], [], []
for line in open(f"{work}/submitted"):
    parts = line.split()
    index, jid, gpus, nodes, per_node, dur, at, id_ = parts[:8]
    if id_ == "refused":
        rejected.append((f"row{index}", f"trace row {index} ({jid}, {gpus} GPUs): sbatch refused it: "
                         + " ".join(parts[8:]).replace("_", " ")))
        continue
    submitted.append((int(index), jid, int(gpus), int(nodes), int(per_node), int(dur), float(at), id_))

def script_clock(id_):
    """The job script's own start and end (date +%s.%N), or None."""
    try:
        stamps = [float(x) for x in open(f"{job_out}/{id_}.txt").read().split()[:2]]
    except (OSError, ValueError):
        return None
    return stamps if len(stamps) == 2 and stamps[0] <= stamps[1] else None

first_line = open(f"{work}/submitted").readline().split()
t0 = float(first_line[6]) if len(first_line) > 6 else 0.0
for index, jid, gpus, nodes, per_node, dur, at, id_ in submitted:
    if id_ not in records:
        rejected.append((id_, f"trace row {index} ({jid}, {gpus} GPUs): no record of the job (it never finished)"))
        continue
    f, groups = records[id_]
    state = f.get("JobState")
    alloc = expand(f.get("NodeList"))
    # GPUs per host: from the running record's per-node GRES where one was
    # seen, else the job's total (JOB_GRES) spread over its nodes, which
    # --gres=gpu:N per node makes even.
    gpus_of = {}
    for hl, gres in running.get(id_, ({}, []))[1]:
        for h in expand(hl):
            gpus_of[h] = gpu_count(gres) or 0
    if set(gpus_of) != set(alloc) or 0 in gpus_of.values():
        total = gpu_count(f.get("JOB_GRES"))
        gpus_of = {h: total // len(alloc) for h in alloc} if total and alloc and total % len(alloc) == 0 else {}
    if policy == "tree":
        ring = alloc
    else:
        how, ring = rings.get(id_, ("unrecorded", []))
        if not ring:
            ring = alloc
    submit = at - t0
    clock = script_clock(id_)
    if clock:
        start, end = clock[0] - t0, clock[1] - t0
    else:
        start = epoch(f.get("StartTime")) - t0 if epoch(f.get("StartTime")) else None
        end = epoch(f.get("EndTime")) - t0 if epoch(f.get("EndTime")) else None
    if start is not None and end is not None:
        # Slurm's whole seconds may fall before the submitter's clock.
        start = max(start, submit)
        end = max(end, start)
    entry = {"id": id_, "gpus": gpus, "submit_s": round(submit, 3),
             "start_s": round(start, 3) if start is not None else None,
             "end_s": round(end, 3) if end is not None else None,
             "ring": ring, "host_gpus": [gpus_of.get(h, 0) for h in ring]}
    if state != "COMPLETED" or not alloc:
        rejected.append((id_, f"trace row {index} ({jid}, {gpus} GPUs): JobState={state} Reason={f.get('Reason')}"))
        continue
    jobs.append(entry)

# sdiag: the main scheduler's and backfill's cycle figures (microseconds).
sd = open(f"{work}/sdiag.txt").read()
def section(title):
    m = re.search(re.escape(title) + r"(.*?)(?:\n\n|\Z)", sd, re.S)
    return m.group(1) if m else ""
def figure(text, label):
    m = re.search(r"^\s*" + re.escape(label) + r":\s*(\d+)", text, re.M)
    return int(m.group(1)) if m else None
main = section("Main schedule statistics (microseconds):")
bf = section("Backfilling stats")
scheduler = {
    "sdiag_main_mean_cycle_us": figure(main, "Mean cycle"),
    "sdiag_main_max_cycle_us": figure(main, "Max cycle"),
    "sdiag_main_last_cycle_us": figure(main, "Last cycle"),
    "sdiag_main_cycles": figure(main, "Total cycles"),
    "sdiag_main_mean_depth": figure(main, "Mean depth cycle"),
    "sdiag_backfill_mean_cycle_us": figure(bf, "Mean cycle"),
    "sdiag_backfill_max_cycle_us": figure(bf, "Max cycle"),
    "sdiag_backfill_cycles": figure(bf, "Total cycles"),
    "sdiag_backfilled_jobs": figure(bf, "Total backfilled jobs (since last slurm start)"),
    "sdiag_jobs_submitted": figure(sd, "Jobs submitted"),
    "sdiag_jobs_started": figure(sd, "Jobs started"),
    "sdiag_jobs_completed": figure(sd, "Jobs completed"),
}
# Every RPC's count and mean time: a submission runs job_test in test-only mode.
for name in ("REQUEST_SUBMIT_BATCH_JOB", "REQUEST_COMPLETE_BATCH_SCRIPT", "MESSAGE_EPILOG_COMPLETE"):
    m = re.search(re.escape(name) + r"\s*\(\s*\d+\)\s*count:(\d+)\s*ave_time:(\d+)\s*total_time:(\d+)", sd)
    if m:
        scheduler[f"rpc_{name.lower()}_count"] = int(m.group(1))
        scheduler[f"rpc_{name.lower()}_mean_us"] = int(m.group(2))
# The plugin's own lines in slurmctld's log: placements and fallbacks, and
# (when the plugin logs it) its job_test time.
try:
    text = open(log, errors="replace").read()
except OSError:
    text = ""
if policy != "tree":
    scheduler["plugin_placed"] = len(re.findall(r"JobId=\d+ placed on candidate", text))
    scheduler["plugin_fallbacks"] = len(re.findall(r"JobId=\d+ gets cons_tres's placement", text))
# The plugin's own timing of run-now job_test calls, the last summary per
# path: "job_test timing: topo-aware tests=N mean_us=X max_us=Y engine_mean_us=..."
# or "job_test timing: cons_tres alone tests=N mean_us=X max_us=Y".
path = "topo-aware" if policy == "topo-aware" else "cons_tres alone"
lines = re.findall(r"job_test timing: " + re.escape(path) + r" ((?:\w+=\d+ ?)+)", text)
if lines:
    for key, value in re.findall(r"(\w+)=(\d+)", lines[-1]):
        name = {"tests": "job_test_calls", "mean_us": "job_test_mean_us", "max_us": "job_test_max_us"}.get(
            key, f"job_test_{key}")
        scheduler[name] = int(value)
scheduler["run_wall_s"] = float(run_s)
scheduler = {k: v for k, v in scheduler.items() if v is not None}

# "rejected": the ids of jobs that did not run to completion (a trace row
# sbatch refused is "row<N>"); why, in "rejected_why".
doc = {"policy": policy, "source": source, "fabric": spec, "gpus_per_host": per_host,
       "trace": trace_label, "scheduler": scheduler, "jobs": jobs,
       "rejected": [id_ for id_, _ in rejected], "rejected_why": dict(rejected)}
with open(out, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
EOF
summary=$(python3 - "$out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["scheduler"]
print(f"{len(d['jobs'])} jobs ran, {len(d['rejected'])} did not; sdiag main mean/max cycle "
      f"{s.get('sdiag_main_mean_cycle_us')}/{s.get('sdiag_main_max_cycle_us')} us over "
      f"{s.get('sdiag_main_cycles')} cycles, backfill mean {s.get('sdiag_backfill_mean_cycle_us')} us")
EOF
)
say "$summary"
say "wrote $out in $(($(date +%s) - started)) s (run $run_s s)"
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["rejected"]))' "$out")" = 0 ] || exit 1
