#!/usr/bin/env bash
# RouteJobs=yes on a real one-machine Slurm cluster beside a simulated
# InfiniBand subnet: ibsim simulates the 4-leaf x 8-host, 2-spine, 2:1
# fabric, OpenSM routes it with its file engine (`-R file -U FILE`, no file
# at first: minhop), and the snapshot in topo_aware's database is
# discovered from the subnet with its live tables (`topoctl discover
# --ibnetdisc --lfts`), so the fabric's hosts are Slurm's nodes
# gpu[001-032].  slurmctld's engine is told RouteFile=FILE and
# RouteCommand=`kill -HUP <opensm>`:
#   1. two topo-aware jobs whose rings both cross leaf 1 and leaf 2 run:
#      the file slurmctld wrote equals `topoctl route apply` for their rings
#      (as their placement records give them) and changes entries; OpenSM
#      swept and the live tables (read with libibnetdisc) equal the file
#   2. the jobs end: the next apply gives their LIDs the base entries back,
#      live
#   3. a RouteCommand that fails: the same jobs again, the file and the
#      live tables stay the base, and slurmctld's log says why in one line
#      (not again when the apply is tried again)
#
# Usage: tests/slurm/routes.sh --topoctl PATH [--plugin-dir DIR] [--slurm-prefix DIR]
# Root only.  Uses $TOPO_SLURM_DIR and $TOPO_SLURM_PORT like cluster.sh.
# Ends with "N passed, N failed"; exits non-zero if anything failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
suite_args "$@"
umad2sim=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
for p in ibsim opensm; do
  command -v "$p" >/dev/null || PATH=$PATH:/usr/sbin command -v "$p" >/dev/null ||
    { echo "$p is missing (Debian packages ibsim-utils, opensm)" >&2; exit 2; }
done
[ -f "$umad2sim" ] || { echo "$umad2sim is missing (Debian package libumad2sim0)" >&2; exit 2; }
suite_begin ", RouteJobs: tables for the running rings handed to OpenSM on ibsim"

fabric=leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2
ib=$dir/ib
rm -rf "$ib"
mkdir -p "$ib"
routes=$ib/routes.lfts
sim_pid="" osm_pid=""
suite_cleanup() {
  for p in $osm_pid $sim_pid; do kill "$p" 2>/dev/null || true; done
  for p in $osm_pid $sim_pid; do wait "$p" 2>/dev/null || true; done
}
export IBSIM_SOCKNAME=toporoutes$$
# A program talking to the simulated subnet.
on_ib() { LD_PRELOAD=$umad2sim "$@"; }

"$topoctl" export --synthetic "$fabric" --ibnetdiscover -o "$ib/fabric.net"
ibsim -n -s "$ib/fabric.net" >"$ib/ibsim.log" 2>&1 &
sim_pid=$!
sim_up() { grep -q "@$IBSIM_SOCKNAME:ctl" /proc/net/unix; }
check "ibsim simulates the fabric" wait_until 20 sim_up
OSM_TMP_DIR=$ib OSM_CACHE_DIR=$ib on_ib opensm -R file -U "$routes" -f "$ib/opensm.log" >"$ib/opensm.out" 2>&1 &
osm_pid=$!
check "OpenSM brought the subnet up (minhop: no route file yet)" \
  wait_until 90 grep -q "SUBNET UP" "$ib/opensm.log"

# The subnet as libibnetdisc reads it, with every switch's table, into
# `into` (a database of snapshots); complete tables only: a sweep in
# progress leaves holes
# (route apply refuses tables with a hole, a loop or a down-up turn).
read_live() { # into
  on_ib "$topoctl" discover --ibnetdisc --lfts --db "$1" >"$ib/discover.out" 2>&1 &&
    "$topoctl" route apply --db "$1" --running /dev/null --opensm-file "$ib/complete.lfts" >/dev/null 2>&1
}
# The live tables equal the file's (every switch, every HCA LID): a
# snapshot of the live tables and one of the same subnet with the file's
# tables show no routes_changed in `topoctl diff`.
live_equals_file() { # file
  local check=$ib/check.db
  rm -f "$check"
  read_live "$check" || return 1
  on_ib "$topoctl" discover --ibnetdisc --lfts-dump "$1" --db "$check" >/dev/null 2>&1 || return 1
  "$topoctl" diff 1 2 --db "$check" >"$ib/diff.out" 2>&1
}
check "the live tables are complete" wait_until 60 read_live "$ib/base.db"

printf 'DbPath=@DIR@/fabric.db\nRouteJobs=yes\nRouteFile=%s\nRouteInterval=5\nRouteCommand=%s\n' "$routes" \
  "test ! -e $ib/refuse || { echo 'sweep refused by the test' >&2; exit 3; }; kill -HUP $osm_pid" \
  >"$work/topo_aware.conf"
