#!/usr/bin/env bash
# slurmctld killed with SIGKILL while topo-aware jobs run and wait, then
# restarted: every job Slurm had saved runs to its end, and every
# topo-aware job has exactly one placement record, the ring it was given.
#
# On a real one-machine cluster (tests/slurm/cluster.sh, 32 nodes
# gpu[001-032], the synthetic 4-leaf fabric in a fresh database):
#   1. six 4-node topo-aware jobs start; their records reach the database
#   2. the database's write lock is taken by another process (sqlite3 in a
#      transaction), so what is placed next stays in the placement journal
#      only: four 2-node topo-aware jobs start (the cluster is then full),
#      four 4-node topo-aware jobs and two plain jobs wait.  A job's record
#      is journaled a moment after it started (24.x's writer thread, the
#      engine's writer on 22.05): two of the four start while that moment
#      is held open (TOPO_AWARE_HOLD_RECORDS), so no record of theirs exists
#      anywhere at the crash
#   3. once Slurm has saved its job state (state/job_state newer than the
#      last start: Slurm loses what it had not saved, NOTES.md), slurmctld
#      gets SIGKILL, the lock is released, slurmctld starts again and
#      replays the journal and records the held jobs from the ring hints
#      Slurm saved with them
#   4. every job completes; every topo-aware job has one record whose ring
#      is the TOPO_RING_ORDER it printed; plain jobs have none; the journal
#      is empty
# About two minutes (the jobs sleep 20 s).
#
# Usage: tests/slurm/crash.sh --topoctl PATH [--plugin-dir DIR] [--slurm-prefix DIR]
#   --slurm-prefix  run the Slurm installed there (scripts/slurm-build.sh's cache)
# Root only.  Uses $TOPO_SLURM_DIR and $TOPO_SLURM_PORT like cluster.sh.
# Ends with "N passed, N failed"; exits non-zero if anything failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
suite_args "$@"
suite_begin
journal=$db.journal
# While this file exists, records are held back (a test hook of
# topology/topo_aware's writer and of the engine's): slurmctld is killed
# inside the window between jobs' start and their records, which the
# restart must close.
hold=$dir/hold-records
export TOPO_AWARE_HOLD_RECORDS=$hold
rm -f "$hold"

blocker_pid=""
release_lock() {
  if [ -n "$blocker_pid" ]; then
    exec 7>&- # EOF: sqlite3 ends its transaction and exits
    wait "$blocker_pid" 2>/dev/null || true
    blocker_pid=""
  fi
}
suite_cleanup() { release_lock; }

topo_job() { submit --network=topo-aware --exclusive "$@" --wrap 'echo "RING=$TOPO_RING_ORDER"; sleep 20'; }
plain_job() { submit --exclusive "$@" --wrap 'echo "RING=${TOPO_RING_ORDER:-none}"; sleep 20'; }
state_of() { job_field "$1" JobState; }
all_running() { local j; for j in "$@"; do [ "$(state_of "$j")" = RUNNING ] || return 1; done; }
ping_up() { scontrol ping 2>/dev/null | grep -q "is UP"; }
mtime() { stat -c %Y "$1" 2>/dev/null || echo 0; }
journal_lines() { cat "$journal"-0 "$journal"-1 2>/dev/null | wc -l; }
records_of() { sqlite3 "$db" "SELECT count(*) FROM placement WHERE job_id = $1"; }

# --- the cluster --------------------------------------------------------------
start_topo_cluster "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2" ''

echo "# 1. jobs placed and stored ($(($(date +%s) - started)) s)"
stored=()
for _ in 1 2 3 4 5 6; do stored+=("$(topo_job -N4)"); done
check "six 4-node topo-aware jobs run" wait_until 60 all_running "${stored[@]}"
stored_in_db() { local j; for j in "${stored[@]}"; do [ "$(records_of "$j")" = 1 ] || return 1; done; }
check "  ... their records are in the database" wait_until 20 stored_in_db

echo "# 2. jobs placed while the database is locked ($(($(date +%s) - started)) s)"
mkfifo "$work/lock"
sqlite3 "$db" <"$work/lock" >/dev/null 2>&1 &
blocker_pid=$!
exec 7>"$work/lock"
echo 'BEGIN IMMEDIATE;' >&7
journaled=()
held=()
for _ in 1 2; do journaled+=("$(topo_job -N2)"); done
check "two 2-node topo-aware jobs run" wait_until 60 all_running "${journaled[@]}"
wait_until 10 sh -c "[ \$(cat '$journal'-0 '$journal'-1 2>/dev/null | wc -l) -ge 2 ]" || true
# Hold the moment between a job's start and its record open.
touch "$hold"
for _ in 1 2; do held+=("$(topo_job -N2)"); done
check "two more run while their records are held back (the cluster is full)" \
  wait_until 60 all_running "${held[@]}"
