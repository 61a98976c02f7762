#!/usr/bin/env bash
# Builds one Slurm release from its upstream tarball and caches it, for the
# plugins to build against and for the test clusters to run.
#
# Usage: scripts/slurm-build.sh VERSION [--prefix | --source-dir | --build-dir]
#   prints the install prefix (default), or the source or build tree.
#
# Where each release's tarball comes from, and what its SHA-256 is checked
# against (a tarball whose checksum differs is refused):
#   24.11.5   Debian 13 (trixie) source package slurm-wlm 24.11.5-4+deb13u1:
#             the archive serves only its upstream tarball (the .dsc and the
#             .debian.tar.xz answer 404), so the checksum is the one
#             `apt-cache showsrc` prints from trixie's signed Sources index.
#             Needs root on a cold cache (a deb-src entry, apt-get).
#   25.11.7,  slurm-<version>.tar.gz in $TOPO_SLURM_TARBALLS (default
#   26.05.3   ../shared/slurm beside the checkout): `git archive` of
#             SchedMD's release tags.  Checked against the checksum pinned
#             below, and against SHA256SUMS in that directory.
#   any       TOPO_SLURM_TARBALL=/path/to/slurm-X.Y.Z.tar.bz2: a site's own
#             tarball of VERSION (the one its daemons run).  Checked against
#             TOPO_SLURM_TARBALL_SHA256 when set; its checksum is recorded
#             in the stamp, and a different tarball of the same version
#             rebuilds the cache.
# Debian's patches are not applied; configure runs with
# --enable-multiple-slurmd, so one machine runs many slurmd.
#
# The cache lives outside the checkout, keyed by upstream version, and from
# 25.05 also by json-c (slurm-<version>-json): slurmctld reads topology.yaml
# through serializer/json, which configure builds only where json-c is
# installed (Debian's libjson-c-dev), so those releases are built with it,
# and a tree cached without it is never taken for one with it:
#   ${TOPO_SLURM_CACHE:-/var/cache/topo-aware}/slurm-<version>[-json]/
#     source/      the unpacked tarball              (SLURM_SRC_DIR)
#     build/       the configured, built tree        (SLURM_BUILD_DIR)
#     install/     bin/ sbin/ lib/slurm/ of the build (the daemons' prefix)
#     built        stamp, written last
# One builder per cache at a time ($cache_root/.lock-slurm-<version>[-json]); a
# second caller waits, then finds the stamp.  A warm cache costs one test.
# An interrupted run leaves no stamp, so the next run starts over.  A cold
# build takes about 6 minutes of two idle cores (configure ~20 s, make -C
# src ~330 s for 24.11; 26.05 is larger), far longer on a loaded machine.
# Progress goes to stderr; TOPO_SLURM_JOBS sets make's -j (default 2).
set -euo pipefail

say() { printf 'slurm-build: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }

root=$(cd "$(dirname "$0")/.." && pwd)

version=
want=prefix
for arg in "$@"; do
  case "$arg" in
    --prefix) want=prefix ;;
    --source-dir) want=source ;;
    --build-dir) want=build ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option '$arg' (expected --prefix, --source-dir or --build-dir)" ;;
    *) [ -z "$version" ] || die "one VERSION only (got '$version' and '$arg')"; version=$arg ;;
  esac
done
[ -n "$version" ] || { usage >&2; die "no VERSION given (e.g. 26.05.3)"; }
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "VERSION '$version' is not MAJOR.MINOR.MICRO"

