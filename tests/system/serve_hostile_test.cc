// `topoctl serve` against clients that misbehave on purpose, over real
// loopback sockets to the real process (issue 45): slow clients beside a
// normal one, methods, bodies, header and target sizes, range lists, bytes
// after a head, links in the reports directory (also swapped during
// requests), a database moved away or made read-only, Host names, the
// security headers and error pages that name no server path. Each test
// makes a bounded number of connections and lasts at most a few seconds
// past the server's 5 s head deadline.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "db/placement_store.h"
#include "tests/support/http_socket.h"
#include "tests/support/serve_process.h"
#include "tests/support/topoctl_run.h"

namespace topo {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::exchange;
using testing::get_request;
using testing::HttpResponse;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ServeHostile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(TOPOCTL_PATH).parent_path().parent_path() / "tests" / "serve_hostile" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "reports" / "run1");
    db_ = (dir_ / "topo.db").string();
    testing::Ran discover = testing::run_topoctl(fmt::format(
        "discover --db '{}' --ibnetdiscover {}/ibnetdiscover/two_leaves.ibnetdiscover", db_, TOPO_FIXTURES));
    ASSERT_EQ(discover.code, 0) << discover.err;
    PlacementRecord job;
    job.job_id = 4242;
    job.snapshot_id = 1;
    job.hosts = {"gpu001", "gpu002"};
    job.ring_order = job.hosts;
    job.profile = "allreduce";
    PlacementStore(db_).record(job);
    std::ofstream(dir_ / "reports" / "run1" / "report.md") << "# run1\n";
    std::ofstream(dir_ / "reports" / "run1" / "cdf.svg") << "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n";
    std::ofstream(dir_ / "secret.svg") << "<svg><!-- outside the reports directory --></svg>\n";
  }

  // Starts serve; `extra` after --db and --reports.
  void start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--db", db_, "--reports", (dir_ / "reports").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    server_ = std::make_unique<testing::ServeProcess>(TOPOCTL_PATH, args, (dir_ / "serve.log").string());
    ASSERT_GT(server_->port(), 0) << "topoctl serve printed no port: " << slurp(dir_ / "serve.log");
  }
  int port() const { return server_->port(); }
  HttpResponse get(const std::string& path, const std::string& extra_fields = "") {
    std::optional<HttpResponse> r = exchange(port(), get_request(path, "127.0.0.1", extra_fields));
    EXPECT_TRUE(r) << "no response to GET " << path;
    return r.value_or(HttpResponse{});
  }

  fs::path dir_;
  std::string db_;
  std::unique_ptr<testing::ServeProcess> server_;
};

TEST_F(ServeHostile, SlowClientsNeitherDelayARequestNorHoldTheirConnection) {
  start();
  // 64 clients send a request head one byte at a time, a byte every 200 ms.
  constexpr int kSlow = 64;
  std::vector<int> slow;
  for (int i = 0; i < kSlow; ++i) {
    int fd = testing::connect_loopback(port());
    ASSERT_GE(fd, 0);
    slow.push_back(fd);
  }
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    const std::string head = get_request("/metrics");
    for (size_t i = 0; !done && i < head.size() - 2; ++i) {
      for (int fd : slow) ::send(fd, &head[i], 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(200ms);
    }
  });
  std::this_thread::sleep_for(500ms);
  // Meanwhile normal requests, one after another: each answered within 1 s.
  for (int i = 0; i < 8; ++i) {
    auto begin = Clock::now();
    HttpResponse r = get("/metrics");
    double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
    EXPECT_EQ(r.status, 200);
    EXPECT_LT(seconds, 1.0) << "request " << i << " waited behind the slow clients";
  }
  // The slow clients never finish their heads: the 5 s head deadline closes
  // them (with 408, the head being partial), well before their last byte.
  int closed = 0;
  for (int fd : slow) closed += testing::closed_by_peer(fd, 7000);
  done = true;
  trickle.join();
  EXPECT_EQ(closed, kSlow);
  for (int fd : slow) ::close(fd);
  EXPECT_EQ(get("/metrics").status, 200);
}

TEST_F(ServeHostile, OnlyGetAndHeadAnswer) {
  start();
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "BREW"}) {
    std::optional<HttpResponse> r =
        exchange(port(), fmt::format("{} /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", method));
    ASSERT_TRUE(r) << method;
    EXPECT_EQ(r->status, 405) << method;
    EXPECT_EQ(r->header("allow"), "GET, HEAD") << method;
  }
  std::optional<HttpResponse> head =
      exchange(port(), "HEAD /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", true);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_GT(std::stoul(head->header("content-length")), 0u);
}

