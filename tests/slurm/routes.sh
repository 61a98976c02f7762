#!/usr/bin/env bash
# RouteJobs=yes on a real one-machine Slurm cluster beside a simulated
# InfiniBand subnet: ibsim simulates the 4-leaf x 8-host, 2-spine, 2:1
# fabric, OpenSM routes it with its file engine (`-R file -U FILE`, no file
# at first: minhop), and the snapshot in topo_aware's database is
# discovered from the subnet with its live tables (`topoctl discover
# --ibnetdisc --lfts`), so the fabric's hosts are Slurm's nodes
# gpu[001-032].  slurmctld's engine is told RouteFile=FILE and
# RouteCommand=`kill -HUP <opensm>`:
#   1. four 2-node topo-aware jobs, each across leaf 1 and leaf 2, run: the
#      file slurmctld wrote equals `topoctl route apply` for their rings
#      (as their placement records give them), which changes entries;
#      OpenSM swept and the live tables (read with libibnetdisc) equal it
#   2. new snapshots while they run (ftree's tables, then minhop's again):
#      the file and the live tables follow each, no job starting or ending
#   3. the jobs end: the next apply gives their LIDs the base entries back,
#      live
#   4. a RouteCommand that fails: the same jobs again, the file and the
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
ib=$dir.ib  # beside the cluster directory, which cluster.sh start empties
rm -rf "$ib"
mkdir -p "$ib"
routes=$ib/routes.lfts
sim_pid="" osm_pid=""
suite_cleanup() {
  local p
  for p in $osm_pid $sim_pid; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for p in $osm_pid $sim_pid; do kill -KILL "$p" 2>/dev/null || true; done
}
export IBSIM_SOCKNAME=toporoutes$$
# A program talking to the simulated subnet.
# A client that talks to the simulated subnet, at most a minute.
on_ib() { LD_PRELOAD=$umad2sim timeout 60 "$@"; }

"$topoctl" export --synthetic "$fabric" --ibnetdiscover -o "$ib/fabric.net"
ibsim -n -s "$ib/fabric.net" >"$ib/ibsim.log" 2>&1 &
sim_pid=$!
sim_up() { grep -q "@$IBSIM_SOCKNAME:ctl" /proc/net/unix; }
check "ibsim simulates the fabric" wait_until 20 sim_up
# Started as a simple command, so that $! is OpenSM itself (RouteCommand signals it).
LD_PRELOAD=$umad2sim OSM_TMP_DIR=$ib OSM_CACHE_DIR=$ib opensm -R file -U "$routes" -f "$ib/opensm.log" \
  >"$ib/opensm.out" 2>&1 &
osm_pid=$!
check "OpenSM is the master of the subnet (minhop: no route file yet)" \
  wait_until 90 grep -q "Entering MASTER state" "$ib/opensm.out"

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
cp "$ib/complete.lfts" "$ib/minhop.lfts"  # OpenSM's own tables, for a snapshot of them again in 2.

printf 'DbPath=@DIR@/fabric.db\nRouteJobs=yes\nRouteFile=%s\nRouteInterval=5\nRouteCommand=%s\n' "$routes" \
  "echo run >>$ib/runs; test ! -e $ib/refuse || { echo 'sweep refused by the test' >&2; exit 3; }; kill -HUP $osm_pid" \
  >"$work/topo_aware.conf"
bash "$cluster" start --select topo --nodes 'gpu[001-032]' "${plugin_args[@]}" --topo-conf "$work/topo_aware.conf"
on_ib "$topoctl" discover --ibnetdisc --lfts --db "$db" >/dev/null
check "slurmctld's engine loaded the subnet's snapshot" wait_until 30 grep -q "fabric snapshot 1 of " "$log"

# A one-node job on each node named, to shape what is free.
hold() { local n; for n in $(scontrol show hostnames "$1"); do submit -N1 -w "$n" --exclusive --wrap 'sleep 600' >/dev/null; done; }
held_running() { wait_until 90 sh -c '[ -z "$(squeue -h -t PD -o %A)" ]'; }
# Four 2-node topo-aware jobs, each on one host of leaf 1 (gpu001-004) and
# one of leaf 2 (gpu009-012): the only two free when it is submitted. Their
# eight flows between the two leaves need the leaves' four uplinks and the
# spines' four cables down to each leaf; OpenSM's minhop sends a leaf's
# LIDs down only half of those, so the base tables share cables and the
# plan moves entries. Sets $jobs.
four_pairs() {
  local k one two
  hold "gpu[002-008,010-032]"
  held_running || return 1
  jobs=()
  for k in 1 2 3 4; do
    one=$(printf gpu%03d "$k") two=$(printf gpu%03d $((8 + k)))
    scancel $(squeue -h -o '%A %N' | awk -v a="$one" -v b="$two" '$2 == a || $2 == b {print $1}') 2>/dev/null || true
    jobs+=("$(submit --network=topo-aware -N2 --exclusive --wrap 'sleep 600')")
    wait_state "${jobs[-1]}" RUNNING 90 || return 1
  done
}
# Each job's ring as its placement record gives it (what the engine plans
# from), one line per job in job id order: a `route plan --running` file.
rings_of() { # jobs...
  local j
  for j in "$@"; do
    wait_until 30 "$topoctl" job "$j" --db "$db" >/dev/null 2>&1 || return 1
    "$topoctl" job "$j" --db "$db" --json | python3 -c 'import json, sys; print(",".join(json.load(sys.stdin)["ring_order"]))'
  done
}
# The tables `topoctl route apply` writes for the running file `rings`.
expected_file() { # rings out
  "$topoctl" route apply --db "$db" --running "$1" --opensm-file "$2" --json >"$2.json"
}
applies() { grep -c "topo-aware: routes applied: " "$log" || true; }
failures() { grep -c "topo-aware: routes not applied, the tables stay as they were: " "$log" || true; }
# The engine logs an apply after writing the file and running the command:
# wait for the line, it follows the file by a moment.
applied_since_before() { [ "$(applies)" -gt "$before" ]; }

