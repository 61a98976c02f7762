#!/usr/bin/env bash
# Our reimplementation of Slurm 22.05's topology/tree selection
# (placement/slurm_policy.h place_tree) held against a real slurmctld: for each
# fabric, a cluster (tests/slurm/cluster.sh, select/cons_tres, the
# topology.conf `topoctl export --slurm-topology` writes), hosts and GPUs
# taken by long sleep jobs pinned with --nodelist/--gres, then probe jobs
# one at a time (sbatch --nodes=N --gres=gpu:G) whose NodeList is compared
# with `topoctl place --policy tree --busy FILE` on the same state. A probe
# Slurm leaves pending for Resources matches an infeasible placement.
# --policy linear (or both, the default) does the same for place_linear on
# clusters started without a topology.conf; --policy block for place_block
# (Slurm 26.05's topology/block, run with --slurm-prefix) on a cluster with
# the BlockName= lines `topoctl export --slurm block` writes.
#
# The nodes are given to slurm.conf in the fabric's order (leaf by leaf),
# not by name: Slurm sorts its node table by name, and so must we.
#
# Usage: tests/slurm/tree_check.sh --topoctl PATH [--only FABRIC]
#                                  [--policy tree|linear|both|block]
#                                  [--slurm-prefix DIR]
# Root only (exits 77, "skipped", otherwise or without Slurm installed).
# Uses $TOPO_SLURM_DIR and $TOPO_SLURM_PORT like cluster.sh.
# Prints a table of probe / slurm / ours; exits non-zero on any mismatch.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
cluster=$here/cluster.sh
topoctl=""
only=""
policies="tree linear"
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; }
  case $1 in
    --topoctl) topoctl=$2 ;;
    --only) only=$2 ;;
    --policy)
      case $2 in tree | linear | block) policies=$2 ;; both) policies="tree linear" ;; *) echo "--policy: tree, linear, both or block" >&2; exit 2 ;; esac ;;
    --slurm-prefix) export TOPO_SLURM_PREFIX=$2 PATH=$2/bin:$2/sbin:$PATH ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift 2
done
[ -x "$topoctl" ] || { echo "--topoctl: no executable '$topoctl'" >&2; exit 2; }
if [ "$(id -u)" != 0 ]; then echo "skipped: needs root"; exit 77; fi
for p in slurmctld slurmd sbatch munged jq; do
  command -v "$p" >/dev/null || [ -x "/usr/sbin/$p" ] || { echo "skipped: no $p"; exit 77; }
done

export TOPO_SLURM_DIR=${TOPO_SLURM_DIR:-/tmp/topo-slurm-tree-check}
export SLURM_CONF=$TOPO_SLURM_DIR/etc/slurm.conf
work=$(mktemp -d)
started=$(date +%s)
matched=0
mismatched=0
table=$work/table
finish() {
  bash "$cluster" stop >/dev/null 2>&1 || true
  echo
  [ -f "$table" ] && column -t -s $'\t' "$table"
  echo "$matched probes match, $mismatched differ ($(($(date +%s) - started)) s)"
  rm -rf "$work"
}
trap finish EXIT
printf 'policy\tfabric\tprobe\tslurm\tours\tresult\n' >"$table"

no_jobs() { [ -z "$(squeue -h -o %A)" ]; }
# Nothing completing: a node still cleaning up after a job is left out of
# scheduling, which would change the state the probe sees.
settled() { no_jobs_of "$1" && [ -z "$(sinfo -h -N -t completing -o %N)" ]; }
no_jobs_of() { [ -z "$(squeue -h -n "$1" -o %A)" ]; }
hosts_of() { [ -z "$1" ] && return 0; scontrol show hostnames "$1" | paste -sd, -; }

# Takes what the busy file names: one pinned sleep job per line.
occupy() { # busy-file
  local host gpus id ids=()
  while read -r host gpus; do
    [ -z "$host" ] || [ "${host:0:1}" = "#" ] && continue
    id=$(sbatch --parsable -J busy -o /dev/null --nodes=1 --nodelist="$host" --gres="gpu:${gpus:-8}" --wrap 'sleep 100000')
    ids+=("$id")
  done <"$1"
  for id in "${ids[@]}"; do
    wait_until 60 sh -c "[ \"\$(scontrol show job -o $id | tr ' ' '\n' | sed -n 's/^JobState=//p')\" = RUNNING ]" ||
      { echo "busy job $id did not start: $(job_field "$id" Reason)" >&2; return 1; }
  done
}

# What Slurm does with one probe: its hosts, or "pending" when it waits
# for resources (or, under topology/block, for a block that holds it).
slurm_probe() { # nodes gpus [segment]
  local id state reason
  id=$(sbatch --parsable -J probe -o /dev/null --nodes="$1" --gres="gpu:$2" ${3:+--segment="$3"} --wrap 'sleep 100000')
  local deadline=$(($(date +%s) + 30))
  while :; do
    state=$(job_field "$id" JobState)
    reason=$(job_field "$id" Reason)
    if [ "$state" = RUNNING ]; then
      hosts_of "$(job_field "$id" NodeList)"
      break
    fi
    if [ "$state" = PENDING ] && [[ $reason == Resources || $reason == No_suitable_topology_unit_found* ]]; then
      echo pending
      break
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "unknown($state/$reason)"
      break
    fi
    sleep 0.2
  done
  scancel "$id"
  wait_until 60 settled probe || echo "probe $id did not end" >&2
}

