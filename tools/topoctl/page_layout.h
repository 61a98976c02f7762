// The frame of every page of `topoctl serve`: the HTML head (one inline
// stylesheet, the site's own /page.js), the navigation and the title.
#pragma once

#include <string>
#include <string_view>

namespace topoctl {

// A whole HTML document: `title` as the heading (escaped), `body` as given.
std::string page_layout(std::string_view title, std::string_view body);

}  // namespace topoctl
