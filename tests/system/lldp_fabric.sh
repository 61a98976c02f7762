#!/usr/bin/env bash
# A two-tier RoCE fabric in network namespaces, discovered by real lldpd.
#
#   lldp_fabric.sh OUTDIR [json|json0]
#
# One namespace per host and per switch, cabled with veth pairs:
#   spine01 spine02
#   leaf01..leaf03: swp1..swp4 down to two hosts, swp5 up to spine01, swp6 up to spine02
#   gpu01..gpu06: eth0 and eth1 to their leaf (gpu01, gpu02 on leaf01, ...)
# with two faults on purpose:
#   - leaf03 has no swp6 (the missing uplink to spine02);
#   - leaf03 swp4 is down, so gpu06 eth1 has no neighbour.
# Each namespace runs its own lldpd (own control socket, own config through -O,
# its own system name, tx-interval 1). Once every expected neighbour is seen,
# each system's `lldpcli -f json show chassis`, `show interfaces` and
# `show neighbors details` are written, concatenated, to OUTDIR/<name>.json
# (in lldpcli's `-f json` by default, or `-f json0`).
# The file names are for people: the reader takes the names from the files.
#
# veth ports cannot be given a speed (ethtool -s is not supported; they all
# report 10000Mb/s, so lldpd advertises 10GbaseT): a slower link is injected
# by the caller through the CSV form, not here.
#
# Everything started is stopped on exit (trap), also on failure.
# Exit 77 (skipped) when not root or lldpd is not installed.
set -euo pipefail

out=${1:?usage: lldp_fabric.sh OUTDIR [json|json0]}
format=${2:-json}
if [[ $(id -u) -ne 0 ]]; then
  echo "lldp_fabric: SKIP: needs root for ip netns and veth pairs" >&2
  exit 77
fi
if ! command -v lldpd >/dev/null || ! command -v lldpcli >/dev/null; then
  echo "lldp_fabric: SKIP: lldpd is not installed (apt-get install lldpd)" >&2
  exit 77
fi

prefix="lldp$$"
run=$(mktemp -d /tmp/lldp_fabric.XXXXXX)
# lldpd's privilege-separated half runs as _lldpd: the socket directory must be traversable.
chmod 0755 "$run"
systems=()

cleanup() {
  local s pid
  for s in "${systems[@]}"; do
    if [[ -f $run/$s.pid ]]; then
      pid=$(cat "$run/$s.pid")
      kill "$pid" 2>/dev/null || true
    fi
  done
  for s in "${systems[@]}"; do
    if [[ -f $run/$s.pid ]]; then
      pid=$(cat "$run/$s.pid")
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    ip netns del "$prefix-$s" 2>/dev/null || true
  done
  rm -rf "$run"
}
trap cleanup EXIT

ns() { echo "$prefix-$1"; }

add_system() {
  systems+=("$1")
  ip netns add "$(ns "$1")"
  ip -n "$(ns "$1")" link set lo up
}

# cable SYSTEM_A PORT_A SYSTEM_B PORT_B
cable() {
  ip -n "$(ns "$1")" link add "$2" type veth peer name "$4" netns "$(ns "$3")"
  ip -n "$(ns "$1")" link set "$2" up
  ip -n "$(ns "$3")" link set "$4" up
}

for s in spine01 spine02 leaf01 leaf02 leaf03; do add_system "$s"; done
for h in 1 2 3 4 5 6; do add_system "$(printf 'gpu%02d' "$h")"; done

for l in 1 2 3; do
  leaf=$(printf 'leaf%02d' "$l")
  for k in 0 1; do
    host=$(printf 'gpu%02d' $((2 * l - 1 + k)))
    cable "$host" eth0 "$leaf" "swp$((2 * k + 1))"
    cable "$host" eth1 "$leaf" "swp$((2 * k + 2))"
  done
  cable "$leaf" swp5 spine01 "swp$l"
  [[ $l -eq 3 ]] || cable "$leaf" swp6 spine02 "swp$l"
done
ip -n "$(ns leaf03)" link set swp4 down

# Expected neighbours per system, to know when LLDP has converged.
declare -A expected=([spine01]=3 [spine02]=2 [leaf01]=6 [leaf02]=6 [leaf03]=4
                     [gpu01]=2 [gpu02]=2 [gpu03]=2 [gpu04]=2 [gpu05]=2 [gpu06]=1)

for s in "${systems[@]}"; do
  # Hosts are stations, switches bridges; -O keeps the machine's /etc/lldpd.* out.
  cap=station
  [[ $s == gpu* ]] || cap=bridge
  cat >"$run/$s.conf" <<EOF
configure system hostname $s
configure system capabilities enabled $cap
configure lldp tx-interval 1
EOF
  ip netns exec "$(ns "$s")" lldpd -u "$run/$s.sock" -O "$run/$s.conf" -p "$run/$s.pid" \
    -S "lldp_fabric $s" -I 'eth*,swp*'
done

cli() { ip netns exec "$(ns "$1")" lldpcli -u "$run/$1.sock" "${@:2}"; }

neighbours() {
  cli "$1" -f json0 show neighbors 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin)["lldp"]; print(sum(len(x.get("interface",[])) for x in d))' 2>/dev/null ||
    echo 0
}

start=$SECONDS
while true; do
  pending=()
  for s in "${systems[@]}"; do
    n=$(neighbours "$s")
    [[ $n -eq ${expected[$s]} ]] || pending+=("$s:$n/${expected[$s]}")
  done
  ((${#pending[@]} == 0)) && break
  if ((SECONDS - start > 60)); then
    echo "lldp_fabric: LLDP did not converge in 60 s: ${pending[*]}" >&2
    exit 1
  fi
  sleep 1
done
echo "lldp_fabric: LLDP converged in $((SECONDS - start)) s on ${#systems[@]} systems" >&2

mkdir -p "$out"
for s in "${systems[@]}"; do
  {
    cli "$s" -f "$format" show chassis
    cli "$s" -f "$format" show interfaces
    cli "$s" -f "$format" show neighbors details
  } >"$out/$s.json"
done
