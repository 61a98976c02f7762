#include "tools/topoctl/page_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "tools/topoctl/page_guard.h"

namespace topoctl {
namespace {

using Clock = std::chrono::steady_clock;

// After a response that ends the connection, what the client still sends
// is read and dropped this long (closing with unread bytes would reset the
// connection, and the client could lose the response), up to kDrainBytes.
constexpr std::chrono::milliseconds kLinger{2000};
constexpr size_t kDrainBytes = 1 << 20;
constexpr size_t kReadChunk = 16 * 1024;

// The library reads the request head from here and writes its response here.
class HeadStream : public httplib::Stream {
 public:
  HeadStream(std::string_view head, const Peer& peer) : head_(head), peer_(peer) {}
  bool is_readable() const override { return at_ < head_.size(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    size_t n = std::min(size, head_.size() - at_);
    std::memcpy(ptr, head_.data() + at_, n);
    at_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = peer_.remote_ip;
    port = peer_.remote_port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = peer_.local_ip;
    port = peer_.local_port;
  }
  socket_t socket() const override { return INVALID_SOCKET; }
  std::string take() { return std::move(out_); }

 private:
  std::string_view head_;
  size_t at_ = 0;
  const Peer& peer_;
  std::string out_;
};

void numeric_address(const sockaddr_storage& address, socklen_t size, std::string& ip, int& port) {
  char host[NI_MAXHOST] = "", service[NI_MAXSERV] = "";
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address), size, host, sizeof host, service, sizeof service,
                  NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(service);
  }
}

Peer peer_of(int fd) {
  Peer p;
  sockaddr_storage a{};
  socklen_t size = sizeof a;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&a), &size) == 0)
    numeric_address(a, size, p.remote_ip, p.remote_port);
  size = sizeof a;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &size) == 0) numeric_address(a, size, p.local_ip, p.local_port);
  return p;
}

}  // namespace

std::string PageApp::answer(std::string_view head, bool close, const Peer& peer) {
  HeadStream stream(head, peer);
  bool closed = false;
  process_request(stream, close, closed, nullptr);
  return stream.take();
}

struct PageServer::Loop {
  enum class State { Reading, Working, Writing, Draining };
  struct Conn {
    int fd = -1;
    Peer peer;
    State state = State::Reading;
    Clock::time_point deadline;
    std::string in, out;  // bytes read and not yet a request; the response being written
    size_t sent = 0, served = 0, drained = 0;
    bool close_after = false;
  };
  struct Job {
    uint64_t id;
    std::string head;
    bool close;
    Peer peer;
  };
  struct Done {
    uint64_t id;
    std::string response;
  };

  PageApp& app;
  TransportLimits limits;
  int listen_fd = -1, wake_fd = -1;
  std::atomic<bool> stopping{false};
  std::map<uint64_t, Conn> conns;
  uint64_t next_id = 1;
  Clock::time_point accept_paused_until{};

  std::mutex lock;
  std::condition_variable ready;
  std::deque<Job> jobs;
  std::vector<Done> done;
  bool quit = false;
  std::vector<std::thread> workers;

