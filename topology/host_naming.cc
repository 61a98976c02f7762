#include "topology/host_naming.h"

#include <cctype>
#include <stdexcept>

namespace topo {
namespace {

int trailing_number(std::string_view device) {
  size_t end = device.size(), start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(device[start - 1]))) --start;
  if (start == end || end - start > 6) return -1;
  return std::stoi(std::string(device.substr(start)));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

HostNaming::HostNaming(std::string pattern) : pattern_(std::move(pattern)) {
  if (pattern_.empty()) return;
  try {
    regex_ = std::make_shared<const std::regex>(pattern_, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("host pattern '" + pattern_ + "' is not a valid regular expression: " + e.what());
  }
  if (regex_->mark_count() < 1)
    throw std::invalid_argument("host pattern '" + pattern_ + "' needs a group (...) around the host name");
}

std::optional<HcaName> HostNaming::parse(std::string_view description) const {
  description = trim(description);
  if (description.empty()) return std::nullopt;
  HcaName out;
  if (!regex_) {
    // The common case, kept off std::regex: it is called once per HCA.
    size_t space = description.find_first_of(" \t");
    out.host = std::string(description.substr(0, space));
    if (space != std::string_view::npos) {
      std::string_view rest = trim(description.substr(space));
      out.device = std::string(rest.substr(0, rest.find_first_of(" \t")));
    }
  } else {
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_search(description.begin(), description.end(), m, *regex_) || !m[1].matched ||
        m[1].length() == 0)
      return std::nullopt;
    out.host = m[1].str();
    if (m.size() > 2 && m[2].matched) out.device = m[2].str();
  }
  out.rail = trailing_number(out.device);
  return out;
}

}  // namespace topo
