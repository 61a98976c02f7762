#include "fabric/synthetic.h"

#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"

namespace topo {
namespace {

struct Spec {
  std::string text;
  std::string shape;
  std::map<std::string, std::string> values;
  std::vector<std::string> degrade, unplug, down;
  std::set<std::string> used;

  [[noreturn]] void fail(const std::string& what) const {
    throw FabricError(fmt::format("synthetic spec '{}': {}", text, what));
  }

  bool has(const std::string& key) const { return values.contains(key); }

  double number(const std::string& key, std::optional<double> fallback = std::nullopt) {
    used.insert(key);
    auto it = values.find(key);
    if (it == values.end()) {
      if (!fallback) fail(fmt::format("{} needs {}=<number>", shape, key));
      return *fallback;
    }
    double v = 0;
    auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec != std::errc() || end != it->second.data() + it->second.size() || !(v > 0))
      fail(fmt::format("{}={} is not a positive number", key, it->second));
    return v;
  }

  int count(const std::string& key, std::optional<int> fallback = std::nullopt) {
    double v = number(key, fallback ? std::optional<double>(*fallback) : std::nullopt);
    if (v != std::floor(v) || v > 1'000'000) fail(fmt::format("{} must be a whole number up to 1000000", key));
    return static_cast<int>(v);
  }

  // A spec of a few bytes can ask for billions of hosts: the size is
  // checked before anything is built (or multiplied in int).
  void check_size(double hcas, double cables) const {
    if (hcas > kMaxSyntheticHcas || cables > kMaxSyntheticCables)
      fail(fmt::format("{:.0f} HCAs and {:.0f} cables; expected at most {} HCAs and {} cables", hcas, cables,
                       kMaxSyntheticHcas, kMaxSyntheticCables));
  }

  std::string word(const std::string& key, const std::string& fallback) {
    used.insert(key);
    auto it = values.find(key);
    return it == values.end() ? fallback : it->second;
  }

  void check_all_used() const {
    for (const auto& [key, value] : values)
      if (!used.contains(key)) fail(fmt::format("unknown key '{}' for {}", key, shape));
  }
};

Spec parse_spec(std::string_view text) {
  Spec spec;
  spec.text = std::string(text);
  size_t colon = text.find(':');
  spec.shape = std::string(text.substr(0, colon));
  if (colon == std::string_view::npos) return spec;
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
      spec.fail(fmt::format("'{}' is not key=value", item));
    std::string key(item.substr(0, eq)), value(item.substr(eq + 1));
    if (key == "degrade")
      spec.degrade.push_back(value);
    else if (key == "unplug")
      spec.unplug.push_back(value);
    else if (key == "down")
      spec.down.push_back(value);
    else if (!spec.values.emplace(key, value).second)
      spec.fail(fmt::format("key '{}' given twice", key));
  }
  return spec;
}

struct Cable {
  std::string a;
  int port_a;
  std::string b;
  int port_b;
};

// Collects switches, hosts and cables, then applies the spec's faults.
class Plan {
 public:
  Plan(Spec& spec, int host_count) : spec_(spec) {
    std::string rate = spec.word("rate", "4xNDR");
    auto parsed = parse_rate(rate);
    if (!parsed) spec.fail(fmt::format("rate={} does not look like 4xNDR or 100GbE", rate));
    rate_ = *parsed;
    std::string naming = spec.word("naming", "contiguous");
    if (naming != "contiguous" && naming != "interleaved")
      spec.fail(fmt::format("naming={} is not one of contiguous, interleaved", naming));
    interleaved_ = naming == "interleaved";
    host_width_ = std::max<int>(3, static_cast<int>(fmt::format("{}", host_count).size()));
  }

  static std::string numbered(std::string_view stem, int i, int total) {
    int width = std::max<int>(2, static_cast<int>(fmt::format("{}", total).size()));
    return fmt::format("{}{:0{}}", stem, i + 1, width);
  }

  std::string add_switch(std::string name) {
    switches_.push_back(name);
    return name;
  }

  // The host in `slot` of leaf `leaf` of `leaves`, named by the spec's naming.
  std::string host_at(int leaf, int slot, int leaves, int hosts_per_leaf) const {
    int index = interleaved_ ? slot * leaves + leaf : leaf * hosts_per_leaf + slot;
    return fmt::format("gpu{:0{}}", index + 1, host_width_);
  }

  // HCA `rail` of `host` cabled to `leaf` port `port`.
  void attach(const std::string& host, int rail, const std::string& leaf, int port) {
    std::string id = fmt::format("{}/mlx5_{}", host, rail);
    hcas_.emplace_back(id, fmt::format("{} mlx5_{}", host, rail));
    cables_.push_back({id, 1, leaf, port});
  }

