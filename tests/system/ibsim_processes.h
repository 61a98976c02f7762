// Child processes for the system tests that run real InfiniBand software
// (ibsim, OpenSM, infiniband-diags) on this machine: finding programs,
// starting and stopping them with their logs, a temporary directory, and
// the LD_PRELOAD of libumad2sim that points a process at one ibsim.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "discovery/ibnetdiscover.h"
#include "fabric/fabric.h"
#include "tests/support/temp_dir.h"

namespace topo::system_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// libumad2sim: preloaded, it points a process's umad calls at ibsim.
inline constexpr const char* kUmad2sim = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so";

inline std::optional<std::string> find_program(const std::string& name) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/sbin:/usr/bin:/sbin:/bin";
  std::istringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    fs::path p = fs::path(dir) / name;
    if (!dir.empty() && access(p.c_str(), X_OK) == 0) return p.string();
  }
  return std::nullopt;
}

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A child process, stopped and reaped when this goes out of scope.
class Process {
 public:
  // Standard output goes to `log`, standard error to `errors` (default: `log` too).
  Process(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& cwd,
          const fs::path& log, bool with_stdin, const fs::path& errors = {}) {
    int in[2] = {-1, -1};
    if (with_stdin && pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    std::vector<std::string> envs;
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      bool overridden = false;
      for (const std::string& mine : env)
        overridden |= kv.substr(0, kv.find('=') + 1) == mine.substr(0, mine.find('=') + 1);
      if (!overridden) envs.push_back(kv);
    }
    envs.insert(envs.end(), env.begin(), env.end());
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      if (with_stdin)
        dup2(in[0], 0);
      else
        dup2(open("/dev/null", O_RDONLY), 0);
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(errors.empty() ? fd : open(errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
      if (chdir(cwd.c_str()) != 0) _exit(126);
      std::vector<char*> args, envp;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      for (const auto& e : envs) envp.push_back(const_cast<char*>(e.c_str()));
      envp.push_back(nullptr);
      execve(args[0], args.data(), envp.data());
      _exit(127);
    }
    if (with_stdin) {
      close(in[0]);
      stdin_ = in[1];
    }
    name_ = argv[0];
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() { stop(); }

  pid_t pid() const { return pid_; }

  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == 0) return true;
    pid_ = -1;
    exit_status_ = status;
    return false;
  }

  // Console input (ibsim reads commands from its stdin; it spins on EOF, so
  // the pipe stays open until the process is stopped).
  void send(const std::string& line) {
    std::string text = line + "\n";
    if (stdin_ < 0 || write(stdin_, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      throw std::runtime_error("cannot write to " + name_);
  }

  // Waits for exit; kills it after `timeout`. Returns the wait status, or nullopt on timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running()) {
      if (std::chrono::steady_clock::now() > deadline) {
        stop();
        return std::nullopt;
      }
      std::this_thread::sleep_for(20ms);
    }
    return exit_status_;
  }

  void stop() {
    if (stdin_ >= 0) {
      close(stdin_);
      stdin_ = -1;
    }
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 100 && running(); ++i) std::this_thread::sleep_for(20ms);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  int exit_status_ = 0;
  std::string name_;
};

using testing::TempDir;

// The environment that sends libibumad to the simulator on socket `socket`.
// In a sanitizer build the child must be told that the preload comes first
// on purpose, and not to check memcpy: libumad2sim 0.10's read() copies past
// the end of its own buffer.
inline std::vector<std::string> with_preload(std::vector<std::string> env, const std::string& socket) {
  env.push_back(std::string("LD_PRELOAD=") + kUmad2sim);
  env.push_back("IBSIM_SOCKNAME=" + socket);
  const char* asan = std::getenv("ASAN_OPTIONS");
  env.push_back(std::string("ASAN_OPTIONS=") + (asan && *asan ? std::string(asan) + ":" : "") +
                "verify_asan_link_order=0:replace_intrin=0");
  return env;
}

inline bool abstract_socket_listening(const std::string& name) {
  return read_file("/proc/net/unix").find("@" + name + ":ctl") != std::string::npos;
}

// ibsim simulating `fabric` (written as its net file) on a socket of its
// own, in a temporary directory that holds every log. A test adds the
// processes it needs on top (OpenSM, infiniband-diags, a child of its own)
// with env(), and declares them after this so that they stop first.
class Ibsim {
 public:
  // `tag` names the socket, so that concurrent tests never share one.
  Ibsim(const Fabric& fabric, const std::string& tag) : socket_(fmt::format("{}{}x{}", tag, getpid(), ++counter_)) {
    fs::path net = dir_.path() / "fabric.net";
    {
      std::ofstream out(net);
      write_ibnetdiscover(fabric, out);
    }
    ibsim_.emplace(std::vector<std::string>{*find_program("ibsim"), "-s", net.string()},
                   std::vector<std::string>{"IBSIM_SOCKNAME=" + socket_}, dir_.path(), dir_.path() / "ibsim.log", true);
    for (auto deadline = std::chrono::steady_clock::now() + 15s; !abstract_socket_listening(socket_);) {
      if (!ibsim_->running() || std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("ibsim did not start on " + net.string() + ":\n" + log("ibsim.log"));
      std::this_thread::sleep_for(20ms);
    }
  }

  // The environment of a process that talks to this simulator.
  std::vector<std::string> env(std::vector<std::string> more) const { return with_preload(std::move(more), socket_); }
  // A line for ibsim's console (e.g. "PerformanceSet ...").
  void console(const std::string& command) { ibsim_->send(command); }
  const fs::path& dir() const { return dir_.path(); }
  std::string log(const std::string& file) const { return read_file(dir_.path() / file); }

 private:
  static inline int counter_ = 0;
  TempDir dir_{"topo-ibsim"};  // declared first: removed after ibsim stops
  std::string socket_;
  std::optional<Process> ibsim_;
};

}  // namespace topo::system_test
