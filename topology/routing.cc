#include "topology/routing.h"

namespace topo {

std::string routing_name(const Routing& routing) {
  if (!routing.is_static()) return "adaptive";
  return routing.engine.empty() ? "static" : "static:" + routing.engine;
}

std::optional<RoutingSpec> parse_routing_spec(std::string_view text) {
  if (text == "adaptive") return RoutingSpec{RoutingKind::Adaptive, ""};
  if (text == "static") return RoutingSpec{RoutingKind::Static, ""};
  constexpr std::string_view prefix = "static:";
  if (!text.starts_with(prefix)) return std::nullopt;
  std::string_view engine = text.substr(prefix.size());
  for (std::string_view known : {"ftree", "minhop", "updn", "dfsssp"})
    if (engine == known) return RoutingSpec{RoutingKind::Static, std::string(engine)};
  return std::nullopt;
}

}  // namespace topo
