# Shell pieces the Slurm test scripts share; source it, it runs nothing.

# A TAP-like check: runs the command, counts it in $passed or $failed.
passed=0
failed=0
check() { # name command...
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1)); echo "ok   - $name"
  else
    failed=$((failed + 1)); echo "FAIL - $name"
  fi
}

# One field of `scontrol show job` (fields without spaces).
job_field() { # job field
  scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}

# Runs the command every quarter second until it succeeds or the time is up.
wait_until() { # seconds command...
  local deadline=$(($(date +%s) + $1))
  shift
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.25
  done
}
