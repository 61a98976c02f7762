#!/bin/bash
# Checks scripts/quality-table.py on small results written here: a row is
# computed from the runs' JSON with its verdict, a missed goal exits 1 and
# says where, rows whose results are missing are kept as stored, only the
# lines between the markers change, and bad input is an error naming the
# file.
#
#   tests/tools/quality_table_test.sh --script scripts/quality-table.py
set -euo pipefail

die() { printf 'quality_table_test: %s\n' "$*" >&2; exit 2; }
[ "${1:-}" = --script ] && [ $# = 2 ] || die "usage: $0 --script PATH"
script=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() { # what command...: the command must succeed
  if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; failures=$((failures + 1)); fi
}

# Six block-goal runs: topo-aware as good as block everywhere, free domains
# of run $1 set to $2 (block has 2.66).
block_results() { # run free-domains
  /usr/bin/python3 - "$work/results" "$1" "$2" <<'PY'
import json, os, sys
out, short_run, free = sys.argv[1], sys.argv[2], float(sys.argv[3])
os.makedirs(out, exist_ok=True)
for run in ["01", "02", "03", "04", "05", "generated"]:
    def p(domains, slow):
        return {"mean_slowdown": slow, "mean_allreduce_slowdown": slow, "p95_allreduce_slowdown": slow,
                "nvlink": {"segments_split": 0, "mean_free_whole_domains": domains}}
    doc = {"trace": "x, judged with --sharing flows, runs stretched by comm share", "policies": {
        "block": p(2.66, 1.04), "topo-aware": p(free if run == short_run else 2.70, 1.01),
        "tree": p(1.0, 1.2)}}
    json.dump(doc, open(f"{out}/sim-block-{run}.json", "w"))
PY
}
printf '# doc\n\nbefore\n<!-- quality-table: begin (scripts/quality-table.py --write) -->\nold\n<!-- quality-table: end -->\nafter\n' \
  >"$work/doc.md"
echo '{"ecmp": {"goal": "kept goal", "figure": "kept figure", "verdict": "met", "command": "`x`"}}' >"$work/rows.json"
run() { /usr/bin/python3 "$script" --results "$work/results" --store "$work/rows.json" "$@"; }

block_results none 0
check "a met goal exits 0" run --rows block-goal --write "$work/doc.md"
check "its row says met" grep -q '| --sharing flows, runs stretched: segments split 0; free whole domains 2.70 .* | met | ' "$work/doc.md"
check "a stored row without results is kept" grep -q '^| kept goal | kept figure | met | `x` |$' "$work/doc.md"
check "lines outside the markers are kept" grep -qx 'before' "$work/doc.md"
check "the old table is gone" bash -c "! grep -qx old '$work/doc.md'"
check "the table follows the begin marker" bash -c "grep -A1 'quality-table: begin' '$work/doc.md' | grep -q '^| goal |'"

block_results 02 2.44
status=0
run --rows block-goal --write "$work/doc.md" >/dev/null || status=$?
check "a missed goal exits 1" test "$status" = 1
check "the verdict says which run and by how much" grep -q 'missed: free domains short on 02 by 0.22' "$work/doc.md"

status=0
run --rows nonsense >"$work/out" 2>&1 || status=$?
check "an unknown row exits 2" test "$status" = 2
check "and names it" grep -q "unknown row 'nonsense'" "$work/out"

echo '{"trace": "x", "policies": {' >"$work/results/sim-block-03.json"
status=0
run --rows block-goal >"$work/out" 2>&1 || status=$?
check "a results file that is not JSON is refused" test "$status" = 1
check "naming the file and line" grep -q 'sim-block-03.json:[0-9]*: not JSON' "$work/out"

cat >"$work/results/simgrid-check.txt" <<'TXT'
family       routing    jobs       flows p95 / max       steps p95 / max  stationary p95 / max  SimGrid mean
random       static      421    0.078 /   0.184    0.067 /   0.332    0.164 /   0.334         2.707
contiguous   adaptive      0    0.000 /   0.000    0.000 /   0.000    0.000 /   0.000         1.000
per job |judge/SimGrid - 1| over jobs slowed more than 1% by either; default judge: steps
TXT
status=0
run --rows judge >"$work/out" || status=$?
check "the judge's row reads the default judge's column" grep -q 'static 0.067 (max 0.332); adaptive -' "$work/out"
check "and misses above 5%" test "$status" = 1

[ "$failures" = 0 ] || { echo "$failures checks failed"; exit 1; }
echo "all checks passed"
