// What `topoctl serve` reads from a request itself, beside the HTTP
// library: where a request head ends and whether a body or another request
// follows it, the Host it names, the one byte range it may ask for, and the
// numbers and names of the page's parameters. Pure functions of the bytes,
// so that the fuzz target (tests/fuzz/serve_request_fuzz.cc) runs them as
// the server does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace topoctl {

struct HeadLimits {
  size_t max_bytes = 16 * 1024;  // request line, fields and the blank line
  size_t max_fields = 64;        // header lines
  // The request target. The library matches routes with std::regex, whose
  // recursion grows with the path; the page's own URLs stay far below.
  size_t max_target = 2048;
};

// The framing of one request head at the start of `bytes`.
struct Head {
  enum class Verdict {
    Incomplete,  // no blank line yet, and within the limits
    Complete,
    TooLarge,    // over max_bytes or max_fields (431)
    Malformed,   // not an HTTP/1.x head this server reads (400)
    LongTarget,  // a request target over max_target (414)
    ManyRanges,  // more than one byte range, or a Range field too long for one (416)
  };
  Verdict verdict = Verdict::Incomplete;
  size_t size = 0;          // Complete: the head's bytes, blank line included
  std::string method;       // Complete: as sent
  bool body = false;        // a Content-Length other than 0, or a Transfer-Encoding
  bool keep_alive = false;  // another request may follow on the connection
  std::string why;          // TooLarge, Malformed: a sentence for the log
};

// Reads the head strictly, so that the HTTP library, which parses it again,
// cannot see another head than this: lines end in CRLF (a bare CR or LF,
// NUL, a folded line or a space before a field's colon is Malformed), the
// request line is METHOD SP TARGET SP HTTP/1.0 or HTTP/1.1, and
// Content-Length fields are digits and agree. A head that announces a body
// is Complete with `body` set: the server refuses it unread and closes the
// connection, so those bytes never start another request.
Head scan_head(std::string_view bytes, const HeadLimits& limits = {});

// The hosts a request's Host field may name (its port is not compared):
// the listen address, the loopback names and addresses, and the names
// added (--allow-host, e.g. the name a reverse proxy forwards). Other
// names are refused (421), so a page elsewhere that rebinds its own name
// to this machine's address cannot read this one in a browser.
class HostPolicy {
 public:
  HostPolicy(const std::string& listen_host, const std::vector<std::string>& added);
  bool allows(std::string_view host_field) const;

 private:
  std::vector<std::string> names_;
  bool any_address_ = false;  // listening on 0.0.0.0 or ::: every address literal
};

// The host of a Host field, lowercased, without port, brackets or a
// trailing dot; nullopt when it is not a host name or address literal.
std::optional<std::string> host_of(std::string_view host_field);

// One byte range of a body, first and last byte included.
struct ByteRange {
  uint64_t first = 0, last = 0;
};
enum class RangeAnswer { Whole, Part, Unsatisfiable };
// What a GET with Range field `field` gets of a body of `size` bytes:
// "bytes=first-last", "bytes=first-" or "bytes=-suffix" is served as `part`
// (last clamped to the body); a range starting past the end is
// Unsatisfiable (416); a field this does not read (another unit, a list,
// bad numbers) is ignored and the whole body sent, as RFC 9110 14.2 allows.
RangeAnswer byte_range(std::string_view field, uint64_t size, ByteRange& part);

// Page parameters; nullopt when the text is not one.
std::optional<uint32_t> job_number(std::string_view text);  // 1-9 digits
std::optional<int> pod_number(std::string_view text);       // 1-6 digits
// Names served from the reports directory: [A-Za-z0-9._-], at most 128,
// not starting with a dot (so never "." or "..").
bool plain_name(std::string_view name);

}  // namespace topoctl
