// topoctl place: a what-if placement on the current snapshot (or a
// synthetic fabric): hosts, ring order, estimate against the ideal, reasons.
// topoctl ring: the best ring order for hosts a job already has.
#include <algorithm>
#include <cmath>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/hostlist.h"
#include "placement/busy_file.h"
#include "placement/domain_fit.h"
#include "placement/exact.h"
#include "placement/ring_order.h"
#include "placement/running_file.h"
#include "placement/seams.h"
#include "placement/search.h"
#include "placement/slurm_policy.h"
#include "placement/traffic.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/input.h"

namespace topoctl {

namespace {

using nlohmann::json;

json placement_json(const topo::Fabric& f, const topo::Placement& p, const topo::PlacementRequest& r,
                    const std::string& policy, double seam_floor) {
  json hosts = json::array(), leaves = json::array(), gpus = json::array();
  for (topo::NodeId h : p.hosts) hosts.push_back(f.node(h).name);
  for (topo::NodeId l : p.leaves) leaves.push_back(f.node(l).name);
  for (int g : p.gpus) gpus.push_back(g);
  const topo::Score& s = p.score;
  return {{"feasible", p.feasible},
          {"policy", policy},
          {"profile", topo::name(r.profile)},
          {"routing", topo::routing_name(f.routing())},
          {"hosts", hosts},
          {"gpus", gpus},
          {"leaves", leaves},
          {"pods", s.pods},
          {"spines_crossed", s.spine_edges},
          {"pods_crossed", s.pod_edges},
          {"degraded_links", s.degraded_links},
          {"estimate_s", s.estimate_s},
          {"ideal_s", s.ideal_s},
          {"slowdown", s.slowdown},
          {"seam_flows", s.seam_flows},
          {"seam_floor", seam_floor},
          {"score", s.total},
          {"reasons", p.reasons}};
}

void print_placement(const topo::Fabric& f, const topo::Placement& p, const topo::SwitchTree& tree, double seam_floor) {
  fmt::print("{:>9}  {:<16} {:>4}  {}\n", "NODE_RANK", "host", "GPUs", "leaf");
  for (size_t i = 0; i < p.hosts.size(); ++i) {
    int leaf = tree.home_leaf(p.hosts[i]);
    fmt::print("{:>9}  {:<16} {:>4}  {}\n", i, f.node(p.hosts[i]).name, p.gpus.empty() ? 0 : p.gpus[i],
               leaf >= 0 ? f.node(tree.leaves()[leaf].node).name : "-");
  }
  std::vector<std::string> leaves;
  for (topo::NodeId l : p.leaves) leaves.push_back(f.node(l).name);
  fmt::print("\nleaves {} ({})   pods {}   ring edges over a spine {}   over the core {}\n", p.leaves.size(),
             topo::compress_hostlist(leaves), p.score.pods, p.score.spine_edges, p.score.pod_edges);
  if (p.score.ideal_s > 0 && !std::isfinite(p.score.estimate_s))
    fmt::print("estimate none (a cable it needs is full)   ideal {:.3f} ms   slowdown scored as {:.3f}x\n",
               p.score.ideal_s * 1e3, p.score.slowdown);
  else if (p.score.ideal_s > 0)
    fmt::print("estimate {:.3f} ms   ideal {:.3f} ms   slowdown {:.3f}x\n", p.score.estimate_s * 1e3,
               p.score.ideal_s * 1e3, p.score.slowdown);
  // Whether the contention left on the seams is the ring order's or the hosts' own.
  if (p.score.seam_flows > 0)
    fmt::print("seams {:.2f} flows on their busiest cable   floor {:.2f} ({})\n", p.score.seam_flows, seam_floor,
               seam_floor >= p.score.seam_flows - 1e-9 ? "no ring order of these hosts has fewer"
                                                       : "a ring order of these hosts might have fewer");
  fmt::print("reasons:\n");
  for (const std::string& r : p.reasons) fmt::print("  - {}\n", r);
}

struct PlaceOptions {
  FabricInput input;
  int gpus = 0;
  int gpus_per_host = 8;
  int min_per_host = 1;
  std::string profile = "allreduce";
  std::string busy, running;
  std::string routing;
  bool exact = false;
  int max_leaves = 0;
  bool one_pod = false;
  int segment = 0;
  bool no_nvlink = false;
  bool json = false;
  std::string policy = "topo-aware";
};

void add_place_options(CLI::App& cmd, PlaceOptions& o) {
  add_input_options(cmd, o.input);
  cmd.add_option("--gpus", o.gpus, "GPUs the job asks for")->required()->check(CLI::PositiveNumber);
  cmd.add_option("--gpus-per-host", o.gpus_per_host,
                 "GPUs of a whole host; --gpus that is a multiple of it "
                 "asks for whole hosts")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd.add_option("--min-per-host", o.min_per_host, "for a GPU count that is no multiple: at least this many per host")
      ->capture_default_str();
  add_profile_option(cmd, o.profile);
  cmd.add_option("--busy", o.busy, "busy hosts, one a line: 'host [GPUs in use]'")->check(CLI::ExistingFile);
  cmd.add_option("--running", o.running,
                 "running jobs, one a line: 'hosts-in-ring-order [profile] [duty=SHARE]'; their hosts are busy and "
                 "their traffic is kept clear of")
      ->check(CLI::ExistingFile);
  add_routing_option(cmd, o.routing);
  cmd.add_flag("--exact", o.exact, "exhaustive search (small fabrics): the optimum of the objective");
  cmd.add_option("--max-leaves", o.max_leaves, "at most this many leaves");
  cmd.add_flag("--one-pod", o.one_pod, "all hosts in one pod");
  cmd.add_option("--segment", o.segment,
                 "NVLink domains: every SEGMENT consecutive hosts of the ring inside one domain, or no placement "
                 "(as --network=topo-aware,segment=N)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_flag("--no-nvlink", o.no_nvlink,
               "the job uses no NVLink (CPU-only): hosts outside the NVLink domains where enough are free");
  cmd.add_option("--policy", o.policy,
                 "topo-aware (ours) | tree (Slurm 22.05 topology/tree) | linear (Slurm without topology) | "
                 "block (Slurm 26.05 topology/block over the NVLink domains, honouring --segment); "
                 "Slurm's policies list hosts in node order and ignore --exact and the limits")
      ->capture_default_str()
      ->check(CLI::IsMember({"topo-aware", "tree", "linear", "block"}));
  cmd.add_flag("--json", o.json, "print JSON for scripts");
}

// The job asked for: whole hosts when --gpus is a multiple of a host's, else a GPU count.
topo::PlacementRequest place_request(const PlaceOptions& o) {
  const topo::Profile profile = profile_option(o.profile);
  topo::PlacementRequest r;
  if (o.gpus % o.gpus_per_host == 0) {
    r.hosts = o.gpus / o.gpus_per_host;
    r.gpus_per_host = o.gpus_per_host;
  } else {
    r.gpus = o.gpus;
    r.min_gpus_per_host = o.min_per_host;
  }
  r.profile = profile;
  if (o.max_leaves > 0) r.max_leaves = o.max_leaves;
  r.one_pod = o.one_pod;
  r.segment = o.segment;
  r.nvlink = !o.no_nvlink;
  return r;
}

// The cluster as --busy and --running leave it.
topo::FreeMap cluster_state(const PlaceOptions& o, const topo::Fabric& f) {
  topo::FreeMap free = topo::FreeMap::all_free(f, o.gpus_per_host);
  if (!o.busy.empty()) topo::read_busy_file(o.busy, f, free);
  if (!o.running.empty()) topo::read_running_file(o.running, f, o.gpus_per_host, free);
  return free;
}

topo::Placement place_by_policy(const PlaceOptions& o, const topo::SwitchTree& tree, const topo::FreeMap& free,
                                const topo::PlacementRequest& r) {
  if (o.policy == "tree") return topo::place_tree(tree, free, r);
  if (o.policy == "linear") return topo::place_linear(tree, free, r);
  if (o.policy == "block") return topo::place_block(tree, free, r);
  return o.exact ? topo::place_exact(tree, free, r) : topo::place(tree, free, r);
}

// The NVLink domains of a placement's ring, in ring order, and its hosts in
// no domain.
struct DomainUse {
  std::vector<std::string> domains;
  int outside = 0;  // hosts in no domain
};

DomainUse domain_use(const topo::Fabric& f, const topo::Placement& p) {
  DomainUse u;
  int last = -2;
  for (topo::NodeId h : p.hosts) {
    int d = f.domains().domain_of(f.index().host_id(h));
    if (d < 0) ++u.outside;
    if (d >= 0 && d != last) u.domains.push_back(f.domains().key(d).str());
    last = d;
  }
  return u;
}

topo::FreeMap after(const topo::FreeMap& free, const topo::Placement& p) {
  topo::FreeMap out = free;
  for (size_t i = 0; i < p.hosts.size(); ++i)
    out.free_gpus[p.hosts[i]] = std::max(0, out.free(p.hosts[i]) - (p.gpus.empty() ? 0 : p.gpus[i]));
  return out;
}

json fragmentation_json(const topo::Fragmentation& x) {
  return {{"domains", x.domains},
          {"free_whole_domains", x.free_whole_domains},
          {"largest_free_block", x.largest_free_block},
          {"free_hosts_in_domains", x.free_hosts_in_domains}};
}

json nvlink_json(const topo::Fabric& f, const topo::FreeMap& free, const topo::Placement& p) {
  DomainUse u = domain_use(f, p);
  return {{"domains", u.domains},
          {"hosts_outside_domains", u.outside},
          {"before", fragmentation_json(topo::fragmentation(f, free))},
          {"after", fragmentation_json(topo::fragmentation(f, p.feasible ? after(free, p) : free))}};
}

void print_domains_used(const topo::Fabric& f, const topo::FreeMap& free, const topo::Placement& p) {
  DomainUse u = domain_use(f, p);
  topo::Fragmentation b = topo::fragmentation(f, free), a = topo::fragmentation(f, after(free, p));
  fmt::print("nvlink domains {} ({} hosts outside)   free whole domains {} -> {}   largest free block {} -> {}\n",
             u.domains.size(), u.outside, b.free_whole_domains, a.free_whole_domains, b.largest_free_block,
             a.largest_free_block);
}

}  // namespace

Run add_place(CLI::App& app) {
  auto opts = std::make_shared<PlaceOptions>();
  CLI::App* cmd = app.add_subcommand("place", "what-if: where would a job go, in which ring order, and why");
  add_place_options(*cmd, *opts);
  return [opts] {
    const PlaceOptions& o = *opts;
    const topo::PlacementRequest r = place_request(o);
    LoadedFabric loaded = load(o.input);
    if (!o.routing.empty()) apply_routing(loaded.fabric, o.routing, "the fabric");
    const topo::Fabric& f = loaded.fabric;
    topo::FreeMap free = cluster_state(o, f);
    topo::SwitchTree tree(f);
    if (!free.running.empty()) topo::fill_traffic(tree, free);
    topo::Placement p = place_by_policy(o, tree, free, r);
    const double floor = p.feasible ? topo::seam_floor(tree, free, r, p.hosts) : 0;
    if (o.json) {
      json out = placement_json(f, p, r, o.policy, floor);
      if (!f.domains().empty()) out["nvlink"] = nvlink_json(f, free, p);
      std::cout << out.dump(2) << "\n";
    } else if (p.feasible) {
      print_placement(f, p, tree, floor);
      if (!f.domains().empty()) print_domains_used(f, free, p);
    } else {
      fmt::print(stderr, "topoctl place: no placement: {}\n", fmt::join(p.reasons, "; "));
    }
    return p.feasible ? kOk : kFindings;
  };
}

Run add_ring(CLI::App& app) {
  struct Options {
    FabricInput input;
    std::string hosts;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("ring", "the best ring order for hosts a job already has");
  add_input_options(*cmd, opts->input);
  cmd->add_option("--hosts", opts->hosts, "hosts, comma-separated or as a Slurm hostlist: gpu[001-008]")->required();
  cmd->add_flag("--json", opts->json, "print JSON for scripts");
  return [opts] {
    LoadedFabric loaded = load(opts->input);
    const topo::Fabric& f = loaded.fabric;
    std::vector<topo::NodeId> hosts = topo::find_hosts(f, topo::expand_hostlist(opts->hosts));
    topo::SwitchTree tree(f);
    std::vector<topo::NodeId> ring = topo::ring_order(tree, hosts);
    topo::RingCrossings before = topo::ring_crossings(tree, hosts), after = topo::ring_crossings(tree, ring);
    std::vector<std::string> order;
    for (topo::NodeId h : ring) order.push_back(f.node(h).name);
    if (opts->json) {
      std::cout << json{{"hosts", order},
                        {"spines_crossed", after.spine_edges},
                        {"pods_crossed", after.pod_edges},
                        {"given_order_spines_crossed", before.spine_edges}}
                       .dump(2)
                << "\n";
      return kOk;
    }
    for (size_t i = 0; i < order.size(); ++i) fmt::print("{:>5}  {}\n", i, order[i]);
    fmt::print("ring edges over a spine: {} in this order, {} in the order given\n", after.spine_edges,
               before.spine_edges);
    return kOk;
  };
}

}  // namespace topoctl
