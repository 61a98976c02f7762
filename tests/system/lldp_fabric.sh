#!/usr/bin/env bash
# RoCE fabrics in network namespaces, discovered by real lldpd.
#
#   lldp_fabric.sh OUTDIR [json|json0]          the two-tier fabric
#   lldp_fabric.sh --rail SEED OUTDIR           the rail-optimized fabric
#
# One namespace per host and per switch, cabled with veth pairs, one lldpd
# each (own control socket, own config through -O, its own system name,
# tx-interval 1). Once every expected neighbour is seen, each system's tables
# are written and everything started is stopped (trap), also on failure.
#
# twotier:
#   spine01 spine02
#   leaf01..leaf03: swp1..swp4 down to two hosts, swp5 up to spine01, swp6 up to spine02
#   gpu01..gpu06: eth0 and eth1 to their leaf (gpu01, gpu02 on leaf01, ...)
# with two faults on purpose: leaf03 has no swp6 (the missing uplink to
# spine02), and leaf03 swp4 is down, so gpu06 eth1 has no neighbour. Hosts
# are stations, switches bridges; each system's `lldpcli -f FORMAT show
# chassis`, `show interfaces` and `show neighbors details`, concatenated, go
# to OUTDIR/<name>.json.
#
# rail (16 hosts with two RoCE NICs and a management NIC):
#   spine01 spine02; leaf01..leaf04, swp1..swp8 down to hosts, swp9 up to
#   spine01 swpL, swp10 up to spine02 swpL (leaf04 has no swp10: the missing
#   uplink); group G (1, 2) of 8 host slots has rail 0 (ens1f0np0) on leaf
#   2G-1 and rail 1 (ens1f1np1) on leaf 2G, slot S on swpS of both;
#   mgmt01, an out-of-band switch, swpN to eno1 of gpuN.
# gpu01..gpu16 take the 16 slots in an order shuffled by SEED. Hosts differ
# as real ones do: gpu numbers divisible by 3 run Docker (a bridge and IP
# forwarding: lldpd advertises Bridge and Router), those one past a multiple
# of 3 forward IP (Router), the rest are stations. Switches advertise Bridge
# and Router and name their ports by interface name, as switch OSes do.
# Each system's `lldpcli -f json show neighbors details` (what docs/routing.md
# tells admins to collect) goes to OUTDIR/neighbours/<name>.json, its `show
# chassis` to OUTDIR/chassis/<name>.json, and OUTDIR/slots.txt lists
# "host leafA leafB" per host.
#
# veth ports cannot be given a speed (ethtool -s is not supported; they all
# report 10000Mb/s, so lldpd advertises 10GbaseT): a slower link is injected
# by the caller through the CSV form, not here.
#
# Exit 77 (skipped) when not root or lldpd is not installed.
set -euo pipefail

layout=twotier seed=0
if [[ ${1:-} == --rail ]]; then
  layout=rail
  seed=${2:?usage: lldp_fabric.sh --rail SEED OUTDIR}
  shift 2
fi
out=${1:?usage: lldp_fabric.sh OUTDIR [json|json0] | lldp_fabric.sh --rail SEED OUTDIR}
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
declare -A expected=() config=() forward=()

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

# add_system NAME "lldpcli configuration lines" IP_FORWARD
add_system() {
  systems+=("$1")
  config[$1]=$2
  forward[$1]=$3
  expected[$1]=0
  ip netns add "$(ns "$1")"
  ip -n "$(ns "$1")" link set lo up
  # A new namespace inherits ip_forward, which flips the advertised Router capability.
  ip netns exec "$(ns "$1")" sysctl -qw net.ipv4.ip_forward="$3"
}

# cable SYSTEM_A PORT_A SYSTEM_B PORT_B
cable() {
  ip -n "$(ns "$1")" link add "$2" type veth peer name "$4" netns "$(ns "$3")"
  ip -n "$(ns "$1")" link set "$2" up
  ip -n "$(ns "$3")" link set "$4" up
  expected[$1]=$((expected[$1] + 1))
  expected[$3]=$((expected[$3] + 1))
}

switch_conf=$'configure system capabilities enabled bridge,router\nconfigure lldp portidsubtype ifname'

build_twotier() {
  local l k leaf host
  for s in spine01 spine02 leaf01 leaf02 leaf03; do add_system "$s" "configure system capabilities enabled bridge" 0; done
  for h in 1 2 3 4 5 6; do add_system "$(printf 'gpu%02d' "$h")" "configure system capabilities enabled station" 0; done
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
  expected[leaf03]=$((expected[leaf03] - 1))
  expected[gpu06]=$((expected[gpu06] - 1))
}

build_rail() {
  local l h slot group host
  for s in spine01 spine02 leaf01 leaf02 leaf03 leaf04 mgmt01; do add_system "$s" "$switch_conf" 0; done
  for h in $(seq 16); do
    host=$(printf 'gpu%02d' "$h")
    case $((h % 3)) in
      0) add_system "$host" "" 1 && ip -n "$(ns "$host")" link add docker0 type bridge ;;
      1) add_system "$host" "" 1 ;;
      *) add_system "$host" "" 0 ;;
    esac
    cable "$host" eno1 mgmt01 "swp$h"
  done
  slot=0
  : >"$run/slots"
  for h in $(seq 16 | shuf --random-source=<(yes "$seed")); do
    host=$(printf 'gpu%02d' "$h")
    group=$((slot / 8))
    cable "$host" ens1f0np0 "$(printf 'leaf%02d' $((2 * group + 1)))" "swp$((slot % 8 + 1))"
    cable "$host" ens1f1np1 "$(printf 'leaf%02d' $((2 * group + 2)))" "swp$((slot % 8 + 1))"
    printf '%s leaf%02d leaf%02d\n' "$host" $((2 * group + 1)) $((2 * group + 2)) >>"$run/slots"
    slot=$((slot + 1))
  done
  for l in 1 2 3 4; do
    cable "$(printf 'leaf%02d' "$l")" swp9 spine01 "swp$l"
    [[ $l -eq 4 ]] || cable "$(printf 'leaf%02d' "$l")" swp10 spine02 "swp$l"
  done
}

"build_$layout"

for s in "${systems[@]}"; do
  # -O keeps the machine's /etc/lldpd.* out.
  printf 'configure system hostname %s\nconfigure lldp tx-interval 1\n%s\n' "$s" "${config[$s]}" >"$run/$s.conf"
  ip netns exec "$(ns "$s")" lldpd -u "$run/$s.sock" -O "$run/$s.conf" -p "$run/$s.pid" -S "lldp_fabric $s"
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
  if ((SECONDS - start > 90)); then
    echo "lldp_fabric: LLDP did not converge in 90 s: ${pending[*]}" >&2
    exit 1
  fi
  sleep 1
done
echo "lldp_fabric: LLDP converged in $((SECONDS - start)) s on ${#systems[@]} systems" >&2

mkdir -p "$out"
if [[ $layout == twotier ]]; then
  for s in "${systems[@]}"; do
    {
      cli "$s" -f "$format" show chassis
      cli "$s" -f "$format" show interfaces
      cli "$s" -f "$format" show neighbors details
    } >"$out/$s.json"
  done
else
  mkdir -p "$out/neighbours" "$out/chassis"
  for s in "${systems[@]}"; do
    cli "$s" -f json show neighbors details >"$out/neighbours/$s.json"
    cli "$s" -f json show chassis >"$out/chassis/$s.json"
  done
  cp "$run/slots" "$out/slots.txt"
fi
