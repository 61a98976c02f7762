#include "simulation/job_kinds.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "simulation/mix.h"

namespace topo {
namespace {

// Each draw its own stream: the profile draw uses the seed itself.
constexpr uint64_t kCpuOnlyStream = 0x43505530;  // "CPU0"
constexpr uint64_t kSegmentStream = 0x53454730;  // "SEG0"
constexpr uint64_t kSizeStream = 0x53495a30;     // "SIZ0"

bool share_ok(double share) { return share >= 0 && share <= 1; }

}  // namespace

std::string job_kinds_problem(const JobKinds& k) {
  if (!share_ok(k.cpu_only_share)) return fmt::format("the CPU-only share {} is not in [0, 1]", k.cpu_only_share);
  if (!share_ok(k.segment_share)) return fmt::format("the segment share {} is not in [0, 1]", k.segment_share);
  if (k.segment_min < 2 || k.segment_max < k.segment_min)
    return fmt::format("segment sizes {}-{}: expected 2 <= MIN <= MAX", k.segment_min, k.segment_max);
  return "";
}

void parse_segment_sizes(std::string_view text, JobKinds& kinds) {
  auto whole = [](std::string_view t, int& into) {
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), into);
    return !t.empty() && ec == std::errc() && end == t.data() + t.size();
  };
  size_t dash = text.find('-');
  int lo = 0, hi = 0;
  bool ok = dash == std::string_view::npos ? whole(text, lo) && (hi = lo, true)
                                           : whole(text.substr(0, dash), lo) && whole(text.substr(dash + 1), hi);
  if (!ok || lo < 2 || hi < lo)
    throw std::invalid_argument(fmt::format(
        "--segment-sizes: bad '{}'; expected MIN-MAX or N, whole hosts, 2 <= MIN <= MAX", text.substr(0, 64)));
  kinds.segment_min = lo;
  kinds.segment_max = hi;
}

bool draw_cpu_only(const JobKinds& kinds, std::string_view job_id) {
  return kinds.cpu_only_share > 0 && unit_draw(job_id, kinds.seed + kCpuOnlyStream) < kinds.cpu_only_share;
}

int draw_segment(const JobKinds& kinds, std::string_view job_id, int hosts) {
  if (hosts < 2 || kinds.segment_share <= 0) return 0;
  if (unit_draw(job_id, kinds.seed + kSegmentStream) >= kinds.segment_share) return 0;
  std::vector<int> sizes;
  for (int s = kinds.segment_min; s <= std::min(kinds.segment_max, hosts); ++s)
    if (hosts % s == 0) sizes.push_back(s);
  if (sizes.empty()) return 0;
  auto pick = static_cast<size_t>(unit_draw(job_id, kinds.seed + kSizeStream) * static_cast<double>(sizes.size()));
  return sizes[std::min(pick, sizes.size() - 1)];
}

std::string job_kinds_text(const JobKinds& k) {
  std::string out;
  if (k.cpu_only_share > 0) out = fmt::format("CPU-only {:g}% of jobs", 100 * k.cpu_only_share);
  if (k.segment_share > 0)
    out += fmt::format("{}segments on {:g}% of multi-host GPU jobs ({}-{} hosts)", out.empty() ? "" : ", ",
                       100 * k.segment_share, k.segment_min, k.segment_max);
  return out;
}

}  // namespace topo
