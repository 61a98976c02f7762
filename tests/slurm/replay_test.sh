#!/usr/bin/env bash
# The short trace replay on the real cluster (ctest slurm_replay): the same
# slice of a trace, once with select/cons_tres + topology/tree and once with
# select/topo_cons_tres, on a 2:1 leaf/spine whose host names interleave
# across the leaves (tests/slurm/replay.sh does the runs).  Checks:
#   - every job of both runs ran to completion
#   - every allocation has the GPUs the job asked for (g on one host, or 8 on
#     each of ceil(g/8) hosts)
#   - every topo-aware ring order is a permutation of the job's hosts
#   - topo-aware's rings cross between leaves (edges over a spine, from
#     `topoctl score`) strictly less often in total than tree's name order
#     (on this fabric and slice: about 25 against 95)
#
# Usage: tests/slurm/replay_test.sh --build DIR [--trace CSV] [--first-job K]
#                                   [--jobs N] [--time-scale X] [--max-duration S] [--load X]
# Root only.  Uses $TOPO_SLURM_DIR and $TOPO_SLURM_PORT like cluster.sh.
# Ends with "N passed, N failed"; exits non-zero if anything failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
build=""
trace=$here/../fixtures/traces/itp/cluster03.csv
# Rows 0-23 of ITP cluster03: fourteen 64-GPU jobs (8 hosts) and nine of
# 16-32 GPUs among 8-GPU ones, arrivals 10x denser than the trace's (about
# 50 s a run).  Leaves of 4 hosts, as the trace's largest jobs (64 GPUs)
# would meet 64-host leaves at 512 GPUs: every 64-GPU job spans leaves.
first=0 jobs=24 scale=4000 max_duration=20 load=10
spec="leafspine:leaves=8,hosts_per_leaf=4,spines=2,oversub=2,naming=interleaved"
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; }
  case $1 in
    --build) build=$2 ;;
    --trace) trace=$2 ;;
    --first-job) first=$2 ;;
    --jobs) jobs=$2 ;;
    --time-scale) scale=$2 ;;
    --max-duration) max_duration=$2 ;;
    --load) load=$2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift 2
done
[ -n "$build" ] || { echo "--build DIR is required" >&2; exit 2; }
[ -r "$trace" ] || { echo "no trace $trace (--trace)" >&2; exit 2; }
topoctl=$build/tools/topoctl
started=$(date +%s)
work=$(mktemp -d /tmp/replay-test.XXXXXX)
base_dir=${TOPO_SLURM_DIR:-/tmp/topo-slurm-replay-test-$$}

finish() {
  rm -rf "$work"
  echo "$passed passed, $failed failed ($(($(date +%s) - started)) s)"
}
trap finish EXIT

for policy in tree topo-aware; do
  echo "# $policy ($(($(date +%s) - started)) s)"
  TOPO_SLURM_DIR=$base_dir-$policy bash "$here/replay.sh" --trace "$trace" --synthetic "$spec" \
    --policy "$policy" --out "$work/$policy.json" --jobs "$jobs" --first-job "$first" \
    --time-scale "$scale" --max-duration "$max_duration" --load "$load" --build "$build" || true
done

# schedule: every job of the slice ran to completion.
all_ran() {
  python3 - "$1" "$jobs" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rejected"]:
    print(f"  not run: {r}: {d.get('rejected_why', {}).get(r, '')}", file=sys.stderr)
ok = not d["rejected"] and len(d["jobs"]) == int(sys.argv[2])
ok = ok and all(j["start_s"] is not None and j["end_s"] is not None and j["submit_s"] <= j["start_s"] <= j["end_s"] for j in d["jobs"])
if len(d["jobs"]) != int(sys.argv[2]):
    print(f"  {len(d['jobs'])} jobs ran, {sys.argv[2]} were submitted", file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}
# schedule: g <= 8 GPUs on one host, else 8 on each of ceil(g/8) distinct hosts.
gpus_as_asked() {
  python3 - "$1" <<'EOF'
import json, math, sys
bad = 0
for j in json.load(open(sys.argv[1]))["jobs"]:
    g = j["gpus"]
    want = [g] if g <= 8 else [8] * math.ceil(g / 8)
    if j["host_gpus"] != want or len(set(j["ring"])) != len(j["ring"]):
        print(f"  job {j['id']}: {g} GPUs asked, got {j['host_gpus']} on {j['ring']}", file=sys.stderr)
        bad += 1
sys.exit(1 if bad else 0)
EOF
}
# A ring host outside the allocation has 0 GPUs in host_gpus (replay.sh reads
# them from Slurm's per-node record): with distinct hosts and the asked count
# of hosts, the ring is a permutation of the allocation.
ring_is_permutation() {
  python3 - "$1" <<'EOF'
import json, sys
bad = [j for j in json.load(open(sys.argv[1]))["jobs"]
       if len(set(j["ring"])) != len(j["ring"]) or 0 in j["host_gpus"] or not j["ring"]]
for j in bad:
    print(f"  job {j['id']}: ring {j['ring']} with GPUs {j['host_gpus']}", file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}
# Both totals from topoctl score, which judges the rings the schedules hold.
fewer_crossings() {
  local tree topo
  "$topoctl" score --synthetic "$spec" --schedule "$work/tree.json" --schedule "$work/topo-aware.json" \
      --json >"$work/score.json" 2>"$work/score.err" || { cat "$work/score.err" >&2; return 1; }
  read -r tree topo < <(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["policies"]; print(p["tree"]["spine_ring_edges"], p["topo-aware"]["spine_ring_edges"])' "$work/score.json")
  echo "  ring edges over a spine (topoctl score): tree $tree, topo-aware $topo"
  [ "$topo" -lt "$tree" ]
}
multi_host_jobs() { # schedule min: at least min jobs span several hosts
  [ "$(python3 -c 'import json,sys; print(sum(len(j["ring"]) > 1 for j in json.load(open(sys.argv[1]))["jobs"]))' "$1")" -ge "$2" ]
}

for policy in tree topo-aware; do
  f=$work/$policy.json
  if [ ! -s "$f" ]; then
    check "$policy: the replay wrote a schedule" false
    continue
  fi
  check "$policy: every one of the $jobs jobs ran to completion" all_ran "$f"
  check "$policy: every allocation has the GPUs asked for" gpus_as_asked "$f"
  check "$policy: several jobs span hosts (the comparison means something)" multi_host_jobs "$f" 3
done
if [ -s "$work/topo-aware.json" ]; then
  check "topo-aware: every ring order is a permutation of the job's hosts" ring_is_permutation "$work/topo-aware.json"
fi
if [ -s "$work/tree.json" ] && [ -s "$work/topo-aware.json" ]; then
  check "interleaved names: topo-aware's rings cross leaves less often than tree's name order" fewer_crossings
fi
[ "$failed" = 0 ]
