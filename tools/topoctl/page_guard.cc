#include "tools/topoctl/page_guard.h"

#include <cstdio>
#include <exception>

#include <fmt/format.h>

namespace topoctl {
namespace {

using httplib::Request;
using httplib::Response;
using Handled = httplib::Server::HandlerResponse;

constexpr const char* kPlainText = "text/plain; charset=utf-8";

// Content-Length other than 0, or a Transfer-Encoding: a body follows.
bool announces_body(const Request& req) {
  if (req.has_header("Transfer-Encoding")) return true;
  return req.has_header("Content-Length") &&
         req.get_header_value("Content-Length").find_first_not_of('0') != std::string::npos;
}

Handled refuse(Response& res, int status, std::string text) {
  res.status = status;
  if (status == 405) res.set_header("Allow", "GET, HEAD");
  res.set_content(std::move(text) + "\n", kPlainText);
  return Handled::Handled;
}

std::string method_refused(std::string_view method) {
  return fmt::format("{}: this page is read-only; it answers GET and HEAD", method);
}

// Why a request is refused whatever it asks for: its method or a body; 0
// when it is not.
int refused_kind(const Request& req, std::string& why) {
  if (req.method != "GET" && req.method != "HEAD") {
    why = method_refused(req.method);
    return 405;
  }
  if (announces_body(req)) {
    why = "a request to this page carries no body";
    return 413;
  }
  return 0;
}

// Why a request is refused before routing; 0 when it is not.
int refused(const Request& req, const HostPolicy& hosts, std::string& why) {
  if (int status = refused_kind(req, why)) return status;
  if (req.get_header_value_count("Host") != 1) {
    why = "a request names its Host once";
    return 400;
  }
  if (!hosts.allows(req.get_header_value("Host"))) {
    // The name is not echoed: it is the requester's own.
    why = "this server does not answer for that host name (topoctl serve --allow-host adds one)";
    return 421;
  }
  return 0;
}

// The one range is cut by cut_range from the page as built: the library
// must not cut a page, nor a refusal, again. The Request is the library's
// own non-const object, handed to the hooks as const.
void forget_ranges(const Request& req) { const_cast<Request&>(req).ranges.clear(); }

void cut_range(const Request& req, Response& res) {
  if (res.status != 200 || !req.has_header("Range") || req.has_header("If-Range")) return;
  ByteRange part;
  size_t size = res.body.size();
  switch (byte_range(req.get_header_value("Range"), size, part)) {
    case RangeAnswer::Whole:
      return;
    case RangeAnswer::Part:
      res.status = 206;
      res.body = res.body.substr(part.first, part.last - part.first + 1);
      res.headers.erase("Content-Range");
      res.set_header("Content-Range", fmt::format("bytes {}-{}/{}", part.first, part.last, size));
      break;
    case RangeAnswer::Unsatisfiable:
      res.status = 416;
      res.body.clear();
      res.headers.erase("Content-Range");
      res.set_header("Content-Range", fmt::format("bytes */{}", size));
      break;
  }
  res.headers.erase("Content-Length");
  res.set_header("Content-Length", std::to_string(res.body.size()));
}

const char* reason(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 405:
      return "Method Not Allowed";
    case 414:
      return "URI Too Long";
    case 416:
      return "Range Not Satisfiable";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& security_headers() {
  static const std::vector<std::pair<std::string, std::string>> headers = {
      {"X-Content-Type-Options", "nosniff"},
      {"Content-Security-Policy", std::string(kContentSecurityPolicy)},
      {"Referrer-Policy", "no-referrer"},
      {"Cross-Origin-Resource-Policy", "same-origin"},
  };
  return headers;
}

void guard(httplib::Server& app, HostPolicy hosts) {
  httplib::Headers defaults;
  for (const auto& [name, value] : security_headers()) defaults.emplace(name, value);
  app.set_default_headers(defaults);
  // Nothing is read past the head; this only backs that up.
  app.set_payload_max_length(0);
  app.set_pre_routing_handler([hosts = std::move(hosts)](const Request& req, Response& res) {
    forget_ranges(req);
    std::string why;
    if (int status = refused(req, hosts, why)) return refuse(res, status, why);
    return Handled::Unhandled;
  });
  app.set_post_routing_handler(cut_range);
  // Without a handler the library would put the exception's words (paths
  // among them) in a response header.
  app.set_exception_handler([](const Request& req, Response& res, std::exception_ptr thrown) {
    try {
      std::rethrow_exception(thrown);
    } catch (const std::exception& e) {
      fmt::print(stderr, "topoctl serve: {} {}: {}\n", req.method, req.path, e.what());
    } catch (...) {
      fmt::print(stderr, "topoctl serve: {} {}: an unknown exception\n", req.method, req.path);
    }
    refuse(res, 500, "internal error; the server's log says more");
  });
  // "Expect: 100-continue" is answered before routing: refuse there what
  // the pre-routing hook would, so that the body is never invited.
  app.set_expect_100_continue_handler([](const Request& req, Response& res) {
    forget_ranges(req);
    std::string why;
    int status = refused_kind(req, why);
    if (status == 0) return 100;
    refuse(res, status, why);
    return status;
  });
}

std::string refusal(int status, std::string_view text, std::string_view fields) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\n", status, reason(status));
  for (const auto& [name, value] : security_headers()) out += fmt::format("{}: {}\r\n", name, value);
  out += fields;
  out += fmt::format("Content-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}\n", kPlainText,
                     text.size() + 1, text);
  return out;
}

std::string transport_refusal(const Head& head) {
  switch (head.verdict) {
    case Head::Verdict::Incomplete:
      return "";
    case Head::Verdict::TooLarge:
      return refusal(431, head.why);
    case Head::Verdict::Malformed:
      return refusal(400, head.why);
    case Head::Verdict::LongTarget:
      return refusal(414, head.why);
    case Head::Verdict::ManyRanges:
      return refusal(416, "one byte range at most");
    case Head::Verdict::Complete:
      break;
  }
  if (head.method != "GET" && head.method != "HEAD")
    return refusal(405, method_refused(head.method), "Allow: GET, HEAD\r\n");
  return "";
}

}  // namespace topoctl
