#!/usr/bin/env bash
# NVLink domains on a real one-machine Slurm cluster (tests/slurm/cluster.sh):
# 32 nodes gpu[001-032] with fake GPUs, a site on topology/block whose
# topology.conf has six blocks of four (b1 = gpu[001-004] ... b6 =
# gpu[021-024]; gpu[025-032] in none), under topology/topo_aware.  The
# snapshot's domains come from that same file (`topoctl discover
# --slurm-blocks`) over an interleaved 4-leaf fabric (host i on leaf
# (i-1) mod 4), so every domain spans four leaves and a leaf search alone
# would split them.
#   1. plain jobs get topology/block (forwarded): its blocks in scontrol,
#      a 4-node job in one whole block, Slurm's --segment honoured
#   2. --network=topo-aware,segment=N and Slurm's own --segment: every N
#      consecutive ring hosts in one block; a job whose segments do not fit
#      the free blocks waits with the reason in its AdminComment
#   3. a topo-aware job without GPUs goes to the nodes outside the blocks
#   4. an 8-node job on two free blocks: its ring, and its tasks' ranks
#      (SLURM_PROCID from 26.05, TOPO_RANK before), finish one block first
#   5. (25.11+) `topoctl export --yaml` of that snapshot, read by Slurm's
#      own parser: slurmctld starts on it with the blocks and the tree, and
#      a plain 4-node job takes one whole block
#
# Usage: tests/slurm/domains.sh --topoctl PATH [--plugin-dir DIR] [--spank SO]
#                               [--slurm-prefix DIR]
# Root only.  Uses $TOPO_SLURM_DIR and $TOPO_SLURM_PORT like cluster.sh.
# Ends with "N passed, N failed"; exits non-zero if anything failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
suite_args "$@"
suite_spank
release=$(slurmctld -V | awk '{ split($2, v, "."); printf "%d%02d\n", v[1], v[2] }')
[ "$release" -ge 2411 ] || { echo "Slurm $release: --segment and topology/block forwarding need 24.11+" >&2; exit 2; }
suite_begin ", NVLink domains from topology/block's blocks"

blocks=$work/topology.conf
{
  echo "# Six blocks of four: the NVLink domains of this test."
  for b in 1 2 3 4 5 6; do
    printf 'BlockName=b%d Nodes=gpu[%03d-%03d]\n' "$b" $((b * 4 - 3)) $((b * 4))
  done
} >"$blocks"
start_topo_cluster "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,naming=interleaved" '' \
  --topology "$blocks" --spank "$spank"
# The domains from the site's blocks, into a second snapshot the engine
# picks up (the first is the fabric alone).
"$topoctl" discover --synthetic "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,naming=interleaved" \
  --slurm-blocks "$blocks" --db "$db" >/dev/null
check "slurmctld's engine loaded the snapshot with the domains" wait_until 30 grep -q "fabric snapshot 2 of " "$log"