  void cable(const std::string& a, int port_a, const std::string& b, int port_b) {
    cables_.push_back({a, port_a, b, port_b});
  }

  Fabric build() {
    spec_.check_all_used();
    std::map<std::pair<std::string, int>, size_t> by_port;
    for (size_t i = 0; i < cables_.size(); ++i) {
      by_port[{cables_[i].a, cables_[i].port_a}] = i;
      by_port[{cables_[i].b, cables_[i].port_b}] = i;
    }
    auto locate = [&](const std::string& where, std::string_view key) {
      size_t colon = where.rfind(':');
      int port = 0;
      if (colon != std::string::npos) std::from_chars(where.data() + colon + 1, where.data() + where.size(), port);
      auto it = colon == std::string::npos ? by_port.end() : by_port.find({where.substr(0, colon), port});
      if (it == by_port.end()) spec_.fail(fmt::format("{}={}: no cable on that switch:port", key, where));
      return it->second;
    };
    std::vector<bool> unplugged(cables_.size()), degraded(cables_.size()), down(cables_.size());
    for (const std::string& where : spec_.degrade) degraded[locate(where, "degrade")] = true;
    for (const std::string& where : spec_.unplug) unplugged[locate(where, "unplug")] = true;
    for (const std::string& where : spec_.down) down[locate(where, "down")] = true;

    FabricBuilder builder;
    uint64_t guid = 0x0002c90300000000ULL;
    for (const std::string& s : switches_) builder.add_switch(s, s, 0, ++guid);
    for (const auto& [id, description] : hcas_) builder.add_hca(id, description, 1, ++guid);
    for (size_t i = 0; i < cables_.size(); ++i) {
      if (unplugged[i]) continue;
      LinkRate rate = rate_;
      if (degraded[i]) rate.width = LinkWidth::X1;
      builder.connect(cables_[i].a, cables_[i].port_a, cables_[i].b, cables_[i].port_b, rate,
                      down[i] ? PortState::Down : PortState::Active);
    }
    Fabric fabric = std::move(builder).finish();
    fabric.set_source("synthetic:" + spec_.text);
    return fabric;
  }

 private:
  Spec& spec_;
  LinkRate rate_;
  bool interleaved_ = false;
  int host_width_ = 3;
  std::vector<std::string> switches_;
  std::vector<std::pair<std::string, std::string>> hcas_;
  std::vector<Cable> cables_;
};

// Uplinks per switch for `down` downlinks at `oversub`:1, spread evenly over `parents`.
int uplinks_for(Spec& spec, int down, double oversub, int parents, std::string_view what) {
  double up = down / oversub;
  if (up != std::floor(up) || up < 1)
    spec.fail(fmt::format("{}: {} downlinks at oversub={:g} is not a whole number of uplinks", what, down, oversub));
  int n = static_cast<int>(up);
  if (n % parents != 0)
    spec.fail(fmt::format("{}: {} uplinks do not spread evenly over {} switches above", what, n, parents));
  return n;
}

// Leaf `leaf` (ports 1..hosts_per_leaf to hosts) sends `uplinks` cables
// round-robin to `parents`, using each parent's next free down port.
void cable_up(Plan& plan, const std::string& child, int first_port, int uplinks,
              const std::vector<std::string>& parents, std::map<std::string, int>& next_port) {
  for (int j = 0; j < uplinks; ++j) {
    const std::string& p = parents[j % parents.size()];
    plan.cable(child, first_port + j, p, ++next_port[p]);
  }
}

Fabric leafspine(Spec& spec) {
  int leaves = spec.count("leaves"), hpl = spec.count("hosts_per_leaf"), spines = spec.count("spines", 2);
  double oversub = spec.number("oversub", 1.0);
  int up = uplinks_for(spec, hpl, oversub, spines, "leaf");
  spec.check_size(double(leaves) * hpl, double(leaves) * (hpl + up));
  Plan plan(spec, leaves * hpl);
  std::vector<std::string> spine_names;
  for (int s = 0; s < spines; ++s) spine_names.push_back(plan.add_switch(Plan::numbered("spine", s, spines)));
  std::map<std::string, int> next_port;
  for (int l = 0; l < leaves; ++l) {
    std::string leaf = plan.add_switch(Plan::numbered("leaf", l, leaves));
    for (int h = 0; h < hpl; ++h) plan.attach(plan.host_at(l, h, leaves, hpl), 0, leaf, h + 1);
    cable_up(plan, leaf, hpl + 1, up, spine_names, next_port);
  }
  return plan.build();
}

