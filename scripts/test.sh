#!/usr/bin/env bash
# Runs every test of topo-aware:
#   1. a RelWithDebInfo build: unit tests and the system tests (ibsim and
#      OpenSM, and a Slurm cluster of 32 slurmd with the plugins, which the
#      tests start and stop themselves),
#   2. an AddressSanitizer + UBSan build: the unit tests again,
#   3. every libFuzzer target (clang, ASan + UBSan) a few seconds on its
#      corpus (scripts/fuzz.sh --ci; TOPO_FUZZ_SECONDS, default 5),
#   4. every benchmark in a short mode, printing its figures,
#   5. the speed gate: instructions of the estimate, placement, engine and
#      ingest benchmarks against tests/bench/budgets.txt (scripts/speed-gate.sh).
# Build trees live in $TOPO_BUILD_DIR (default: build/ in the checkout).
# Each stage's time is printed at the end.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${TOPO_BUILD_DIR:-$root/build}
jobs=${TOPO_JOBS:-$(nproc)}

stage_names=()
stage_seconds=()
stage_started=$(date +%s)
step() {
  local now
  now=$(date +%s)
  if ((${#stage_names[@]})); then stage_seconds+=($((now - stage_started))); fi
  stage_names+=("$*")
  stage_started=$now
  printf '\n=== %s\n' "$*"
}
stage_times() {
  local i total=0
  if ((${#stage_names[@]} > ${#stage_seconds[@]})); then stage_seconds+=($(($(date +%s) - stage_started))); fi
  printf '\n=== stage times\n'
  for i in "${!stage_names[@]}"; do
    printf '%6d s  %s\n' "${stage_seconds[$i]}" "${stage_names[$i]}"
    total=$((total + stage_seconds[i]))
  done
  printf '%6d s  total\n' "$total"
}
trap stage_times EXIT

# The Slurm plugins build against the configured source of the installed
# Slurm 22.05 (cached outside the checkout by scripts/slurm-source.sh) and
# of the releases in TOPO_SLURM_RELEASES (default 24.11.5 25.11.7 26.05.3),
# each built once per machine into the same cache by scripts/slurm-build.sh
# (6 to 10 minutes each the first time on two idle cores; an empty
# TOPO_SLURM_RELEASES leaves them out).  Their tests start real clusters,
# which needs root.
slurm_args=()
if [ "$(id -u)" = 0 ] && command -v slurmctld >/dev/null; then
  step "Slurm source trees"
  slurm_src=$(bash "$root/scripts/slurm-source.sh")
  slurm_build=$(bash "$root/scripts/slurm-source.sh" --build-dir)
  for release in ${TOPO_SLURM_RELEASES-24.11.5 25.11.7 26.05.3}; do
    step "Slurm $release (scripts/slurm-build.sh, cached)"
    bash "$root/scripts/slurm-build.sh" "$release" >/dev/null
    slurm_src+=";$(bash "$root/scripts/slurm-build.sh" "$release" --source-dir)"
    slurm_build+=";$(bash "$root/scripts/slurm-build.sh" "$release" --build-dir)"
  done
  slurm_args=(-DSLURM_SRC_DIR="$slurm_src" -DSLURM_BUILD_DIR="$slurm_build")
fi

step "release build"
# ccache, where installed, as scripts/fuzz.sh uses it: a second run rebuilds
# only what changed.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build/release" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" "${slurm_args[@]}" \
  >/dev/null
ninja -C "$build/release" -j "$jobs"

step "unit and system tests"
ctest --test-dir "$build/release" --output-on-failure -j "$jobs"

step "AddressSanitizer + UBSan build, unit tests"
cmake -S "$root" -B "$build/asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTOPO_SANITIZE=ON "${launcher[@]}" >/dev/null
ninja -C "$build/asan" -j "$jobs" topo_tests
# intercept_tls_get_addr=0: gcc 12's LeakSanitizer crashes ("Tracer caught
# signal 11") scanning the dynamic TLS of libraries dlopen'ed by hwloc once
# Graphviz is linked in; tests/lsan.supp names the other projects' leaks.
ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 LSAN_OPTIONS=suppressions=$root/tests/lsan.supp \
  UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir "$build/asan" -L unit --output-on-failure -j "$jobs"

step "fuzz targets, 2,000 inputs each from their corpus (seed 1, at most ${TOPO_FUZZ_SECONDS:-5} s)"
TOPO_BUILD_DIR=$build bash "$root/scripts/fuzz.sh" --ci --seconds "${TOPO_FUZZ_SECONDS:-5}"

step "benchmarks (short mode)"
for bench in "$build/release"/tests/*_bench; do
  [ -x "$bench" ] || continue
  echo "--- $(basename "$bench")"
  "$bench" --benchmark_min_time=0.01 --benchmark_counters_tabular=true
done

step "speed gate (instructions against tests/bench/budgets.txt, +10% allowed)"
bash "$root/scripts/speed-gate.sh" --build "$build/release"

step "all tests passed"
