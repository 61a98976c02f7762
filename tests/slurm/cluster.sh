#!/usr/bin/env bash
# A real Slurm cluster on this one machine, for the end-to-end tests:
# munged, slurmctld and one slurmd per node (slurmd -N NAME, a Port each,
# NodeHostname=localhost), 8 fake GPUs per node, everything (config, state,
# logs, pid files, munge key and socket) in a private directory.
#
# Usage:
#   tests/slurm/cluster.sh start [--slurm-prefix DIR] [--nodes N|NAMES]
#                                [--select cons_tres|topo|select/X]
#                                [--plugin-dir DIR] [--job-submit LIST|none]
#                                [--topology FILE] [--topology-yaml FILE]
#                                [--topo-conf FILE]
#                                [--spank SO] [--spank-args ARGS]
#                                [--debug LEVEL] [--timeout SECONDS]
#   tests/slurm/cluster.sh [--slurm-prefix DIR] stop
#   tests/slurm/cluster.sh [--slurm-prefix DIR] status
#   tests/slurm/cluster.sh --slurm-prefix NEW upgrade [--plugin-dir DIR]
#
#   upgrade       stops slurmctld and the slurmd (not the jobs: their
#                 slurmstepd run on), points PluginDir at NEW's plugins
#                 (and DIR), and starts NEW's daemons on the saved state,
#                 as a site upgrades Slurm
#
#   --slurm-prefix  run the Slurm installed under DIR (bin/, sbin/,
#                 lib/slurm/: scripts/slurm-build.sh's cache) instead of
#                 Debian's packages; the env file then sets PATH too
#   --nodes       a count (32 by default: node001..node032) or host names,
#                 as a list and/or ranges: "gpu[001-016],gpu[101-116]"
#   --select      cons_tres (default), topo (topology-aware placement:
#                 select/topo_cons_tres on Slurm 22.05; on 24.05 and later
#                 select/cons_tres with TopologyPlugin=topology/topo_aware)
#                 or any select/X
#   --plugin-dir  a directory searched after Slurm's own PluginDir, where
#                 plugins built but not installed are found
#   --job-submit  JobSubmitPlugins (default: topo_aware with --select topo)
#   --topology    a topology.conf: TopologyPlugin=topology/tree, or
#                 $TOPO_TOPOLOGY_PLUGIN (with topo on 24.05+:
#                 topology/topo_aware, which gives plain jobs tree's
#                 placement, or block's where the file has BlockName=)
#   --topology-yaml  a topology.yaml beside slurm.conf (25.05+: Slurm then
#                 ignores TopologyPlugin=)
#   --topo-conf   a topo_aware.conf, copied beside slurm.conf ("@DIR@" in it
#                 becomes the cluster directory)
#   --spank       a SPANK plugin .so, listed in plugstack.conf beside slurm.conf
#   --spank-args  its arguments on that line ("@DIR@" becomes the cluster
#                 directory)
#   --debug       SlurmctldDebug (default info)
#   --timeout     how long start waits for every node to be idle (default 120)
#
# Environment: TOPO_SLURM_DIR (default /tmp/topo-slurm), TOPO_SLURM_PORT
# (slurmctld's port, default 16817; the nodes use the next ones),
# TOPO_SLURM_PREFIX (as --slurm-prefix).
# start prints the lines to source; $TOPO_SLURM_DIR/env holds them too.
# Installs nothing: needs munge and Debian's slurmctld, slurmd and
# slurm-client (or a Slurm under --slurm-prefix).
# Must run as root (munged runs as user munge, the Slurm daemons as root).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dir=${TOPO_SLURM_DIR:-/tmp/topo-slurm}
# munged (user munge) must traverse every directory above its socket, and a
# checkout may sit below a private one (mktemp -d is 0700): its state lives
# under /run, one directory per cluster directory.
munge_dir=/run/topo-munge/$(printf %s "$dir" | md5sum | cut -c1-16)
ctld_port=${TOPO_SLURM_PORT:-16817}
conf=$dir/etc/slurm.conf
slurm_prefix=${TOPO_SLURM_PREFIX:-}
# --slurm-prefix may come anywhere: take it out of the arguments.
args=()
while [ $# -gt 0 ]; do
  if [ "$1" = --slurm-prefix ]; then
    [ $# -ge 2 ] || { echo "cluster: error: --slurm-prefix needs a value" >&2; exit 2; }
    slurm_prefix=$2
    shift 2
  else
    args+=("$1")
    shift
  fi
done
set -- "${args[@]}"

say() { printf 'cluster: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }

# --- host names -------------------------------------------------------------

# Expands "a[001-003,7]b,c" into one name per line.
expand_names() {
  local spec=$1 item="" depth=0 ch i
  local -a items=()
  for ((i = 0; i < ${#spec}; i++)); do
    ch=${spec:i:1}
    case $ch in
      '[') depth=$((depth + 1)) ;;
      ']') depth=$((depth - 1)) ;;
    esac
    if [ "$ch" = , ] && [ $depth = 0 ]; then items+=("$item"); item=""; else item+=$ch; fi
  done
  items+=("$item")
  local pre ranges post range lo hi n
  for item in "${items[@]}"; do
    if [[ $item =~ ^([^][]*)\[([0-9,-]+)\]([^][]*)$ ]]; then
      pre=${BASH_REMATCH[1]} ranges=${BASH_REMATCH[2]} post=${BASH_REMATCH[3]}
      for range in ${ranges//,/ }; do
        if [[ $range =~ ^([0-9]+)-([0-9]+)$ ]]; then
          lo=${BASH_REMATCH[1]} hi=${BASH_REMATCH[2]}
          ((10#$lo <= 10#$hi)) || die "bad range '$range' in --nodes"
          for ((n = 10#$lo; n <= 10#$hi; n++)); do printf '%s%0*d%s\n' "$pre" "${#lo}" "$n" "$post"; done
        elif [[ $range =~ ^[0-9]+$ ]]; then
          printf '%s%s%s\n' "$pre" "$range" "$post"
        else
          die "bad range '$range' in --nodes"
        fi
      done
    elif [[ $item =~ ^[A-Za-z0-9_.-]+$ ]]; then
      printf '%s\n' "$item"
    else
      die "bad host name '$item' in --nodes (expected names like node001 or node[001-032])"
    fi
  done
}

# --- processes ----------------------------------------------------------------

# A pid from a pid file is ours only if that process still runs with our
# config (or munge socket) on its command line: pids are reused.
ours() {
  local pid=$1 marker=$2
  # grep without -q reads to the end: an early exit would SIGPIPE tr and,
  # under pipefail, fail the test.
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] &&
    { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -F -- "$marker" >/dev/null
}

pid_of() { if [ -s "$1" ]; then tr -dc '0-9' <"$1"; fi; }

# Slurm daemons, step daemons and job tasks started for this cluster: they
# carry SLURM_CONF=<our config> in their environment (slurmstepd and tasks
# inherit it), which no other cluster's processes do.
cluster_pids() {
  local p
  for p in /proc/[0-9]*; do
    [ -r "$p/environ" ] || continue
    [ "${p#/proc/}" = $$ ] && continue
    if { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -xF "SLURM_CONF=$conf" >/dev/null; then
      case $(readlink "$p/exe" 2>/dev/null) in
        */slurmctld* | */slurmd* | */slurmstepd*) echo "${p#/proc/}" ;;
        *) { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep '^SLURM_JOB_ID=' >/dev/null && echo "${p#/proc/}" ;;
      esac
    fi
  done
}

# A zombie is dead: this machine's pid 1 may reap daemons late.
alive_pid() {
  local state
  state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# TERM, then KILL whatever is left after $2 seconds.
stop_pids() {
  local pids=$1 wait_s=$2 p alive deadline
  [ -n "$pids" ] || return 0
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  deadline=$(($(date +%s) + wait_s))
  while :; do
    alive=""
    for p in $pids; do alive_pid "$p" && alive+=" $p"; done
    [ -z "$alive" ] && return 0
    [ "$(date +%s)" -ge "$deadline" ] && break
    sleep 0.2
  done
  say "killing$alive after ${wait_s}s"
  # shellcheck disable=SC2086
  kill -KILL $alive 2>/dev/null || true
}

# --- start --------------------------------------------------------------------

# The Slurm to run: Debian's packages, or an installation under a prefix.
use_slurm() {
  if [ -n "$slurm_prefix" ]; then
    [ -x "$slurm_prefix/sbin/slurmctld" ] || die "no Slurm under $slurm_prefix (sbin/slurmctld is missing)"
    system_plugin_dir=$slurm_prefix/lib/slurm
    export PATH=$slurm_prefix/bin:$slurm_prefix/sbin:$PATH
  else
    system_plugin_dir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/slurm-wlm
  fi
}

# The running Slurm's major and minor as one number: 2205, 2411.
slurm_release() {
  slurmctld -V | awk '{ split($2, v, "."); printf "%d%02d\n", v[1], v[2] }'
}

nodes_spec=32
select_type=select/cons_tres
topo_placement=0
spank_args=""
extra_plugin_dir=""
job_submit=default
topology_file=""
topology_yaml=""
topo_conf=""
spank_so=""
ctld_debug=info
timeout_s=120

parse_start_options() {
  while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || die "$1 needs a value"
    case $1 in
      --nodes) nodes_spec=$2 ;;
      --select)
        case $2 in
          cons_tres) select_type=select/cons_tres ;;
          topo) topo_placement=1 ;;
          select/*) select_type=$2 ;;
          *) die "--select takes cons_tres, topo or select/NAME, not '$2'" ;;
        esac ;;
      --plugin-dir) extra_plugin_dir=$(cd "$2" && pwd) || die "no directory $2" ;;
      --job-submit) job_submit=$2 ;;
      --topology) [ -f "$2" ] || die "no topology file $2"; topology_file=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;;
      --topology-yaml) [ -f "$2" ] || die "no topology.yaml $2"; topology_yaml=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;;
      --topo-conf) [ -f "$2" ] || die "no topo_aware.conf $2"; topo_conf=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;;
      --spank) [ -f "$2" ] || die "no SPANK plugin $2"; spank_so=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") ;;
      --spank-args) spank_args=$2 ;;
      --debug) ctld_debug=$2 ;;
      --timeout) [[ $2 =~ ^[0-9]+$ ]] || die "--timeout takes seconds"; timeout_s=$2 ;;
      *) die "unknown option $1 (see the top of $0)" ;;
    esac
    shift 2
  done
}

write_config() {
  local -a names=("$@")
  local node_lines="" port=$ctld_port name plugin_dir=$system_plugin_dir
  for name in "${names[@]}"; do
    port=$((port + 1))
    node_lines+="NodeName=$name NodeHostname=localhost Port=$port CPUs=16 Boards=1 SocketsPerBoard=2 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=256000 Gres=gpu:8 State=UNKNOWN"$'\n'
  done
  [ -n "$extra_plugin_dir" ] && plugin_dir+=":$extra_plugin_dir"
  local job_submit_line="" topology_line="" switch_line="SwitchType=switch/none" release
  release=$(slurm_release)
  # switch/none is gone in 24.x: no SwitchType means none there.
  [ "$release" -ge 2405 ] && switch_line=""
  if [ "$topo_placement" = 1 ]; then
    # From 24.05 nodes are chosen in the topology plugin.
    if [ "$release" -ge 2405 ]; then
      select_type=select/cons_tres
      topology_line="TopologyPlugin=topology/topo_aware"
    else
      select_type=select/topo_cons_tres
    fi
  fi
  if [ "$job_submit" = default ]; then
    [ "$topo_placement" = 1 ] && job_submit_line="JobSubmitPlugins=topo_aware"
  elif [ "$job_submit" != none ]; then
    job_submit_line="JobSubmitPlugins=$job_submit"
  fi
  if [ -n "$topology_file" ]; then
    cp "$topology_file" "$dir/etc/topology.conf"
    # TOPO_TOPOLOGY_PLUGIN: Slurm's own plugin for that file (default tree).
    [ -n "$topology_line" ] || topology_line="TopologyPlugin=${TOPO_TOPOLOGY_PLUGIN:-topology/tree}"
  fi
  [ -z "$topology_yaml" ] || cp "$topology_yaml" "$dir/etc/topology.yaml"
  topology_summary=${topology_line#TopologyPlugin=}
  if [ -n "$topo_conf" ]; then
    awk -v dir="$dir" '{ gsub(/@DIR@/, dir); print }' "$topo_conf" >"$dir/etc/topo_aware.conf"
  fi
  # Slurm reads plugstack.conf beside slurm.conf when it exists.
  [ -n "$spank_so" ] && echo "required $spank_so ${spank_args//@DIR@/$dir}" >"$dir/etc/plugstack.conf"
  local node_list
  node_list=$(IFS=,; echo "${names[*]}")
  # awk, not sed: the values hold slashes, commas and newlines.
  awk -v dir="$dir" -v munge="$munge_dir" -v host="$(hostname -s)" -v port="$ctld_port" -v plugins="$plugin_dir" \
      -v debug="$ctld_debug" -v select="$select_type" -v js="$job_submit_line" \
      -v topo="$topology_line" -v switch="$switch_line" -v nodes="$node_lines" '
    { gsub(/@MUNGE_DIR@/, munge); gsub(/@DIR@/, dir); gsub(/@CONTROL_HOST@/, host); gsub(/@CTLD_PORT@/, port)
      gsub(/@PLUGIN_DIR@/, plugins); gsub(/@CTLD_DEBUG@/, debug); gsub(/@SELECT_TYPE@/, select)
      sub(/^@JOB_SUBMIT_LINE@$/, js); sub(/^@TOPOLOGY_LINE@$/, topo); sub(/^@SWITCH_LINE@$/, switch); sub(/^@NODE_LINES@$/, nodes)
      print }' "$here/slurm.conf.in" >"$conf"
  awk -v dir="$dir" -v nodes="$node_list" '{ gsub(/@DIR@/, dir); gsub(/@NODE_LIST@/, nodes); print }' \
    "$here/gres.conf.in" >"$dir/etc/gres.conf"
}

start_munge() {
  local m=$munge_dir
  # munged insists that everyone may traverse its socket's directory.
  install -d -m 0755 /run/topo-munge
  install -d -o munge -g munge -m 0755 "$m"
  # A key of our own: the cluster never touches /etc/munge.
  head -c 1024 /dev/urandom >"$m/munge.key"
  chown munge:munge "$m/munge.key"
  chmod 0400 "$m/munge.key"
  runuser -u munge -- munged --socket="$m/munge.socket" --key-file="$m/munge.key" \
    --pid-file="$m/munged.pid" --log-file="$m/munged.log" --seed-file="$m/munged.seed" \
    || die "munged did not start: $(tail -n 3 "$m/munged.log" 2>/dev/null)"
  local i
  for i in $(seq 50); do
    munge -n -S "$m/munge.socket" 2>/dev/null | unmunge -S "$m/munge.socket" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  die "munged does not answer on $m/munge.socket"
}

wait_for() { # description seconds command...
  local what=$1 limit=$2 deadline
  shift 2
  deadline=$(($(date +%s) + limit))
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || { say "timed out after ${limit}s waiting for $what"; return 1; }
    sleep 0.25
  done
}

controller_up() { scontrol ping 2>/dev/null | grep 'is UP' >/dev/null; }

ctld_pid=""
ctld_started() {
  [ -s "$dir/run/slurmctld.pid" ] && return 0
  ! grep -q 'fatal:' "$dir/log/slurmctld.log" 2>/dev/null || die "slurmctld exited"
  return 1
}
# Fails the start at once when slurmctld has exited (a fatal in its log).
controller_up_or_gone() {
  alive_pid "$ctld_pid" || die "slurmctld exited"
  controller_up
}

all_idle() {
  local want=$1 states dead
  # A slurmd that failed (a port in use, say) never comes up: stop waiting.
  dead=$(grep -lE 'fatal:|Unable to bind listen port' "$dir"/log/slurmd-*.log 2>/dev/null | head -n 3 | tr '\n' ' ')
  [ -z "$dead" ] || die "slurmd failed: $dead"
  states=$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u) || return 1
  [ "$(grep -c ' idle$' <<<"$states")" = "$want" ]
}

diagnose() {
  say "start failed; last log lines:"
  local f
  for f in "$dir/log/slurmctld.log" "$dir"/log/slurmd-*.log "$munge_dir/munged.log"; do
    [ -f "$f" ] || continue
    if grep -qiE 'error|fatal' "$f"; then
      printf '  --- %s\n' "$f" >&2
      grep -iE 'error|fatal' "$f" | tail -n 5 | sed 's/^/  /' >&2
    fi
  done
  if alive_pid "$ctld_pid"; then sinfo -N 2>/dev/null | head -n 40 >&2 || true; fi
}

start_failed() {
  local rc=$?
  trap - EXIT
  diagnose
  cmd_stop || true
  exit $(( rc ? rc : 1 ))
}

cmd_start() {
  parse_start_options "$@"
  [ "$(id -u)" = 0 ] || die "must run as root"
  local tool
  for tool in munged munge unmunge slurmctld slurmd sinfo scontrol; do
    command -v "$tool" >/dev/null || die "$tool is missing (Debian packages: munge slurmctld slurmd slurm-client, or --slurm-prefix)"
  done
  [ -z "$(running_pids)" ] || die "a cluster is already running in $dir; stop it first"

  local -a names
  if [[ $nodes_spec =~ ^[0-9]+$ ]]; then
    ((nodes_spec >= 1 && nodes_spec <= 999)) || die "--nodes takes 1 to 999 nodes"
    mapfile -t names < <(expand_names "node[001-$(printf '%03d' "$nodes_spec")]")
  else
    mapfile -t names < <(expand_names "$nodes_spec")
  fi
  [ ${#names[@]} -ge 1 ] || die "no nodes"
  [ "$(printf '%s\n' "${names[@]}" | sort -u | wc -l)" = ${#names[@]} ] || die "--nodes names a host twice"

  local started
  started=$(now)
  # From here on any failure (set -e, die) stops whatever did start.
  trap 'start_failed' EXIT
  rm -rf "$dir"
  install -d -m 0755 "$dir" "$dir/etc" "$dir/state" "$dir/spool" "$dir/log" "$dir/run" "$dir/dev"
  local i
  for i in 0 1 2 3 4 5 6 7; do mknod "$dir/dev/nvidia$i" c 1 3; done
  write_config "${names[@]}"
  {
    echo "export SLURM_CONF=$conf"
    [ -z "$slurm_prefix" ] || echo "export PATH=$slurm_prefix/bin:$slurm_prefix/sbin:\$PATH"
  } >"$dir/env"
  export SLURM_CONF=$conf

  start_munge
  slurmctld -f "$conf"
  wait_for "slurmctld's pid file" 10 ctld_started
  ctld_pid=$(pid_of "$dir/run/slurmctld.pid")
  wait_for "slurmctld to answer" 30 controller_up_or_gone
  # slurmd daemonizes once its node is registered; start them side by side.
  local name
  local -a launches=()
  for name in "${names[@]}"; do
    mkdir -p "$dir/spool/$name"
    slurmd -N "$name" -f "$conf" &
    launches+=($!)
  done
  for i in "${launches[@]}"; do wait "$i"; done
  wait_for "${#names[@]} idle nodes" "$timeout_s" all_idle ${#names[@]}
  trap - EXIT
  say "${#names[@]} nodes idle with $select_type${topology_summary:+, $topology_summary} (Slurm $(slurmctld -V | cut -d' ' -f2)) in $(since "$started") s"
  cat "$dir/env"
}

# --- stop and status ----------------------------------------------------------

# Every daemon of ours that a pid file names.
running_pids() {
  local f pid
  for f in "$dir"/run/*.pid; do
    [ -f "$f" ] || continue
    pid=$(pid_of "$f")
    ours "$pid" "$conf" && echo "$pid"
  done
  pid=$(pid_of "$munge_dir/munged.pid")
  ours "$pid" "$munge_dir/munge.socket" && echo "$pid"
  return 0
}

cmd_stop() {
  [ -d "$dir" ] || { say "nothing to stop in $dir"; return 0; }
  export SLURM_CONF=$conf
  local ctld
  ctld=$(pid_of "$dir/run/slurmctld.pid")
  if ours "$ctld" "$conf" && [ -f "$conf" ]; then
    # Cancel first, so that each slurmstepd ends its job's tasks itself.
    local jobs
    jobs=$(squeue -h -o %A 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null || true
      wait_for "jobs to end" 15 sh -c '[ -z "$(squeue -h -o %A 2>/dev/null)" ]' || true
    fi
  fi
  local f slurmds=""
  for f in "$dir"/run/slurmd-*.pid; do
    [ -f "$f" ] || continue
    ours "$(pid_of "$f")" "$conf" && slurmds+=" $(pid_of "$f")"
  done
  stop_pids "$slurmds" 10
  ours "$ctld" "$conf" && stop_pids "$ctld" 10
  # Stragglers: steps, tasks and daemons that died before writing a pid file.
  stop_pids "$(cluster_pids | tr '\n' ' ')" 5
  local munged
  munged=$(pid_of "$munge_dir/munged.pid")
  ours "$munged" "$munge_dir/munge.socket" && stop_pids "$munged" 5
  rm -f "$dir"/run/*.pid
  say "stopped"
}

cmd_status() {
  local pids
  pids=$(running_pids)
  if [ -z "$pids" ]; then
    echo "not running ($dir)"
    return 3
  fi
  export SLURM_CONF=$conf
  echo "running in $dir: $(wc -l <<<"$pids") daemons (munged, slurmctld, slurmd)"
  echo "export SLURM_CONF=$conf"
  scontrol ping || true
  sinfo || true
}

# Daemons only: the running jobs' slurmstepd stay, and the saved state
# (StateSaveLocation) is read by the new slurmctld.
cmd_upgrade() {
  local new_plugin_dir=""
  while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || die "$1 needs a value"
    case $1 in
      --plugin-dir) new_plugin_dir=$(cd "$2" && pwd) || die "no directory $2" ;;
      *) die "upgrade takes --plugin-dir only" ;;
    esac
    shift 2
  done
  [ -n "$slurm_prefix" ] || die "upgrade needs --slurm-prefix (the new release)"
  [ -f "$conf" ] || die "no cluster in $dir"
  export SLURM_CONF=$conf
  local f pids="" names=() name
  for f in "$dir"/run/slurmd-*.pid; do
    [ -f "$f" ] || continue
    ours "$(pid_of "$f")" "$conf" && pids+=" $(pid_of "$f")"
    name=${f##*/slurmd-}
    names+=("${name%.pid}")
  done
  local ctld
  ctld=$(pid_of "$dir/run/slurmctld.pid")
  ours "$ctld" "$conf" && pids+=" $ctld"
  stop_pids "$pids" 20
  rm -f "$dir/run/slurmctld.pid" "$dir"/run/slurmd-*.pid
  local plugins=$system_plugin_dir
  [ -n "$new_plugin_dir" ] && plugins+=":$new_plugin_dir"
  sed -i "s|^PluginDir=.*|PluginDir=$plugins|" "$conf"
  {
    echo "export SLURM_CONF=$conf"
    echo "export PATH=$slurm_prefix/bin:$slurm_prefix/sbin:\$PATH"
  } >"$dir/env"
  slurmctld -f "$conf"
  wait_for "slurmctld's pid file" 20 ctld_started
  ctld_pid=$(pid_of "$dir/run/slurmctld.pid")
  wait_for "slurmctld to answer" 60 controller_up_or_gone
  local -a launches=()
  for name in "${names[@]}"; do
    slurmd -N "$name" -f "$conf" &
    launches+=($!)
  done
  for f in "${launches[@]}"; do wait "$f"; done
  # Every node responding (-r) and in a state that can run jobs.
  nodes_up() { [ "$(sinfo -h -N -r -t idle,alloc,mix -o %N 2>/dev/null | sort -u | wc -l)" = "$1" ]; }
  wait_for "${#names[@]} nodes to answer" "$timeout_s" nodes_up ${#names[@]}
  say "${#names[@]} nodes on Slurm $(slurmctld -V | cut -d' ' -f2) after the upgrade"
  cat "$dir/env"
}

use_slurm
case "${1:-}" in
  upgrade) shift; cmd_upgrade "$@" ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; [ $# = 0 ] || die "stop takes no options"; cmd_stop ;;
  status) shift; [ $# = 0 ] || die "status takes no options"; cmd_status ;;
  *) sed -n '2,56p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
