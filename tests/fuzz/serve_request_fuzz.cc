// What `topoctl serve` reads from a connection: the bytes are taken as a
// client sends them. Each head the transport's scan_head accepts goes
// through cpp-httplib's own request processing with the page's guard
// (page_guard.h) and routes that read the parameters as the page does:
// pods, jobs, report and picture names (snapshot references are read by
// SnapshotStore::resolve, whose unit tests hold the extremes, INT64_MIN
// among them; linking the database here would build most of the tree
// under the sanitizers for one function). Every response must be
// one well-formed HTTP/1.1 response carrying the security headers, never a
// 5xx, never 206 for more than one range; every refused head must name
// why. Heads are taken one after another while the connection would stay
// open, as the transport does.
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "tests/fuzz/fuzz_input.h"
#include "tools/topoctl/page_guard.h"
#include "tools/topoctl/page_request.h"
#include "tools/topoctl/page_server.h"

namespace {

using topoctl::Head;

std::string param(const httplib::Request& req, const char* key, std::string fallback = "") {
  return req.has_param(key) ? req.get_param_value(key) : fallback;
}

// The routes' parameter reading, without the pages themselves.
void add_routes(topoctl::PageApp& app) {
  auto picture = [](const httplib::Request& req, httplib::Response& res) {
    if (!param(req, "pod").empty()) topoctl::pod_number(param(req, "pod"));
    if (req.has_param("job")) topoctl::job_number(param(req, "job"));
    res.set_content(param(req, "snapshot", "latest") + param(req, "leaf") + param(req, "load", "1"), "text/plain");
  };
  app.Get("/", picture);
  app.Get("/fabric", picture);
  app.Get("/fabric.svg", picture);
  app.Get("/diff", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(param(req, "from", "-2") + param(req, "to", "latest"), "text/plain");
  });
  app.Get(R"(/job/(\d+))", [](const httplib::Request& req, httplib::Response& res) {
    res.status = topoctl::job_number(req.matches[1].str()) ? 200 : 400;
    res.set_content("job", "text/plain");
  });
  app.Get(R"(/report/([A-Za-z0-9_][A-Za-z0-9._-]*)/([A-Za-z0-9_][A-Za-z0-9._-]*\.svg))",
          [](const httplib::Request& req, httplib::Response& res) {
            if (!topoctl::plain_name(req.matches[1].str()) || !topoctl::plain_name(req.matches[2].str()))
              res.status = 404;
            res.set_content("<svg/>", "image/svg+xml");
          });
}

struct Site {
  topoctl::PageApp app;
  Site() {
    add_routes(app);
    topoctl::guard(app, topoctl::HostPolicy("127.0.0.1", {"topo.example.org"}));
  }
};

// Bytes shown on one line: control bytes as \xNN.
std::string shown(std::string_view bytes) {
  std::string out;
  for (char c : bytes.substr(0, 300))
    out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? fmt::format("\\x{:02x}", static_cast<unsigned char>(c))
                                                             : std::string(1, c);
  return "'" + out + "'";
}

void check_response(const std::string& response, const std::string& head) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12)
    topo_fuzz::fail(fmt::format("not a response to {}: {}", shown(head), shown(response)));
  int status = std::atoi(response.c_str() + 9);
  if (status < 100 || status >= 500) topo_fuzz::fail(fmt::format("status {} for {}", status, shown(head)));
  if (response.find("\r\nX-Content-Type-Options: nosniff\r\n") == std::string::npos ||
      response.find("frame-ancestors 'none'") == std::string::npos)
    topo_fuzz::fail(fmt::format("no security headers for {}", shown(head)));
  if (status == 206 && response.find("multipart/byteranges") != std::string::npos)
    topo_fuzz::fail(fmt::format("several ranges served for {}", shown(head)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Site site;
  std::string_view bytes = topo_fuzz::text(data, size);
  topoctl::ByteRange part;
  if (topoctl::byte_range(bytes, 1000, part) == topoctl::RangeAnswer::Part &&
      (part.last >= 1000 || part.first > part.last))
    topo_fuzz::fail(fmt::format("range {}-{} outside 1000 bytes", part.first, part.last));
  topoctl::HostPolicy("127.0.0.1", {}).allows(bytes);
  for (int requests = 0; requests < 8 && !bytes.empty(); ++requests) {
    Head h = topoctl::scan_head(bytes);
    if (h.verdict == Head::Verdict::Incomplete) return 0;
    if (std::string refused = topoctl::transport_refusal(h); !refused.empty()) {
      if (h.verdict != Head::Verdict::Complete && h.why.empty()) topo_fuzz::fail("a refused head without a reason");
      check_response(refused, std::string(bytes.substr(0, 200)));
      return 0;
    }
    if (h.size == 0 || h.size > bytes.size()) topo_fuzz::fail(fmt::format("head size {} of {}", h.size, bytes.size()));
    std::string head(bytes.substr(0, h.size));
    check_response(site.app.answer(head, !h.keep_alive, topoctl::Peer{"127.0.0.1", "127.0.0.1", 40000, 8650}), head);
    if (!h.keep_alive) return 0;
    bytes.remove_prefix(h.size);
  }
  return 0;
}
