// The latency of `GET /metrics` from `topoctl serve` under load: C clients
// (8, then 64), each on one keep-alive connection asking again as soon as
// it has its answer, while 64 slow clients beside them hold connections
// open by sending a request head a byte at a time (reconnecting whenever
// the server closes them). Prints p50, p99 and the worst latency, the
// requests a second and the errors per level; with --no-slow, the same
// without the slow clients, for comparison.
//
//   build/release/tests/serve_load [--topoctl PATH] [--db fabric.db] [--requests 4000] [--no-slow]
//
// Without --db, a database of a synthetic 32-host fabric is made in a
// temporary directory. Without --topoctl, the one of this build; any may be
// given, e.g. an older build's.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "tests/support/http_socket.h"
#include "tests/support/serve_process.h"
#include "tests/support/topoctl_run.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using topo::testing::connect_loopback;

// Holds `count` connections open, each sending a request head one byte
// every `gap`; reconnects what the server closes.
class SlowClients {
 public:
  SlowClients(int port, int count, std::chrono::milliseconds gap) : thread_([=, this] { run(port, count, gap); }) {}
  ~SlowClients() {
    done_ = true;
    thread_.join();
  }
  long reconnects() const { return reconnects_; }

 private:
  void run(int port, int count, std::chrono::milliseconds gap) {
    const std::string head = topo::testing::get_request("/metrics");
    std::vector<int> fds(count, -1);
    std::vector<size_t> at(count, 0);
    while (!done_) {
      for (int i = 0; i < count; ++i) {
        if (fds[i] < 0) {
          fds[i] = connect_loopback(port, 100);
          at[i] = 0;
          continue;
        }
        // Never the last byte: the head stays incomplete.
        if (::send(fds[i], &head[at[i] % (head.size() - 1)], 1, MSG_NOSIGNAL) != 1) {
          ::close(fds[i]);
          fds[i] = -1;
          ++reconnects_;
        }
        ++at[i];
      }
      std::this_thread::sleep_for(gap);
    }
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }

  std::atomic<bool> done_{false};
  std::atomic<long> reconnects_{0};
  std::thread thread_;
};

struct Level {
  std::vector<double> ms;
  long errors = 0;
  double seconds = 0;
};

// `clients` threads share `requests` GETs of /metrics, each on its own
// keep-alive connection (a new one after an error or a close).
Level measure(int port, int clients, int requests) {
  Level out;
  std::mutex lock;
  std::atomic<int> left{requests};
  auto begin = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&] {
      int fd = -1;
      std::string buffer;
      std::vector<double> mine;
      long errors = 0;
      const std::string request = topo::testing::get_request("/metrics");
      while (left.fetch_sub(1) > 0) {
        auto t0 = Clock::now();
        if (fd < 0) {
          fd = connect_loopback(port, 30000);
          buffer.clear();
        }
        std::optional<topo::testing::HttpResponse> r;
        if (fd >= 0 && topo::testing::send_all(fd, request)) r = topo::testing::read_response(fd, buffer);
        if (!r || r->status != 200) {
          ++errors;
          if (fd >= 0) ::close(fd);
          fd = -1;
          continue;
        }
        mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (r->header("connection") == "close") {
          ::close(fd);
          fd = -1;
        }
      }
      if (fd >= 0) ::close(fd);
      std::lock_guard hold(lock);
      out.ms.insert(out.ms.end(), mine.begin(), mine.end());
      out.errors += errors;
    });
  for (std::thread& t : threads) t.join();
  out.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  std::sort(out.ms.begin(), out.ms.end());
  return out;
}

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(q * static_cast<double>(sorted.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  std::string topoctl = TOPOCTL_PATH, db;
  int requests = 4000;
  bool slow = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--topoctl" && i + 1 < argc)
      topoctl = argv[++i];
    else if (a == "--db" && i + 1 < argc)
      db = argv[++i];
    else if (a == "--requests" && i + 1 < argc)
      requests = std::atoi(argv[++i]);
    else if (a == "--no-slow")
      slow = false;
    else {
      std::fprintf(stderr,
                   "usage: serve_load [--topoctl PATH] [--db PATH] [--requests N] [--no-slow]\n"
                   "GET /metrics latency of topoctl serve at 8 and 64 clients beside 64 slow clients\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (requests <= 0) {
    std::fprintf(stderr, "serve_load: --requests takes a whole number from 1\n");
    return 2;
  }
  fs::path dir = fs::temp_directory_path() / fmt::format("serve_load.{}", getpid());
  fs::create_directories(dir);
  if (db.empty()) {
    db = (dir / "topo.db").string();
    topo::testing::Ran made = topo::testing::run_command(
        fmt::format("{} discover --db {} --synthetic leafspine:leaves=4,hosts_per_leaf=8,spines=2", topoctl, db));
    if (made.code != 0) {
      std::fprintf(stderr, "serve_load: discover failed: %s\n", made.err.c_str());
      return 1;
    }
  }
  int code = 0;
  {
    topo::testing::ServeProcess server(topoctl, {"--db", db}, (dir / "serve.log").string());
    if (server.port() <= 0) {
      std::fprintf(stderr, "serve_load: topoctl serve did not start (log in %s)\n", (dir / "serve.log").c_str());
      return 1;
    }
    measure(server.port(), 4, 200);  // warm: the fabric loaded and cached
    fmt::print("GET /metrics, {} requests per level, {} slow clients beside them\n", requests, slow ? 64 : 0);
    fmt::print("{:>8} {:>10} {:>10} {:>10} {:>10} {:>7}\n", "clients", "p50 ms", "p99 ms", "max ms", "req/s", "errors");
    std::unique_ptr<SlowClients> slow_clients;
    if (slow) {
      slow_clients = std::make_unique<SlowClients>(server.port(), 64, 500ms);
      std::this_thread::sleep_for(1s);  // every slow connection open and sending
    }
    for (int clients : {8, 64}) {
      Level l = measure(server.port(), clients, requests);
      fmt::print("{:>8} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.0f} {:>7}\n", clients, quantile(l.ms, 0.50),
                 quantile(l.ms, 0.99), l.ms.empty() ? 0.0 : l.ms.back(), static_cast<double>(l.ms.size()) / l.seconds,
                 l.errors);
      if (l.errors) code = 1;
    }
    if (slow_clients)
      fmt::print("slow connections closed by the server and reopened: {}\n", slow_clients->reconnects());
    slow_clients.reset();
  }
  fs::remove_all(dir);
  return code;
}
