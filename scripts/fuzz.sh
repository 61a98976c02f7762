#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz (see README.md, "Fuzzing").
#
#   scripts/fuzz.sh [--seconds N] [--runs R] [--parallel P] [--build DIR] [--no-build] [--jobs J] [--ci] [target...]
#
# Builds them first (clang, -DTOPO_FUZZ=ON, in DIR, default build/fuzz; not
# with --no-build, which runs what DIR holds), then
# runs each target N seconds (default 600) or until it has run R inputs,
# whichever comes first (--runs 10000000 is the goal's count), P at a time (default 1),
# each on J processes (default 1; libFuzzer's -fork=J: the table counts all their inputs), on its
# seed corpus (tests/fuzz/corpus/<target>, never written to) plus a work
# corpus of its own (DIR/fuzz-work/<target>, kept between runs) with its
# dictionary. --ci: the seed corpus alone in a fresh work directory, 2,000
# inputs from seed 1 (at most N seconds), findings kept in DIR/fuzz-findings, as
# scripts/test.sh runs it. No target named: every one. On a shared machine,
# run it under `nice`.
#
# A crash, leak, timeout (over 60 s on one input: 2 shared cores), out-of-memory (over 2 GB)
# or failed assertion stops that target with its input saved as
# DIR/fuzz-work/<target>-crash-* (-timeout-*, -oom-*, -leak-*); the script
# then exits 1 after the others. At the end, a table gives each target's
# executions, coverage and result.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=600
build=${TOPO_BUILD_DIR:-$root/build}/fuzz
jobs=1
runs=0
parallel=1
ci=0
build_first=1
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --parallel) parallel=$2; shift 2 ;;
    --ci) ci=1; shift ;;
    --no-build) build_first=0; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
# libFuzzer reads -max_total_time=0 as no limit at all.
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --seconds takes a whole number from 1" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --jobs takes a whole number from 1" >&2; exit 2; }
[[ "$runs" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: --runs takes a whole number" >&2; exit 2; }
[[ "$parallel" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --parallel takes a whole number from 1" >&2; exit 2; }

export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
if ((build_first)) && [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTOPO_FUZZ=ON -DTOPO_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
fi
((build_first)) && ninja -C "$build" topo_fuzzers

if ((${#targets[@]} == 0)); then
  for f in "$root"/tests/fuzz/*_fuzz.cc; do
    t=$(basename "$f" _fuzz.cc)
    [ -x "$build/tests/fuzz/fuzz_$t" ] && targets+=("$t")
  done
fi

work=$build/fuzz-work
artifacts=$work
if ((ci)); then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # What CI finds outlives its scratch corpus.
  artifacts=$build/fuzz-findings
fi
mkdir -p "$work" "$artifacts"
for t in "${targets[@]}"; do
  [ -x "$build/tests/fuzz/fuzz_$t" ] || { echo "fuzz.sh: no target $t (tests/fuzz/${t}_fuzz.cc, topo_fuzz_target in tests/fuzz/CMakeLists.txt)" >&2; exit 2; }
done

# One target's run; its log is $work/<target>.log, its outcome $work/<target>.result.
run_target() {
  local t=$1
  local bin=$build/tests/fuzz/fuzz_$t
  local seeds=$root/tests/fuzz/corpus/$t
  local dict=$root/tests/fuzz/dict/$t.dict
  mkdir -p "$work/$t" "$seeds"
  # tests/fuzz/<target>.options may set a smaller max_len (OSS-Fuzz's
  # format); inputs past the real files' sizes only slow a long run.
  local max_len=65536
  local options=$root/tests/fuzz/$t.options
  [ -f "$options" ] && max_len=$(sed -n 's/^max_len *= *\([0-9]\+\) *$/\1/p' "$options" | tail -1)
  [[ "$max_len" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: $options: expected a line 'max_len = N'" >&2; return 1; }
  local args=(-max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len="$max_len"
              -print_final_stats=1 -artifact_prefix="$artifacts/$t-" -close_fd_mask=1)
  # CI: a fixed seed and a fixed number of inputs, so that a run is the same
  # on every machine and fails only when a change breaks a reader; the long
  # runs without --ci are where new findings come from.
  if ((ci)); then
    args+=(-seed=1 -runs=2000)
  elif ((runs)); then
    args+=(-runs="$runs")
  fi
  [ -f "$dict" ] && args+=(-dict="$dict")
  ((jobs > 1)) && args+=(-fork="$jobs")
  echo "--- $t: ${seconds} s$( ((runs && !ci)) && echo " or $runs inputs")"
  if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$bin" "${args[@]}" "$work/$t" "$seeds" </dev/null >"$work/$t.log" 2>&1; then
    echo clean >"$work/$t.result"
  else
    echo FAILED >"$work/$t.result"
  fi
}

for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n || true; done
  run_target "$t" &
done
wait

failed=()
printf '%-16s %14s %8s  %s\n' target executions coverage result
for t in "${targets[@]}"; do
  log=$work/$t.log
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" 2>/dev/null | tail -1)
  # -fork (--jobs) prints no final stats: its last "#N:" line counts every worker's inputs.
  [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]\+\): cov:.*/\1/p' "$log" 2>/dev/null | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2 || true)
  result=$(cat "$work/$t.result" 2>/dev/null || echo FAILED)
  printf '%-16s %14s %8s  %s\n' "$t" "${execs:-?}" "${cov:-?}" "$result"
  [ "$result" = clean ] || failed+=("$t")
done
for t in "${failed[@]}"; do
  echo "fuzz.sh: $t FAILED; its log follows (input saved under $artifacts/$t-*)"
  grep -v '^#[0-9]' "$work/$t.log" | tail -60
done
if ((${#failed[@]})); then
  echo "fuzz.sh: findings in ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets clean"
