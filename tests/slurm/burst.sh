#!/usr/bin/env bash
# A burst of short jobs on a real one-machine cluster (tests/slurm/cluster.sh,
# 32 nodes gpu[001-032] with 8 fake GPUs, the synthetic 4-leaf fabric): a mix
# of topo-aware and plain jobs, 1 to 8 GPUs on one node and 2 to 4 whole
# nodes, submitted as fast as sbatch goes.  While they run, `sinfo` and
# `squeue` are timed every second.
#   - every job completes
#   - slurmctld answers throughout: every sinfo/squeue sample succeeds
#     within --max-answer seconds (default 10)
#   - every topo-aware job has exactly one placement record, plain jobs none;
#     the journal is empty at the end
# Prints the answer times, the plugin's timing lines (22.05 `job_test`, 24.x
# `eval_nodes`: topo-aware against Slurm's own alone) and sdiag's
# main scheduler figures.  Default 1,000 jobs; a few minutes.
#
# Usage: tests/slurm/burst.sh --topoctl PATH [--plugin-dir DIR] [--slurm-prefix DIR]
#                             [--jobs N] [--max-answer SECONDS]
#   --slurm-prefix  run the Slurm installed there (scripts/slurm-build.sh's cache)
# Root only.  Uses $TOPO_SLURM_DIR and $TOPO_SLURM_PORT like cluster.sh.
# Ends with "N passed, N failed"; exits non-zero if anything failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
jobs=1000
max_answer=10
suite_extra_option() { # option value
  case $1 in
    --jobs) [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -ge 8 ] || { echo "--jobs takes a count of at least 8" >&2; exit 2; }; jobs=$2 ;;
    --max-answer) [[ $2 =~ ^[0-9]+$ ]] || { echo "--max-answer takes seconds" >&2; exit 2; }; max_answer=$2 ;;
    *) return 1 ;;
  esac
}
suite_args "$@"
suite_begin ", $jobs jobs"

sampler_pid=""
suite_cleanup() { [ -z "$sampler_pid" ] || { kill "$sampler_pid" 2>/dev/null; wait "$sampler_pid" 2>/dev/null; }; }

# --- the cluster --------------------------------------------------------------
start_topo_cluster "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2" ''
# The timing lines are the steady path: the burst begins once the engine's
# watcher has loaded the snapshot, as on a site whose snapshot exists when
# slurmctld starts (else the first evaluation loads it, milliseconds that
# the mean of a few thousand tests would carry).
for ((i = 0; i < 100; i++)); do
  grep -q 'fabric snapshot .* loaded' "$log" 2>/dev/null && break
  sleep 0.1
done

# --- the jobs -------------------------------------------------------------------
# One line per job: "topo|plain" then sbatch's shape options. Four kinds in
# turn: topo-aware on 2-4 whole nodes, topo-aware with 1-8 GPUs on one node,
# plain with 1-8 GPUs, plain on 2-4 nodes with 4 or 8 GPUs each.
for ((i = 0; i < jobs; i++)); do
  case $((i % 4)) in
    0) echo "topo -N$((2 + i / 4 % 3)) --gres=gpu:8" ;;
    1) echo "topo -N1 --gres=gpu:$((1 + i / 4 % 8))" ;;
    2) echo "plain -N1 --gres=gpu:$((1 + i / 4 % 8))" ;;
    3) echo "plain -N$((2 + i / 4 % 3)) --gres=gpu:$((4 + 4 * (i / 4 % 2)))" ;;
  esac
done >"$work/jobs"

# Times sinfo and squeue once a second until killed: "ok|fail SECONDS" lines.
sample() {
  local t0 t1 rc
  while :; do
    for cmd in "sinfo -h" "squeue -h"; do
      t0=$(date +%s.%N)
      rc=0
      timeout 60 $cmd >/dev/null 2>&1 || rc=$?
      t1=$(date +%s.%N)
      printf '%s %s %s\n' "$([ $rc = 0 ] && echo ok || echo fail)" "${cmd%% *}" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')"
    done
    sleep 1
  done
}
sample >"$work/samples" &
sampler_pid=$!