Fabric railopt(Spec& spec) {
  int hosts = spec.count("hosts"), rails = spec.count("rails"), spines = spec.count("spines", 2);
  int hpl = spec.count("hosts_per_leaf", hosts);
  double oversub = spec.number("oversub", 1.0);
  int per_rail = (hosts + hpl - 1) / hpl;
  int up = uplinks_for(spec, hpl, oversub, spines, "leaf");
  spec.check_size(double(hosts) * rails, double(hosts) * rails + double(rails) * per_rail * up);
  Plan plan(spec, hosts);
  std::vector<std::string> spine_names;
  for (int s = 0; s < spines; ++s) spine_names.push_back(plan.add_switch(Plan::numbered("spine", s, spines)));
  std::map<std::string, int> next_port;
  int total_leaves = rails * per_rail;
  for (int r = 0; r < rails; ++r)
    for (int k = 0; k < per_rail; ++k) {
      std::string leaf = plan.add_switch(Plan::numbered("leaf", r * per_rail + k, total_leaves));
      for (int h = 0; h < hpl && k * hpl + h < hosts; ++h)
        plan.attach(plan.host_at(k, h, per_rail, hpl), r, leaf, h + 1);
      cable_up(plan, leaf, hpl + 1, up, spine_names, next_port);
    }
  return plan.build();
}

Fabric clos3(Spec& spec) {
  int pods = spec.count("pods"), lpp = spec.count("leaves_per_pod"), hpl = spec.count("hosts_per_leaf");
  int spp = spec.count("spines_per_pod", 2);
  double oversub = spec.number("oversub", 1.0);
  int leaf_up = uplinks_for(spec, hpl, oversub, spp, "leaf");
  spec.check_size(double(pods) * lpp * hpl, double(pods) * lpp * (hpl + leaf_up));
  int spine_down = lpp * leaf_up / spp;
  int cores = spec.count("cores", spp);
  int spine_up = uplinks_for(spec, spine_down, spec.number("spine_oversub", 1.0), cores, "spine");
  spec.check_size(double(pods) * lpp * hpl, double(pods) * (lpp * (hpl + leaf_up) + double(spp) * spine_up));
  int leaves = pods * lpp;
  Plan plan(spec, leaves * hpl);
  std::vector<std::string> core_names;
  for (int c = 0; c < cores; ++c) core_names.push_back(plan.add_switch(Plan::numbered("core", c, cores)));
  std::map<std::string, int> next_port;
  for (int p = 0; p < pods; ++p) {
    std::vector<std::string> spine_names;
    for (int s = 0; s < spp; ++s) {
      spine_names.push_back(plan.add_switch(Plan::numbered("spine", p * spp + s, pods * spp)));
      next_port[spine_names.back()] = 0;
    }
    for (int l = 0; l < lpp; ++l) {
      int leaf_index = p * lpp + l;
      std::string leaf = plan.add_switch(Plan::numbered("leaf", leaf_index, leaves));
      for (int h = 0; h < hpl; ++h) plan.attach(plan.host_at(leaf_index, h, leaves, hpl), 0, leaf, h + 1);
      cable_up(plan, leaf, hpl + 1, leaf_up, spine_names, next_port);
    }
    for (const std::string& s : spine_names) cable_up(plan, s, spine_down + 1, spine_up, core_names, next_port);
  }
  return plan.build();
}

Fabric fattree(Spec& spec) {
  int k = spec.count("k");
  if (k % 2 != 0 || k < 2 || k > 128) spec.fail("k must be even, from 2 to 128");
  int half = k / 2, leaves = k * half;
  Plan plan(spec, leaves * half);
  std::vector<std::string> core_names;
  for (int c = 0; c < half * half; ++c) core_names.push_back(plan.add_switch(Plan::numbered("core", c, half * half)));
  std::map<std::string, int> next_port;
  for (int p = 0; p < k; ++p) {
    std::vector<std::string> aggs;
    for (int a = 0; a < half; ++a) aggs.push_back(plan.add_switch(Plan::numbered("spine", p * half + a, leaves)));
    for (int e = 0; e < half; ++e) {
      int leaf_index = p * half + e;
      std::string leaf = plan.add_switch(Plan::numbered("leaf", leaf_index, leaves));
      for (int h = 0; h < half; ++h) plan.attach(plan.host_at(leaf_index, h, leaves, half), 0, leaf, h + 1);
      cable_up(plan, leaf, half + 1, half, aggs, next_port);
    }
    // Aggregation switch a of every pod reaches core group a.
    for (int a = 0; a < half; ++a) {
      std::vector<std::string> group(core_names.begin() + a * half, core_names.begin() + (a + 1) * half);
      cable_up(plan, aggs[a], half + 1, half, group, next_port);
    }
  }
  return plan.build();
}

