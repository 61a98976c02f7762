#include "fabric/routing.h"

#include <charconv>
#include <stdexcept>

namespace topo {

std::string routing_name(const Routing& routing) {
  if (routing.is_ecmp()) return "ecmp:" + std::to_string(routing.qps);
  if (!routing.is_static()) return "adaptive";
  return routing.engine.empty() ? "static" : "static:" + routing.engine;
}

std::optional<RoutingSpec> parse_routing_spec(std::string_view text) {
  if (text == "adaptive") return RoutingSpec{RoutingKind::Adaptive, ""};
  if (text == "static") return RoutingSpec{RoutingKind::Static, ""};
  if (text.starts_with("ecmp:")) {
    std::string_view digits = text.substr(5);
    int qps = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), qps);
    if (ec != std::errc() || end != digits.data() + digits.size() || qps < 1 || qps > kMaxQps) return std::nullopt;
    return RoutingSpec{RoutingKind::Ecmp, "", qps};
  }
  constexpr std::string_view prefix = "static:";
  if (!text.starts_with(prefix)) return std::nullopt;
  std::string_view engine = text.substr(prefix.size());
  for (std::string_view known : {"ftree", "minhop", "updn", "dfsssp"})
    if (engine == known) return RoutingSpec{RoutingKind::Static, std::string(engine), 0};
  return std::nullopt;
}

Routing ecmp_routing(int qps) {
  if (qps < 1 || qps > kMaxQps)
    throw std::invalid_argument("ecmp:" + std::to_string(qps) + ": QPs per connection must be 1.." +
                                std::to_string(kMaxQps));
  Routing r;
  r.kind = RoutingKind::Ecmp;
  r.qps = qps;
  r.source = "ecmp";
  return r;
}

}  // namespace topo