cache_root=${TOPO_SLURM_CACHE:-/var/cache/topo-aware}
# Releases that read topology.yaml (25.05 on) need serializer/json.
needs_json=0
IFS=. read -r major minor _ <<<"$version"
[ $((10#$major * 100 + 10#$minor)) -lt 2505 ] || needs_json=1
cache=$cache_root/slurm-$version$([ $needs_json = 0 ] || echo -json)
source_dir=$cache/source
build_dir=$cache/build
prefix=$cache/install
stamp=$cache/built

# Where the tarball comes from: "site" (TOPO_SLURM_TARBALL), "debian"
# (trixie's archive) or "shared" (TOPO_SLURM_TARBALLS).
site_tarball=${TOPO_SLURM_TARBALL:-}
pinned_sha=
deb_version=
if [ -n "$site_tarball" ]; then
  origin=site
  [ -f "$site_tarball" ] || die "TOPO_SLURM_TARBALL=$site_tarball is not a file"
  site_tarball=$(cd "$(dirname "$site_tarball")" && pwd)/$(basename "$site_tarball")
else
  case "$version" in
    24.11.5) origin=debian; deb_version=24.11.5-4+deb13u1 ;;
    25.11.7) origin=shared; pinned_sha=6c2d6cdc6615b850996c803aa3869546c0f584e0d5e640f9bcbc5a851199c6ad ;;
    26.05.3) origin=shared; pinned_sha=d41a71248d57816f873a990bcc085a79d746b69a9bbe6f2a0b64dc75536a5b51 ;;
    *) origin=shared ;;
  esac
fi
tarballs_dir=${TOPO_SLURM_TARBALLS:-$root/../shared/slurm}

print_result() {
  case "$want" in
    source) echo "$source_dir" ;;
    build) echo "$build_dir" ;;
    *) echo "$prefix" ;;
  esac
}

# A warm cache: its stamp.  A site's tarball must be the one the cache was
# built from.
stamp_fits() {
  [ -f "$stamp" ] || return 1
  local sha=$pinned_sha
  [ "$origin" != site ] || sha=$(sha256sum "$site_tarball" | cut -d' ' -f1)
  [ -z "$sha" ] || grep -qx "sha256=$sha" "$stamp"
}
if stamp_fits; then
  print_result
  exit 0
fi

started=$(date +%s)
mkdir -p "$cache_root" 2>/dev/null || die "cannot create $cache_root (set TOPO_SLURM_CACHE, or run as root)"
[ -w "$cache_root" ] || die "$cache_root is not writable (set TOPO_SLURM_CACHE, or run as root)"
exec 9>"$cache_root/.lock-$(basename "$cache")"
flock 9
if stamp_fits; then
  print_result
  exit 0
fi

[ $needs_json = 0 ] || [ -e /usr/include/json-c/json.h ] ||
  die "Slurm $version needs json-c to read topology.yaml: install libjson-c-dev (scripts/install-deps.sh)"
rm -rf "$cache/download" "$source_dir" "$build_dir" "$prefix" "$stamp"
mkdir -p "$cache/download"

# Each origin leaves the tarball in $tarball and what it was checked
# against in $checked.
case "$origin" in
  debian)
    [ "$(id -u)" = 0 ] || die "Slurm $version comes from Debian's archive through apt-get, which needs root"
    src_pkg=slurm-wlm
    tarball_name=${src_pkg}_${version}.orig.tar.gz
    # trixie's source index, in a file of our own; the system's entries stay.
    sources=/etc/apt/sources.list.d/topo-aware-trixie-src.sources
    if [ ! -f "$sources" ]; then
      say "adding trixie's deb-src entry in $sources"
      cat >"$sources.tmp" <<'EOF'
