// Plain sockets speaking HTTP/1.1 to a server on loopback, byte for byte as
// the test writes them: for the tests and the benchmark of `topoctl serve`
// against clients that misbehave on purpose.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace topo::testing {

// A blocking socket to 127.0.0.1:port whose reads give up after
// `timeout_ms`; -1 when it cannot connect.
inline int connect_loopback(int port, int timeout_ms = 10000) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Writes all of `bytes`; false when the peer closed or the write timed out.
inline bool send_all(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lowercased; the last of a repeated one
  std::string body;
  std::string head;  // the status line and fields as sent
  const std::string& header(const std::string& name) const {
    static const std::string none;
    auto it = headers.find(name);
    return it == headers.end() ? none : it->second;
  }
};

// One response from `fd`, `buffer` holding what was read past the previous
// one; nullopt on end of stream or timeout before a whole response. A
// response to HEAD has no body whatever its Content-Length says.
inline std::optional<HttpResponse> read_response(int fd, std::string& buffer, bool to_head = false) {
  auto fill = [&] {
    char chunk[65536];
    ssize_t n;
    do n = ::recv(fd, chunk, sizeof chunk, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
    return true;
  };
  size_t end;
  while ((end = buffer.find("\r\n\r\n")) == std::string::npos)
    if (!fill()) return std::nullopt;
  HttpResponse r;
  r.head = buffer.substr(0, end + 2);
  if (r.head.rfind("HTTP/1.", 0) != 0 || r.head.size() < 12) return std::nullopt;
  r.status = std::atoi(r.head.c_str() + 9);
  for (size_t at = r.head.find("\r\n") + 2; at < r.head.size();) {
    size_t eol = r.head.find("\r\n", at), colon = r.head.find(':', at);
    if (colon < eol) {
      std::string name = r.head.substr(at, colon - at);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      size_t v = r.head.find_first_not_of(' ', colon + 1);
      r.headers[name] = r.head.substr(v, eol - v);
    }
    at = eol + 2;
  }
  buffer.erase(0, end + 4);
  size_t length = to_head || r.status == 304 || r.status / 100 == 1
                      ? 0
                      : std::strtoull(r.header("content-length").c_str(), nullptr, 10);
  while (buffer.size() < length)
    if (!fill()) return std::nullopt;
  r.body = buffer.substr(0, length);
  buffer.erase(0, length);
  return r;
}

// Connects, sends `raw`, reads one response and closes.
inline std::optional<HttpResponse> exchange(int port, const std::string& raw, bool to_head = false) {
  int fd = connect_loopback(port);
  if (fd < 0) return std::nullopt;
  std::string buffer;
  std::optional<HttpResponse> r = send_all(fd, raw) ? read_response(fd, buffer, to_head) : std::nullopt;
  ::close(fd);
  return r;
}

// A well-formed GET of `path` naming `host`.
inline std::string get_request(const std::string& path, const std::string& host = "127.0.0.1",
                               const std::string& extra_fields = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + extra_fields + "\r\n";
}

// True when the peer has closed `fd` (end of stream, or reset) within `timeout_ms`.
inline bool closed_by_peer(int fd, int timeout_ms) {
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char c[4096];
  for (;;) {
    ssize_t n = ::recv(fd, c, sizeof c, 0);
    if (n == 0) return true;
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
  }
}

}  // namespace topo::testing