queued=()
for _ in 1 2 3 4; do queued+=("$(topo_job -N4)"); done
plain=("$(plain_job -N2)" "$(plain_job -N1)")
last_start=$(date +%s)
# A record is journaled once the job has started (24.x: up to a second later).
records_journaled() { [ "$(journal_lines)" -ge "${#journaled[@]}" ] && [ "$(sqlite3 "$db" 'SELECT count(*) FROM placement')" = 6 ]; }
check "  ... their records wait in the journal, not in the database" wait_until 10 records_journaled
if [ ${#held[@]} -gt 0 ]; then
  sleep 2 # two rounds of the writers
  check "  ... the held jobs' records are nowhere yet" sh -c "[ \$(cat '$journal'-0 '$journal'-1 2>/dev/null | wc -l) = ${#journaled[@]} ]"
fi

echo "# 3. SIGKILL after Slurm saved its state, restart ($(($(date +%s) - started)) s)"
saved() { [ "$(mtime "$dir/state/job_state")" -gt "$last_start" ]; }
check "Slurm saved its job state after the last submission" wait_until 30 saved
ctld=$(tr -dc 0-9 <"$dir/run/slurmctld.pid")
kill -KILL "$ctld"
wait_until 10 sh -c "! kill -0 $ctld 2>/dev/null" || true
lines_at_kill=$(journal_lines)
release_lock
rm -f "$hold"
echo "  killed slurmctld $ctld with $lines_at_kill journal lines pending; restarting"
slurmctld -f "$SLURM_CONF"
check "slurmctld answers again" wait_until 60 ping_up
check "  ... it replayed the journal into the database" \
  wait_until 30 grep -q "placement records replayed into the database" "$log"
grep "placement records replayed" "$log" | tail -n1 | sed 's/^/  /'
if [ ${#held[@]} -gt 0 ]; then
  check "  ... and recorded the held jobs from the ring Slurm saved with them" \
    wait_until 30 sh -c "grep -q 'JobId=${held[0]}: recorded after slurmctld restarted' '$log' && grep -q 'JobId=${held[1]}: recorded after slurmctld restarted' '$log'"
  grep "started topo-aware jobs checked after the restart" "$log" | tail -n1 | sed -E 's/^.*(topology\/topo_aware|select\/topo_cons_tres): /  /'
fi

echo "# 4. every job to its end ($(($(date +%s) - started)) s)"
all=("${stored[@]}" "${journaled[@]}" "${held[@]}" "${queued[@]}" "${plain[@]}")
ended() { local j s; for j in "${all[@]}"; do s=$(state_of "$j"); case $s in PENDING|RUNNING|CONFIGURING|COMPLETING|"") return 1 ;; esac; done; }
wait_until 180 ended || true
completed() { local j bad=""; for j in "${all[@]}"; do [ "$(state_of "$j")" = COMPLETED ] || bad+=" $j:$(state_of "$j")"; done
  [ -z "$bad" ] || { echo "  not completed:$bad" >&2; return 1; }; }
check "all ${#all[@]} jobs completed" completed

# job: one record, and its ring is what the job printed.
one_record_with_its_ring() {
  local j=$1 n ring printed
  n=$(records_of "$j")
  [ "$n" = 1 ] || { echo "  job $j has $n placement records" >&2; return 1; }
  printed=$(sed -n 's/^RING=//p' "$dir/out-$j.txt")
  ring=$("$topoctl" job "$j" --db "$db" --json | tr -d ' \n' | sed 's/.*"ring_order":\[\([^]]*\)\].*/\1/' | tr -d '"')
  [ -n "$printed" ] && [ "$ring" = "$printed" ] || { echo "  job $j: recorded ring $ring, printed $printed" >&2; return 1; }
}
each() { local f=$1 j; shift; for j in "$@"; do "$f" "$j" || return 1; done; }
no_record() { [ "$(records_of "$1")" = 0 ] || { echo "  plain job $1 has a record" >&2; return 1; }; }
check "jobs stored before the crash: one record each, their ring" each one_record_with_its_ring "${stored[@]}"
check "jobs journaled before the crash: one record each (replayed once), their ring" \
  each one_record_with_its_ring "${journaled[@]}"
[ ${#held[@]} = 0 ] ||
  check "jobs started but not yet recorded at the crash: one record each, their ring" \
    each one_record_with_its_ring "${held[@]}"
check "jobs queued at the crash: one record each, their ring" each one_record_with_its_ring "${queued[@]}"
check "plain jobs: no record" each no_record "${plain[@]}"
check "the journal is empty again" wait_until 10 sh -c "[ ! -s '$journal-0' ] && [ ! -s '$journal-1' ]"
# While the lock was held the plugin said once that storing waits; nothing else.
check "no other placement error in slurmctld's log" \
  sh -c "! grep -E 'error: .*(placement|journal)' '$log' | grep -v 'storing it in the database waits'"

[ "$failed" = 0 ]
