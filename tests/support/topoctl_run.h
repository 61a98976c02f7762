// Runs the topoctl binary under test (TOPOCTL_PATH), or any shell command,
// and gives back its exit code, stdout and stderr, for the CLI and system
// tests.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace topo::testing {

struct Ran {
  int code = -1;  // the exit code; -1 when a signal ended it
  std::string out, err;
  long max_rss_kb = 0;  // the peak resident memory of the command and what it waited for
};

// Runs `command` in a shell (quote what needs it); its stderr is kept
// apart from its stdout through a file.
inline Ran run_command(const std::string& command) {
  // One stderr file per process and call: ctest runs tests in parallel processes.
  static int calls = 0;
  std::string err_file =
      ::testing::TempDir() + "topoctl_stderr." + std::to_string(getpid()) + "." + std::to_string(++calls);
  std::string cmd = command + " 2>" + err_file;
  Ran r;
  int out[2];
  if (pipe(out) != 0) return r;
  pid_t pid = fork();
  if (pid < 0) {
    close(out[0]);
    close(out[1]);
    return r;
  }
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) != 0;)
    if (n > 0)
      r.out.append(buf, static_cast<size_t>(n));
    else if (errno != EINTR)
      break;
  close(out[0]);
  int status = 0;
  rusage usage{};
  // wait4's usage takes in the shell's own waited-for children: topoctl.
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.max_rss_kb = usage.ru_maxrss;
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  std::remove(err_file.c_str());
  return r;
}

// `args` go to a shell as written (quote what needs it).
inline Ran run_topoctl(const std::string& args) { return run_command(std::string(TOPOCTL_PATH) + " " + args); }

// What the CLI tests of one small fabric share (tests/tools/*_cli_test.cc):
// after `using namespace testing::cli;` a test says topoctl("show ...") and
// builds its fabric from kSpec.
namespace cli {
using testing::Ran;
// 4 leaves of 8 hosts and 2 spines, 2:1 oversubscribed: small enough to
// check by hand, crowded enough that rings across leaves share cables.
inline constexpr const char* kSpec = "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2";
inline Ran topoctl(const std::string& args) { return run_topoctl(args); }
}  // namespace cli

}  // namespace topo::testing
