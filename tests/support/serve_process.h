// `topoctl serve` in a child process for the system tests and the load
// benchmark: started on a free loopback port (read from its first line),
// stopped by SIGTERM when done with (SIGKILL if it will not go), its stderr
// kept in a log file.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace topo::testing {

class ServeProcess {
 public:
  // `topoctl` at `program`, with `args` after "serve --listen 127.0.0.1:0".
  ServeProcess(const std::string& program, const std::vector<std::string>& args, const std::string& log) {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (err >= 0) dup2(err, 2);
      close(out[0]);
      std::vector<const char*> argv = {program.c_str(), "serve", "--listen", "127.0.0.1:0"};
      for (const std::string& a : args) argv.push_back(a.c_str());
      argv.push_back(nullptr);
      execv(program.c_str(), const_cast<char* const*>(argv.data()));
      _exit(127);
    }
    close(out[1]);
    // The first line names the port: "listening on http://127.0.0.1:PORT/ ...".
    FILE* in = fdopen(out[0], "r");
    char line[512] = {};
    if (in && fgets(line, sizeof line, in)) {
      std::string text(line);
      size_t at = text.find("127.0.0.1:");
      if (at != std::string::npos) port_ = std::stoi(text.substr(at + 10));
    }
    if (in) fclose(in);
  }
  ~ServeProcess() { stop(); }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  // False once it has exited (then reaped).
  bool running() {
    int status = 0;
    if (pid_ <= 0) return false;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
    pid_ = -1;
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return false;
  }
  // SIGTERM; the exit code (-1 when it had to be killed).
  int stop() {
    using namespace std::chrono_literals;
    if (pid_ <= 0) return code_;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(50ms);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return code_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  int code_ = -1;
};

}  // namespace topo::testing
