#include "tools/topoctl/page_request.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace topoctl {
namespace {

constexpr std::string_view kCrlf = "\r\n";
constexpr size_t kMaxRangeField = 64;  // "bytes=" and two 19-digit positions fit

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// RFC 9110 tchar: the characters of methods and field names.
bool token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
  });
}

// A byte no head may hold where it stands: NUL, a CR not before LF, an LF
// not after CR. `end` says the bytes stop here for now (a CR may be last).
bool bad_byte(std::string_view bytes, size_t i, bool end_open) {
  char c = bytes[i];
  if (c == '\0') return true;
  if (c == '\r') return i + 1 < bytes.size() ? bytes[i + 1] != '\n' : !end_open;
  if (c == '\n') return i == 0 || bytes[i - 1] != '\r';
  return false;
}

Head refuse(Head::Verdict verdict, std::string why) {
  Head h;
  h.verdict = verdict;
  h.why = std::move(why);
  return h;
}

// Checks what has arrived of a head not yet complete, so that a client
// sending an endless or broken head is refused before the deadline.
Head scan_partial(std::string_view bytes, const HeadLimits& limits) {
  if (bytes.size() > limits.max_bytes) return refuse(Head::Verdict::TooLarge, "request head over the size limit");
  size_t lines = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bad_byte(bytes, i, true)) return refuse(Head::Verdict::Malformed, "a NUL, bare CR or bare LF in the head");
    if (bytes[i] == '\n') ++lines;
  }
  if (lines > limits.max_fields + 1) return refuse(Head::Verdict::TooLarge, "too many header fields");
  return {};
}

bool request_line(std::string_view line, Head& h, bool& http11, size_t& target_size) {
  size_t a = line.find(' ');
  if (a == std::string_view::npos) return false;
  size_t b = line.find(' ', a + 1);
  if (b == std::string_view::npos || line.find(' ', b + 1) != std::string_view::npos) return false;
  std::string_view method = line.substr(0, a), target = line.substr(a + 1, b - a - 1), version = line.substr(b + 1);
  if (!token(method) || target.empty()) return false;
  for (char c : target)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return false;
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return false;
  h.method = std::string(method);
  http11 = version == "HTTP/1.1";
  target_size = target.size();
  return true;
}

// What the fields of a head say about its framing.
struct Framing {
  std::optional<std::string> content_length;
  bool transfer_encoding = false, close = false, keep_alive = false;
  int ranges = 0;
  bool range_list = false;
};

bool read_field(std::string_view line, Framing& f) {
  if (line.front() == ' ' || line.front() == '\t') return false;  // obsolete line folding
  size_t colon = line.find(':');
  if (colon == std::string_view::npos || !token(line.substr(0, colon))) return false;
  std::string name = lower(line.substr(0, colon));
  std::string_view value = trim(line.substr(colon + 1));
  for (char c : value)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) return false;
  if (name == "content-length") {
    if (!all_digits(value) || (f.content_length && *f.content_length != value)) return false;
    f.content_length = std::string(value);
  } else if (name == "transfer-encoding") {
    f.transfer_encoding = true;
  } else if (name == "connection") {
    std::string tokens = lower(value);
    for (size_t at = 0; at <= tokens.size();) {
      size_t comma = std::min(tokens.find(',', at), tokens.size());
      std::string_view t = trim(std::string_view(tokens).substr(at, comma - at));
      f.close |= t == "close";
      f.keep_alive |= t == "keep-alive";
      at = comma + 1;
    }
  } else if (name == "range") {
    // The library reads Range with a std::regex before any hook runs, and
    // a list of them amplifies the response: one short range only.
    ++f.ranges;
    f.range_list |= value.find(',') != std::string_view::npos || value.size() > kMaxRangeField;
  }
  return true;
}

}  // namespace

Head scan_head(std::string_view bytes, const HeadLimits& limits) {
  size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos || end + 4 > limits.max_bytes) {
    Head partial = scan_partial(bytes.substr(0, std::min(bytes.size(), limits.max_bytes + 1)), limits);
    if (partial.verdict == Head::Verdict::Incomplete && end != std::string_view::npos)
      return refuse(Head::Verdict::TooLarge, "request head over the size limit");
    return partial;
  }
  std::string_view head = bytes.substr(0, end + 2);  // every line with its CRLF
  for (size_t i = 0; i < head.size(); ++i)
    if (bad_byte(head, i, false)) return refuse(Head::Verdict::Malformed, "a NUL, bare CR or bare LF in the head");
  Head h;
  bool http11 = false;
  size_t eol = head.find(kCrlf), target_size = 0;
  if (!request_line(head.substr(0, eol), h, http11, target_size))
    return refuse(Head::Verdict::Malformed, "not a request line: METHOD TARGET HTTP/1.x");
  if (target_size > limits.max_target) return refuse(Head::Verdict::LongTarget, "request target over the size limit");
  Framing f;
  size_t fields = 0;
  for (size_t at = eol + 2; at < head.size(); ++fields) {
    size_t next = head.find(kCrlf, at);
    if (fields == limits.max_fields) return refuse(Head::Verdict::TooLarge, "too many header fields");
    if (!read_field(head.substr(at, next - at), f)) return refuse(Head::Verdict::Malformed, "a malformed header field");
    at = next + 2;
  }
  if (f.ranges > 1 || f.range_list) return refuse(Head::Verdict::ManyRanges, "more than one byte range");
  h.verdict = Head::Verdict::Complete;
  h.size = end + 4;
  h.body = f.transfer_encoding || (f.content_length && f.content_length->find_first_not_of('0') != std::string::npos);
  h.keep_alive = !h.body && !f.close && (http11 || f.keep_alive);
  return h;
}