// ---- NVLink racks --------------------------------------------------------
//
// GB200-like: racks of `trays` compute trays of `gpus` GPUs, `domain_racks`
// racks per NVLink domain, every tray with one HCA per rail on a
// rail-optimized two-tier scale-out (railopt), and `hgx` 8-GPU hosts in no
// domain after them. Every GPU reports a completed fabric registration in
// its domain; an HGX GPU reports none.

struct RackPlan {
  int racks, trays, gpus, domain_racks, hgx;
  int nvl_hosts() const { return racks * trays; }
};

std::string domain_uuid(int domain) { return fmt::format("00000000-0000-4000-8000-{:012x}", domain + 1); }

std::vector<Gpu> tray_gpus(int count, int rails) {
  std::vector<Gpu> out;
  for (int g = 0; g < count; ++g)
    out.push_back({g, fmt::format("cuda{}", g), fmt::format("0000:{:02x}:00.0", 0x18 + g), g * 2 / count,
                   fmt::format("mlx5_{}", g % rails), g % rails});
  return out;
}

void attach_racks(Fabric& f, const RackPlan& plan, int rails, const NvlinkSpec& nvlink) {
  std::vector<HostNvlink> reports(f.hosts().size());
  for (size_t i = 0; i < f.hosts().size(); ++i) {
    NodeId host = f.hosts()[i];
    int h = std::stoi(f.node(host).name.substr(3)) - 1;  // gpu001 is host 0, whatever the order added
    bool nvl = h < plan.nvl_hosts();
    std::vector<Gpu> gpus = tray_gpus(nvl ? plan.gpus : 8, rails);
    std::vector<GpuFabric> records;
    int domain = h / (plan.trays * plan.domain_racks);
    for (const Gpu& g : gpus)
      records.push_back(nvl ? GpuFabric{g.pci_bus, "Completed", "Success", "32766", domain_uuid(domain)}
                            : GpuFabric{g.pci_bus, "Not Supported", "N/A", "N/A", "N/A"});
    f.set_gpus(host, std::move(gpus));
    reports[f.index().host_id(host)] = host_nvlink(std::move(records));
  }
  f.set_nvlink(std::move(reports), nvlink);
}

Fabric nvlink_racks(Spec& spec, int default_trays, int default_domain_racks) {
  RackPlan plan{spec.count("racks"), spec.count("trays", default_trays), spec.count("gpus", 4),
                spec.count("domain_racks", default_domain_racks), 0};
  plan.hgx = spec.has("hgx") ? spec.count("hgx") : 0;
  if (plan.racks % plan.domain_racks != 0)
    spec.fail(fmt::format("racks={} is not a whole number of {}-rack domains", plan.racks, plan.domain_racks));
  std::string generation = spec.word("nvlink", "nvlink5");
  auto nvlink = nvlink_spec(generation);
  if (!nvlink) spec.fail(fmt::format("nvlink={} is not one of {}", generation, nvlink_generations()));
  int rails = spec.count("rails", 4);
  int hosts = plan.nvl_hosts() + plan.hgx;
  int hpl = spec.count("hosts_per_leaf", plan.trays);
  double oversub = spec.number("oversub", 1.0);
  double up = hpl / oversub;
  // One uplink from every leaf to every spine unless told otherwise.
  spec.values.try_emplace("spines", fmt::format("{:.0f}", std::max(1.0, up)));
  spec.values["hosts"] = std::to_string(hosts);
  spec.values["hosts_per_leaf"] = std::to_string(hpl);
  spec.values["rails"] = std::to_string(rails);
  if (static_cast<double>(hosts) * plan.gpus > 8.0 * kMaxSyntheticHcas) spec.fail("too many GPUs");
  Fabric f = railopt(spec);
  attach_racks(f, plan, rails, *nvlink);
  return f;
}

}  // namespace

Fabric make_synthetic(std::string_view text) {
  Spec spec = parse_spec(text);
  if (spec.shape == "leafspine") return leafspine(spec);
  if (spec.shape == "railopt") return railopt(spec);
  if (spec.shape == "clos3") return clos3(spec);
  if (spec.shape == "fattree") return fattree(spec);
  if (spec.shape == "nvl72") return nvlink_racks(spec, 18, 1);
  if (spec.shape == "nvl36x2") return nvlink_racks(spec, 9, 2);
  spec.fail(
      fmt::format("unknown shape '{}' (expected leafspine, railopt, clos3, fattree, nvl72 or nvl36x2)", spec.shape));
}

}  // namespace topo
