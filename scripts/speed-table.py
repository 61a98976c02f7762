#!/usr/bin/python3
"""The speed goals that Google Benchmark measures, as a table of one row per goal.

Runs each benchmark of the goals below once (from --build), reads its JSON
output, and prints a Markdown table: the goal, the figure now, whether it
is met, and the command that prints it. With --write FILE the table
replaces the lines between the markers

    <!-- speed-table: begin (scripts/speed-table.py --write) -->
    <!-- speed-table: end -->

in FILE (docs/benchmarks.md), so that the manual shows the latest run and
no history. Exit 1 when a goal is missed, 2 on bad usage or a benchmark that
fails to run.

Usage: scripts/speed-table.py [--build DIR] [--min-time S] [--write FILE]
"""
import argparse
import json
import pathlib
import subprocess
import sys

BEGIN = "<!-- speed-table: begin (scripts/speed-table.py --write) -->"
END = "<!-- speed-table: end -->"

# One goal a row: the goal in words, the benchmark binary and the name of
# its benchmark (a regex anchored at both ends), the figure as a format of
# the benchmark's counters (real_time / cpu_time in its unit), and the test
# that says whether the goal is met (None: a figure without a goal).
GOALS = [
    ("place a 128-host job with seams, 4,096 hosts 60% busy, static tables: p99 <= 1 ms",
     "placement_bench", "BM_PlaceWithSeamsVariedOn4096Busy60Static",
     "thread CPU p50 {cpu_p50_ms:.2f} ms, p99 {cpu_p99_ms:.2f} ms (wall p99 {p99_ms:.2f} ms)",
     lambda c: c["cpu_p99_ms"] <= 1.0),
    ("the same, as the plugin asks (the best candidate first): p99 <= 1 ms",
     "placement_bench", "BM_PlaceWithSeamsVariedOn4096Busy60StaticAsThePluginAsks",
     "thread CPU p50 {cpu_p50_ms:.2f} ms, p99 {cpu_p99_ms:.2f} ms",
     lambda c: c["cpu_p99_ms"] <= 1.0),
    ("place a 128-host job, 4,096 hosts 60% busy, adaptive: p99 <= 1 ms",
     "placement_bench", "BM_Place128HostsOn4096Busy60",
     "thread CPU p50 {cpu_p50_ms:.2f} ms, p99 {cpu_p99_ms:.2f} ms",
     lambda c: c["cpu_p99_ms"] <= 1.0),
    ("place 16 trays in segments of 8, 128 NVL72 racks (2,304 trays) 60% busy: p99 <= 1 ms",
     "placement_bench", "BM_PlaceSegments16On2304Nvl72Busy60",
     "thread CPU p50 {cpu_p50_ms:.2f} ms, p99 {cpu_p99_ms:.2f} ms",
     lambda c: c["cpu_p99_ms"] <= 1.0),
    ("place one whole NVL72 domain (18 trays) on the same cluster: p99 <= 1 ms",
     "placement_bench", "BM_PlaceOneDomainOn2304Nvl72Busy60",
     "thread CPU p50 {cpu_p50_ms:.2f} ms, p99 {cpu_p99_ms:.2f} ms",
     lambda c: c["cpu_p99_ms"] <= 1.0),
    ("place a 1,024-host job on 16,384 hosts",
     "placement_bench", "BM_Place1024HostsOn16384",
     "thread CPU p50 {cpu_p50_ms:.1f} ms", None),
    ("engine rank call, 64 hosts of 4,096: <= 1 ms",
     "engine_bench", "BM_Engine64Of4096Hosts",
     "rank {rank_cpu_us:.0f} us CPU, record {record_cpu_us:.0f} us CPU",
     lambda c: c["rank_cpu_us"] <= 1000),
    ("read + classify 16,384 hosts, 49,152 cables (ibnetdiscover): aim 1 s, 200 MB",
     "ingest_bench", "BM_ReadIbnetdiscover16k/process_time/real_time",
     "{real_time:.0f} ms wall, peak RSS {peak_rss_MB:.0f} MB",
     lambda c: c["real_time"] <= 1000 and c["peak_rss_MB"] <= 200),
    ("discover 128 NVL72 racks (ibnetdiscover + 2,304 nvidia-smi files): < 2 s, 300 MB",
     "nvlink_bench", "BM_DiscoverNvl72x128/process_time/real_time",
     "{real_time:.0f} ms wall of {files_MB:.0f} MB of files, peak RSS {peak_rss_MB:.0f} MB",
     lambda c: c["real_time"] < 2000 and c["peak_rss_MB"] <= 300),
    ("import OpenSM's LFT dump, 16,384-host clos3",
     "opensm_lfts_bench", "BM_ReadOpenSmLfts16k/process_time/real_time",
     "{cpu_time:.0f} ms CPU of a {file_MB:.0f} MB dump, peak RSS {peak_rss_MB:.0f} MB", None),
    ("draw 4,096 hosts",
     "view_bench", "draw/flat_4096_hosts/process_time",
     "{cpu_time:.0f} ms CPU, {svg_kb:.0f} KB SVG", None),
]


def run(build, binary, names, min_time):
    """The JSON benchmarks of one binary whose names match, by name."""
    path = pathlib.Path(build) / "tests" / binary
    if not path.exists():
        sys.exit(f"speed-table: no {path} (build the benchmarks first)")
    pattern = "^(" + "|".join(n.split("/")[0] for n in names) + ")(/|$)"
    cmd = [str(path), f"--benchmark_filter={pattern}", "--benchmark_format=json",
           f"--benchmark_min_time={min_time}"]
    print(f"speed-table: {' '.join(cmd)}", file=sys.stderr)
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"speed-table: {path} failed:\n{done.stderr}")
    return {b["name"]: b for b in json.loads(done.stdout)["benchmarks"]}


def rows(build, min_time):
    by_binary = {}
    for goal in GOALS:
        by_binary.setdefault(goal[1], []).append(goal[2])
    results = {binary: run(build, binary, names, min_time) for binary, names in by_binary.items()}
    missed = 0
    lines = ["| goal | latest figure | verdict | printed by |", "|---|---|---|---|"]
    for text, binary, name, figure, met in GOALS:
        b = results[binary].get(name)
        if b is None:
            sys.exit(f"speed-table: {binary} printed no benchmark {name}")
        if b.get("error_occurred"):
            sys.exit(f"speed-table: {binary} {name}: {b.get('error_message')}")
        counters = dict(b)
        verdict = "" if met is None else ("met" if met(counters) else "**missed**")
        missed += verdict == "**missed**"
        lines.append(f"| {text} | {figure.format(**counters)} | {verdict} | "
                     f"`{binary} --benchmark_filter={name.split('/')[0]}` |")
    return lines, missed


def write(path, lines):
    text = pathlib.Path(path).read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"speed-table: {path} has no '{BEGIN}' ... '{END}' markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    pathlib.Path(path).write_text(head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + tail)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build/release", help="the build with tests/*_bench")
    parser.add_argument("--min-time", default="0.5", help="--benchmark_min_time per benchmark, seconds")
    parser.add_argument("--write", metavar="FILE", help="replace the table between the markers in FILE")
    args = parser.parse_args()
    lines, missed = rows(args.build, args.min_time)
    if args.write:
        write(args.write, lines)
    print("\n".join(lines))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