# The block (1-6) of gpuNNN, 0 outside every block.
block_of() { local n=$((10#${1#gpu})); [ "$n" -le 24 ] && echo $(((n + 3) / 4)) || echo 0; }
blocks_of() { local h; for h in $(tr , ' ' <<<"$1"); do block_of "$h"; done | paste -sd, -; }
nodes_of() { hosts_of "$(job_field "$1" NodeList)"; }
# A one-node job pinned to each of the nodes named, to shape what is free.
hold() { local n; for n in $(scontrol show hostnames "$1"); do submit -N1 -w "$n" --exclusive --wrap 'sleep 600' >/dev/null; done; }
# Every N consecutive hosts (of a ring, or of a node list) in one block.
segments_in_blocks() { # hosts N
  local b
  b=$(blocks_of "$1")
  awk -v n="$2" -F, '{ for (i = 1; i <= NF; i++) { if ($i == 0) exit 1; if ((i - 1) % n && $i != $(i - 1)) exit 1 } }' <<<"$b" ||
    { echo "  $1: blocks $b, not segments of $2" >&2; return 1; }
}
# The running job's nodes, in node order, in whole segments of N.
nodes_in_blocks() { wait_state "$1" RUNNING 30 && segments_in_blocks "$(nodes_of "$1")" "$2"; }
held_running() { wait_until 60 sh -c '[ -z "$(squeue -h -t PD -o %A)" ]'; }

# --- 1. plain jobs get topology/block ------------------------------------------
topology_has_blocks() { scontrol show topology 2>/dev/null | grep -q 'BlockName=b6'; }
check "scontrol show topology shows the site's blocks" topology_has_blocks
hold gpu001
plain=$(submit -N4 --exclusive --wrap 'sleep 600')
check "a plain 4-node job takes one whole block (block's choice, not gpu[002-005])" nodes_in_blocks "$plain" 4
plain_seg=$(submit -N8 --segment=4 --exclusive --wrap 'sleep 600')
check "a plain job with Slurm's --segment=4 gets whole blocks" nodes_in_blocks "$plain_seg" 4
check "all jobs cancelled" cancel_all

# --- 2. segments ---------------------------------------------------------------
# Free: b1 three (002-004), b2 two (007-008), b3 two (011-012), b6 four
# (021-024) and the eight outside; b4 and b5 busy.
hold "gpu[001,005-006,009-010,013-020]"
check "the holding jobs run" held_running
ring_job() { # sbatch-args...: a topo-aware job that prints its ring and its tasks' ranks
  submit --network="${net:-topo-aware}" --exclusive "$@" --wrap '
echo "RING=$TOPO_RING_ORDER"
srun bash -c "echo TASK \$SLURM_PROCID \$TOPO_RANK \$SLURMD_NODENAME"
echo DONE
sleep 600'
}
ring_of() { wait_until 60 grep -qsx DONE "$dir/out-$1.txt" && sed -n 's/^RING=//p' "$dir/out-$1.txt"; }
ring_in_segments() { # job N
  local ring
  wait_state "$1" RUNNING 30 || return 1
  ring=$(ring_of "$1") || { echo "  job $1 printed no ring" >&2; return 1; }
  echo "  job $1: ring $ring"
  segments_in_blocks "$ring" "$2"
}
# Six hosts in segments of 3 from Slurm's --segment: b1 and b6 hold one
# each; without segments the job would take b6 whole and two of b2 or b3.
j3=$(ring_job -N6 --segment=3 --gres=gpu:4)
check "Slurm's --segment=3: every 3 consecutive ring hosts in one block" ring_in_segments "$j3" 3
# Now free: b2 two, b3 two, b6 one, and the outside: 13 hosts, but no
# block with four free.  Without segments it would run.
j4=$(net=topo-aware,segment=4 ring_job -N8 --gres=gpu:4)
waits_for_segments() {
  local note
  wait_until 30 sh -c "scontrol show job -o $1 | grep -q 'AdminComment=topo-aware: waiting'" || true
  note=$(admin_comment "$1")
  [ "$(job_field "$1" JobState)" = PENDING ] && grep -q '^topo-aware: waiting (segments): .*segment=4' <<<"$note" ||
    { echo "  job $1 is $(job_field "$1" JobState): '$note'" >&2; return 1; }
}
check "segment=4 with no free block of four: the job waits, saying why" waits_for_segments "$j4"
scancel "$j4"

# --- 3. a job without GPUs -------------------------------------------------------
cpu=$(submit --network=topo-aware -N2 --wrap 'sleep 600')
outside_blocks() {
  local b
  wait_state "$1" RUNNING 30 || return 1
  b=$(blocks_of "$(nodes_of "$1")")
  [ "$b" = 0,0 ] || { echo "  job $1 on $(nodes_of "$1"): blocks $b" >&2; return 1; }
}
check "a topo-aware job without GPUs goes outside the blocks" outside_blocks "$cpu"
check "all jobs cancelled" cancel_all

# --- 4. the ring inside a block first --------------------------------------------
hold "gpu[001,005,009,013]"
check "the holding jobs run" held_running
j8=$(ring_job -N8 --gres=gpu:4)
check "an 8-node job on the two free blocks: each half of its ring in one block" ring_in_segments "$j8" 4
if [ "$release" -ge 2605 ]; then rank_column=2 rank_name=SLURM_PROCID; else rank_column=3 rank_name=TOPO_RANK; fi
ranks_follow_ring() { # job
  local ring by_rank
  ring=$(ring_of "$1") || return 1
  by_rank=$(awk -v c="$rank_column" '/^TASK / { print $c, $4 }' "$dir/out-$1.txt" | sort -n | cut -d' ' -f2 | paste -sd, -)
  [ "$by_rank" = "$ring" ] || { echo "  hosts by $rank_name: $by_rank; ring $ring" >&2; return 1; }
}
check "its tasks by $rank_name follow the ring, one block then the other" ranks_follow_ring "$j8"
check "all jobs cancelled" cancel_all

# --- 5. the exported topology.yaml, read by Slurm ----------------------------------
# Slurm 25.05+ reads topology.yaml through serializer/json (built in by
# scripts/slurm-build.sh); the export's default topology is the blocks.
if [ "$release" -ge 2511 ]; then
  "$topoctl" export --yaml --db "$db" -o "$work/topology.yaml"
  bash "$cluster" stop >/dev/null
  rm -f "$dir/etc/topology.conf"
  bash "$cluster" start --select topo --nodes 'gpu[001-032]' "${plugin_args[@]}" \
    --topo-conf "$work/topo_aware.conf" --topology-yaml "$work/topology.yaml" --spank "$spank"
  yaml_topology() { # what scontrol shows: every block of the export, and the tree
    local shown
    shown=$(scontrol show topology 2>&1)
    for b in 1 2 3 4 5 6; do grep -q "BlockName=b$b .*Nodes=gpu\[0*$((b * 4 - 3))-0*$((b * 4))\]" <<<"$shown" || {
      printf '  block b%d missing from:\n%s\n' "$b" "$shown" >&2
      return 1
    }; done
  }
  check "slurmctld reads the exported topology.yaml: its six blocks" yaml_topology
  check "  ... and the fabric's tree as a second topology" \
    sh -c "scontrol show topology fabric 2>&1 | grep -q '^SwitchName=leaf01 '"
  hold gpu001
  plain=$(submit -N4 --exclusive --wrap 'sleep 600')
  check "  ... where a plain 4-node job takes one whole block" nodes_in_blocks "$plain" 4
  check "all jobs cancelled" cancel_all
fi

[ "$failed" = 0 ]
