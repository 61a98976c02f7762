#!/usr/bin/env bash
# Installs what topo-aware needs, builds it, and runs its main job on the
# bundled example: discovers examples/leafspine-2to1.ibnetdiscover (4 leaves
# x 8 hosts, 2 spines, 2:1, one degraded uplink) into a fresh database and
# prints the fabric and its faults.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${TOPO_BUILD_DIR:-$root/build}

bash "$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build/release" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build/release" topoctl

topoctl="$build/release/tools/topoctl"
db="$build/example.db"
rm -f "$db" "$db-wal" "$db-shm"
"$topoctl" discover --ibnetdiscover "$root/examples/leafspine-2to1.ibnetdiscover" --db "$db"
echo
"$topoctl" show --db "$db" --tree
echo
"$topoctl" lint --db "$db" || true   # the example has a degraded uplink on purpose