echo "# submitting ($(($(date +%s) - started)) s)"
submit_one() { # kind options...
  local kind=$1 net=()
  shift
  [ "$kind" = topo ] && net=(--network=topo-aware)
  sbatch --parsable "${net[@]}" "$@" -o /dev/null --wrap true
}
export -f submit_one
# Four sbatch at a time: a burst, not a trickle.
submit_started=$(date +%s.%N)
xargs -P 4 -L 1 bash -c 'submit_one "$0" "$@" | sed "s/^/$0 /"' <"$work/jobs" >"$work/ids" 2>"$work/sbatch.err" || true
submit_s=$(awk -v a="$submit_started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
submitted=$(wc -l <"$work/ids")
echo "  $submitted jobs submitted in $submit_s s"
check "sbatch took every job" [ "$submitted" = "$jobs" ]
[ -s "$work/sbatch.err" ] && head -n 5 "$work/sbatch.err" | sed 's/^/  sbatch: /'

echo "# running ($(($(date +%s) - started)) s)"
queue_empty() { [ -z "$(squeue -h -o %i 2>/dev/null)" ] && scontrol ping 2>/dev/null | grep -q "is UP"; }
wait_until 900 queue_empty || echo "  still queued: $(squeue -h -o %i | wc -l)"
ran_s=$(($(date +%s) - started))
kill "$sampler_pid" 2>/dev/null && wait "$sampler_pid" 2>/dev/null || true
sampler_pid=""

# Every job's end state while MinJobAge keeps it: "id state".
squeue -h -t all -o '%i %T' >"$work/states"
completed_all() {
  local bad
  bad=$(awk 'NR == FNR { want[$1] = 1; next } ($1 in want) && $2 == "COMPLETED" { delete want[$1] }
             END { n = 0; for (j in want) n++; print n }' <(awk '{ print $2 }' "$work/ids") "$work/states")
  [ "$bad" = 0 ] || { echo "  $bad jobs did not complete: $(awk '$2 != "COMPLETED"' "$work/states" | head -n 5 | paste -sd' ')" >&2; return 1; }
}
check "all $submitted jobs completed" completed_all

samples=$(wc -l <"$work/samples")
answers_ok() {
  local bad slow
  bad=$(grep -c '^fail' "$work/samples" || true)
  slow=$(awk -v m="$max_answer" '$3 > m' "$work/samples" | wc -l)
  [ "$samples" -gt 0 ] && [ "$bad" = 0 ] && [ "$slow" = 0 ] ||
    { echo "  $samples samples: $bad failed, $slow over ${max_answer}s" >&2; return 1; }
}
check "slurmctld answered all $samples sinfo/squeue samples within ${max_answer}s" answers_ok
for cmd in sinfo squeue; do
  awk -v c="$cmd" '$2 == c { print $3 }' "$work/samples" | sort -n |
    awk -v c="$cmd" '{ v[NR] = $1; s += $1 } END { if (NR) printf "  %s answer: n=%d mean %.3f s, p50 %.3f s, p95 %.3f s, max %.3f s\n", c, NR, s / NR, v[int((NR + 1) / 2)], v[int(NR * 0.95 + 0.999)], v[NR] }'
done

# Records: exactly one per topo-aware job, none for plain ones.
# 24.x writes a record once the job has started, up to a second later: the
# last jobs' may come after they ended.
records_right() {
  sqlite3 "$db" 'SELECT job_id, count(*) FROM placement GROUP BY job_id' | tr '|' ' ' >"$work/records"
  awk 'NR == FNR { n[$1] = $2; next }
       $1 == "topo" && n[$2] != 1 { print "topo " $2 ":" (n[$2] + 0) }
       $1 == "plain" && ($2 in n) { print "plain " $2 ":" n[$2] }' "$work/records" "$work/ids" >"$work/wrong"
  [ ! -s "$work/wrong" ]
}
# Waits quietly; says what is wrong once, at the end.
records_settle() {
  wait_until 10 records_right && return 0
  echo "  records per job wrong ($(wc -l <"$work/wrong") jobs): $(head -n 5 "$work/wrong" | paste -sd' ')" >&2
  return 1
}
check "one placement record per topo-aware job, none for plain jobs" records_settle
placed=$(sqlite3 "$db" 'SELECT count(*) FROM placement WHERE fallback = 0')
fallbacks=$(sqlite3 "$db" 'SELECT count(*) FROM placement WHERE fallback = 1')
echo "  $placed placed by the engine, $fallbacks given Slurm's own choice (one-host jobs among them)"
check "the journal is empty" wait_until 10 sh -c "[ ! -s '$db.journal-0' ] && [ ! -s '$db.journal-1' ]"

echo "# cost ($ran_s s to run them all)"
# Both paths' figures: the plugin logs them every 100 tests, and 22.05's
# on reconfigure too (24.x's reconfigure starts slurmctld anew without
# unloading the plugin: its last periodic lines are the figures).
logged=$(wc -l <"$log")
scontrol reconfigure
wait_until 5 sh -c "tail -n +$((logged + 1)) '$log' | grep -qE '(job_test|eval_nodes) timing: topo-aware'" || true
# 22.05 times select's job_test, 24.x the topology plugin's eval_nodes.
timing_lines() {
  local path
  for path in 'cons_tres alone' 'topo-aware'; do
    { grep -E "(job_test|eval_nodes) timing: $path " "$log" || true; } | tail -n 1
  done
}
timing_lines | sed -E 's/.*(job_test|eval_nodes) timing:/  \1 timing:/' | grep . || echo "  no timing line in $log"
# The hot path's figure: CPU per test, topo-aware against Slurm's own alone.
timing_lines | awk '
  { for (i = 1; i <= NF; i++) if ($i ~ /^cpu_mean_us=/) { split($i, kv, "="); cpu = kv[2] } }
  / topo-aware / { ours = cpu }
  / alone / { own = cpu }
  END { if (ours != "" && own > 0) printf "  hot path: %.2fx (topo-aware %s us, Slurm'"'"'s own %s us CPU per test)\n", ours / own, ours, own }' || true

sdiag | sed -n '/^Main schedule statistics/,/^$/p' | grep -E 'Last cycle|Max cycle|Mean cycle|Total cycles|Cycles per' | sed 's/^ */  sdiag: /'
check "slurmctld still answers" sh -c "scontrol ping | grep -q 'is UP'"

[ "$failed" = 0 ]