# --- 1. four multi-leaf jobs -------------------------------------------------
before=$(applies)
check "four topo-aware jobs across leaves 1 and 2 run" four_pairs
rings_of "${jobs[@]}" >"$work/running.txt"
sed 's/^/  ring: /' "$work/running.txt"
expected_file "$work/running.txt" "$work/expected.lfts"
changes=$(grep -c '"base_port"' "$work/expected.lfts.json" || true)
echo "  the plan for them changes $changes table entries"
check "the plan for the four rings changes table entries" test "$changes" -gt 0
check "the file slurmctld wrote becomes the plan for the running rings" \
  wait_until 60 cmp -s "$routes" "$work/expected.lfts"
check "slurmctld logged its applies" wait_until 30 applied_since_before
grep "routes applied: " "$log" | tail -n1 | sed 's/^.*topo-aware: /  /'
check "OpenSM swept: the live tables equal the file" wait_until 60 live_equals_file "$routes"

# --- 2. new snapshots while the jobs run -------------------------------------
# The base tables change under the running jobs: a snapshot with ftree's
# tables (as an admin would store after switching OpenSM's engine), then
# one with OpenSM's minhop tables again. The engine plans from each as its
# watcher loads it, no job starting or ending; the file and the live
# tables follow.
differ() { ! cmp -s "$1" "$2"; }
before=$(applies)
on_ib "$topoctl" discover --ibnetdisc --routing static:ftree --db "$db" >/dev/null
expected_file "$work/running.txt" "$work/expected-ftree.lfts"
check "the plan on ftree's tables differs from the plan on minhop's" \
  differ "$work/expected.lfts" "$work/expected-ftree.lfts"
check "the file becomes the plan on the new snapshot" wait_until 60 cmp -s "$routes" "$work/expected-ftree.lfts"
check "slurmctld logged the apply" wait_until 30 applied_since_before
check "OpenSM swept: the live tables equal the new file" wait_until 60 live_equals_file "$routes"
on_ib "$topoctl" discover --ibnetdisc --lfts-dump "$ib/minhop.lfts" --db "$db" >/dev/null
check "a snapshot of minhop's tables again: the file becomes the first plan" \
  wait_until 60 cmp -s "$routes" "$work/expected.lfts"
check "live too" wait_until 60 live_equals_file "$work/expected.lfts"

# --- 3. the jobs end ---------------------------------------------------------
expected_file /dev/null "$work/base.lfts"
before=$(applies)
check "all jobs cancelled" cancel_all
check "the next apply writes the base tables" wait_until 60 cmp -s "$routes" "$work/base.lfts"
check "slurmctld logged it" wait_until 30 applied_since_before
check "live, every LID has its base entries back" wait_until 60 live_equals_file "$work/base.lfts"

# --- 4. a RouteCommand that fails --------------------------------------------
touch "$ib/refuse"
runs_before=$(wc -l <"$ib/runs")
check "the four jobs again" four_pairs
said_why() { [ "$(failures)" -ge 1 ]; }
check "slurmctld says in one line why the routes were not applied" wait_until 60 said_why
grep "routes not applied" "$log" | tail -n1 | sed 's/^.*topo-aware: /  /'
check "the line names the command's failure" grep -q "exited with status 3: sweep refused by the test" "$log"
check "the file stays the base tables" cmp -s "$routes" "$work/base.lfts"
check "the live tables stay the base" live_equals_file "$work/base.lfts"
# Tried again after the interval (10 s at least after a failure): the
# same reason is not said again.
sleep 25
check "tried again" test "$(wc -l <"$ib/runs")" -ge $((runs_before + 2))
check "still one line" test "$(failures)" = 1
check "all jobs cancelled" cancel_all

[ "$failed" = 0 ]
