#include "simulation/stretch.h"

#include <cmath>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "placement/profile_items.h"

namespace topo {

// Shares of a training step spent waiting on the network, from published
// step-time breakdowns. Assumptions anchored on them, not measurements of
// one cluster: --comm-share replaces them.
double default_comm_share(Profile p) {
  switch (p) {
    case Profile::AllReduce:
      // Zhang et al., "Is Network the Bottleneck of Distributed Training?"
      // (NetAI'20, arXiv 2006.10103): Horovod data parallelism on 64 V100s
      // over 100 Gb/s reaches a scaling factor of 60-76%, the rest of the
      // step being gradient AllReduce not hidden behind the backward pass.
      return 0.3;
    case Profile::Fsdp:
      // Rajbhandari et al., "ZeRO" (SC'20): sharding parameters too (ZeRO-3,
      // as FSDP does) moves 1.5x data parallelism's bytes; at the same
      // computation, 1.5 x 0.3 over 0.7 + 1.5 x 0.3 is about 0.4.
      return 0.4;
    case Profile::AllToAll:
      // DeepSeek-V3 technical report (2024): cross-node expert-parallel
      // AllToAll takes about as long as the computation it sits between
      // (a 1:1 ratio); Cai et al., "Shortcut-connected Expert Parallelism"
      // (arXiv 2404.05019): communication is 60% of MoE time over PCIe,
      // 15% over NVLink. Half, for AllToAll crossing hosts.
      return 0.5;
    case Profile::Mixed:
      // AllReduce and AllToAll weighted equally, as the profile's judge does.
      return 0.4;
    case Profile::Pipeline:
      // Harlap et al., "PipeDream" (SOSP'19): pipelining cuts communication by
      // up to 95% against data parallelism, and Narayanan et al.
      // (Megatron-LM, SC'21) send only activations between stages; a tenth
      // keeps those point-to-point sends visible.
      return 0.1;
    case Profile::None:
      return 0;  // single-host jobs: no fabric to wait on
  }
  return 0;
}

double Stretch::factor(Profile p, double slowdown) const {
  if (!on || !std::isfinite(slowdown)) return 1;
  const double s = share_of(p);
  return (1 - s) + s * slowdown;
}

Stretch default_stretch() {
  Stretch s;
  s.on = true;
  for (Profile p : kProfiles) s.share[static_cast<size_t>(p)] = default_comm_share(p);
  return s;
}

namespace {

// A share in [0, 1], the whole text a number; nullopt otherwise.
std::optional<double> share_value(std::string_view text) {
  std::string t(text);
  try {
    size_t used = 0;
    double v = std::stod(t, &used);
    if (used == t.size() && v >= 0 && v <= 1) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

Stretch parse_comm_shares(std::string_view text, Stretch base) {
  base.on = true;
  if (text.find('=') == std::string_view::npos) {
    std::optional<double> v = share_value(text);
    if (!v) throw std::invalid_argument(fmt::format("--comm-share: bad '{}'; expected a share in [0, 1]", text));
    for (Profile p : kProfiles) base.share[static_cast<size_t>(p)] = p == Profile::None ? 0 : *v;
  } else {
    for (const ProfileItem& item : profile_items(text)) {
      const std::optional<Profile> profile = item.profile;
      const std::optional<double> v = item.value ? share_value(*item.value) : std::nullopt;
      if (!profile || *profile == Profile::None || !v)
        throw std::invalid_argument(fmt::format(
            "--comm-share: bad '{}'; expected PROFILE=SHARE with PROFILE allreduce, fsdp, alltoall, pipeline or "
            "mixed and SHARE in [0, 1]",
            item.text));
      base.share[static_cast<size_t>(*profile)] = *v;
    }
  }
  bool any = false;
  for (double s : base.share) any = any || s > 0;
  base.on = any;
  return base;
}

std::string stretch_text(const Stretch& s) {
  if (!s.on) return "off";
  std::string out;
  for (Profile p : kProfiles)
    if (p != Profile::None) out += fmt::format("{}{}={:.2f}", out.empty() ? "" : ",", name(p), s.share_of(p));
  return out;
}

}  // namespace topo
