#!/usr/bin/env bash
# Builds Slurm 24.11 from Debian's upstream tarball and caches it, for the
# topology/topo_aware plugin to build against and for the test cluster to run.
#
# Debian 12 ships Slurm 22.05 only.  Debian 13 (trixie) ships 24.11.5 as
# source package slurm-wlm 24.11.5-4+deb13u1, but the archive serves only
# its upstream tarball (slurm-wlm_24.11.5.orig.tar.gz): the .dsc and the
# .debian.tar.xz answer 404.  Without a .dsc, apt-get cannot check what it
# downloaded, so this script checks the tarball's SHA-256 itself against
# the Checksums-Sha256 that `apt-cache showsrc` prints from trixie's signed
# Sources index.  Debian's patches are not applied (they are not served);
# configure runs as Debian's does in the one way that matters here:
# --enable-multiple-slurmd, so one machine runs many slurmd.
#
# The cache lives outside the checkout, keyed by upstream version:
#   ${TOPO_SLURM_CACHE:-/var/cache/topo-aware}/slurm-<version>/
#     source/      the unpacked tarball              (SLURM_SRC_DIR)
#     build/       the configured, built tree        (SLURM_BUILD_DIR)
#     install/     bin/ sbin/ lib/slurm/ of the build (the daemons' prefix)
#     built        stamp, written last
# A warm cache costs one test.  An interrupted run leaves no stamp, so the
# next run starts that version over.  A cold one takes about 6 minutes of
# two idle cores (configure ~20 s, make -C src ~330 s; 70 minutes were
# measured on two cores shared with five other builds, load ~20).
#
# Usage: scripts/slurm-24.sh [--source-dir | --build-dir | --prefix]
#   prints the install prefix (default), or the source or build tree.
# Needs root (apt, /etc/apt/sources.list.d) on a cold cache; progress on stderr.
set -euo pipefail

say() { printf 'slurm-24: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

version=${TOPO_SLURM24_VERSION:-24.11.5}
deb_version=${TOPO_SLURM24_DEB_VERSION:-24.11.5-4+deb13u1}
src_pkg=slurm-wlm
tarball=${src_pkg}_${version}.orig.tar.gz

want=prefix
case "${1:-}" in
  ""|--prefix) ;;
  --source-dir) want=source ;;
  --build-dir) want=build ;;
  -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown argument '$1' (expected --prefix, --source-dir or --build-dir)" ;;
esac

cache_root=${TOPO_SLURM_CACHE:-/var/cache/topo-aware}
cache=$cache_root/slurm-$version
source_dir=$cache/source
build_dir=$cache/build
prefix=$cache/install
stamp=$cache/built

print_result() {
  case "$want" in
    source) echo "$source_dir" ;;
    build) echo "$build_dir" ;;
    *) echo "$prefix" ;;
  esac
}

if [ -f "$stamp" ]; then
  print_result
  exit 0
fi

started=$(date +%s)
[ "$(id -u)" = 0 ] || die "the cache $cache is not built and building it needs root (apt-get)"
mkdir -p "$cache_root"
# One builder per version at a time; a second caller waits, then finds the stamp.
exec 9>"$cache_root/.lock-slurm-$version"
flock 9
if [ -f "$stamp" ]; then
  print_result
  exit 0
fi

# trixie's source index, in a file of our own; the system's entries stay.
sources=/etc/apt/sources.list.d/topo-aware-trixie-src.sources
if [ ! -f "$sources" ]; then
  say "adding trixie's deb-src entry in $sources"
  cat >"$sources.tmp" <<'EOF'
# topo-aware: Slurm 24.11's upstream tarball (scripts/slurm-24.sh); source only.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  mv "$sources.tmp" "$sources"
fi

sha256_from_index() {
  # The stanza of our version, then the line of Checksums-Sha256 naming the tarball.
  apt-cache showsrc "$src_pkg" 2>/dev/null | awk -v ver="$deb_version" -v f="$tarball" '
    /^Package:/ { inside = 0 }
    $1 == "Version:" { inside = ($2 == ver) }
    inside && /^Checksums-Sha256:/ { sums = 1; next }
    inside && sums && /^ / { if ($3 == f) { print $1; exit } next }
    { sums = 0 }' || true
}

want_sha=$(sha256_from_index)
if [ -z "$want_sha" ]; then
  apt-get update -qq >&2 || true
  want_sha=$(sha256_from_index)
fi
[ -n "$want_sha" ] || die "apt knows no $src_pkg $deb_version with $tarball (trixie's Sources index; see $sources)"

say "building Slurm $version in $cache"
rm -rf "$cache/download" "$source_dir" "$build_dir" "$prefix"
mkdir -p "$cache/download"
(
  cd "$cache/download"
  # apt-get fetches the tarball, then fails on the .dsc (404): its status
  # is not the verdict, the checksum below is.
  apt-get source -qq --download-only "$src_pkg=$deb_version" >"$cache/download.log" 2>&1 || true
)
[ -f "$cache/download/$tarball" ] || { tail -n 5 "$cache/download.log" >&2; die "apt-get source did not fetch $tarball"; }
got_sha=$(sha256sum "$cache/download/$tarball" | cut -d' ' -f1)
[ "$got_sha" = "$want_sha" ] || die "$tarball has SHA-256 $got_sha, trixie's index says $want_sha"
say "$tarball: SHA-256 matches trixie's index ($want_sha)"

mkdir -p "$source_dir"
tar -xzf "$cache/download/$tarball" -C "$source_dir" --strip-components=1
rm -rf "$cache/download"

mkdir -p "$build_dir"
cd "$build_dir"
say "configure (log: $cache/configure.log)"
"$source_dir/configure" --prefix="$prefix" --sysconfdir=/etc/slurm \
  --enable-multiple-slurmd --disable-debug --without-rpath \
  >"$cache/configure.log" 2>&1 \
  || { tail -n 30 "$cache/configure.log" >&2; die "configure failed, log in $cache/configure.log"; }
grep -q "SLURM_VERSION_STRING \"$version\"" config.h || die "$build_dir/config.h is not for Slurm $version"

# src only: daemons, commands, libraries and plugins; the docs and the
# testsuite are not needed to run a cluster.
say "make -C src (log: $cache/make.log)"
nice make -C src -j"${TOPO_SLURM_JOBS:-2}" >"$cache/make.log" 2>&1 \
  || { tail -n 30 "$cache/make.log" >&2; die "make failed, log in $cache/make.log"; }
nice make -C src install >"$cache/install.log" 2>&1 \
  || { tail -n 30 "$cache/install.log" >&2; die "make install failed, log in $cache/install.log"; }
for f in sbin/slurmctld sbin/slurmd sbin/slurmstepd bin/sbatch bin/srun bin/scontrol \
         lib/slurm/select_cons_tres.so lib/slurm/topology_tree.so; do
  [ -e "$prefix/$f" ] || die "the install has no $f"
done

{
  echo "version=$version"
  echo "debian_source=$src_pkg $deb_version"
  echo "sha256=$got_sha"
  echo "source=$source_dir"
  echo "build=$build_dir"
  echo "prefix=$prefix"
} >"$stamp.tmp"
mv "$stamp.tmp" "$stamp"
say "built in $(($(date +%s) - started)) s"
print_result