namespace {

// An address literal as its family and bytes ("" when `host` is a name).
std::string address_bytes(const std::string& host) {
  unsigned char buf[16];
  if (inet_pton(AF_INET, host.c_str(), buf) == 1) return "4" + std::string(reinterpret_cast<char*>(buf), 4);
  if (inet_pton(AF_INET6, host.c_str(), buf) == 1) return "6" + std::string(reinterpret_cast<char*>(buf), 16);
  return "";
}

bool loopback_address(const std::string& bytes) {
  static const std::string v6_loopback = "6" + std::string(15, '\0') + "\x01";
  static const std::string v4_mapped = "6" + std::string(10, '\0') + "\xff\xff";
  if (bytes.size() == 5) return bytes[1] == 127;
  return bytes == v6_loopback || (bytes.size() == 17 && bytes.compare(0, 13, v4_mapped) == 0 && bytes[13] == 127);
}

bool host_name_chars(std::string_view s) {
  return !s.empty() && s.size() <= 253 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
  });
}

}  // namespace

std::optional<std::string> host_of(std::string_view field) {
  field = trim(field);
  std::string_view host, port;
  if (!field.empty() && field.front() == '[') {
    size_t close = field.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = field.substr(1, close - 1);
    std::string_view rest = field.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return std::nullopt;
    port = rest.empty() ? rest : rest.substr(1);
    std::string h = lower(host);
    if (address_bytes(h).size() != 17) return std::nullopt;
    if (!port.empty() && (!all_digits(port) || port.size() > 5)) return std::nullopt;
    return h;
  }
  size_t colon = field.find(':');
  host = field.substr(0, colon);
  if (colon != std::string_view::npos) {
    port = field.substr(colon + 1);
    if (!port.empty() && (!all_digits(port) || port.size() > 5)) return std::nullopt;
  }
  std::string h = lower(host);
  if (!h.empty() && h.back() == '.') h.pop_back();
  if (!host_name_chars(h)) return std::nullopt;
  return h;
}

HostPolicy::HostPolicy(const std::string& listen_host, const std::vector<std::string>& added) {
  std::string listen = lower(listen_host);
  any_address_ = listen.empty() || listen == "0.0.0.0" || listen == "::" || listen == "*";
  names_.push_back("localhost");
  for (std::string name : added) {
    name = lower(name);
    if (!name.empty() && name.back() == '.') name.pop_back();
    names_.push_back(name);
  }
  if (!any_address_) names_.push_back(listen);
}

bool HostPolicy::allows(std::string_view host_field) const {
  std::optional<std::string> host = host_of(host_field);
  if (!host) return false;
  std::string bytes = address_bytes(*host);
  if (!bytes.empty()) {
    if (loopback_address(bytes) || any_address_) return true;
    return std::any_of(names_.begin(), names_.end(), [&](const std::string& n) { return address_bytes(n) == bytes; });
  }
  return std::find(names_.begin(), names_.end(), *host) != names_.end();
}

namespace {

// Digits as a number; past uint64 it saturates (a range that far is
// past any body).
std::optional<uint64_t> position(std::string_view s) {
  if (!all_digits(s)) return std::nullopt;
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec == std::errc::result_out_of_range) return UINT64_MAX;
  return n;
}

}  // namespace

RangeAnswer byte_range(std::string_view field, uint64_t size, ByteRange& part) {
  field = trim(field);
  if (field.size() < 6 || lower(field.substr(0, 6)) != "bytes=") return RangeAnswer::Whole;
  std::string_view spec = trim(field.substr(6));
  size_t dash = spec.find('-');
  if (dash == std::string_view::npos || spec.find(',') != std::string_view::npos) return RangeAnswer::Whole;
  std::string_view a = trim(spec.substr(0, dash)), b = trim(spec.substr(dash + 1));
  if (a.empty()) {  // the last b bytes
    std::optional<uint64_t> n = position(b);
    if (!n) return RangeAnswer::Whole;
    if (*n == 0 || size == 0) return RangeAnswer::Unsatisfiable;
    part = {size > *n ? size - *n : 0, size - 1};
    return RangeAnswer::Part;
  }
  std::optional<uint64_t> first = position(a), last = b.empty() ? std::optional<uint64_t>(UINT64_MAX) : position(b);
  if (!first || !last || *last < *first) return RangeAnswer::Whole;
  if (*first >= size) return RangeAnswer::Unsatisfiable;
  part = {*first, std::min(*last, size - 1)};
  return RangeAnswer::Part;
}

std::optional<uint32_t> job_number(std::string_view text) {
  if (text.size() > 9 || !all_digits(text)) return std::nullopt;
  uint32_t n = 0;
  std::from_chars(text.data(), text.data() + text.size(), n);
  return n;
}

std::optional<int> pod_number(std::string_view text) {
  if (text.size() > 6 || !all_digits(text)) return std::nullopt;
  int n = 0;
  std::from_chars(text.data(), text.data() + text.size(), n);
  return n;
}

bool plain_name(std::string_view name) {
  return !name.empty() && name.front() != '.' && name.size() <= 128 &&
         name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
             std::string_view::npos;
}

}  // namespace topoctl
