// The page's transport: one thread waits on every connection with poll(),
// a few workers build the answers.
//
// cpp-httplib 0.11 (Debian 12) gives each connection a thread of its pool
// (8) for as long as the connection lasts, with a timeout per read but none
// per request: eight clients sending a byte every few seconds hold every
// thread. It also reads each request through a fresh 4 KiB buffer, so
// bytes past one request (pipelined, or a body it did not read) are lost or
// read as the next request. So the connections are kept here: a request
// head must arrive whole within a deadline, within size and field limits
// (scan_head, page_request.h); only then does a worker hand exactly those
// bytes to the library's own request processing (parsing, the guard's
// hooks, routing, the response), and the response goes back to this
// thread to be written without blocking, within a deadline of its own. A
// slow client costs a buffer, never a worker. Bytes after a head without
// a body are the next request; a head with a body is answered (413) and
// the connection closed, the body unread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <httplib.h>

#include "tools/topoctl/page_request.h"

namespace topoctl {

struct TransportLimits {
  HeadLimits head;
  // From accept, or from the end of the previous response, to the end of
  // the next request head; then the connection is closed (408 when part of
  // a head had come).
  std::chrono::milliseconds head_deadline{5000};
  // To write a whole response; then the connection is closed.
  std::chrono::milliseconds write_deadline{30000};
  size_t max_connections = 512;  // beyond: the oldest still waiting for a head is closed
  size_t max_requests = 100;     // per connection
  unsigned workers = 8;
};

// Where a request came from and arrived, as the library's Request reports it.
struct Peer {
  std::string remote_ip, local_ip;
  int remote_port = -1, local_port = -1;
};

// cpp-httplib's Server, answering one request head given whole.
class PageApp : public httplib::Server {
 public:
  // The response's bytes for `head` (a Complete head of scan_head); with
  // `close` it says Connection: close.
  std::string answer(std::string_view head, bool close, const Peer& peer);
};

class PageServer {
 public:
  PageServer(PageApp& app, TransportLimits limits);
  ~PageServer();
  PageServer(const PageServer&) = delete;
  PageServer& operator=(const PageServer&) = delete;

  // Listens on host:port (port 0: any free one) and returns the port.
  // Throws std::runtime_error when it cannot.
  int bind(const std::string& host, int port);
  // Serves until stop(); false when listening failed.
  bool run();
  // From any thread (a signal's waiter).
  void stop();

 private:
  struct Loop;
  std::unique_ptr<Loop> loop_;
};

}  // namespace topoctl
