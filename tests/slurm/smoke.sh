#!/usr/bin/env bash
# Proves the Slurm plugins on a real one-machine cluster (tests/slurm/cluster.sh):
#   1. under Slurm's own placement (select/cons_tres), a fixed sequence of
#      plain jobs is placed and every allocation recorded;
#   2. under the placement shim (select/topo_cons_tres on 22.05,
#      topology/topo_aware on 24.05+) and job_submit/topo_aware, the commands
#      that load every select and topology plugin still work, topo-aware
#      jobs run, garbage options are refused at submission with a message
#      that says what is allowed, GPUs reach CUDA_VISIBLE_DEVICES, and the
#      same plain jobs get exactly the nodes Slurm's own placement gave them.
#
# Usage: tests/slurm/smoke.sh [--plugin-dir DIR] [--update-network PATH] [--slurm-prefix DIR]
#   --plugin-dir      holds the built .so files; without it the plugins must
#                     be installed in Slurm's PluginDir
#   --update-network  the built tests/slurm/update_network.c, which reaches
#                     job_modify(); without it those checks do not run
# Root only.  Uses $TOPO_SLURM_DIR and $TOPO_SLURM_PORT like cluster.sh.
# Ends with "N passed, N failed"; exits non-zero if anything failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
cluster=$here/cluster.sh
plugin_args=()
update_network=""
while [ $# -gt 0 ]; do
  case $1 in
    --plugin-dir) [ $# -ge 2 ] || { echo "--plugin-dir needs a value" >&2; exit 2; }
                  plugin_args=(--plugin-dir "$2"); shift 2 ;;
    --update-network) [ $# -ge 2 ] || { echo "--update-network needs a value" >&2; exit 2; }
                      update_network=$2; shift 2 ;;
    --slurm-prefix) [ $# -ge 2 ] || { echo "--slurm-prefix needs a value" >&2; exit 2; }
                    export TOPO_SLURM_PREFIX=$2 PATH=$2/bin:$2/sbin:$PATH; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
dir=${TOPO_SLURM_DIR:-/tmp/topo-slurm}
export SLURM_CONF=$dir/etc/slurm.conf

finish() {
  bash "$cluster" stop >/dev/null 2>&1 || true
  echo "$passed passed, $failed failed"
}
trap finish EXIT



# Plain jobs that fragment the cluster: cores, whole nodes and GPUs, with a
# hole left by a cancelled job.  Prints "job-index nodelist" per job.
plain_sequence() {
  local -a jobs=()
  local j i
  jobs+=("$(submit -N3 --exclusive --wrap 'sleep 300')")
  jobs+=("$(submit -N1 -n4 --wrap 'sleep 300')")
  jobs+=("$(submit -N5 --gres=gpu:4 --wrap 'sleep 300')")
  jobs+=("$(submit -N2 -n20 --wrap 'sleep 300')")
  for j in "${jobs[@]}"; do wait_state "$j" RUNNING 30; done
  scancel "${jobs[0]}"
  wait_state "${jobs[0]}" CANCELLED 30
  # cancelled nodes pass through "completing"; wait until they are idle again
  local deadline=$(($(date +%s) + 30))
  while sinfo -h -t completing -o %N | grep . >/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.2; done
  jobs+=("$(submit -N4 --wrap 'sleep 300')")
  jobs+=("$(submit -N1 --gres=gpu:8 --wrap 'sleep 300')")
  jobs+=("$(submit -N6 -n6 --wrap 'sleep 300')")
  jobs+=("$(submit -N2 --gres=gpu:2 -n4 --wrap 'sleep 300')")
  for i in "${!jobs[@]}"; do
    [ "$i" = 0 ] && continue
    wait_state "${jobs[$i]}" RUNNING 30
    echo "$i $(job_field "${jobs[$i]}" NodeList)"
  done
  scancel "${jobs[@]}"
}

echo "# baseline: select/cons_tres"
bash "$cluster" start --select cons_tres "${plugin_args[@]}"
baseline=$(plain_sequence)
echo "$baseline" | sed 's/^/  job /'
bash "$cluster" stop

echo "# topo-aware placement (Slurm $(slurmctld -V | cut -d' ' -f2))"
bash "$cluster" start --select topo "${plugin_args[@]}"

if [ "$(slurmctld -V | awk '{ split($2, v, "."); printf "%d%02d\n", v[1], v[2] }')" -ge 2405 ]; then
  check "slurmctld runs the plugin" \
    sh -c 'scontrol show config | grep -E "^TopologyPlugin +=  *topology/topo_aware$" >/dev/null'
else
  check "slurmctld runs the plugin" \
    sh -c 'scontrol show config | grep -E "^SelectType +=  *select/topo_cons_tres$" >/dev/null'
fi
check "scontrol ping" sh -c 'scontrol ping | grep "is UP" >/dev/null'
check "sinfo: 32 idle nodes" sh -c '[ "$(sinfo -h -N -t idle -o %N | wc -l)" = 32 ]'
check "squeue" sh -c "squeue >/dev/null"

j=$(submit --network=topo-aware -N2 --wrap 'srun hostname; srun printenv SLURM_NODEID')
check "topo-aware -N2 job completes" wait_state "$j" COMPLETED 60
check "topo-aware job got 2 nodes" sh -c "[ \"$(job_field "$j" NumNodes)\" = 2 ]"
check "topo-aware job keeps its Network" sh -c "[ \"$(job_field "$j" Network)\" = topo-aware ]"
check "its srun steps ran on both nodes" sh -c "[ \"\$(grep -cx '[01]' '$dir/out-$j.txt')\" = 2 ]"

j=$(submit --network=topo-aware,profile=alltoall,maxleaves=2,pod -N3 --wrap hostname)
check "topo-aware job with every option completes" wait_state "$j" COMPLETED 60

reject() { # expected-text sbatch-args...
  local want=$1 out
  shift
  if out=$(sbatch --parsable "$@" --wrap hostname 2>&1); then
    echo "  accepted as job $out" >&2
    return 1
  fi
  grep -F -- "$want" <<<"$out" >/dev/null || { echo "  said: $out" >&2; return 1; }
}
check "profile=bogus refused, naming the allowed profiles" \
  reject "unknown profile 'bogus' (allowed: allreduce, alltoall, mixed)" --network=topo-aware,profile=bogus -N2
check "maxleaves=0 refused" reject "maxleaves needs a whole number" --network=topo-aware,maxleaves=0
check "misspelt option refused with the syntax" \
  reject "expected --network=topo-aware[,profile=allreduce|alltoall|mixed][,maxleaves=K][,pod][,segment=N]" --network=topo-aware,maxleaf=2
# select_nodes() returns ESLURM_JOB_HELD before asking the select plugin:
# only job_submit sees a held job's options.
check "held job with a bad option refused" reject "unknown profile" -H --network=topo-aware,profile=x
check "other plugins' network strings pass" sh -c "sbatch --parsable -H --network=system --wrap hostname >/dev/null"
# The scontrol of 22.05 refuses "update network=" itself; the update RPC,
# which API clients use, reaches job_modify().
if [ -n "$update_network" ]; then
  held=$(submit -H --network=topo-aware --wrap hostname)
  check "update to a bad option refused" sh -c "! '$update_network' $held topo-aware,pod=3 >/dev/null"
  check "refused update left the job's network alone" sh -c "[ \"$(job_field "$held" Network)\" = topo-aware ]"
  check "update to a good option accepted" \
    sh -c "'$update_network' $held topo-aware,profile=mixed >/dev/null && [ \"\$(scontrol show job -o $held | tr ' ' '\n' | sed -n 's/^Network=//p')\" = topo-aware,profile=mixed ]"
fi
scancel --state=PENDING --user=root >/dev/null 2>&1 || true

j=$(submit --gres=gpu:8 -N1 --wrap 'echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"')
check "gpu:8 job completes" wait_state "$j" COMPLETED 60
check "gpu:8 job sees 8 GPUs" grep -qx 'CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7' "$dir/out-$j.txt"

topo=$(plain_sequence)
same_nodes() {
  [ "$baseline" = "$topo" ] && return 0
  diff <(echo "$baseline") <(echo "$topo") | sed 's/^/  /' >&2
  return 1
}
check "plain jobs get Slurm's own nodes ($(wc -l <<<"$topo") jobs)" same_nodes
check "slurmctld still up" sh -c 'scontrol ping | grep "is UP" >/dev/null'

if [ "$(slurmctld -V | awk '{ split($2, v, "."); printf "%d%02d\n", v[1], v[2] }')" -ge 2405 ]; then
  # With a topology.conf, topology/topo_aware gives plain jobs topology/tree's
  # placement: the same sequence under tree itself and under the plugin.
  bash "$cluster" stop >/dev/null
  echo "# with a topology.conf: topology/tree, then topology/topo_aware"
  bash "$cluster" start --select cons_tres --topology "$here/topology-4x8.conf" "${plugin_args[@]}"
  tree=$(plain_sequence)
  tree_switches=$(scontrol show topology 2>/dev/null | awk '{ print $1 }' | sort | paste -sd, -)
  bash "$cluster" stop >/dev/null
  bash "$cluster" start --select topo --topology "$here/topology-4x8.conf" "${plugin_args[@]}"
  ours=$(plain_sequence)
  same_as_tree() {
    [ "$tree" = "$ours" ] && return 0
    diff <(echo "$tree") <(echo "$ours") | sed 's/^/  /' >&2
    return 1
  }
  check "plain jobs get topology/tree's nodes ($(wc -l <<<"$ours") jobs)" same_as_tree
  check "scontrol show topology shows tree's switches through the plugin" \
    sh -c "[ -n '$tree_switches' ] && [ \"\$(scontrol show topology | awk '{ print \$1 }' | sort | paste -sd, -)\" = '$tree_switches' ]"

  # With blocks (BlockName=) in topology.conf, topology/block's placement.
  bash "$cluster" stop >/dev/null
  echo "# with blocks in topology.conf: topology/block, then topology/topo_aware"
  TOPO_TOPOLOGY_PLUGIN=topology/block bash "$cluster" start --select cons_tres \
    --topology "$here/topology-blocks-4x8.conf" "${plugin_args[@]}"
  block=$(plain_sequence)
  blocks=$(scontrol show topology 2>/dev/null | awk '{ print $1 }' | sort | paste -sd, -)
  bash "$cluster" stop >/dev/null
  bash "$cluster" start --select topo --topology "$here/topology-blocks-4x8.conf" "${plugin_args[@]}"
  ours=$(plain_sequence)
  same_as_block() {
    [ "$block" = "$ours" ] && return 0
    diff <(echo "$block") <(echo "$ours") | sed 's/^/  /' >&2
    return 1
  }
  check "plain jobs get topology/block's nodes ($(wc -l <<<"$ours") jobs)" same_as_block
  check "scontrol show topology shows block's blocks through the plugin" \
    sh -c "[ -n '$blocks' ] && [ \"\$(scontrol show topology | awk '{ print \$1 }' | sort | paste -sd, -)\" = '$blocks' ]"
  j=$(submit --network=topo-aware -N2 --wrap 'srun hostname')
  check "a topo-aware job runs beside blocks" wait_state "$j" COMPLETED 60
fi
# slurmctld reads topology.yaml through its serializer plugins, and dies
# (fatal: serializer_required ... application/json) where Slurm was built
# without json-c: scripts/slurm-build.sh builds 25.05 on with it.
slurm_lib=${TOPO_SLURM_PREFIX:+$TOPO_SLURM_PREFIX/lib/slurm}
if [ "$(slurmctld -V | awk '{ split($2, v, "."); printf "%d%02d\n", v[1], v[2] }')" -ge 2511 ]; then
  check "Slurm has serializer/json, which reads topology.yaml" \
    test -e "${slurm_lib:-/nonexistent}/serializer_json.so"
  # What a site with a topology.yaml gets: Slurm reads the yaml, whose
  # parser knows its built-in types only, and ignores TopologyPlugin=, so
  # topology/topo_aware is never loaded; job_submit/topo_aware still is.
  bash "$cluster" stop >/dev/null
  echo "# with a topology.yaml: Slurm's tree from the yaml, TopologyPlugin= ignored"
  bash "$cluster" start --select topo --topology-yaml "$here/topology-4x8.yaml" "${plugin_args[@]}"
  ctld_log=$dir/log/slurmctld.log
  check "slurmctld does not load topology/topo_aware" sh -c "! grep -q 'topology/topo_aware' '$ctld_log'"
  check "scontrol show topology shows the yaml's switches" \
    sh -c "scontrol show topology | grep -q '^SwitchName=leaf01 '"
  j=$(submit --network=topo-aware -N2 --wrap 'echo "RING=${TOPO_RING_ORDER:-none}"')
  check "a topo-aware job runs, on Slurm's placement" wait_state "$j" COMPLETED 60
  check "  ... with no ring" grep -qx 'RING=none' "$dir/out-$j.txt"
  check "  ... while job_submit/topo_aware still refuses a bad option" \
    reject "unknown profile" --network=topo-aware,profile=bogus -N2
fi
[ "$failed" = 0 ]