  Loop(PageApp& a, TransportLimits l) : app(a), limits(l) {
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd < 0) throw std::runtime_error(fmt::format("eventfd: {}", std::strerror(errno)));
  }
  ~Loop() {
    for (auto& [id, c] : conns) ::close(c.fd);
    if (listen_fd >= 0) ::close(listen_fd);
    ::close(wake_fd);
  }

  void wake() {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd, &one, sizeof one);
  }

  void work() {
    for (;;) {
      Job job;
      {
        std::unique_lock hold(lock);
        ready.wait(hold, [&] { return quit || !jobs.empty(); });
        if (quit) return;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      std::string response;
      try {
        response = app.answer(job.head, job.close, job.peer);
      } catch (const std::exception&) {
        response = refusal(500, "internal error");
      }
      {
        std::lock_guard hold(lock);
        done.push_back({job.id, std::move(response)});
      }
      wake();
    }
  }

  void close_conn(uint64_t id) {
    auto it = conns.find(id);
    if (it == conns.end()) return;
    ::close(it->second.fd);
    conns.erase(it);
  }

  // Closes the connection that has waited longest for a head (or is being
  // drained); false when every connection is busy with a request.
  bool evict_oldest() {
    auto oldest = conns.end();
    for (auto it = conns.begin(); it != conns.end(); ++it)
      if ((it->second.state == State::Reading || it->second.state == State::Draining) &&
          (oldest == conns.end() || it->second.deadline < oldest->second.deadline))
        oldest = it;
    if (oldest == conns.end()) return false;
    close_conn(oldest->first);
    return true;
  }

  void accept_all(Clock::time_point now) {
    for (;;) {
      int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        // Out of descriptors: make room, or wait a moment before trying again.
        if ((errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) && !evict_oldest())
          accept_paused_until = now + std::chrono::milliseconds(100);
        return;
      }
      if (conns.size() >= limits.max_connections && !evict_oldest()) {
        ::close(fd);
        continue;
      }
      int on = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      Conn c;
      c.fd = fd;
      c.peer = peer_of(fd);
      c.deadline = now + limits.head_deadline;
      conns.emplace(next_id++, std::move(c));
    }
  }

  void respond(uint64_t id, Conn& c, std::string bytes, Clock::time_point now) {
    c.out = std::move(bytes);
    c.sent = 0;
    c.close_after = true;
    c.in.clear();
    c.state = State::Writing;
    c.deadline = now + limits.write_deadline;
    on_writable(id, c, now);
  }

  // A whole head in `in` goes to a worker; a refused one is answered here.
  void take_request(uint64_t id, Conn& c, Clock::time_point now) {
    Head h = scan_head(c.in, limits.head);
    if (h.verdict == Head::Verdict::Incomplete) return;
    if (std::string refused = transport_refusal(h); !refused.empty()) return respond(id, c, std::move(refused), now);
    std::string head = c.in.substr(0, h.size);
    bool keep = h.keep_alive && ++c.served < limits.max_requests;
    // What follows a body-bearing head is that body: never a request.
    if (keep)
      c.in.erase(0, h.size);
    else
      c.in.clear();
    c.close_after = !keep;
    c.state = State::Working;
    {
      std::lock_guard hold(lock);
      jobs.push_back({id, std::move(head), !keep, c.peer});
    }
    ready.notify_one();
  }

  void on_readable(uint64_t id, Conn& c, Clock::time_point now) {
    char buf[kReadChunk];
    ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) return close_conn(id);
    if (c.state == State::Draining) {
      c.drained += static_cast<size_t>(n);
      if (c.drained > kDrainBytes) close_conn(id);
      return;
    }
    c.in.append(buf, static_cast<size_t>(n));
    take_request(id, c, now);
  }

  void on_writable(uint64_t id, Conn& c, Clock::time_point now) {
    while (c.sent < c.out.size()) {
      ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) return close_conn(id);
      c.sent += static_cast<size_t>(n);
    }
    c.out = std::string();
    if (c.close_after) {
      ::shutdown(c.fd, SHUT_WR);
      c.state = State::Draining;
      c.deadline = now + kLinger;
      return;
    }
    c.state = State::Reading;
    c.deadline = now + limits.head_deadline;
    if (!c.in.empty()) take_request(id, c, now);  // a pipelined request
  }

  void take_done(Clock::time_point now) {
    uint64_t count;
    [[maybe_unused]] ssize_t n = ::read(wake_fd, &count, sizeof count);
    std::vector<Done> finished;
    {
      std::lock_guard hold(lock);
      finished.swap(done);
    }
    for (Done& d : finished) {
      auto it = conns.find(d.id);
      if (it == conns.end()) continue;
      Conn& c = it->second;
      if (d.response.empty()) {
        close_conn(d.id);
        continue;
      }
      c.out = std::move(d.response);
      c.sent = 0;
      c.state = State::Writing;
      c.deadline = now + limits.write_deadline;
      on_writable(d.id, c, now);
    }
  }

  void expire(Clock::time_point now) {
    std::vector<uint64_t> late;
    for (auto& [id, c] : conns)
      if (c.state != State::Working && c.deadline <= now) late.push_back(id);
    for (uint64_t id : late) {
      Conn& c = conns.at(id);
      if (c.state == State::Reading && !c.in.empty())
        respond(id, c, refusal(408, "the request head did not arrive in time"), now);
      else
        close_conn(id);
    }
  }

  int timeout_ms(Clock::time_point now) const {
    Clock::time_point next = now + std::chrono::seconds(1);
    for (const auto& [id, c] : conns)
      if (c.state != State::Working) next = std::min(next, c.deadline);
    if (accept_paused_until > now) next = std::min(next, accept_paused_until);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count();
    return static_cast<int>(std::max<int64_t>(ms + 1, 0));
  }

  bool serve() {
    std::vector<pollfd> fds;
    std::vector<uint64_t> ids;
    while (!stopping) {
      auto now = Clock::now();
      fds.assign({{wake_fd, POLLIN, 0}, {accept_paused_until <= now ? listen_fd : -1, POLLIN, 0}});
      ids.clear();
      for (const auto& [id, c] : conns) {
        if (c.state == State::Working) continue;
        fds.push_back({c.fd, static_cast<short>(c.state == State::Writing ? POLLOUT : POLLIN), 0});
        ids.push_back(id);
      }
      if (::poll(fds.data(), fds.size(), timeout_ms(now)) < 0 && errno != EINTR) return false;
      now = Clock::now();
      if (fds[0].revents) take_done(now);
      if (fds[1].revents & (POLLERR | POLLNVAL)) return false;
      for (size_t i = 0; i < ids.size(); ++i) {
        if (!fds[i + 2].revents) continue;
        auto it = conns.find(ids[i]);
        if (it == conns.end()) continue;
        if (it->second.state == State::Writing)
          on_writable(ids[i], it->second, now);
        else if (it->second.state != State::Working)
          on_readable(ids[i], it->second, now);
      }
      if (fds[1].revents & POLLIN) accept_all(now);
      expire(now);
    }
    return true;
  }
};

