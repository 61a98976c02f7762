// Text into HTML: every name the page shows passes through html_escape, in
// element content and in quoted attribute values alike.
#pragma once

#include <string>
#include <string_view>

namespace topo::view {

// & < > " ' as character references; control characters other than tab
// and newline as spaces.
std::string html_escape(std::string_view text);

// A query-string value: unreserved characters as they are, the rest %XX.
std::string url_encode(std::string_view text);

}  // namespace topo::view