// The server's resident memory, in kB.
long rss_kb(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

TEST_F(ServeHostile, BodiesAreRefusedBeforeTheyAreRead) {
  start();
  long before = rss_kb(server_->pid());
  // 64 MiB announced, none sent yet: the 413 comes at once, so the body was
  // not waited for.
  for (const char* method : {"GET", "POST"}) {
    int fd = testing::connect_loopback(port());
    ASSERT_TRUE(testing::send_all(
        fd, fmt::format("{} /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 67108864\r\n\r\n", method)));
    std::string buffer;
    std::optional<HttpResponse> r = testing::read_response(fd, buffer);
    ASSERT_TRUE(r) << method;
    EXPECT_EQ(r->status, std::string(method) == "GET" ? 413 : 405);
    EXPECT_EQ(r->header("connection"), "close");
    // Then 64 MiB really sent: the server drops the connection rather than read it.
    std::string mib(1 << 20, 'x');
    int sent = 0;
    while (sent < 64 && testing::send_all(fd, mib)) ++sent;
    EXPECT_LT(sent, 64) << "the server read the whole body";
    ::close(fd);
  }
  std::optional<HttpResponse> chunked =
      exchange(port(), "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  ASSERT_TRUE(chunked);
  EXPECT_EQ(chunked->status, 413);
  std::optional<HttpResponse> expect =
      exchange(port(), "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  ASSERT_TRUE(expect);
  EXPECT_EQ(expect->status, 413) << "no 100 Continue invites the body";
  long after = rss_kb(server_->pid());
  EXPECT_LT(after - before, 16 * 1024) << before << " kB before, " << after << " kB after";
}

TEST_F(ServeHostile, HeadsAreCapped) {
  start();
  std::string many;
  for (int i = 0; i < 100; ++i) many += fmt::format("X-Field-{}: {}\r\n", i, i);
  std::optional<HttpResponse> r = exchange(port(), get_request("/metrics", "127.0.0.1", many));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 431);
  r = exchange(port(), get_request("/metrics", "127.0.0.1", "X-Big: " + std::string(20000, 'a') + "\r\n"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 431);
  r = exchange(port(), get_request("/fabric?leaf=" + std::string(3000, 'a')));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 414);
  r = exchange(port(), "GET /metrics HTTP/1.1\nHost: 127.0.0.1\n\n");  // bare LF
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  r = exchange(port(), "GET /metrics HTTP/1.1\r\nHost : 127.0.0.1\r\n\r\n");  // space before the colon
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(get("/metrics").status, 200);
}

TEST_F(ServeHostile, OneRangeAtMost) {
  start();
  HttpResponse whole = get("/fabric.svg");
  ASSERT_EQ(whole.status, 200);
  size_t size = whole.body.size();
  std::string list = "bytes=0-";
  for (int i = 0; i < 1000; ++i) list += ",0-";
  for (const std::string& range : {list, std::string("bytes=0-1,5-9")}) {
    HttpResponse r = get("/fabric.svg", "Range: " + range + "\r\n");
    EXPECT_EQ(r.status, 416);
    EXPECT_LT(r.body.size(), 1000u);
  }
  EXPECT_EQ(get("/fabric.svg", "Range: bytes=0-1\r\nRange: bytes=5-9\r\n").status, 416);

  HttpResponse part = get("/fabric.svg", "Range: bytes=0-9\r\n");
  EXPECT_EQ(part.status, 206);
  EXPECT_EQ(part.body, whole.body.substr(0, 10));
  EXPECT_EQ(part.header("content-range"), fmt::format("bytes 0-9/{}", size));
  HttpResponse tail = get("/fabric.svg", "Range: bytes=5-99999999\r\n");
  EXPECT_EQ(tail.status, 206);
  EXPECT_EQ(tail.body, whole.body.substr(5));
  EXPECT_EQ(tail.header("content-range"), fmt::format("bytes 5-{}/{}", size - 1, size));
  HttpResponse suffix = get("/fabric.svg", "Range: bytes=-4\r\n");
  EXPECT_EQ(suffix.body, whole.body.substr(size - 4));
  HttpResponse past = get("/fabric.svg", "Range: bytes=99999999-\r\n");
  EXPECT_EQ(past.status, 416);
  EXPECT_EQ(past.header("content-range"), fmt::format("bytes */{}", size));
  // An error page is never cut.
  HttpResponse missing = get("/job/7", "Range: bytes=0-3\r\n");
  EXPECT_EQ(missing.status, 404);
  EXPECT_GT(missing.body.size(), 4u);
}

TEST_F(ServeHostile, ARequestsBytesNeverStartAnother) {
  start();
  // A GET whose body is a request: one answer (413), then the connection ends.
  std::string inner = get_request("/metrics");
  std::string smuggled =
      fmt::format("GET /snapshots HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n\r\n{}", inner.size(), inner);
  // Also padded so that the inner request starts a 4 KiB read, as in the issue.
  auto padded = [&](size_t pad) {
    return fmt::format("GET /snapshots HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: {}\r\nContent-Length: {}\r\n\r\n",
                       std::string(pad, 'p'), inner.size());
  };
  std::string aligned = padded(4096 - padded(0).size());
  ASSERT_EQ(aligned.size(), 4096u);
  for (const std::string& first : {smuggled, aligned + inner}) {
    int fd = testing::connect_loopback(port());
    ASSERT_TRUE(testing::send_all(fd, first));
    std::string buffer;
    std::optional<HttpResponse> r = testing::read_response(fd, buffer);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 413);
    EXPECT_FALSE(testing::read_response(fd, buffer)) << "a second response came";
    ::close(fd);
  }
  // Pipelined requests in one write are each answered, in order.
  int fd = testing::connect_loopback(port());
  ASSERT_TRUE(testing::send_all(fd, get_request("/metrics") + get_request("/snapshots") + get_request("/job/4242")));
  std::string buffer;
  for (const char* expected : {"topo_aware_snapshots", "id=\"snapshots\"", "id=\"placement\""}) {
    std::optional<HttpResponse> r = testing::read_response(fd, buffer);
    ASSERT_TRUE(r) << expected;
    EXPECT_EQ(r->status, 200);
    EXPECT_TRUE(contains(r->body, expected)) << expected;
  }
  ::close(fd);
}

TEST_F(ServeHostile, ReportFilesAreReadWithoutFollowingLinks) {
  fs::path run = dir_ / "reports" / "run1";
  fs::create_hard_link(dir_ / "secret.svg", run / "hard.svg");
  fs::create_symlink(dir_ / "secret.svg", run / "soft.svg");
  fs::create_directory_symlink(run, dir_ / "reports" / "linked");
  start();
  EXPECT_EQ(get("/report/run1/cdf.svg").status, 200);
  EXPECT_EQ(get("/report/run1/hard.svg").status, 404) << "a hard link to a file outside";
  EXPECT_EQ(get("/report/run1/soft.svg").status, 404) << "a symbolic link";
  EXPECT_EQ(get("/report/linked/cdf.svg").status, 404) << "a linked report directory";
  HttpResponse listed = get("/reports");
  EXPECT_TRUE(contains(listed.body, "/report/run1")) << listed.body;
  EXPECT_FALSE(contains(listed.body, "/report/linked"));
  HttpResponse page = get("/report/run1");
  EXPECT_TRUE(contains(page.body, "cdf.svg"));
  EXPECT_FALSE(contains(page.body, "hard.svg"));
  EXPECT_FALSE(contains(page.body, "soft.svg"));

  // A link swapped in and out under the name of a plain file while it is
  // requested: never the outside file.
  std::ofstream(run / "swap-plain.svg") << "<svg><!-- inside --></svg>\n";
  std::atomic<bool> done{false};
  std::thread swapper([&] {
    for (int i = 0; !done; ++i) {
      std::error_code ec;
      fs::remove(run / "swap-tmp.svg", ec);
      if (i % 2)
        fs::copy_file(run / "swap-plain.svg", run / "swap-tmp.svg");
      else
        fs::create_symlink(dir_ / "secret.svg", run / "swap-tmp.svg");
      fs::rename(run / "swap-tmp.svg", run / "swap.svg");
    }
  });
  int inside = 0, outside = 0;
  for (int i = 0; i < 300; ++i) {
    HttpResponse r = get("/report/run1/swap.svg");
    inside += r.status == 200 && contains(r.body, "inside");
    outside += contains(r.body, "outside");
  }
  done = true;
  swapper.join();
  EXPECT_EQ(outside, 0);
  EXPECT_GT(inside, 0) << "the plain file was never served: the race was not run";
}

TEST_F(ServeHostile, TheDatabaseIsOnlyRead) {
  start();
  // Reads leave the database's bytes as they were, its write-ahead log too.
  std::string bytes = slurp(db_) + slurp(db_ + "-wal");
  for (const char* path : {"/", "/lint", "/snapshots", "/jobs", "/job/4242", "/metrics", "/fabric.svg"})
    EXPECT_EQ(get(path).status, 200) << path;
  EXPECT_EQ(slurp(db_) + slurp(db_ + "-wal"), bytes);

  // Moved away: 503, one line in the log, no new file; back: 200.
  fs::rename(db_, db_ + ".away");
  for (int i = 0; i < 5; ++i) {
    HttpResponse r = get(i % 2 ? "/metrics" : "/snapshots");
    EXPECT_EQ(r.status, 503);
    EXPECT_FALSE(contains(r.body, dir_.string())) << r.body;
  }
  EXPECT_FALSE(fs::exists(db_)) << "the page created a database";
  fs::rename(db_ + ".away", db_);
  EXPECT_EQ(get("/metrics").status, 200);
  std::string log = slurp(dir_ / "serve.log");
  size_t lines = 0;
  for (size_t at = log.find("cannot be read"); at != std::string::npos; at = log.find("cannot be read", at + 1))
    ++lines;
  EXPECT_EQ(lines, 1u) << log;
  EXPECT_TRUE(contains(log, "can be read again")) << log;
  EXPECT_FALSE(contains(log.substr(0, log.find("can be read again")), "GET")) << "one line, not one per request";
}

TEST_F(ServeHostile, HostMustNameThisServer) {
  start({"--allow-host", "topo.example.org"});
  auto status = [&](const std::string& host) {
    std::optional<HttpResponse> r = exchange(port(), get_request("/jobs", host));
    return r ? r->status : 0;
  };
  EXPECT_EQ(status("attacker.example"), 421);
  EXPECT_EQ(status("attacker.example:" + std::to_string(port())), 421);
  EXPECT_EQ(status("127.0.0.1.attacker.example"), 421);
  EXPECT_EQ(status("127.0.0.1:" + std::to_string(port())), 200);
  EXPECT_EQ(status("localhost:" + std::to_string(port())), 200);
  EXPECT_EQ(status("LOCALHOST."), 200);
  EXPECT_EQ(status("[::1]:" + std::to_string(port())), 200);
  EXPECT_EQ(status("topo.example.org"), 200);
  std::optional<HttpResponse> none = exchange(port(), "GET /jobs HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 400);
  std::optional<HttpResponse> two =
      exchange(port(), "GET /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: attacker.example\r\n\r\n");
  ASSERT_TRUE(two);
  EXPECT_EQ(two->status, 400);
}

TEST_F(ServeHostile, EveryResponseCarriesTheSecurityHeaders) {
  start();
  std::vector<std::optional<HttpResponse>> answers = {
      exchange(port(), get_request("/")),
      exchange(port(), get_request("/fabric.svg")),
      exchange(port(), get_request("/report/run1/cdf.svg")),
      exchange(port(), get_request("/metrics")),
      exchange(port(), get_request("/nowhere")),
      exchange(port(), "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
      exchange(port(), get_request("/", "attacker.example")),
      exchange(port(), get_request("/", "127.0.0.1", "Range: bytes=0-1,2-3\r\n")),
      exchange(port(), "GET / HTTP/1.1\nHost: 127.0.0.1\n\n"),
  };
  for (const std::optional<HttpResponse>& r : answers) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->header("x-content-type-options"), "nosniff") << r->head;
    std::string csp = r->header("content-security-policy");
    EXPECT_TRUE(contains(csp, "default-src 'none'")) << r->head;
    EXPECT_TRUE(contains(csp, "frame-ancestors 'none'")) << r->head;
    // Scripts from this site only (/page.js): no inline script, no eval.
    EXPECT_TRUE(contains(csp, "script-src 'self';")) << r->head;
    EXPECT_FALSE(contains(csp, "unsafe-eval")) << r->head;
  }
}

TEST_F(ServeHostile, ErrorPagesNameNoServerPath) {
  start();
  std::string server_dir = dir_.string();
  for (const char* path :
       {"/fabric?snapshot=999", "/fabric?snapshot=-9223372036854775808", "/fabric?snapshot=-9223372036854775807",
        "/fabric?snapshot=nonsense", "/fabric?job=77", "/fabric?leaf=nowhere", "/job/77", "/diff?from=1&to=5",
        "/report/none", "/report/run1/x.svg", "/lint?snapshot=-2"}) {
    HttpResponse r = get(path);
    EXPECT_TRUE(r.status == 404 || r.status == 400) << path << ": " << r.status;
    EXPECT_FALSE(contains(r.body, server_dir)) << path << ": " << r.body;
    EXPECT_FALSE(contains(r.body, "topo.db")) << path << ": " << r.body;
  }
  EXPECT_TRUE(server_->running()) << "the server survived snapshot=INT64_MIN";
}

}  // namespace
}  // namespace topo
