#!/usr/bin/env bash
# Installs every Debian package topo-aware builds, tests and runs with.
# Idempotent: packages already present are skipped by apt-get.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ninja-build
  libboost-graph-dev libhwloc-dev hwloc libibnetdisc-dev libibmad-dev libibumad-dev infiniband-diags
  libsqlite3-dev sqlite3
  libgtest-dev libgmock-dev libbenchmark-dev valgrind  # valgrind: the speed gate's callgrind
  libcli11-dev nlohmann-json3-dev libfmt-dev
  ibsim-utils opensm libsimgrid-dev lldpd ethtool
  clang libclang-rt-14-dev  # libFuzzer with ASan + UBSan (tests/fuzz, scripts/fuzz.sh)
  libgraphviz-dev libcpp-httplib-dev chromium python3-prometheus-client  # draw, serve, the browser test
  openjdk-17-jre-headless  # runs the Nu Html Checker (vnu.jar, from npm below) on the page's HTML
  slurmctld slurmd slurm-client munge
  dpkg-dev debhelper libmunge-dev libpmix-dev libpam0g-dev
  # Slurm 24.11, 25.11 and 26.05 from source (scripts/slurm-build.sh): build-essential, pkg-config, libmunge-dev
  # above, and json-c, without which 25.05+ builds no serializer/json and slurmctld cannot read topology.yaml
  libjson-c-dev
  python3-torch  # a real training client on the test clusters (tests/slurm/pytorch.sh, /usr/bin/python3)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi

# The Nu Html Checker, as npm's vnu-jar ships it (the jar is in the
# package; its download-on-install script is not needed and not run):
# tests/system/page_glance_test.cc validates every page with it.
vnu_dir=/usr/local/lib/topo-aware
vnu_version=26.9.27
if [[ ! -f $vnu_dir/node_modules/vnu-jar/build/dist/vnu.jar ]] ||
  ! grep -q "\"version\": \"$vnu_version\"" "$vnu_dir/node_modules/vnu-jar/package.json"; then
  echo "install-deps: installing vnu-jar@$vnu_version under $vnu_dir"
  # A machine whose Node.js came with its own npm keeps it; else Debian's.
  command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm
  mkdir -p "$vnu_dir"
  npm install --prefix "$vnu_dir" --no-audit --no-fund --ignore-scripts "vnu-jar@$vnu_version"
else
  echo "install-deps: vnu-jar present"
fi
