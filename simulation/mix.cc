#include "simulation/mix.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "placement/profile_items.h"

namespace topo {

Mix parse_mix(std::string_view text, uint64_t seed) {
  Mix mix;
  mix.seed = seed;
  double total = 0;
  for (const ProfileItem& item : profile_items(text)) {
    double weight = 0;
    bool number = false;
    if (item.value) {
      std::string w(*item.value);
      try {
        size_t used = 0;
        weight = std::stod(w, &used);
        number = used == w.size();
      } catch (const std::exception&) {
      }
    }
    const std::optional<Profile> profile = item.profile;
    if (!profile || *profile == Profile::None || !number || !(weight >= 0) || !std::isfinite(weight))
      throw std::invalid_argument(fmt::format(
          "--mix: bad '{}'; expected PROFILE=WEIGHT with PROFILE allreduce, fsdp, alltoall, pipeline or mixed and "
          "WEIGHT >= 0",
          item.text));
    for (auto& [p, w] : mix.shares)
      if (p == *profile) throw std::invalid_argument(fmt::format("--mix: '{}' given twice", name(p)));
    if (weight > 0) mix.shares.emplace_back(*profile, weight);
    total += weight;
  }
  if (!(total > 0)) throw std::invalid_argument("--mix: no profile with a positive weight");
  for (auto& [p, w] : mix.shares) w /= total;
  return mix;
}

double unit_draw(std::string_view job_id, uint64_t seed) {
  // FNV-1a of the id, then a splitmix64 step with the seed: uniform in [0, 1).
  uint64_t h = 1469598103934665603ULL;
  for (char c : job_id) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  uint64_t z = h + seed * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

Profile draw_profile(const Mix& mix, std::string_view job_id) {
  if (mix.shares.empty()) return Profile::AllReduce;
  double u = unit_draw(job_id, mix.seed);
  for (auto [p, w] : mix.shares) {
    if (u < w) return p;
    u -= w;
  }
  return mix.shares.back().first;
}

std::string mix_text(const Mix& mix) {
  std::string out;
  for (auto [p, w] : mix.shares) out += fmt::format("{}{}={:.2f}", out.empty() ? "" : ",", name(p), w);
  return out;
}

}  // namespace topo
