#!/usr/bin/env bash
# Runs every test of topo-aware:
#   1. a RelWithDebInfo build: unit tests and the system tests (ibsim and
#      OpenSM, lldpd, the browser), then the Slurm suites of tests/slurm/
#      (real one-machine clusters of each release, one at a time, which the
#      tests start and stop themselves),
#   2. an AddressSanitizer + UBSan build: the unit tests again,
#   3. every libFuzzer target (clang, ASan + UBSan) a few seconds on its
#      corpus (scripts/fuzz.sh --ci; TOPO_FUZZ_SECONDS, default 5),
#   4. the speed gate: instructions of the estimate, placement, engine and
#      ingest benchmarks against tests/bench/budgets.txt (scripts/speed-gate.sh),
#   5. every benchmark in a short mode, printing its figures.
#
# The Slurm suites spend most of their time waiting for daemons, so work
# that only needs CPU runs beside the critical path, in lanes at nice 10
# (the daemons and the tests they serve keep the CPU whenever they want it;
# once the main lane has nothing left but to wait for the lanes, they are
# the critical path and go back to nice 0, when run as root):
#   main lane   Slurm trees -> release build -> unit and system tests
#               -> Slurm suites -> (all lanes done) -> benchmarks
#   sanitizers  from the start: ASan + UBSan build -> its unit tests -> fuzz
#   speed gate  once the release build and its tests are done
# Benchmarks time themselves, so they run last, alone.
#
# Build trees live in $TOPO_BUILD_DIR (default: build/ in the checkout).
# Each stage's output goes to $TOPO_BUILD_DIR/logs/<stage>.log, printed
# whole when the stage fails, its last lines otherwise (TOPO_LOG_TAIL,
# default 15).  The run stops at the first failure of the main lane; a
# failed lane fails the run once every lane is done.  At the end a table
# gives each stage's start, wall time and lane, and the run's total.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${TOPO_BUILD_DIR:-$root/build}
jobs=${TOPO_JOBS:-$(nproc)}
tail_lines=${TOPO_LOG_TAIL:-15}
logs=$build/logs
run_started=$(date +%s)
lane=main
lane_pids=()

rm -rf "$logs"
mkdir -p "$logs"

# stage [--whole] SLUG TITLE COMMAND...: runs COMMAND with its output in
# $logs/SLUG.log and records "order start end status lane title" in
# $logs/SLUG.stage ("-" for end and status while it runs) for the table;
# order, the start in nanoseconds, keeps stages of one second in sequence.
# Bash ignores set -e inside anything called from a `&&` or `||` list, as
# stages are, so the step functions below chain their commands with &&.
stage() {
  local whole=0
  if [ "$1" = --whole ]; then whole=1; shift; fi
  local slug=$1 title=$2
  shift 2
  local log=$logs/$slug.log order started rc=0
  order=$(date +%s%N)
  started=$((order / 1000000000))
  printf '%s %s - - %s %s\n' "$order" "$started" "$lane" "$title" >"$logs/$slug.stage"
  printf '=== [%s +%ds] %s (log: %s)\n' "$lane" $((started - run_started)) "$title" "$log"
  "$@" >"$log" 2>&1 </dev/null || rc=$?
  printf '%s %s %s %s %s %s\n' "$order" "$started" "$(date +%s)" "$rc" "$lane" "$title" >"$logs/$slug.stage"
  report "$log" "$title" "$rc" "$whole"
  return "$rc"
}

# Prints a finished stage's result and log (whole on failure) in one write,
# so that lanes finishing together do not interleave their lines.
report() {
  local log=$1 title=$2 rc=$3 whole=$4 text
  if ((rc)); then
    text=$(printf '=== [%s] FAILED (exit %d): %s; its log:\n' "$lane" "$rc" "$title"; cat "$log")
  elif ((whole)); then
    text=$(printf '=== [%s] done: %s; its log:\n' "$lane" "$title"; cat "$log")
  else
    text=$(printf '=== [%s] done: %s; last lines of its log:\n' "$lane" "$title"; tail -n "$tail_lines" "$log")
  fi
  printf '%s\n' "$text"
}

# start_lane NAME FUNCTION: runs FUNCTION in the background at nice 10.
start_lane() {
  local name=$1 fn=$2
  (
    lane=$name
    renice -n 10 -p "$BASHPID" >/dev/null
    "$fn"
  ) &
  lane_pids+=($!)
}

# Waits for every lane, at nice 0 now that nothing else runs (only root may
# lower a nice value; others wait at 10); fails when any lane failed (its
# log is printed already).
wait_lanes() {
  local pid failed=0
  for pid in "${lane_pids[@]}"; do
    # shellcheck disable=SC2046 # one word per process id
    renice -n 0 -p $(tree_pids "$pid") >/dev/null 2>&1 || true
  done
  for pid in "${lane_pids[@]}"; do wait "$pid" || failed=1; done
  lane_pids=()
  return "$failed"
}

# Ends a lane still running (the main lane failed): the lane's processes
# and everything they started, by process id.
stop_lanes() {
  local pid
  for pid in "${lane_pids[@]}"; do
    # shellcheck disable=SC2046 # one word per process id
    kill $(tree_pids "$pid") 2>/dev/null || true
  done
}
# A process and all its descendants, one id a line.
tree_pids() {
  local child
  echo "$1"
  for child in $(pgrep -P "$1"); do tree_pids "$child"; done
}

