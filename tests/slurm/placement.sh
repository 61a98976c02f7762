#!/usr/bin/env bash
# End-to-end proof of topology-aware placement on a real one-machine Slurm
# cluster (tests/slurm/cluster.sh): 32 nodes gpu[001-032] with 8 fake GPUs,
# the placement shim (select/topo_cons_tres on Slurm 22.05, topology/topo_aware
# on 24.05+) + job_submit/topo_aware + spank/topo_aware, and the
# fabric leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2 with leaf02's
# uplink degraded (leaf01 = gpu001-008, ..., leaf04 = gpu025-032) in a fresh
# snapshot database.
#   1. a fragmented cluster: best fit leaf, not the degraded leaf, fewest
#      leaves; the TOPO_* variables the job prints; topoctl job; a plain job
#      is left alone; a suspended job's traffic leaves the model until it
#      resumes
#   2. a newer snapshot (hosts interleaved over the leaves) picked up without
#      a restart: a two-leaf ring crosses the leaf boundary twice
#   3. backfill: a large topo-aware job gets a start time, small jobs run
#   4. corrupt database, missing config, bad config line, bad option: the
#      job still runs (logged fallback, ring hints over Slurm's own nodes
#      with TOPO_FALLBACK=1) or is refused; slurmctld answers; DeferAbove=:
#      a job that would run slow beside a running ring waits, for its
#      share of its time limit or until the ring ends
#   5. NCCL_IB_HCA per node from each host's hwloc data (hosts of two builds
#      in one job), and per task its GPU's rail first
#   6. RoCE: on a snapshot routed ecmp:1, the site's NCCL settings from
#      topo_aware.conf in every task, NCCL_IB_QPS_PER_CONNECTION only for a
#      ring that crosses leaves, and a value the job set itself kept
#
# Usage: tests/slurm/placement.sh --topoctl PATH [--plugin-dir DIR] [--spank SO]
#                                 [--slurm-prefix DIR]
#   --slurm-prefix  run the Slurm installed there (scripts/slurm-build.sh's cache)
# Root only.  Uses $TOPO_SLURM_DIR and $TOPO_SLURM_PORT like cluster.sh.
# Ends with "N passed, N failed"; exits non-zero if anything failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
suite_args "$@"
suite_spank
fabric="leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,degrade=leaf02:9"
fixtures=$here/../fixtures

# What differs between the shims: from 24.05 the topology plugin places
# jobs, Slurm's own choice there is tree's or flat's (not cons_tres's), the
# short form is written when the job starts, and a Strict=yes request that
# no idle cluster could meet is refused at submission.
release=$(slurmctld -V | awk '{ split($2, v, "."); printf "%d%02d\n", v[1], v[2] }')
if [ "$release" -ge 2405 ]; then
  own_log="gets Slurm's own placement"
  own_note="fallback to Slurm's own choice"
else
  own_log="gets cons_tres's placement"
  own_note="fallback to cons_tres"
fi
suite_begin


# A topo-aware job that prints what it was told, then stays.
topo_job() {
  submit --network=topo-aware --exclusive "$@" --wrap '
echo "RING=$TOPO_RING_ORDER"
echo "HOSTS=$TOPO_RING_HOSTS"
echo "NNODES=$TOPO_NNODES"
echo "FALLBACK=${TOPO_FALLBACK:-0}"
srun bash -c "echo RANK \$SLURMD_NODENAME \$TOPO_NODE_RANK \$TOPO_NNODES \$TOPO_RANK \$TOPO_LOCAL_RANK \$(paste -sd, \$TOPO_HOSTFILE)"
echo DONE
sleep 600'
}
wait_done() { wait_until 60 grep -qsx DONE "$dir/out-$1.txt"; }
ring_of() { sed -n 's/^RING=//p' "$dir/out-$1.txt"; }

