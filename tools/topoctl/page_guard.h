// The rules every request of the page meets before a route sees it, and
// the headers every response carries, set on cpp-httplib's hooks:
//
// - only GET and HEAD (405 with Allow otherwise); a request announcing a
//   body is refused (413) before a byte of it is read;
// - one Host field naming this server (HostPolicy, page_request.h), 421
//   otherwise, so that DNS rebinding cannot hand the page to another site;
// - the one byte range a GET may ask for is cut from the finished page by
//   the server itself (the library would cut error pages too, and write a
//   wrong Content-Range past the end);
// - nosniff, a Content-Security-Policy that lets the pages show their
//   inline styles, same-site pictures and /page.js and nothing else (no
//   inline scripts, no frames around them), no Referer and no use from other sites.
//
// The transport (page_server.h) has already refused what must not reach
// the library's parser: heads too large or malformed, range lists.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <httplib.h>

#include "tools/topoctl/page_request.h"

namespace topoctl {

// The security headers, in the order they are sent.
const std::vector<std::pair<std::string, std::string>>& security_headers();

// The Content-Security-Policy of every response. The pages use an inline
// <style> and style attributes, pictures inline or from this site, links,
// and one script of this site (/page.js: sorts tables in place; no inline
// script runs): a restyled page that needs more says so here.
inline constexpr std::string_view kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'";

// Sets the pre-routing, post-routing, 100-continue, exception and
// default-header hooks of `app`.
void guard(httplib::Server& app, HostPolicy hosts);

// A whole response the transport sends by itself, then closes: the status
// line, the security headers, `fields` (whole lines, CRLF included),
// Connection: close and `text` as plain text.
std::string refusal(int status, std::string_view text, std::string_view fields = "");

// What the transport answers by itself to a head (scan_head) that must not
// reach the library: too large (431), malformed (400), a long target
// (414), a range list (416), a method other than GET or HEAD (405: the
// library reads an unknown method as malformed). Empty: hand it over.
std::string transport_refusal(const Head& head);

}  // namespace topoctl
