#!/usr/bin/env bash
# Proves a refactor changed no behaviour: runs two topoctl builds over the
# same fixed inputs (discover, show, lint, path, export, place, ring,
# estimate, simulate under adaptive and static routing and with deferral)
# and compares every output byte for byte, once paths and timing fields are
# masked.
#
# Usage: scripts/compare-builds.sh OLD_TOPOCTL NEW_TOPOCTL [WORK_DIR]
# Exits 0 when every output matches, 1 naming each one that differs.
set -uo pipefail

case "${1:-}" in -h|--help|"") sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
old=$(realpath "$1"); new=$(realpath "$2")
work=${3:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)

# Every command the comparison runs, one a line: NAME ARGS...
commands() {
  local syn=leafspine:leaves=8,hosts_per_leaf=8,spines=4,oversub=2
  cat <<LIST
show show --json
show_tree show --tree
lint lint --json
lint_static lint --json --routing static:ftree
path path --from gpu001 --to gpu017 --json
path_static path --from gpu001 --to gpu017 --routing static:minhop --json
export_slurm export --slurm-topology
export_ibn export --ibnetdiscover
place place --gpus 64 --profile allreduce --json
place_tree place --gpus 64 --policy tree --json
place_static place --gpus 48 --profile alltoall --routing static:ftree --json
ring ring --hosts gpu[001-004,017-020] --json
estimate estimate --params 175e9 --dtype bf16 --gpus 64 --step-time 2s --json
sim_gen simulate --generate jobs=300,load=0.9,seed=1 --synthetic $syn --policies linear,tree,topo-aware --json
sim_static simulate --generate jobs=200,load=0.9,seed=2 --synthetic $syn --policies tree,topo-aware --routing static:ftree --json
sim_defer simulate --generate jobs=200,load=0.9,seed=3 --synthetic $syn --policies topo-aware --defer-above 1.10 --defer-share 1 --json
LIST
}

run_all() { # topoctl out-dir
  local t=$1 out=$2 name args
  rm -rf "$out"; mkdir -p "$out"
  "$t" discover --db "$out/f.db" --ibnetdiscover "$root/examples/leafspine-2to1.ibnetdiscover" \
    >"$out/discover.out" 2>"$out/discover.err"
  echo "rc=$?" >>"$out/discover.out"
  while read -r name args; do
    # shellcheck disable=SC2086  # the arguments are words
    TOPO_DB=$out/f.db "$t" $args >"$out/$name.out" 2>"$out/$name.err"
    echo "rc=$?" >>"$out/$name.out"
  done < <(commands)
}

# Paths, the snapshot's time and wall-clock figures are not behaviour.
mask() {
  sed -E "s#$work/(old|new)#OUT#g; s#$root#ROOT#g; s#[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z#TIME#g" "$1" |
    sed -E '/"(judge_s|replay_s|placement_(mean|p50|p99|max)_us|[a-z_]*_cpu_s|wall_s)":/d'
}

run_all "$old" "$work/old"
run_all "$new" "$work/new"
status=0 count=0
for f in "$work"/new/*.out "$work"/new/*.err; do
  b=$(basename "$f"); count=$((count + 1))
  if ! cmp -s <(mask "$work/old/$b") <(mask "$f"); then
    echo "compare-builds: $b differs"; diff <(mask "$work/old/$b") <(mask "$f") | head -5; status=1
  fi
done
((status)) || echo "compare-builds: all $count outputs identical ($work)"
exit $status
