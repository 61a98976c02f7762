#!/usr/bin/env bash
# Prepares the Slurm source tree that plugin/ builds against, and prints its path.
#
# A Slurm plugin must be compiled with the same config.h, slurm_version.h
# and struct layouts as the daemons that load it (Slurm refuses a plugin
# whose version differs even in the micro number).  So this fetches
# Debian's source package for the INSTALLED slurmctld, applies Debian's
# patches and runs configure exactly as Debian's debian/rules does.  Only
# configure runs: a select plugin resolves every Slurm symbol from the
# daemon at load time, so no Slurm library needs building.
#
# The tree lives outside the checkout, keyed by the package version:
#   ${TOPO_SLURM_CACHE:-/var/cache/topo-aware}/slurm-wlm-<debian version>/
#     source/                          the patched source (SLURM_SRC_DIR)
#     source/obj-<gnu triplet>/        the configured tree (SLURM_BUILD_DIR)
#     configured                       stamp, written last
# A warm cache costs a few dpkg-query calls.  A run that was interrupted
# leaves no stamp, so the next run starts that version over.
#
# Usage: scripts/slurm-source.sh [--build-dir]
#   prints SLURM_SRC_DIR, or SLURM_BUILD_DIR with --build-dir.
# Needs root (apt) on a cold cache; progress goes to stderr.
set -euo pipefail

say() { printf 'slurm-source: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

want=source
case "${1:-}" in
  "") ;;
  --build-dir) want=build ;;
  -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown argument '$1' (expected nothing or --build-dir)" ;;
esac

started=$(date +%s.%N)

installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = 'install ok installed' ]; }
installed slurmctld || die "slurmctld is not installed: the plugin is built for the installed daemon (scripts/install-deps.sh installs it)"

# The source package and version are those the binary package was built from.
src_pkg=$(dpkg-query -W -f='${source:Package}' slurmctld)
src_ver=$(dpkg-query -W -f='${source:Version}' slurmctld)
upstream=${src_ver#*:}
upstream=${upstream%-*}
triplet=$(dpkg-architecture -qDEB_BUILD_GNU_TYPE)

cache_root=${TOPO_SLURM_CACHE:-/var/cache/topo-aware}
cache=$cache_root/$src_pkg-$src_ver
source_dir=$cache/source
build_dir=$source_dir/obj-$triplet
stamp=$cache/configured

print_result() {
  if [ "$want" = build ]; then echo "$build_dir"; else echo "$source_dir"; fi
}

if [ -f "$stamp" ]; then
  print_result
  exit 0
fi

[ "$(id -u)" = 0 ] || die "the cache $cache is not prepared and preparing it needs root (apt-get)"
for tool in dpkg-source dh_auto_configure; do
  command -v "$tool" >/dev/null || die "$tool is missing (Debian packages dpkg-dev and debhelper)"
done

mkdir -p "$cache_root"
# One preparer per version at a time; a second caller waits, then finds the stamp.
exec 9>"$cache_root/.lock-$src_pkg-$src_ver"
flock 9
if [ -f "$stamp" ]; then
  print_result
  exit 0
fi

has_source_version() {
  apt-cache showsrc "$src_pkg" 2>/dev/null | grep -x "Version: $src_ver" >/dev/null
}

# apt-get source needs deb-src entries; Debian images ship only deb ones.
# Mirror every enabled deb entry as deb-src, in a file of our own.
add_deb_src() {
  local out=/etc/apt/sources.list.d/topo-aware-deb-src.sources
  say "adding deb-src entries in $out"
  local tmp
  tmp=$(mktemp)
  for f in /etc/apt/sources.list.d/*.sources; do
    if [ ! -f "$f" ] || [ "$f" = "$out" ]; then continue; fi
    # deb822 stanzas: keep those whose Types has "deb", retyped as deb-src.
    awk 'BEGIN { RS = ""; ORS = "\n\n" }
         /(^|\n)Types:[^\n]*(^|[ \t])deb([ \t]|\n|$)/ && !/(^|\n)Enabled: *no/ {
           sub(/(^|\n)Types:[^\n]*/, "\nTypes: deb-src"); sub(/^\n/, ""); print }' "$f" >>"$tmp"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    # one-line format: "deb [opts] uri suite components..."
    awk '$1 == "deb" {
           opts = ""; i = 2
           if ($2 ~ /^\[/) { while ($i !~ /\]$/) { opts = opts " " $i; i++ } opts = opts " " $i; i++ }
           comps = ""; for (j = i + 2; j <= NF; j++) comps = comps " " $j
           printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents:%s\n", $i, $(i + 1), comps
           if (match(opts, /signed-by=[^] ]+/)) printf "Signed-By: %s\n", substr(opts, RSTART + 10, RLENGTH - 10)
           printf "\n" }' "$f" >>"$tmp"
  done
  [ -s "$tmp" ] || { rm -f "$tmp"; die "no deb entry in /etc/apt to mirror as deb-src"; }
  install -m 0644 "$tmp" "$out"
  rm -f "$tmp"
  apt-get update -qq >&2
}