# Each stage's start (seconds into the run), wall time and lane: stages of
# different lanes whose spans overlap ran beside each other, so the total
# is the run's wall time, not the sum of the column.
stage_times() {
  local file order started ended rc name title wall
  printf '\n=== stage times (start: seconds into the run; lanes run beside each other)\n'
  printf '%6s %7s  %-10s %s\n' start wall lane stage
  for file in "$logs"/*.stage; do printf '%s %s\n' "$(cut -d' ' -f1 "$file")" "$file"; done |
    sort -n -k1,1 | cut -d' ' -f2- | while read -r file; do
    read -r order started ended rc name title <"$file"
    if [ "$ended" = - ]; then
      printf '%6d %7s  %-10s %s (stopped)\n' $((started - run_started)) - "$name" "$title"
      continue
    fi
    wall=$((ended - started))
    printf '%6d %5d s  %-10s %s%s\n' $((started - run_started)) "$wall" "$name" "$title" \
      "$([ "$rc" = 0 ] || echo " (FAILED, exit $rc)")"
  done
  printf '%6s %5d s  %-10s total (wall)\n' '' $(($(date +%s) - run_started)) ''
}
on_exit() {
  stop_lanes
  stage_times
}
trap on_exit EXIT

# ccache, where installed, as scripts/fuzz.sh uses it: a second run rebuilds
# only what changed.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

asan_build() {
  cmake -S "$root" -B "$build/asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTOPO_SANITIZE=ON "${launcher[@]}" &&
    ninja -C "$build/asan" -j "$jobs" topo_tests
}

# intercept_tls_get_addr=0: gcc 12's LeakSanitizer crashes ("Tracer caught
# signal 11") scanning the dynamic TLS of libraries dlopen'ed by hwloc once
# Graphviz is linked in; tests/lsan.supp names the other projects' leaks.
asan_tests() {
  ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 LSAN_OPTIONS=suppressions=$root/tests/lsan.supp \
    UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir "$build/asan" -L unit --output-on-failure -j "$jobs"
}

sanitizers_lane() {
  stage asan-build "AddressSanitizer + UBSan build" asan_build &&
    stage asan-tests "AddressSanitizer + UBSan unit tests" asan_tests &&
    stage fuzz "fuzz targets, 2,000 inputs each from their corpus (seed 1, at most ${TOPO_FUZZ_SECONDS:-5} s)" \
      env TOPO_BUILD_DIR="$build" bash "$root/scripts/fuzz.sh" --ci --seconds "${TOPO_FUZZ_SECONDS:-5}"
}

speed_gate_lane() {
  stage speed-gate "speed gate (instructions against tests/bench/budgets.txt, +10% allowed)" \
    bash "$root/scripts/speed-gate.sh" --build "$build/release"
}

# The Slurm plugins build against the configured source of the installed
# Slurm 22.05 (cached outside the checkout by scripts/slurm-source.sh) and
# of the releases in TOPO_SLURM_RELEASES (default 24.11.5 25.11.7 26.05.3),
# each built once per machine into the same cache by scripts/slurm-build.sh
# (6 to 10 minutes each the first time on two idle cores; an empty
# TOPO_SLURM_RELEASES leaves them out).  Their tests start real clusters,
# which needs root.  One tree at a time: both scripts may add an apt source
# and run apt-get, which two at once would fight over.
slurm_args=()
prepare_slurm_trees() {
  local slurm_src slurm_build release
  stage slurm-2205 "Slurm 22.05 source tree (scripts/slurm-source.sh, cached)" bash "$root/scripts/slurm-source.sh"
  slurm_src=$(bash "$root/scripts/slurm-source.sh" 2>/dev/null)
  slurm_build=$(bash "$root/scripts/slurm-source.sh" --build-dir 2>/dev/null)
  for release in ${TOPO_SLURM_RELEASES-24.11.5 25.11.7 26.05.3}; do
    stage "slurm-$release" "Slurm $release (scripts/slurm-build.sh, cached)" \
      bash "$root/scripts/slurm-build.sh" "$release"
    slurm_src+=";$(bash "$root/scripts/slurm-build.sh" "$release" --source-dir 2>/dev/null)"
    slurm_build+=";$(bash "$root/scripts/slurm-build.sh" "$release" --build-dir 2>/dev/null)"
  done
  slurm_args=(-DSLURM_SRC_DIR="$slurm_src" -DSLURM_BUILD_DIR="$slurm_build")
}

release_build() {
  cmake -S "$root" -B "$build/release" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" "${slurm_args[@]}" &&
    ninja -C "$build/release" -j "$jobs"
}

# Every Slurm suite is named slurm_* (tests/CMakeLists.txt) and RUN_SERIAL;
# the ctest of the other tests runs first, on a machine the suites do not
# share, and the suites after it, one cluster at a time.
other_tests() { ctest --test-dir "$build/release" --output-on-failure -j "$jobs" -E '^slurm_'; }
slurm_suites() { ctest --test-dir "$build/release" --output-on-failure -R '^slurm_'; }

benchmarks() {
  local bench
  for bench in "$build/release"/tests/*_bench; do
    [ -x "$bench" ] || continue
    echo "--- $(basename "$bench")"
    "$bench" --benchmark_min_time=0.01 --benchmark_counters_tabular=true || return
  done
}

start_lane sanitizers sanitizers_lane
if [ "$(id -u)" = 0 ] && command -v slurmctld >/dev/null; then prepare_slurm_trees; fi
stage release-build "release build" release_build
stage other-tests "unit and system tests (all but the Slurm suites)" other_tests
start_lane speed speed_gate_lane
slurm_status=0
stage slurm-suites "Slurm suites (tests/slurm/, one cluster at a time)" slurm_suites || slurm_status=$?
wait_lanes
((slurm_status == 0))
stage --whole benchmarks "benchmarks (short mode), alone on the machine" benchmarks
printf '\n=== all tests passed\n'
