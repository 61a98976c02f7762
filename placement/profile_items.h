// Comma-separated PROFILE=VALUE lists, as --mix and --comm-share take them
// ("allreduce=0.3,fsdp=0.4"): split into items, the profile names read by
// parse_profile (placement/request.h), the values left to each option to
// judge and word its own errors.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "placement/request.h"

namespace topo {

struct ProfileItem {
  std::string_view text;                  // the item as written, for errors
  std::optional<Profile> profile;         // none without '=' or for an unknown name
  std::optional<std::string_view> value;  // what follows '=', none without one
};

// The items of `text`, empty ones (",,") skipped; views into `text`.
std::vector<ProfileItem> profile_items(std::string_view text);

}  // namespace topo