# job expected-nodes: the allocation is exactly these nodes.
got_nodes() {
  local got
  got=$(hosts_of "$(job_field "$1" NodeList)")
  [ "$got" = "$(hosts_of "$2")" ] || { echo "  job $1 got $got, expected $(hosts_of "$2")" >&2; return 1; }
}

# job: what the job printed agrees with its allocation: the ring holds
# exactly its nodes, every node's TOPO_NODE_RANK is its place in the ring,
# TOPO_NNODES is the node count, and every node's hostfile is the ring.
hints_agree() {
  local j=$1 out=$dir/out-$1.txt ring n alloc
  ring=$(ring_of "$j")
  alloc=$(hosts_of "$(job_field "$j" NodeList)")
  n=$(job_field "$j" NumNodes)
  [ -n "$ring" ] || { echo "  job $j printed no TOPO_RING_ORDER" >&2; return 1; }
  [ "$(tr , '\n' <<<"$ring" | sort | paste -sd, -)" = "$alloc" ] || { echo "  ring $ring is not the allocation $alloc" >&2; return 1; }
  grep -qx "NNODES=$n" "$out" || { echo "  batch TOPO_NNODES is not $n" >&2; return 1; }
  local compact
  compact=$(sed -n 's/^HOSTS=//p' "$out")
  [ "$(scontrol show hostnames "$compact" | paste -sd, -)" = "$ring" ] ||
    { echo "  TOPO_RING_HOSTS $compact is not the ring $ring" >&2; return 1; }
  [ "$(grep -c '^RANK ' "$out")" = "$n" ] || { echo "  $(grep -c '^RANK ' "$out") RANK lines, expected $n" >&2; return 1; }
  local node rank nn task_rank local_rank file i=0 want
  while read -r _ node rank nn task_rank local_rank file; do
    want=$(tr , '\n' <<<"$ring" | grep -nx "$node" | cut -d: -f1)
    [ "$rank" = "$((want - 1))" ] || { echo "  $node: TOPO_NODE_RANK=$rank, its ring place is $((want - 1))" >&2; return 1; }
    [ "$nn" = "$n" ] || { echo "  $node: TOPO_NNODES=$nn" >&2; return 1; }
    # One task per node: the task's ring rank is its node's.
    [ "$task_rank" = "$rank" ] && [ "$local_rank" = 0 ] ||
      { echo "  $node: TOPO_RANK=$task_rank TOPO_LOCAL_RANK=$local_rank, expected $rank and 0" >&2; return 1; }
    [ "$file" = "$ring" ] || { echo "  $node: hostfile $file, ring $ring" >&2; return 1; }
    i=$((i + 1))
  done < <(grep '^RANK ' "$out")
}

# ring leaf-of-host-expression: ring edges (with the closing one) whose
# ends are on different leaves.  The expression maps the host number i.
crossings() {
  tr , '\n' <<<"$1" | sed 's/[^0-9]//g' | awk -v expr="$2" '
    { i = $1 + 0; leaf[NR] = (expr == "interleaved") ? (i - 1) % 4 : int((i - 1) / 8) }
    END { c = 0; for (k = 1; k <= NR; k++) { nxt = (k == NR) ? 1 : k + 1; if (leaf[k] != leaf[nxt]) c++ } print c }'
}

