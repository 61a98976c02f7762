#include "common/shell_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include <fmt/format.h>

namespace topo {
namespace {

// The last non-empty line of `text`, without surrounding blanks.
std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t begin = text.find_last_of('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return text.substr(begin, end - begin + 1);
}

// Reads what the command writes until it closes its end or `deadline`
// passes; keeps the last few kilobytes. False on timeout.
bool drain(int fd, std::string& kept, std::chrono::steady_clock::time_point deadline) {
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    kept.append(buf, static_cast<size_t>(n));
    if (kept.size() > 16384) kept.erase(0, kept.size() - 8192);
  }
}

}  // namespace

std::string ShellResult::describe() const {
  std::string what = timed_out         ? "ran past its timeout and was killed"
                     : signal          ? fmt::format("was killed by signal {}", signal)
                     : exit_status < 0 ? "ended, but its exit status could not be read (SIGCHLD ignored)"
                                       : fmt::format("exited with status {}", exit_status);
  return output_tail.empty() ? what : what + ": " + output_tail;
}

ShellResult run_shell(const std::string& command, std::chrono::milliseconds timeout) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  posix_spawnattr_init(&attr);
  // Its own group, so that a timeout kills what the shell started too; the
  // caller's blocked signals (a daemon's threads block many) are not its.
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, "/bin/sh", &actions, &attr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    throw std::system_error(rc, std::generic_category(), "cannot start /bin/sh");
  }
  ShellResult result;
  std::string output;
  result.timed_out = !drain(out[0], output, std::chrono::steady_clock::now() + timeout);
  ::close(out[0]);
  if (result.timed_out) ::kill(-pid, SIGKILL);
  int status = 0;
  pid_t waited;
  while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  // A caller that ignores SIGCHLD has its children reaped by the kernel:
  // no status to read, so no success to report (exit_status stays -1).
  if (waited == pid) {
    if (WIFEXITED(status) && !result.timed_out) result.exit_status = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  }
  result.output_tail = last_line(output);
  if (result.output_tail.size() > 200) result.output_tail = result.output_tail.substr(0, 200) + "...";
  return result;
}

}  // namespace topo
