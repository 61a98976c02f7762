#!/usr/bin/env bash
# A real training client on a real one-machine cluster (tests/slurm/cluster.sh):
# a 12-node topo-aware job on the 4-leaf fabric whose host names interleave
# over the leaves (gpu001, gpu005, ... on leaf 1), so that the ring crosses
# leaves and differs from name order, starts 2 PyTorch processes a node with
# srun (Debian's python3-torch under /usr/bin/python3, gloo over TCP), and
# checks from inside PyTorch (tests/slurm/allreduce.py) that
#   - all_reduce over the 24 ranks gives the right sum,
#   - every global rank sits on the host the ring puts it on (rank r on ring
#     host r / 2),
# with the ranks taken from Slurm's own SLURM_PROCID on 26.05 (the ring is
# Slurm's task order there, topology/topo_aware's get_rank) and from the
# SPANK variables (TOPO_RANK, TOPO_LOCAL_RANK) on 22.05 to 25.11, where
# SLURM_PROCID follows Slurm's node order.  On 26.05 it also checks that the
# SPANK variables agree with Slurm's (TOPO_RANK = SLURM_PROCID) and that a
# plain job's task order is Slurm's own (node order).
#
# Usage: tests/slurm/pytorch.sh --topoctl PATH [--plugin-dir DIR] [--spank SO]
#                               [--slurm-prefix DIR]
# Root only.  Uses $TOPO_SLURM_DIR and $TOPO_SLURM_PORT like cluster.sh.
# Ends with "N passed, N failed"; exits non-zero if anything failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
suite_args "$@"
suite_spank
python=/usr/bin/python3
"$python" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
  { echo "$python cannot import torch with gloo (Debian package python3-torch)" >&2; exit 2; }

release=$(slurmctld -V | awk '{ split($2, v, "."); printf "%d%02d\n", v[1], v[2] }')
if [ "$release" -ge 2605 ]; then ranks=slurm; else ranks=topo; fi
suite_begin ", PyTorch ranks from $([ $ranks = slurm ] && echo SLURM_PROCID || echo the SPANK variables)"

fabric="leafspine:leaves=4,hosts_per_leaf=8,spines=2,naming=interleaved"
start_topo_cluster "$fabric" '' --spank "$spank"
check "slurmctld's engine loaded the snapshot" wait_until 30 grep -q "topo-aware: fabric snapshot 1 of " "$log"

# gloo's rendezvous: rank 0's host is this machine; a port beside the cluster's.
master_port=$((${TOPO_SLURM_PORT:-16817} + 90))
job_state_is() { [ "$(job_field "$1" JobState)" = "$2" ]; }
out_of() { echo "$dir/out-$1.txt"; }

# The job, as a Slurm shop writes it: srun starts the processes.
job=$(sbatch --parsable -o "$dir/out-%j.txt" --network=topo-aware --exclusive -N12 --ntasks-per-node=2 \
  --time=10 --wrap "
echo RING=\$TOPO_RING_ORDER
export MASTER_ADDR=127.0.0.1 MASTER_PORT=$master_port
srun $python $here/allreduce.py --ranks $ranks
srun bash -c 'echo TASK \$SLURM_PROCID \$SLURM_NODEID \$SLURMD_NODENAME \$TOPO_RANK \$TOPO_LOCAL_RANK \$SLURM_LOCALID'
echo DONE")
check "the 12-node job runs to completion" wait_until 300 job_state_is "$job" COMPLETED
out=$(out_of "$job")
ring=$(sed -n 's/^RING=//p' "$out")
echo "  ring: $ring"

leaf_of() { sed 's/[^0-9]//g' | awk '{ print (($1 - 1) % 4) }'; }
ring_crosses_leaves() {
  [ "$(tr , '\n' <<<"$ring" | leaf_of | sort -u | wc -l)" -ge 2 ] || { echo "  ring on one leaf" >&2; return 1; }
  [ "$ring" != "$(tr , '\n' <<<"$ring" | sort | paste -sd, -)" ] || { echo "  ring is name order" >&2; return 1; }
}
ring_has_12() { [ "$(tr , '\n' <<<"$ring" | sort -u | wc -l)" = 12 ]; }
check "the ring has the job's 12 hosts" ring_has_12
check "  ... over two leaves or more, not in name order" ring_crosses_leaves

sums_right() {
  local n bad
  n=$(grep -c '^SUM ' "$out")
  bad=$(awk '/^SUM / && $3 != $4' "$out" | head -n 3)
  [ "$n" = 24 ] && [ -z "$bad" ] || { echo "  $n SUM lines; wrong: $bad" >&2; return 1; }
}
check "all_reduce over 24 ranks gives 300 on every rank" sums_right
check "every global rank ($ranks ranks) sits on the host the ring puts it on" grep -qx "RING ok" "$out"

# TASK procid nodeid host topo_rank topo_local localid
tasks_follow_ring() { # column: 2 (SLURM_PROCID) or 5 (TOPO_RANK)
  local bad
  bad=$(awk -v col="$1" -v ring="$ring" 'BEGIN { n = split(ring, h, ",") }
    /^TASK / { r = $col; if (h[int(r / 2) + 1] != $4) print $4 " has rank " r }' "$out" | head -n 3)
  [ "$(grep -c '^TASK ' "$out")" = 24 ] && [ -z "$bad" ] || { echo "  $bad" >&2; return 1; }
}
check "srun's tasks: TOPO_RANK follows the ring" tasks_follow_ring 5
if [ "$ranks" = slurm ]; then
  check "srun's tasks: SLURM_PROCID follows the ring (Slurm's own ranks)" tasks_follow_ring 2
  agree() { [ -z "$(awk '/^TASK / && ($2 != $5 || $6 != $7)' "$out")" ]; }
  check "  ... and the SPANK variables agree (TOPO_RANK = SLURM_PROCID, TOPO_LOCAL_RANK = SLURM_LOCALID)" agree
  # SLURM_NODEID is the node's place in the job's node list, which Slurm
  # keeps in name order: printed, not required.
  echo "  SLURM_NODEID by ring position: $(awk '/^TASK / && $7 == 0 { print $2 / 2, $3 }' "$out" | sort -n | cut -d' ' -f2 | paste -sd' ' -)"

  # A plain job keeps Slurm's own task order (no ring, no ranks of ours).
  plain=$(sbatch --parsable -o "$dir/out-%j.txt" --exclusive -N12 --ntasks-per-node=2 --time=5 \
    --wrap "srun bash -c 'echo TASK \$SLURM_PROCID \$SLURMD_NODENAME'")
  check "a plain 12-node job runs" wait_until 120 job_state_is "$plain" COMPLETED
  plain_order() {
    local got want
    got=$(awk '/^TASK / { print $2, $3 }' "$(out_of "$plain")" | sort -n | awk 'NR % 2 { print $2 }' | paste -sd, -)
    want=$(scontrol show hostnames "$(job_field "$plain" NodeList)" | paste -sd, -)
    [ "$got" = "$want" ] || { echo "  plain task order $got, node list $want" >&2; return 1; }
  }
  check "  ... with its tasks in Slurm's node order" plain_order
fi
