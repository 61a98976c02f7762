#!/bin/bash
# Checks that docs/topoctl.md and topoctl's --help agree.
#
#   tests/tools/topoctl_manual.sh --topoctl PATH --manual docs/topoctl.md
#
# The manual has one "## topoctl SUB" section per subcommand that
# `topoctl --help` lists, and one "### topoctl SUB SUBSUB" section inside it
# per sub-subcommand that `topoctl SUB --help` lists (e.g. baseline import).
# A section documents an option by opening a code span with it: `--option`
# or `--option VALUE` (a span that starts with anything else, such as
# `topoctl show --tree`, documents nothing).
# Fails (exit 1), naming each mismatch, when
#   - a subcommand (or sub-subcommand) in --help has no section, or a
#     "## topoctl X" / "### topoctl X Y" section names one --help does not;
#   - a long option that a command's --help prints (other than --help) is
#     not documented in that command's section;
#   - a section writes `--option` that the command's --help does not print.
# Options of the main level (`topoctl --help`, e.g. --version) must appear
# as `--option` somewhere in the manual. Exit 2 on bad usage.
set -euo pipefail

die() { printf 'topoctl_manual: %s\n' "$*" >&2; exit 2; }
topoctl="" manual=""
while [ $# -gt 0 ]; do
  case $1 in
    --topoctl) [ $# -ge 2 ] || die "--topoctl needs a path"; topoctl=$2; shift 2 ;;
    --manual) [ $# -ge 2 ] || die "--manual needs a path"; manual=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
[ -n "$topoctl" ] && [ -n "$manual" ] || die "--topoctl and --manual are required"
[ -x "$topoctl" ] || die "no executable $topoctl"
[ -r "$manual" ] || die "no readable manual $manual"

failures=0
fail() { printf 'topoctl_manual: %s\n' "$*" >&2; failures=$((failures + 1)); }

# The subcommands a --help text lists: the first word of each line of its
# "Subcommands:" block (CLI11's layout), up to the next blank line.
subcommands_of() {
  awk 'tolower($0) ~ /^subcommands:$/ { on = 1; next }
       on && /^[[:space:]]*$/ { on = 0 }
       on && /^  [^ ]/ { print $1 }' <<<"$1"
}
# The long options a --help text prints: those in the name column, the lines
# that begin with two spaces and a dash ("  -o,--output TEXT", "  --json"),
# or four inside an option group ("[Option Group: source]").
options_of() {
  grep -E '^ {2}( {2})?-' <<<"$1" | sed -E 's/^ +//; s/[[:space:]]{2,}.*$//' |
    grep -oE -- '--[A-Za-z0-9][A-Za-z0-9_-]*' | grep -vx -- '--help' | sort -u || true
}
# The text of one section of the manual: from its heading to the next heading
# of the same or a higher level. $1: the heading's hashes, $2: its title.
section() {
  awk -v hashes="$1" -v title="$2" '
    function level(line) { match(line, /^#+/); return RLENGTH }
    /^```/ { fence = !fence }
    !fence && /^#+ / {
      if (on && level($0) <= length(hashes)) exit
      if ($0 == hashes " " title) { on = 1; next }
    }
    on { print }' "$manual"
}
# The part of a section before its first sub-heading.
own_part() { awk '/^```/ { f = !f } !f && /^###* / { exit } { print }' <<<"$1"; }
# The options a piece of the manual documents: code spans that open with one.
documented() {
  grep -oE -- '`--[A-Za-z0-9][A-Za-z0-9_-]*[` ]' <<<"$1" | tr -d '` ' | sort -u || true
}
# The headings of a level that name a command: "## topoctl X" -> X.
headings() { # hashes prefix
  awk -v hashes="$1" -v prefix="$2" '
    /^```/ { fence = !fence }
    !fence && index($0, hashes " " prefix) == 1 && substr($0, length(hashes) + 2, 1) != "#" {
      rest = substr($0, length(hashes " " prefix) + 1); split(rest, w, " "); print w[1] }' "$manual" | sort -u
}
# Compares a command's --help with its part of the manual.
check_options() { # command-name help-text manual-text
  local name=$1 help=$2 text=$3 opt
  local -A in_help=() in_text=()
  for opt in $(options_of "$help"); do in_help[$opt]=1; done
  for opt in $(documented "$text"); do in_text[$opt]=1; done
  for opt in "${!in_help[@]}"; do
    [ -n "${in_text[$opt]:-}" ] || fail "topoctl $name: option $opt is in --help but not written as \`$opt\` in its section"
  done
  for opt in "${!in_text[@]}"; do
    [ -n "${in_help[$opt]:-}" ] || fail "topoctl $name: the manual writes \`$opt\`, which its --help does not print"
  done
}

main_help=$("$topoctl" --help 2>&1) || true
mapfile -t subs < <(subcommands_of "$main_help")
[ ${#subs[@]} -gt 0 ] || die "no subcommands found in '$topoctl --help'"

# Main-level options: anywhere in the manual.
all_documented=$(documented "$(cat "$manual")")
for opt in $(options_of "$main_help"); do
  grep -qx -- "$opt" <<<"$all_documented" || fail "topoctl: main option $opt is not written as \`$opt\` in the manual"
done

declare -A known=()
for sub in "${subs[@]}"; do known[$sub]=1; done
for heading in $(headings '##' 'topoctl '); do
  [ -n "${known[$heading]:-}" ] || fail "the manual has '## topoctl $heading', which 'topoctl --help' does not list"
done

for sub in "${subs[@]}"; do
  text=$(section '##' "topoctl $sub")
  if ! grep -qxF "## topoctl $sub" "$manual"; then
    fail "topoctl $sub is in 'topoctl --help' but the manual has no '## topoctl $sub' section"
    continue
  fi
  help=$("$topoctl" "$sub" --help 2>&1) || true
  mapfile -t subsubs < <(subcommands_of "$help")
  check_options "$sub" "$help" "$(own_part "$text")"
  declare -A known_sub=()
  for s in "${subsubs[@]}"; do known_sub[$s]=1; done
  for heading in $(headings '###' "topoctl $sub "); do
    [ -n "${known_sub[$heading]:-}" ] || fail "the manual has '### topoctl $sub $heading', which 'topoctl $sub --help' does not list"
  done
  for s in "${subsubs[@]}"; do
    if ! grep -qxF "### topoctl $sub $s" "$manual"; then
      fail "topoctl $sub $s is in 'topoctl $sub --help' but the manual has no '### topoctl $sub $s' section"
      continue
    fi
    check_options "$sub $s" "$("$topoctl" "$sub" "$s" --help 2>&1 || true)" "$(section '###' "topoctl $sub $s")"
  done
  unset known_sub
done

if [ "$failures" -gt 0 ]; then
  printf 'topoctl_manual: %d mismatch(es) between %s and %s --help\n' "$failures" "$manual" "$topoctl" >&2
  exit 1
fi
printf 'topoctl_manual: %s covers %d subcommands of %s, every option both ways\n' "$manual" "${#subs[@]}" "$topoctl"
