#include "placement/profile_items.h"

namespace topo {

std::vector<ProfileItem> profile_items(std::string_view text) {
  std::vector<ProfileItem> items;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      items.push_back({item, std::nullopt, std::nullopt});
    else
      items.push_back({item, parse_profile(item.substr(0, eq)), item.substr(eq + 1)});
  }
  return items;
}

}  // namespace topo
