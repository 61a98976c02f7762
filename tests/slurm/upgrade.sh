#!/usr/bin/env bash
# An upgrade of a real one-machine cluster (tests/slurm/cluster.sh) from one
# Slurm release to a later one with topo-aware jobs in flight, as a site
# upgrades: 24.11 runs topology/topo_aware on the synthetic 4-leaf fabric,
# with a topo-aware job running (placed, recorded) and one pending behind a
# plain job; then slurmctld and every slurmd are stopped (the running job's
# slurmstepd stays), PluginDir points at the new release's plugins, and the
# new release's daemons start on the saved state (26.05 reads 24.11's).
#   - the running job keeps running on its nodes, with its ring and note,
#     and its placement is recorded once (no second record after the
#     upgrade's restart of slurmctld)
#   - the pending job, once the plain job ends, is placed by the new
#     release's plugin with a ring (on 26.05: its tasks in ring order)
# The plugin keeps nothing of its own in Slurm's saved state: the ring is
# in the job's env_sup and the note in its AdminComment, both Slurm's.
#
# Usage: tests/slurm/upgrade.sh --topoctl PATH --slurm-prefix OLD --plugin-dir OLD_PLUGINS
#                               --to-prefix NEW --to-plugin-dir NEW_PLUGINS
# Root only.  Uses $TOPO_SLURM_DIR and $TOPO_SLURM_PORT like cluster.sh.
# Ends with "N passed, N failed"; exits non-zero if anything failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
to_prefix=""
to_plugin_dir=""
suite_extra_option() { # option value
  case $1 in
    --to-prefix) to_prefix=$2 ;;
    --to-plugin-dir) to_plugin_dir=$2 ;;
    *) return 1 ;;
  esac
}
suite_args "$@"
[ -x "$to_prefix/sbin/slurmctld" ] || { echo "--to-prefix: no sbin/slurmctld under '$to_prefix'" >&2; exit 2; }
[ -d "$to_plugin_dir" ] || { echo "--to-plugin-dir: no directory '$to_plugin_dir'" >&2; exit 2; }
from_release=$(slurmctld -V | cut -d' ' -f2)
to_release=$("$to_prefix/sbin/slurmctld" -V | cut -d' ' -f2)
suite_begin ", upgraded to $to_release"
# The cluster is stopped by the new release's commands at the end.
suite_cleanup() { export TOPO_SLURM_PREFIX=$to_prefix PATH=$to_prefix/bin:$to_prefix/sbin:$PATH; }

fabric="leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2"
start_topo_cluster "$fabric" ''
check "slurmctld $from_release's engine loaded the snapshot" wait_until 30 grep -q "topo-aware: fabric snapshot 1 of " "$log"

state_is() { [ "$(job_field "$1" JobState)" = "$2" ]; }
nodes_of() { scontrol show hostnames "$(job_field "$1" NodeList)" | paste -sd, -; }

# 20 nodes busy with a plain job, a 4-node topo-aware job running beside
# it, a 12-node topo-aware job waiting for the plain one.
plain=$(submit -N20 --exclusive --wrap 'sleep 900')
check "a plain 20-node job runs" wait_until 60 state_is "$plain" RUNNING
running=$(submit --network=topo-aware --exclusive -N4 --ntasks-per-node=2 --wrap '
echo "RING=$TOPO_RING_ORDER"
sleep 900')
check "a topo-aware 4-node job runs" wait_until 60 state_is "$running" RUNNING
check "  ... placed (AdminComment)" wait_until 20 sh -c "scontrol show job -o $running | grep -q 'AdminComment=topo-aware: placed'"
check "  ... recorded once" wait_until 20 sh -c "[ \"\$('$topoctl' job $running --db '$db' --history --json 2>/dev/null | grep -c '\"job_id\"')\" = 1 ]"
# A job runs the commands of the installed release, which the upgrade
# replaces: here a link the upgrade moves (sbatch passes on the
# submitter's PATH, which names the old release's directory).
ln -sfn "$(dirname "$(dirname "$(command -v slurmctld)")")" "$dir/current"
waiting=$(submit --network=topo-aware --exclusive -N12 --ntasks-per-node=2 --wrap "
echo \"RING=\$TOPO_RING_ORDER\"
PATH=$dir/current/bin:\$PATH srun bash -c 'echo TASK \$SLURM_PROCID \$SLURMD_NODENAME'")
sleep 3
check "a topo-aware 12-node job waits" state_is "$waiting" PENDING
ran_on=$(nodes_of "$running")
ring_before=$(sed -n 's/^RING=//p' "$dir/out-$running.txt")

echo "# upgrade: $from_release -> $to_release ($(($(date +%s) - started)) s)"
check "the daemons restart as $to_release on the saved state" \
  bash "$cluster" --slurm-prefix "$to_prefix" upgrade --plugin-dir "$to_plugin_dir"
export TOPO_SLURM_PREFIX=$to_prefix PATH=$to_prefix/bin:$to_prefix/sbin:$PATH
ln -sfn "$to_prefix" "$dir/current"
check "slurmctld is $to_release" sh -c "slurmctld -V | grep -q ' $to_release\$'"
check "scontrol show config names topology/topo_aware" \
  sh -c 'scontrol show config | grep -E "^TopologyPlugin +=  *topology/topo_aware$" >/dev/null'
check "the running topo-aware job still runs" state_is "$running" RUNNING
same_nodes() { [ "$(nodes_of "$running")" = "$ran_on" ]; }
check "  ... on the same nodes" same_nodes
check "  ... with its note" sh -c "scontrol show job -o $running | grep -q 'AdminComment=topo-aware: placed'"
check "  ... and its ring in its environment" sh -c "[ -n '$ring_before' ]"
sleep 3
check "  ... and still one record after slurmctld restarted" sh -c "[ \"\$('$topoctl' job $running --db '$db' --history --json 2>/dev/null | grep -c '\"job_id\"')\" = 1 ]"
check "the 12-node job still waits" state_is "$waiting" PENDING

scancel "$plain"
check "once the plain job ends, the 12-node job runs" wait_until 120 state_is "$waiting" COMPLETED
check "  ... placed by $to_release's plugin" sh -c "scontrol show job -o $waiting | grep -q 'AdminComment=topo-aware: placed'"
ring=$(sed -n 's/^RING=//p' "$dir/out-$waiting.txt")
ring_is_nodes() { [ "$(tr , '\n' <<<"$ring" | sort | paste -sd, -)" = "$(nodes_of "$waiting")" ]; }
check "  ... with a ring over its nodes" ring_is_nodes
tasks_follow() { # column of the rank
  [ -z "$(awk -v col="$1" -v ring="$ring" 'BEGIN { split(ring, h, ",") }
    /^TASK / && h[int($col / 2) + 1] != $3' "$dir/out-$waiting.txt")" ] &&
    [ "$(grep -c '^TASK ' "$dir/out-$waiting.txt")" = 24 ]
}
# No SPANK plugin here (plugstack.conf would name one release's): the
# ring reaches the tasks through Slurm's own ranks, from 26.05 on.
if [ "$(slurmctld -V | awk '{ split($2, v, "."); printf "%d%02d\n", v[1], v[2] }')" -ge 2605 ]; then
  check "  ... and its tasks' SLURM_PROCID follows the ring" tasks_follow 2
fi
scancel "$running"
check "the job from before the upgrade ends when cancelled" wait_until 60 sh -c "scontrol show job -o $running | grep -qE 'JobState=(CANCELLED|COMPLETED)'"
