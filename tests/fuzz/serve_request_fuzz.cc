// What `topoctl serve` reads from a connection: the bytes are taken as a
// client sends them. Each head the transport's scan_head accepts goes
// through cpp-httplib's own request processing with the page's guard
// (page_guard.h) and routes that read every parameter as the page does:
// snapshot references through SnapshotStore::resolve (on an empty database
// made once), pods, jobs, report and picture names. Every response must be
// one well-formed HTTP/1.1 response carrying the security headers, never a
// 5xx, never 206 for more than one range; every refused head must name
// why. Heads are taken one after another while the connection would stay
// open, as the transport does.
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "db/error.h"
#include "db/snapshot_store.h"
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
void add_routes(topoctl::PageApp& app, const std::string& db) {
  auto read_snapshot = [db](const std::string& reference) {
    try {
      topo::SnapshotStore(db, {.access = topo::Access::ReadOnly}).resolve(reference);
    } catch (const topo::DbError& e) {
      if (e.kind() != topo::DbErrorKind::UnknownSnapshot) topo_fuzz::fail(fmt::format("resolve: {}", e.what()));
    }
  };
  auto picture = [read_snapshot](const httplib::Request& req, httplib::Response& res) {
    read_snapshot(param(req, "snapshot", "latest"));
    if (!param(req, "pod").empty()) topoctl::pod_number(param(req, "pod"));
    if (req.has_param("job")) topoctl::job_number(param(req, "job"));
    res.set_content(param(req, "leaf") + param(req, "load", "1"), "text/plain");
  };
  app.Get("/", picture);
  app.Get("/fabric", picture);
  app.Get("/fabric.svg", picture);
  app.Get("/diff", [read_snapshot](const httplib::Request& req, httplib::Response& res) {
    read_snapshot(param(req, "from", "-2"));
    read_snapshot(param(req, "to", "latest"));
    res.set_content("diff", "text/plain");
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
  std::string db;
  topoctl::PageApp app;
  Site() {
    char dir[] = "/tmp/fuzz_serve_request.XXXXXX";
    if (!mkdtemp(dir)) std::abort();
    db = std::string(dir) + "/topo.db";
    topo::SnapshotStore create(db);  // the schema, no snapshot
    add_routes(app, db);
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
