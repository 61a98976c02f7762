#!/usr/bin/env bash
# The real-cluster benchmark of issue 6, part 1: one slice of a job trace
# replayed on the one-machine Slurm cluster, for each host naming
# (contiguous, interleaved) and each policy (tree = select/cons_tres +
# topology/tree, topo-aware = select/topo_cons_tres), on a 2:1 leaf/spine.
# Writes, under --results (default results/):
#   cluster-<naming>-<policy>.json   what Slurm did (tests/slurm/replay.sh)
#   score-<naming>-<policy>.json     topoctl score of it
#   report/                          topoctl report of all of them
#
# Usage: sudo scripts/benchmark.sh [--build DIR] [--results DIR] [--hosts 32|64]
#          [--trace CSV] [--first-job K] [--jobs N] [--time-scale X]
#          [--max-duration S] [--namings contiguous,interleaved]
#          [--policies tree,topo-aware] [--score-only]
#
# Defaults: rows 25-104 of ITP cluster04 (80 jobs, 29 of them 16-32 GPUs
# over 2-4 hosts, the rest 1-8 GPUs), time scale 1000, durations capped at
# 60 s: about 5 minutes per run, 20 minutes in all.  --score-only redoes
# the scores and the report from the schedules already in --results.
# Root only (the cluster's daemons).  Progress on stderr.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
results=$root/results
hosts=32
trace=$root/../shared/traces/itp/cluster04.csv
first=25 jobs=80 scale=1000 max_duration=60
namings=contiguous,interleaved
policies=tree,topo-aware
score_only=0

say() { printf 'benchmark: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    --score-only) score_only=1; shift; continue ;;
  esac
  [ $# -ge 2 ] || die "$1 needs a value"
  case $1 in
    --build) build=$2 ;;
    --results) results=$2 ;;
    --hosts) case $2 in 32 | 64) hosts=$2 ;; *) die "--hosts takes 32 or 64" ;; esac ;;
    --trace) trace=$2 ;;
    --first-job) first=$2 ;;
    --jobs) jobs=$2 ;;
    --time-scale) scale=$2 ;;
    --max-duration) max_duration=$2 ;;
    --namings) namings=$2 ;;
    --policies) policies=$2 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift 2
done
build=$(cd "$build" 2>/dev/null && pwd) || die "no build directory $build (--build)"
topoctl=$build/tools/topoctl
[ -x "$topoctl" ] || die "no $topoctl (--build)"
mkdir -p "$results"
results=$(cd "$results" && pwd)

fabric() { # naming
  local spec="leafspine:leaves=$((hosts / 8)),hosts_per_leaf=8,spines=2,oversub=2"
  [ "$1" = interleaved ] && spec+=",naming=interleaved"
  echo "$spec"
}

# --- the lead's tools, called in one place ----------------------------------------
score() { # schedule spec out
  "$topoctl" score --schedule "$1" --synthetic "$2" --json >"$3"
}
report() { # out-dir score-files...
  local out=$1
  shift
  "$topoctl" report --results "$(IFS=,; echo "$*")" --out "$out"
}
# -----------------------------------------------------------------------------------

started=$(date +%s)
IFS=, read -r -a naming_list <<<"$namings"
IFS=, read -r -a policy_list <<<"$policies"
total=$((${#naming_list[@]} * ${#policy_list[@]}))
step=0
scores=()
for naming in "${naming_list[@]}"; do
  spec=$(fabric "$naming")
  for policy in "${policy_list[@]}"; do
    step=$((step + 1))
    schedule=$results/cluster-$naming-$policy.json
    if [ "$score_only" = 0 ]; then
      say "[$step/$total] $policy, $naming names, $spec ($(($(date +%s) - started)) s so far)"
      TOPO_SLURM_DIR=/tmp/topo-slurm-benchmark-$$ bash "$root/tests/slurm/replay.sh" \
        --trace "$trace" --synthetic "$spec" --policy "$policy" --out "$schedule" \
        --jobs "$jobs" --first-job "$first" --time-scale "$scale" --max-duration "$max_duration" \
        --build "$build" || say "  $policy/$naming: some jobs did not run (see \"rejected\" in $schedule)"
    fi
    [ -s "$schedule" ] || die "no schedule $schedule"
    out=$results/score-$naming-$policy.json
    if score "$schedule" "$spec" "$out"; then
      scores+=("$out")
    else
      say "  topoctl score failed on $schedule"
    fi
  done
done
if [ ${#scores[@]} -gt 0 ]; then
  report "$results/report" "${scores[@]}" || die "topoctl report failed"
  say "report in $results/report"
fi
say "done in $(($(date +%s) - started)) s; schedules and scores in $results"