running_on() { wait_state "$1" RUNNING 30 && got_nodes "$1" "$2"; }
running() { wait_state "$1" RUNNING 30; }
running_on_one_leaf() {
  wait_state "$1" RUNNING 60 || return 1
  local leaves
  leaves=$(scontrol show hostnames "$(job_field "$1" NodeList)" | sed 's/[^0-9]//g' | awk '{ print int(($1 - 1) / 8) }' | sort -u | wc -l)
  [ "$leaves" = 1 ] || { echo "  job $1 spans $leaves leaves" >&2; return 1; }
}
printed_done() { wait_done "$1"; }
fallback_hints() { grep -qsx FALLBACK=1 "$dir/out-$1.txt" && hints_agree "$1"; }
recorded() { wait_until 10 recorded_now "$1"; }
recorded_now() { # job: topoctl job shows it placed (not a fallback), with the ring the job printed
  local json
  json=$("$topoctl" job "$1" --db "$db" --json) || return 1
  grep -q '"fallback": false' <<<"$json" || return 1
  [ "$(tr -d ' \n' <<<"$json" | sed 's/.*"ring_order":\[\([^]]*\)\].*/\1/' | tr -d '"')" = "$(ring_of "$1")" ]
}
# The short form may follow the start by a second (24.05+: written then).
placed_note() { wait_until 10 sh -c "scontrol show job -o $1 | grep -q 'AdminComment=topo-aware: placed'"; }
note_has() { wait_until 10 sh -c "scontrol show job -o $1 | grep -qF -- \"\$0\"" "$2"; }
waiting_note() { admin_comment "$1" | grep -q '^topo-aware: waiting (Strict=yes): '; }
fallback_note() { note_has "$1" "$own_note"; }
ring_crossings_are() { [ "$(crossings "$1" "$2")" = "$3" ] || { echo "  ring $1 crosses $(crossings "$1" "$2") times" >&2; return 1; }; }
untouched() { # plain job: no record, no note, no ring
  running "$1" && wait_until 20 grep -qsx RING=none "$dir/out-$1.txt" &&
    ! "$topoctl" job "$1" --db "$db" >/dev/null 2>&1 && ! admin_comment "$1" | grep -q topo-aware
}
snapshot_is() { wait_until 10 sh -c "'$topoctl' job $1 --db '$db' --json | grep -q '\"snapshot\": $2'"; }
has_start_time() { [ -n "$(squeue --start -h -j "$1" -o %S | grep -v N/A)" ]; }
pending() { [ "$(job_field "$1" JobState)" = PENDING ]; }
ping_up() { scontrol ping | grep -q "is UP"; }
in_log() { wait_until 20 grep -q -- "$1" "$log"; }
# Whether $2 appears in the log past its first $1 lines: a line the cluster's
# start may already have written (a missing database) must be new.
log_has_since() { tail -n "+$(($1 + 1))" "$log" | grep -q -- "$2"; }
in_log_since() { wait_until 20 log_has_since "$1" "$2"; }
refused() { ! sbatch --network=topo-aware,profile=bogus -N2 --wrap hostname 2>"$work/err" && grep -q 'allowed: allreduce, alltoall, mixed' "$work/err"; }
leaf_idle() { [ "$(sinfo -h -N -t idle -n "$1" -o %N | sort -u | wc -l)" = "$2" ]; }

# --- the cluster --------------------------------------------------------------
# The SPANK plugin reads each host's hwloc data from the fixtures' exports
# (gpu001: 8 GPUs over 4 HCAs; gpu003: 3 GPUs, 3 HCAs; the others have none).
start_topo_cluster "$fabric" 'Candidates=8\n' --spank "$spank" --spank-args "hwloc_xml=$fixtures/hwloc/%n.xml"

echo "# 1. a fragmented cluster ($(($(date +%s) - started)) s)"
bg1=$(submit -w 'gpu[001-003]' -N3 --exclusive --wrap 'sleep 600')
bg2=$(submit -w 'gpu[017-020]' -N4 --exclusive --wrap 'sleep 600')
bg3=$(submit -w 'gpu[025-026]' -N2 --exclusive --wrap 'sleep 600')
for j in $bg1 $bg2 $bg3; do wait_state "$j" RUNNING 30; done
# free: leaf01 5 (004-008), leaf02 8 (degraded uplink), leaf03 4 (021-024), leaf04 6 (027-032)
a1=$(topo_job -N4)
check "4 nodes: the leaf they fill best (leaf03), not the first or the emptiest" running_on "$a1" 'gpu[021-024]'
check "  ... the job printed its hints" printed_done "$a1"
check "  ... ranks, counts, ring and hostfiles agree with the allocation" hints_agree "$a1"
check "  ... recorded: topoctl job shows the same ring" recorded "$a1"
check "  ... scontrol show job carries the short form" placed_note "$a1"
a2=$(topo_job -N6)
check "6 nodes: leaf04 (6 free), not the degraded leaf02 (8 free)" running_on "$a2" 'gpu[027-032]'
printed_done "$a2" || true
check "  ... its hints agree" hints_agree "$a2"
scancel "$a2"
wait_until 30 leaf_idle 'gpu[027-032]' 6 || true
a3=$(topo_job -N11)
check "11 nodes: two healthy leaves (leaf01 5 + leaf04 6), off the degraded uplink" running_on "$a3" 'gpu[004-008,027-032]'
printed_done "$a3" || true
check "  ... its ring crosses between the two leaves twice" ring_crossings_are "$(ring_of "$a3")" contiguous 2
check "  ... its hints agree" hints_agree "$a3"
plain=$(submit -N2 --exclusive --wrap 'echo "RING=${TOPO_RING_ORDER:-none}"; sleep 600')
check "a job without the option is untouched: no record, no note, no ring" untouched "$plain"
scontrol suspend "$a1"
check "a suspended job's traffic leaves the engine's model" in_log "JobId=$a1: job $a1 suspended, its traffic taken out"
scontrol resume "$a1"
check "  ... and comes back when it resumes" in_log "JobId=$a1: job $a1 resumed, its traffic back"
cancel_all

echo "# 2. a newer snapshot without a restart ($(($(date +%s) - started)) s)"
"$topoctl" discover --synthetic "leafspine:leaves=4,hosts_per_leaf=8,spines=2,naming=interleaved" --db "$db" >/dev/null
# The engine's watcher looks for a newer snapshot once a second and logs
# the one it loads: a job submitted before that line may still be placed
# on the old one.
check "slurmctld's engine loaded snapshot 2 (its log says so)" in_log "topo-aware: fabric snapshot 2 of "
b1=$(topo_job -N16)
check "16 nodes on the interleaved fabric" running "$b1"
printed_done "$b1" || true
ring=$(ring_of "$b1")
check "  ... its ring order crosses the leaf boundary twice" ring_crossings_are "$ring" interleaved 2
check "  ... where node-name order crosses it at every hop" \
  ring_crossings_are "$(tr , '\n' <<<"$ring" | sort | paste -sd, -)" interleaved 16
check "  ... its hints agree" hints_agree "$b1"
check "  ... recorded against snapshot 2" snapshot_is "$b1" 2
cancel_all

r1=$(submit --network=topo-aware --exclusive -N2 --requeue \
  --wrap 'echo "RESTART=${SLURM_RESTART_COUNT:-0} COPIES=$(env | grep -c "^TOPO_RING_ORDER=")"; sleep 600')
running "$r1" && wait_until 20 grep -qs RESTART=0 "$dir/out-$r1.txt" || true
scontrol requeue "$r1"
check "a requeued job is placed again, with one TOPO_RING_ORDER (replaced, not appended)" \
  wait_until 120 grep -qsx "RESTART=1 COPIES=1" "$dir/out-$r1.txt"
check "  ... and two records (topoctl job --history)" wait_until 10 \
  sh -c "[ \"\$('$topoctl' job $r1 --db '$db' --history --json | grep -c '\"job_id\"')\" = 2 ]"
cancel_all

echo "# 3. backfill ($(($(date +%s) - started)) s)"
"$topoctl" discover --synthetic "$fabric" --db "$db" >/dev/null
g1=$(submit -w 'gpu[001-004]' -N4 -n4 --gres=gpu:2 --wrap 'sleep 600')
g2=$(submit -w 'gpu[009-032]' -N24 --exclusive --wrap 'sleep 600')
for j in $g1 $g2; do wait_state "$j" RUNNING 30; done
g3=$(submit --network=topo-aware -N4 --gres=gpu:8 --wrap 'echo "CUDA=$CUDA_VISIBLE_DEVICES"; sleep 600')
check "GPUs counted: 8 GPUs a node only fit where none are in use (gpu005-008)" running_on "$g3" 'gpu[005-008]'
check "  ... placed by the engine, not a fallback" placed_note "$g3"
cancel_all
long=$(submit -N28 --exclusive -t 3 --wrap 'sleep 600')
wait_state "$long" RUNNING 30
big=$(submit --network=topo-aware -N32 --exclusive -t 5 --wrap 'sleep 1')
check "a 32-node topo-aware job waits behind a running one" wait_state "$big" PENDING 10
small1=$(submit -N2 --exclusive -t 1 --wrap 'sleep 30')
small2=$(submit --network=topo-aware -N2 --exclusive -t 1 --wrap 'sleep 30')
check "  ... it gets a start time (squeue --start)" wait_until 30 has_start_time "$big"
check "  ... small jobs backfill around it" running "$small1"
check "  ... a small topo-aware one too" running "$small2"
check "  ... and it still waits" pending "$big"
cancel_all

echo "# 4. failures ($(($(date +%s) - started)) s)"
# A damaged file moved into place (overwriting the open file in place would
# be repaired by SQLite's checkpoint when slurmctld closes its connection).
logged=$(wc -l <"$log")
head -c 16384 /dev/urandom >"$work/bad.db"
mv -f "$work/bad.db" "$db"
rm -f "$db-wal" "$db-shm"
# The engine's watcher notices within a second and logs it: a job
# submitted before that line may still be placed on the fabric it holds.
check "slurmctld's engine noticed the damaged database" in_log_since "$logged" "topo-aware: fabric snapshot not readable: $db"
c1=$(topo_job -N2)
check "corrupt database: the job still runs" running "$c1"
check "  ... the fallback is logged with the database's error" in_log "JobId=$c1 $own_log: $db"
check "  ... and noted on the job" fallback_note "$c1"
check "  ... slurmctld answers" ping_up
"$topoctl" discover --synthetic "$fabric" --db "$work/good.db" >/dev/null
mv -f "$work/good.db" "$db"
c2=$(topo_job -N2)
check "the database restored: placed again, no restart" running "$c2"
check "  ... placed" placed_note "$c2"
d1=$(topo_job -N10 --network=topo-aware,maxleaves=1)
check "no placement within maxleaves=1 (Strict=no): the job runs on Slurm's own nodes" running "$d1"
check "  ... noted as a fallback, with the engine's reason" note_has "$d1" "$own_note: job $d1: no placement"
printed_done "$d1" || true
check "  ... its ring hints are Slurm's nodes in ring order, with TOPO_FALLBACK=1" fallback_hints "$d1"
scancel "$d1"
printf 'DbPath=%s\nStrict=yes\n' "$db" >"$dir/etc/topo_aware.conf"
scontrol reconfigure
wait_until 30 ping_up || true
if [ "$release" -ge 2405 ]; then
  check "Strict=yes: a job no idle cluster can place as asked is refused at submission" \
    sh -c "! sbatch --parsable --network=topo-aware,maxleaves=1 -N10 --exclusive --wrap hostname 2>'$work/err'"
  # Two nodes busy on every leaf: six free on each, so one leaf holds seven
  # hosts only when the cluster is idle.
  cancel_all
  busy=$(submit -w 'gpu[001-002,009-010,017-018,025-026]' -N8 --exclusive --wrap 'sleep 600')
  wait_state "$busy" RUNNING 30
  d2=$(topo_job -N7 --network=topo-aware,maxleaves=1)
  check "Strict=yes: a job the busy cluster cannot place as asked waits" wait_until 15 waiting_note "$d2"
  check "  ... and stays pending" pending "$d2"
  scancel "$busy"
  check "  ... and runs on one leaf once there is room" running_on_one_leaf "$d2"
  scancel "$d2"
else
  d2=$(topo_job -N10 --network=topo-aware,maxleaves=1)
  check "Strict=yes: the same job waits" wait_until 15 waiting_note "$d2"
  check "  ... and stays pending" pending "$d2"
  scancel "$d2"
fi
# DeferAbove=: leaf03 and leaf04 held by a plain job, a topo-aware job on
# leaf01 and leaf02 but gpu008 and gpu016, whose ring crosses their uplinks
# (leaf02's with the 1x cable); a 2-node job offered only gpu008 and gpu016
# would run 1.86x its ideal beside it (tests/plugin/engine_test.cc): it waits.
printf 'DbPath=%s\nDeferAbove=1.10\nDeferShare=0.05\n' "$db" >"$dir/etc/topo_aware.conf"
scontrol reconfigure
wait_until 30 ping_up || true
cancel_all
deferred_note() {
  local said="AdminComment=topo-aware: waiting: job $1: deferred: its best placement now is estimated at"
  wait_until 15 sh -c "scontrol show job -o $1 | grep -qF -- \"\$0\"" "$said"
}
running_on_within() { wait_state "$1" RUNNING "$3" && got_nodes "$1" "$2"; }
waited_at_least() { # job seconds: it started that long after its submission or later
  local waited
  [ "$(job_field "$1" JobState)" = RUNNING ] || { echo "  job $1 is not running" >&2; return 1; }
  waited=$(($(date -d "$(job_field "$1" StartTime)" +%s) - $(date -d "$(job_field "$1" SubmitTime)" +%s)))
  [ "$waited" -ge "$2" ] || { echo "  job $1 started $waited s after its submission" >&2; return 1; }
}
hold=$(submit -w 'gpu[017-032]' -N16 --exclusive --wrap 'sleep 600')
wait_state "$hold" RUNNING 30
ring=$(topo_job -N14 -x 'gpu[008,016]' --gres=gpu:8)
check "DeferAbove: a ring across leaf01 and leaf02 runs" running "$ring"
# No wait for the ring's record: on 24.05 and later the next evaluation
# hands the started ring's traffic to the engine before it ranks.
e1=$(topo_job -N2 --gres=gpu:8 -t 600)
check "DeferAbove: a job whose only hosts would run slow beside it is deferred, and says why" deferred_note "$e1"
check "  ... and stays pending" pending "$e1"
scancel "$e1"
e2=$(topo_job -N2 --gres=gpu:8 -t 2)
# Slurm tries a pending job again when something changes or at its next
# periodic pass (sched_interval, 60 s): the share ends within that.
check "DeferAbove: a job deferred for its share (DeferShare=0.05 of 2 minutes) then runs on those hosts" \
  running_on_within "$e2" 'gpu[008,016]' 90
check "  ... after waiting at least its 6 s" waited_at_least "$e2" 6
check "  ... and its placement record keeps why it was deferred" wait_until 10 sh -c \
  "'$topoctl' job $e2 --db '$db' --json | grep -qF '\"deferred_why\": \"deferred: its best placement now is estimated at'"
# By now the writer has had its rounds since the first one was cancelled.
check "  ... and the job cancelled while deferred left no placement record" \
  sh -c "! grep -q 'JobId=$e1 placed' '$log' && ! '$topoctl' job $e1 --db '$db' >/dev/null 2>&1"
scancel "$e2"
# The share counts from the first evaluation that deferred the job: one
# that queued past its share for lack of nodes is still deferred once
# they are free.
filler=$(submit -w 'gpu[008,016]' -N2 --exclusive --wrap 'sleep 600')
wait_state "$filler" RUNNING 30
e4=$(topo_job -N2 --gres=gpu:8 -t 2)
sleep 10
scancel "$filler"
check "DeferAbove: a job that queued past its share (6 s) for lack of nodes is deferred once they are free" \
  deferred_note "$e4"
scancel "$e4"
e3=$(topo_job -N2 --gres=gpu:8 -t 600)
check "DeferAbove: another is deferred" deferred_note "$e3"
scancel "$ring"
# Slurm's pass at the ring's end may come before the engine has dropped the
# ring's traffic (its writer looks once a second); the next is backfill's
# (bf_interval, 30 s) or the periodic one (sched_interval, 60 s).
check "  ... and runs once the ring beside it has ended" wait_state "$e3" RUNNING 90
scancel "$e3" "$hold"
printf 'DbPath=%s\nPartitions=gpu\n' "$db" >"$dir/etc/topo_aware.conf"
scontrol reconfigure
p1=$(submit -N3 --exclusive --wrap 'echo "RING=${TOPO_RING_ORDER:-none}"; sleep 600')
check "Partitions=gpu: a job without the option is placed too" running "$p1"
check "  ... placed" placed_note "$p1"
check "  ... and sees its ring" wait_until 20 grep -qs "^RING=gpu" "$dir/out-$p1.txt"
scancel "$p1"
printf 'DbPath=%s\nStrict=maybe\n' "$db" >"$dir/etc/topo_aware.conf"
scontrol reconfigure
if [ "$release" -ge 2405 ]; then
  # A reconfigure restarts slurmctld from 23.11 on: there is no previous
  # configuration to keep, so jobs get Slurm's own placement until fixed.
  wait_until 30 ping_up || true
  check "a bad config line: the error names file:line" in_log "topo_aware.conf:2: .*Strict 'maybe'"
  c3=$(topo_job -N2)
  check "  ... jobs still run" running "$c3"
  check "  ... noted as a fallback" note_has "$c3" "$own_note: topo_aware.conf could not be read"
else
  check "a bad config line: the error names file:line, the old config stays" \
    in_log "topo_aware.conf:2: .*Strict 'maybe'.*keeping the previous configuration"
  c3=$(topo_job -N2)
  check "  ... jobs are still placed" running "$c3"
  check "  ... placed" placed_note "$c3"
fi
rm -f "$dir/etc/topo_aware.conf"
scontrol reconfigure
wait_until 30 ping_up || true
check "a missing config: one log line, defaults" in_log "topo_aware.conf: no such file; using the defaults"
c4=$(topo_job -N2)
check "  ... the job still runs" running "$c4"
check "a bad option is refused at submission, naming what is allowed" refused
check "slurmctld still answers" ping_up
cancel_all

echo "# 5. NCCL_IB_HCA per node ($(($(date +%s) - started)) s)"
printf 'DbPath=%s\n' "$db" >"$dir/etc/topo_aware.conf"
scontrol reconfigure
wait_until 30 ping_up || true
# Only gpu001 and gpu003 offered: hosts of two builds in one job.
h1=$(submit --network=topo-aware -N2 -x 'gpu[002,004-032]' --ntasks-per-node=4 --gres=gpu:8 --wrap '
echo "BATCH $SLURMD_NODENAME ${NCCL_IB_HCA:-none}"
srun bash -c "echo TASK \$SLURMD_NODENAME \$SLURM_LOCALID \${NCCL_IB_HCA:-none}; echo ADDR \$SLURMD_NODENAME \$SLURM_TOPOLOGY_ADDR \$SLURM_TOPOLOGY_ADDR_PATTERN"
echo DONE')
wait_until 60 grep -qsx DONE "$dir/out-$h1.txt" || true
hca_line() { grep -qx "$1" "$dir/out-$h1.txt" || { echo "  no line '$1' in:" >&2; sed 's/^/    /' "$dir/out-$h1.txt" >&2; return 1; }; }
check "the batch host gets its own HCAs, by rail" hca_line "BATCH gpu001 mlx5_0,mlx5_1,mlx5_2,mlx5_3"
check "each task on gpu001: its GPU's rail first (task 2 drives GPU 2, on mlx5_1)" hca_line "TASK gpu001 2 mlx5_1,mlx5_0,mlx5_2,mlx5_3"
check "  ... task 0 on gpu001" hca_line "TASK gpu001 0 mlx5_0,mlx5_1,mlx5_2,mlx5_3"
check "gpu003, another build, gets its own three" hca_line "TASK gpu003 0 mlx5_0,mlx5_1,mlx5_2"
check "  ... task 1 there: GPU 1's HCA first" hca_line "TASK gpu003 1 mlx5_1,mlx5_0,mlx5_2"
if [ "$release" -ge 2405 ]; then
  # slurmd asks the topology plugin at start-up, and a reconfigure
  # restarts it: by now the database is there.
  check "SLURM_TOPOLOGY_ADDR from the fabric: gpu001 under leaf01" \
    grep -qE "^ADDR gpu001 (pod[0-9]+\.)?leaf01\.gpu001 (pod\.)?leaf\.node$" "$dir/out-$h1.txt"
  check "  ... gpu003 too" grep -qE "^ADDR gpu003 (pod[0-9]+\.)?leaf01\.gpu003 (pod\.)?leaf\.node$" "$dir/out-$h1.txt"
fi

echo "# 6. RoCE hints on an ECMP fabric ($(($(date +%s) - started)) s)"
cancel_all
"$topoctl" discover --synthetic "${fabric%%,degrade=*}" --routing ecmp:1 --db "$db" >/dev/null
printf 'DbPath=%s\nRoceGidIndex=3\nRoceTrafficClass=106\nSocketIfname=^docker,lo\n' "$db" >"$dir/etc/topo_aware.conf"
scontrol reconfigure
wait_until 30 ping_up || true
sleep 2  # the engine's watcher looks for a new snapshot once a second
roce_job() { # sbatch-args...: prints the NCCL settings of the batch step and of every task
  submit --network=topo-aware --exclusive "$@" --wrap '
echo "BATCH $SLURMD_NODENAME gid=${NCCL_IB_GID_INDEX:-none} tc=${NCCL_IB_TC:-none} if=${NCCL_SOCKET_IFNAME:-none} qps=${NCCL_IB_QPS_PER_CONNECTION:-none}"
srun bash -c "echo TASK \$SLURMD_NODENAME gid=\${NCCL_IB_GID_INDEX:-none} tc=\${NCCL_IB_TC:-none} if=\${NCCL_SOCKET_IFNAME:-none} qps=\${NCCL_IB_QPS_PER_CONNECTION:-none}"
echo DONE'
}
e1=$(roce_job -N2 -x 'gpu[002-016,018-032]')             # gpu001 (leaf01) + gpu017 (leaf03)
e2=$(roce_job -N2 -x 'gpu[003-032]')                     # gpu001 + gpu002, one leaf
wait_until 60 grep -qsx DONE "$dir/out-$e1.txt" || true
wait_until 60 grep -qsx DONE "$dir/out-$e2.txt" || true
e3=$(roce_job -N2 -x 'gpu[002-016,018-032]' --export=ALL,NCCL_IB_TC=5)
wait_until 60 grep -qsx DONE "$dir/out-$e3.txt" || true
roce_line() { # job line
  grep -qx "$2" "$dir/out-$1.txt" || { echo "  no line '$2' in:" >&2; sed 's/^/    /' "$dir/out-$1.txt" >&2; return 1; }
}
check "a ring across two leaves on ecmp:1: every task gets the site's settings and 4 QPs" \
  roce_line "$e1" "TASK gpu001 gid=3 tc=106 if=^docker,lo qps=4"
check "  ... on the other leaf's node too" roce_line "$e1" "TASK gpu017 gid=3 tc=106 if=^docker,lo qps=4"
check "  ... and the batch step" roce_line "$e1" "BATCH gpu001 gid=3 tc=106 if=^docker,lo qps=4"
check "a ring on one leaf: the site's settings, no QP hint (nothing hashed onto an uplink)" \
  roce_line "$e2" "TASK gpu002 gid=3 tc=106 if=^docker,lo qps=none"
check "a value the job set itself is kept (NCCL_IB_TC=5), the others still given" \
  roce_line "$e3" "TASK gpu017 gid=3 tc=5 if=^docker,lo qps=4"
cancel_all

[ "$failed" = 0 ]