# topo-aware: Slurm 24.11's upstream tarball (scripts/slurm-build.sh); source only.
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
      apt-cache showsrc "$src_pkg" 2>/dev/null | awk -v ver="$deb_version" -v f="$tarball_name" '
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
    [ -n "$want_sha" ] || die "apt knows no $src_pkg $deb_version with $tarball_name (trixie's Sources index; see $sources)"
    (
      cd "$cache/download"
      # apt-get fetches the tarball, then fails on the .dsc (404): its
      # status is not the verdict, the checksum below is.
      apt-get source -qq --download-only "$src_pkg=$deb_version" >"$cache/download.log" 2>&1 || true
    )
    tarball=$cache/download/$tarball_name
    [ -f "$tarball" ] || { tail -n 5 "$cache/download.log" >&2; die "apt-get source did not fetch $tarball_name"; }
    checked="trixie's Sources index ($src_pkg $deb_version)"
    ;;
  shared)
    tarball=
    for ext in tar.gz tar.bz2 tar.xz; do
      if [ -f "$tarballs_dir/slurm-$version.$ext" ]; then tarball=$tarballs_dir/slurm-$version.$ext; break; fi
    done
    [ -n "$tarball" ] || die "no slurm-$version.tar.{gz,bz2,xz} in $tarballs_dir (set TOPO_SLURM_TARBALLS to the directory, or TOPO_SLURM_TARBALL to a tarball of your own)"
    listed_sha=
    if [ -f "$tarballs_dir/SHA256SUMS" ]; then
      listed_sha=$(awk -v f="$(basename "$tarball")" '{ n = $2; sub(/^\*/, "", n) } n == f { print $1; exit }' "$tarballs_dir/SHA256SUMS")
    fi
    if [ -n "$pinned_sha" ]; then
      want_sha=$pinned_sha
      checked="the checksum pinned in scripts/slurm-build.sh"
      if [ -n "$listed_sha" ] && [ "$listed_sha" != "$pinned_sha" ]; then
        die "$tarballs_dir/SHA256SUMS lists $listed_sha for $(basename "$tarball"); this script pins $pinned_sha"
      fi
      [ -z "$listed_sha" ] || checked+=" and $tarballs_dir/SHA256SUMS"
    else
      [ -n "$listed_sha" ] || die "$tarballs_dir/SHA256SUMS lists no $(basename "$tarball"): nothing to check it against"
      want_sha=$listed_sha
      checked="$tarballs_dir/SHA256SUMS"
    fi
    ;;
  site)
    tarball=$site_tarball
    want_sha=${TOPO_SLURM_TARBALL_SHA256:-}
    if [ -n "$want_sha" ]; then
      checked="TOPO_SLURM_TARBALL_SHA256"
    else
      checked="nothing (TOPO_SLURM_TARBALL_SHA256 unset; the site's own tarball)"
    fi
    ;;
esac

got_sha=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ -n "$want_sha" ] && [ "$got_sha" != "$want_sha" ]; then
  die "$tarball has SHA-256 $got_sha, $checked says $want_sha"
fi
say "$(basename "$tarball"): SHA-256 $got_sha, checked against $checked"
say "building Slurm $version in $cache"

mkdir -p "$source_dir"
tar -xaf "$tarball" -C "$source_dir" --strip-components=1
rm -rf "$cache/download"
[ -x "$source_dir/configure" ] || die "$tarball has no configure at its top level"

mkdir -p "$build_dir"
cd "$build_dir"
say "configure (log: $cache/configure.log)"
nice "$source_dir/configure" --prefix="$prefix" --sysconfdir=/etc/slurm \
  --enable-multiple-slurmd --disable-debug --without-rpath \
  >"$cache/configure.log" 2>&1 \
  || { tail -n 30 "$cache/configure.log" >&2; die "configure failed, log in $cache/configure.log"; }
grep -q "SLURM_VERSION_STRING \"$version\"" config.h \
  || die "$build_dir/config.h is not for Slurm $version ($(grep -m1 SLURM_VERSION_STRING config.h || echo 'no version'))"

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
[ $needs_json = 0 ] || [ -e "$prefix/lib/slurm/serializer_json.so" ] ||
  die "configure did not find json-c: the install has no serializer_json.so (see $cache/configure.log)"

{
  echo "version=$version"
  echo "tarball=$(basename "$tarball")"
  [ -z "$deb_version" ] || echo "debian_source=slurm-wlm $deb_version"
  echo "sha256=$got_sha"
  echo "checked=$checked"
  echo "source=$source_dir"
  echo "build=$build_dir"
  echo "prefix=$prefix"
} >"$stamp.tmp"
mv "$stamp.tmp" "$stamp"
say "built in $(($(date +%s) - started)) s"
print_result
