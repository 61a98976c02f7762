// Running a command an admin configured (`RouteCommand=`, `topoctl route
// apply --sweep-command`) by /bin/sh, from a program that may have threads
// of its own (slurmctld): posix_spawn rather than system(3), which changes
// the whole process's SIGINT and SIGQUIT handling while it waits.
#pragma once

#include <chrono>
#include <string>

namespace topo {

struct ShellResult {
  int exit_status = -1;     // the shell's exit status; -1 when it did not exit or none could be read
  int signal = 0;           // the signal that ended it, if one did
  bool timed_out = false;   // killed (with every process of its group) after the timeout
  std::string output_tail;  // the last line it wrote (standard output and error), trimmed
  bool ok() const { return exit_status == 0; }
  // "exited with status 3: <last line>", "killed by signal 9", ...
  std::string describe() const;
};

// Runs `command` by `/bin/sh -c` in a process group of its own, its
// standard input /dev/null, its output read (the last line kept), and waits
// for it at most `timeout`. Throws std::system_error when it cannot be
// started at all.
ShellResult run_shell(const std::string& command, std::chrono::milliseconds timeout);

}  // namespace topo