if ! has_source_version; then
  apt-get update -qq >&2 || true
  has_source_version || add_deb_src
  has_source_version || die "apt has no source for $src_pkg $src_ver (it may have left the archive; upgrade slurmctld to the archive's version)"
fi

say "preparing $src_pkg $src_ver in $cache"
rm -rf "$cache/download" "$cache"/*.orig.tar.* "$source_dir"
mkdir -p "$cache/download"
(
  cd "$cache/download"
  # --download-only then dpkg-source: the unpacked directory name is ours to choose.
  # pipefail keeps apt-get's failure; its unsandboxed-download notice is noise.
  apt-get source -qq --download-only "$src_pkg=$src_ver" 2>&1 | { grep -v 'unsandboxed' || true; } >&2
  dsc=$(ls ./*.dsc 2>/dev/null | head -n1)
  [ -n "$dsc" ] || { echo "slurm-source: error: apt-get source fetched no .dsc" >&2; exit 1; }
  dpkg-source --no-check -x "$dsc" "$source_dir" >&2
)

# Debian configures with dh_auto_configure's defaults (prefix, libdir,
# hardening flags) plus the flags in debian/rules' override; make -n prints
# that override's commands with every make variable expanded.  The line
# without --builddirectory is the real build (the other is the emulator).
cd "$source_dir"
configure_line=$(make -s -n -f debian/rules override_dh_auto_configure 2>/dev/null \
  | grep '^dh_auto_configure' | grep -v -- '--builddirectory' | head -n1 || true)
[ -n "$configure_line" ] || configure_line=dh_auto_configure
extra_args=${configure_line#dh_auto_configure}
extra_args=${extra_args# -- }
[ "$extra_args" = "dh_auto_configure" ] && extra_args=""
say "configuring with Debian's flags:${extra_args:+ $extra_args}"

# Debian's build also regenerates configure (dh_autoreconf); that needs
# every build dependency's m4 macros (GTK's, among others) and changes
# only PACKAGE_NAME ("slurm-wlm" rather than "slurm", printed by
# --version), so the upstream configure runs as shipped.
export DEB_BUILD_MAINT_OPTIONS
DEB_BUILD_MAINT_OPTIONS=$(make -s -f debian/rules --eval 'print-maint-options: ; @echo $(DEB_BUILD_MAINT_OPTIONS)' print-maint-options 2>/dev/null || true)
# shellcheck disable=SC2086 # the flags are a word list, as make passed them
dh_auto_configure --builddirectory="obj-$triplet" -- $extra_args >"$cache/configure.log" 2>&1 \
  || { tail -n 30 "$cache/configure.log" >&2; die "configure failed, log in $cache/configure.log"; }

for f in config.h slurm/slurm_version.h; do
  [ -f "$build_dir/$f" ] || die "configure did not generate $build_dir/$f"
done
grep -q "SLURM_VERSION_STRING \"$upstream\"" "$build_dir/config.h" \
  || die "$build_dir/config.h is not for Slurm $upstream"

# dpkg-source copies the orig tarball beside the tree it unpacks.
rm -rf "$cache/download" "$cache"/*.orig.tar.*
{
  echo "package=$src_pkg"
  echo "version=$src_ver"
  echo "source=$source_dir"
  echo "build=$build_dir"
  echo "configure=$extra_args"
} >"$stamp.tmp"
mv "$stamp.tmp" "$stamp"
say "ready in $(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s"
print_result