PageServer::PageServer(PageApp& app, TransportLimits limits) : loop_(std::make_unique<Loop>(app, limits)) {
  // The Keep-Alive header the library writes says what this loop does.
  app.set_keep_alive_timeout(
      std::max<time_t>(1, std::chrono::duration_cast<std::chrono::seconds>(limits.head_deadline).count()));
  app.set_keep_alive_max_count(limits.max_requests);
}

PageServer::~PageServer() = default;

int PageServer::bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found); rc != 0)
    throw std::runtime_error(fmt::format("{}: {}", host, gai_strerror(rc)));
  std::string why = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      loop_->listen_fd = fd;
      break;
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  freeaddrinfo(found);
  if (loop_->listen_fd < 0) throw std::runtime_error(why);
  sockaddr_storage bound{};
  socklen_t size = sizeof bound;
  getsockname(loop_->listen_fd, reinterpret_cast<sockaddr*>(&bound), &size);
  std::string ip;
  int bound_port = -1;
  numeric_address(bound, size, ip, bound_port);
  return bound_port;
}

bool PageServer::run() {
  Loop& l = *loop_;
  for (unsigned i = 0; i < std::max(1u, l.limits.workers); ++i) l.workers.emplace_back([&l] { l.work(); });
  bool ok = l.serve();
  {
    std::lock_guard hold(l.lock);
    l.quit = true;
  }
  l.ready.notify_all();
  for (std::thread& t : l.workers) t.join();
  l.workers.clear();
  return ok;
}

void PageServer::stop() {
  loop_->stopping = true;
  loop_->wake();
}

}  // namespace topoctl
