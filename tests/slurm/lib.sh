# Shell pieces the Slurm test scripts share; source it, it runs nothing.

# A TAP-like check: runs the command, counts it in $passed or $failed.
passed=0
failed=0
check() { # name command...
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1)); echo "ok   - $name"
  else
    failed=$((failed + 1)); echo "FAIL - $name"
  fi
}

# One field of `scontrol show job` (fields without spaces).
job_field() { # job field
  scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}

# Runs the command every quarter second until it succeeds or the time is up.
wait_until() { # seconds command...
  local deadline=$(($(date +%s) + $1))
  shift
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.25
  done
}

# --- jobs ----------------------------------------------------------------------

# The whole AdminComment (it holds spaces).
admin_comment() { scontrol show job -o "$1" 2>/dev/null | sed -n 's/.* AdminComment=\(.*\) [A-Za-z]*=.*/\1/p' | head -n1; }
# Waits until the job is in the state; an end state other than it fails at once.
wait_state() { # job state seconds
  local deadline=$(($(date +%s) + $3)) s
  while :; do
    s=$(job_field "$1" JobState)
    [ "$s" = "$2" ] && return 0
    case $s in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY)
      echo "  job $1 is $s, expected $2" >&2; return 1 ;;
    esac
    [ "$(date +%s)" -lt "$deadline" ] || { echo "  job $1 still ${s:-unknown} after $3 s, expected $2 ($(job_field "$1" Reason))" >&2; return 1; }
    sleep 0.2
  done
}
all_idle() { [ "$(sinfo -h -N -t idle -o %N | sort -u | wc -l)" = 32 ]; }
# Cancels every job and waits until the 32 nodes are idle.
cancel_all() {
  local stuck
  scancel --user=root >/dev/null 2>&1 || true
  # A step cancelled while it launches can outlive its signals on a loaded
  # machine: slurmd gives up after UnkillableStepTimeout (60 s) and drains
  # the node ("Kill task failed"). Wait that out, say so, and resume it.
  wait_until 90 sh -c '[ -z "$(squeue -h -o %A)" ]' || return 1
  stuck=$(sinfo -h -N -R -o '%N|%E' | awk -F'|' '/Kill task failed/ {print $1}' | sort -u | paste -sd, -)
  if [ -n "$stuck" ]; then
    echo "note: slurmd drained $stuck after a step outlived its signals; resumed" >&2
    scontrol update nodename="$stuck" state=resume
  fi
  wait_until 40 all_idle
}
hosts_of() { scontrol show hostnames "$1" | paste -sd, -; }
submit() { sbatch --parsable -o "$dir/out-%j.txt" "$@"; }

# --- a suite on the 32-node cluster ------------------------------------------
# The placement suites (placement.sh, crash.sh, burst.sh) share their
# options, their set-up and their ending:
#
#   suite_extra_option() { case $1 in --own) own=$2 ;; *) return 1 ;; esac; }  # if any
#   suite_args "$@"
#   suite_spank                                      # suites that need the SPANK plugin
#   suite_begin ", more words for the title line"   # dir, db, log, work, trap
#   start_topo_cluster FABRIC 'ExtraKey=value\n' [cluster.sh start options]
#
# A suite that must tidy more at the end defines suite_cleanup first.
suite_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster=$suite_dir/cluster.sh
plugin_args=()
topoctl=""
spank=""

# Takes one of the common options (returns 1 for any other):
#   --plugin-dir DIR     the built plugins
#   --topoctl PATH       the built topoctl
#   --spank SO           the built SPANK plugin (default: in --plugin-dir)
#   --slurm-prefix DIR   run the Slurm installed there (scripts/slurm-build.sh's cache)
suite_option() { # option value
  case $1 in
    --plugin-dir) plugin_args=(--plugin-dir "$2") ;;
    --topoctl) topoctl=$2 ;;
    --spank) spank=$2 ;;
    --slurm-prefix) export TOPO_SLURM_PREFIX=$2 PATH=$2/bin:$2/sbin:$PATH ;;
    *) return 1 ;;
  esac
}

# Parses a suite's arguments, all "--option value": the common ones
# (suite_option) and those of suite_extra_option, which a suite with
# options of its own defines first (returning 1 for any other); exits 2
# on anything else.
suite_args() { # "$@"
  while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; }
    suite_option "$1" "$2" ||
      { declare -F suite_extra_option >/dev/null && suite_extra_option "$1" "$2"; } ||
      { echo "unknown argument $1" >&2; exit 2; }
    shift 2
  done
}

# The SPANK plugin: --spank, or the one beside --plugin-dir's plugins;
# exits 2 when there is none.
suite_spank() {
  if [ -z "$spank" ] && [ ${#plugin_args[@]} = 2 ]; then
    spank=${plugin_args[1]}/spank_topo_aware.so
  fi
  [ -f "$spank" ] || { echo "no SPANK plugin '$spank' (--spank)" >&2; exit 2; }
}

# Checks the tools, sets dir, SLURM_CONF, db, log, started and work, prints
# the title line, and stops the cluster and prints the tally on exit.
suite_begin() { # [title words]
  [ -x "$topoctl" ] || { echo "--topoctl: no executable '$topoctl'" >&2; exit 2; }
  command -v sqlite3 >/dev/null || { echo "sqlite3 is missing (Debian package sqlite3)" >&2; exit 2; }
  dir=${TOPO_SLURM_DIR:-/tmp/topo-slurm}
  export SLURM_CONF=$dir/etc/slurm.conf
  db=$dir/fabric.db
  log=$dir/log/slurmctld.log
  started=$(date +%s)
  echo "# Slurm $(slurmctld -V | cut -d' ' -f2)${1:-}"
  work=$(mktemp -d)
  trap suite_finish EXIT
}

suite_finish() {
  if declare -F suite_cleanup >/dev/null; then suite_cleanup || true; fi
  bash "$cluster" stop >/dev/null 2>&1 || true
  rm -rf "$work"
  echo "$passed passed, $failed failed ($(($(date +%s) - started)) s)"
}

# Starts gpu[001-032] under the placement shim, with a topo_aware.conf of
# DbPath (the cluster's fabric.db) and the extra lines, and puts the
# synthetic fabric in a fresh snapshot database.
start_topo_cluster() { # fabric extra-conf-lines [cluster.sh start options...]
  local fabric=$1 conf=$2
  shift 2
  printf "DbPath=@DIR@/fabric.db\n$conf" >"$work/topo_aware.conf"
  bash "$cluster" start --select topo --nodes 'gpu[001-032]' "${plugin_args[@]}" \
    --topo-conf "$work/topo_aware.conf" "$@"
  "$topoctl" discover --synthetic "$fabric" --db "$db" >/dev/null
}