bash "$cluster" start --select topo --nodes 'gpu[001-032]' "${plugin_args[@]}" --topo-conf "$work/topo_aware.conf"
on_ib "$topoctl" discover --ibnetdisc --lfts --db "$db" >/dev/null
check "slurmctld's engine loaded the subnet's snapshot" wait_until 30 grep -q "fabric snapshot 1 of " "$log"

# A one-node job on each node named, to shape what is free.
hold() { local n; for n in $(scontrol show hostnames "$1"); do submit -N1 -w "$n" --exclusive --wrap 'sleep 600' >/dev/null; done; }
held_running() { wait_until 90 sh -c '[ -z "$(squeue -h -t PD -o %A)" ]'; }
ring_job() { submit --network=topo-aware -N4 --exclusive --wrap 'sleep 600'; }
# Each job's ring as its placement record gives it (what the engine plans
# from), one line per job in job id order: a `route plan --running` file.
rings_of() { # jobs...
  local j
  for j in "$@"; do
    "$topoctl" job "$j" --db "$db" --json | python3 -c 'import json, sys; print(",".join(json.load(sys.stdin)["ring_order"]))'
  done
}
two_jobs() { # both rings cross leaf 1 (gpu001-008) and leaf 2 (gpu009-016)
  hold "gpu[003-008,011-032]"
  held_running || return 1
  a=$(ring_job)
  wait_state "$a" RUNNING 60 || return 1
  scancel $(squeue -h -o '%A %N' | awk '$2 ~ /^gpu0(0[34]|1[12])$/ {print $1}')
  b=$(ring_job)
  wait_state "$b" RUNNING 90
}

# --- 1. two multi-leaf jobs --------------------------------------------------
applies() { grep -c "topo-aware: routes applied: " "$log" || true; }
before=$(applies)
check "two topo-aware jobs across leaves 1 and 2 run" two_jobs
ring_applied() { # the log's last apply planned for `n` running jobs
  [ "$(applies)" -gt "$before" ] && grep "routes applied: " "$log" | tail -n1 | grep -q "routes applied: $1 running jobs"
}
check "slurmctld applied routes for the two rings" wait_until 60 ring_applied 2
grep "routes applied: " "$log" | tail -n1 | sed 's/^/  /'
# The records are in the database soon after the jobs start.
wait_until 30 sh -c "'$topoctl' job $b --db '$db' >/dev/null 2>&1" || true
rings_of $a $b >"$work/running.txt"
sed 's/^/  ring: /' "$work/running.txt"
"$topoctl" route apply --db "$db" --running "$work/running.txt" --opensm-file "$work/expected.lfts" --json \
  >"$work/expected.json"
changes=$(grep -c '"base_port"' "$work/expected.json" || true)
echo "  the plan changes $changes entries"
check "the plan for the two rings changes table entries" test "$changes" -gt 0
check "the file slurmctld wrote is the plan for the running rings" cmp -s "$routes" "$work/expected.lfts"
check "OpenSM swept: the live tables equal the file" wait_until 60 live_equals_file "$routes"

# --- 2. the jobs end ---------------------------------------------------------
before=$(applies)
check "all jobs cancelled" cancel_all
check "slurmctld applied routes for no running ring" wait_until 60 ring_applied 0
base_file() { "$topoctl" route apply --db "$db" --running /dev/null --opensm-file "$work/base.lfts" >/dev/null; }
check "the file is the base tables again" sh -c "$(declare -f base_file); base_file && cmp -s '$routes' '$work/base.lfts'"
check "live, every LID has its base entries back" wait_until 60 live_equals_file "$work/base.lfts"

# --- 3. a RouteCommand that fails --------------------------------------------
touch "$ib/refuse"
failures() { grep -c "topo-aware: routes not applied, the tables stay as they were: " "$log" || true; }
check "the two jobs again" two_jobs
check "slurmctld says in one line why the routes were not applied" wait_until 60 sh -c "[ \$(grep -c 'routes not applied' '$log') -ge 1 ]"
grep "routes not applied" "$log" | tail -n1 | sed 's/^/  /'
check "the line names the command's failure" grep -q "exited with status 3: sweep refused by the test" "$log"
check "the file stays the base tables" cmp -s "$routes" "$work/base.lfts"
check "the live tables stay the base" live_equals_file "$work/base.lfts"
# The apply is tried again after the interval (10 s at least): still one line.
sleep 25
check "tried again, still one line" test "$(failures)" = 1
check "all jobs cancelled" cancel_all

[ "$failed" = 0 ]