# topoctl place asks for whole hosts (--gpus a multiple of the host's 8) or
# for one host with --gpus of them: --nodes=1 --gres=gpu:G, or N x 8.
ours_probe() { # policy spec busy-file nodes gpus [segment]
  local policy=$1 out
  shift
  out=$("$topoctl" place --policy "$policy" --synthetic "$1" --busy "$2" --gpus $(($3 * $4)) --gpus-per-host 8 \
    ${5:+--segment "$5"} --json) || true
  if [ "$(jq -r .feasible <<<"$out")" = true ]; then
    jq -r '.hosts | join(",")' <<<"$out"
  else
    echo pending
  fi
}

# One fabric: start the cluster, take the busy hosts, run the probes.
check_fabric() { # policy name spec busy-file probes...
  local policy=$1 name=$2 spec=$3 busy=$4
  shift 4
  [ -z "$only" ] || [ "$only" = "$name" ] || return 0
  local topo=$work/$name.topology.conf
  "$topoctl" export --slurm-topology --synthetic "$spec" -o "$topo"
  # The fabric's order, leaf by leaf, as the Nodes= lines list it.
  local nodes
  nodes=$(sed -n 's/^SwitchName=[^ ]* Nodes=//p' "$topo" | paste -sd, -)
  echo "== $policy, $name: $spec; slurm.conf lists $nodes" >&2
  local topology_args=(--topology "$topo")
  case $policy in
    linear) topology_args=() ;;
    block)
      # Every host once, block by block (a rail-optimized fabric lists a
      # host under a leaf of each rail).
      "$topoctl" export --slurm block --synthetic "$spec" -o "$topo"
      nodes=$(sed -n 's/^BlockName=[^ ]* Nodes=//p' "$topo" | paste -sd, -)
      export TOPO_TOPOLOGY_PLUGIN=topology/block ;;
  esac
  bash "$cluster" start --nodes "$nodes" --select cons_tres "${topology_args[@]}" >/dev/null
  occupy "$busy"
  echo "   busy: $(grep -v '^#' "$busy" | paste -sd' ' -)" >&2
  local probe n g seg slurm ours result
  for probe in "$@"; do
    seg=""
    case $probe in */*) seg=${probe#*/} ;; esac
    n=${probe%x*}
    g=${probe#*x}
    g=${g%/*}
    slurm=$(slurm_probe "$n" "$g" "$seg")
    ours=$(ours_probe "$policy" "$spec" "$busy" "$n" "$g" "$seg")
    if [ "$slurm" = "$ours" ]; then
      result=match
      matched=$((matched + 1))
    else
      result=DIFFER
      mismatched=$((mismatched + 1))
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$policy" "$name" "--nodes=$n --gres=gpu:$g${seg:+ --segment=$seg}" "$(compact "$slurm")" "$(compact "$ours")" "$result" \
      | tee -a "$table" >&2
  done
  bash "$cluster" stop >/dev/null
}

# A host list written short for the table.
compact() {
  case $1 in pending | unknown*) echo "$1" ;; *) scontrol show hostlistsorted "$1" 2>/dev/null || echo "$1" ;; esac
}

# Probes N x G[/S]: G < 8 only for one host (what topoctl place can ask);
# S a --segment.
probes=(1x1 1x2 1x4 1x8 2x8 3x8 5x8 8x8 12x8 16x8 19x8 20x8)

# leaf01 = gpu001-008 ... leaf04 = gpu025-032 (contiguous naming): hosts
# usable for --gres=gpu:8 per leaf 4, 0, 7, 8; for gpu:1 5, 1, 7, 8.
cat >"$work/busy-a" <<'EOF'
gpu[001-003] 8
gpu004 4
gpu[009-015] 8
gpu016 6
gpu017 8
EOF
cat >"$work/busy-clos" <<'EOF'
gpu[001-002] 8
gpu[009-014] 8
gpu[017-021] 8
EOF

run_all() {
  local policy
  if [ "$policies" = block ]; then
    # Four NVLink domains (blocks) of 8: gpu001-008 ... gpu025-032, usable
    # for --gres=gpu:8 per block 4, 0, 7, 8 under busy-a.
    check_fabric block nvl4x8 "nvl72:racks=4,trays=8,gpus=8,hosts_per_leaf=8" "$work/busy-a.hosts" \
      1x8 2x8 3x8 4x8 5x8 7x8 8x8 9x8 12x8 15x8 16x8 19x8 8x8/4 6x8/3 12x8/4 16x8/8 10x8/5
    return
  fi
  for policy in $policies; do
    check_fabric "$policy" contiguous "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2" "$work/busy-a.hosts" \
      "${probes[@]}"
    check_fabric "$policy" interleaved "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,naming=interleaved" \
      "$work/busy-a.hosts" "${probes[@]}"
    check_fabric "$policy" clos3 "clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=8" "$work/busy-clos.hosts" \
      1x1 2x8 4x8 9x8 10x8 12x8 19x8 1x4
  done
}

# One host per line, for sbatch and for topoctl alike (no scontrol: no
# cluster runs yet).
for f in busy-a busy-clos; do
  while read -r spec gpus; do
    if [[ $spec =~ ^([a-z]+)\[([0-9]+)-([0-9]+)\]$ ]]; then
      for ((i = 10#${BASH_REMATCH[2]}; i <= 10#${BASH_REMATCH[3]}; i++)); do
        printf '%s%0*d %s\n' "${BASH_REMATCH[1]}" "${#BASH_REMATCH[2]}" "$i" "$gpus"
      done
    else
      echo "$spec $gpus"
    fi
  done <"$work/$f" >"$work/$f.hosts"
done
run_all
[ "$mismatched" = 0 ]
