// Runs the topoctl binary under test (TOPOCTL_PATH), or any shell command,
// and gives back its exit code, stdout and stderr, for the CLI and system
// tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace topo::testing {

struct Ran {
  int code = -1;
  std::string out, err;
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
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  std::remove(err_file.c_str());
  return r;
}

// `args` go to a shell as written (quote what needs it).
inline Ran run_topoctl(const std::string& args) { return run_command(std::string(TOPOCTL_PATH) + " " + args); }

}  // namespace topo::testing
