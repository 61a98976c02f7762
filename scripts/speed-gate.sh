#!/usr/bin/env bash
# The speed gate: instructions per iteration of selected benchmarks against
# committed budgets (tests/bench/budgets.txt). Fails when any benchmark
# needs more than its budget plus 10%.
#
#   scripts/speed-gate.sh [--build DIR] [--budgets FILE] [--only REGEX]
#                         [--tolerance PERCENT] [--update]
#
# Each budget line reads: name, instructions per iteration, iterations,
# then the benchmark command (a binary of DIR/tests and its arguments). The
# command runs with TOPO_BENCH_ITERATIONS set to the iterations, under
# `valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no`: the
# benchmarks instrument and count only the call they time
# (tests/bench/counted.h), so the figure is the same on a quiet machine and
# a busy one, and the setup before the loop runs at Valgrind's uninstrumented
# speed. (`perf stat -e instructions` would count the setup too, and this
# VM's perf has no instructions counter.)
#
# --build DIR      the release build (default: $TOPO_BUILD_DIR/release or
#                  build/release in the checkout)
# --only REGEX     only the budgets whose name matches
# --tolerance P    allowed growth over a budget in percent (default 10)
# --update         write the measured figures into the budget file (to set
#                  a budget after a change that is meant to cost more or
#                  less; review the diff)
#
# Prints a table (name, budget, measured, change, verdict). Exit status: 0
# all within budget, 1 one or more over, 2 a benchmark failed or bad usage.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${TOPO_BUILD_DIR:-$root/build}/release
budgets=$root/tests/bench/budgets.txt
only=.
tolerance=10
update=0

die() { printf 'speed-gate: %s\n' "$*" >&2; exit 2; }
while (($#)); do
  case $1 in
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --update) update=1; shift; continue ;;
  esac
  (($# >= 2)) || die "$1 needs a value (see --help)"
  case $1 in
    --build) build=$2 ;;
    --budgets) budgets=$2 ;;
    --only) only=$2 ;;
    --tolerance) [[ $2 =~ ^[0-9]+$ ]] || die "--tolerance takes a whole percent"; tolerance=$2 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift 2
done
command -v valgrind >/dev/null || die "valgrind is not installed (apt-get install valgrind)"
[ -r "$budgets" ] || die "no budget file $budgets"
[ -d "$build/tests" ] || die "no build in $build (--build)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Instructions per iteration of one command, or a message on stderr and
# status 2.
measure() { # name iterations binary args...
  local name=$1 iterations=$2 binary=$build/tests/$3
  shift 3
  [ -x "$binary" ] || { echo "speed-gate: $name: no $binary" >&2; return 2; }
  local out=$work/$name
  if ! TOPO_BENCH_ITERATIONS=$iterations valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no \
    --callgrind-out-file="$out.%p.callgrind" "$binary" "$@" --benchmark_format=json >"$out.json" 2>"$out.log"; then
    echo "speed-gate: $name: the benchmark failed:" >&2
    tail -5 "$out.log" >&2
    return 2
  fi
  if grep -q '"error_occurred": true' "$out.json" || ! grep -q "\"iterations\": $iterations," "$out.json"; then
    echo "speed-gate: $name: no clean run of $iterations iterations (filter matched nothing, or an error):" >&2
    grep -E '"(name|iterations|error_message)"' "$out.json" >&2 || true
    return 2
  fi
  # Counted (tests/bench/counted.h) dumps each call to a file of its own,
  # NAME.PID.callgrind.PART; the first call grows the buffers a thread
  # keeps, so with more than one the first is left out.
  local -a parts
  mapfile -t parts < <(for f in "$out".*.callgrind.*; do
    [ -e "$f" ] || continue
    echo "$(awk '/^part:/ { print $2 }' "$f") $(awk '/^totals:/ { print $2 }' "$f")"
  done | sort -n | awk '{ print $2 }')
  if ((${#parts[@]} != iterations)); then
    echo "speed-gate: $name: ${#parts[@]} counted calls in $iterations iterations (one Counted scope an iteration)" >&2
    return 2
  fi
  if ((iterations > 1)); then parts=("${parts[@]:1}"); fi
  local total=0 part
  for part in "${parts[@]}"; do total=$((total + part)); done
  ((total > 0)) || { echo "speed-gate: $name: nothing counted" >&2; return 2; }
  iterations=${#parts[@]}
  echo $(((total + iterations / 2) / iterations))
}

thousands() { sed ':a; s/\B[0-9]\{3\}\>/,&/; ta' <<<"$1"; }

failed=0 broken=0
rows=()
updated=$work/budgets.txt
: >"$updated"
while IFS= read -r line || [ -n "$line" ]; do
  if [[ $line =~ ^[[:space:]]*(#|$) ]]; then
    echo "$line" >>"$updated"
    continue
  fi
  read -r name budget iterations command <<<"$line"
  [[ $budget =~ ^[0-9]+$ && $iterations =~ ^[1-9][0-9]*$ && -n $command ]] ||
    die "$budgets: bad line (name, instructions, iterations, command): $line"
  if ! [[ $name =~ $only ]]; then
    echo "$line" >>"$updated"
    continue
  fi
  read -r -a argv <<<"$command"
  printf 'speed-gate: %s (%s iterations under callgrind)\n' "$name" "$iterations" >&2
  if ! measured=$(measure "$name" "$iterations" "${argv[@]}"); then
    broken=1
    rows+=("$name|$(thousands "$budget")|-|-|FAILED TO RUN")
    echo "$line" >>"$updated"
    continue
  fi
  change=$(awk -v m="$measured" -v b="$budget" 'BEGIN { printf "%+.1f%%", b ? (m - b) * 100 / b : 0 }')
  verdict=ok
  if ((measured * 100 > budget * (100 + tolerance))); then
    verdict="OVER BUDGET (> +$tolerance%)"
    failed=1
  fi
  rows+=("$name|$(thousands "$budget")|$(thousands "$measured")|$change|$verdict")
  printf '%-34s %12s %3s %s\n' "$name" "$measured" "$iterations" "$command" >>"$updated"
done <"$budgets"

printf '\n%-34s %14s %14s %8s  %s\n' benchmark "budget (Ir)" "measured (Ir)" change verdict
for row in "${rows[@]}"; do
  IFS='|' read -r name budget measured change verdict <<<"$row"
  printf '%-34s %14s %14s %8s  %s\n' "$name" "$budget" "$measured" "$change" "$verdict"
done
echo "(instructions per iteration, counted by callgrind; budgets in ${budgets#"$root"/})"

if ((update)); then
  cp "$updated" "$budgets"
  echo "speed-gate: wrote the measured figures into $budgets" >&2
fi
((broken)) && exit 2
((failed)) && { echo "speed-gate: FAILED: a benchmark grew more than $tolerance% over its budget" >&2; exit 1; }
echo "speed-gate: every benchmark within its budget (+$tolerance%)"
