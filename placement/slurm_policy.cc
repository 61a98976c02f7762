// Slurm 22.05.8's node selection, reimplemented from reading its source
// (src/plugins/select/cons_tres/job_test.c, topology/tree/topology_tree.c,
// slurmctld/read_config.c); no Slurm code is copied. Function names cited
// are Slurm's, so a reader can hold one against the other.
#include "placement/slurm_policy.h"

#include "placement/slurm_ask.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.h"
#include "common/hostlist.h"
#include "discovery/slurm_topology.h"

namespace topo {
namespace slurm_detail {

Placement infeasible(std::string why) {
  Placement p;
  p.reasons.push_back(std::move(why));
  return p;
}

SlurmAsk slurm_ask(const PlacementRequest& request) {
  SlurmAsk ask;
  if (request.hosts > 0) {
    ask.nodes = request.hosts;
    ask.gpus_per_node = request.gpus_per_host;
  } else {
    ask.nodes = request.gpus > 0 ? 1 : 0;
    ask.gpus_per_node = request.gpus;
  }
  ask.per_host = request;
  ask.per_host.hosts = ask.nodes;
  ask.per_host.gpus_per_host = ask.gpus_per_node;
  return ask;
}

std::vector<char> usable_nodes(const std::vector<NodeId>& order, const SwitchTree& tree, const FreeMap& free,
                               const SlurmAsk& ask, int& count) {
  std::vector<char> usable(order.size(), 0);
  count = 0;
  for (size_t i = 0; i < order.size(); ++i)
    if (eligible(tree, free, ask.per_host, order[i])) {
      usable[i] = 1;
      ++count;
    }
  return usable;
}

std::string too_few(int usable, const SlurmAsk& ask) {
  return fmt::format("only {} hosts have {} free GPUs, Slurm's {} needs {}", usable, ask.gpus_per_node, ask.text(),
                     ask.nodes);
}

Placement finish(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request, const SlurmAsk& ask,
                 const std::vector<NodeId>& order, std::vector<int> chosen, std::string why) {
  std::sort(chosen.begin(), chosen.end());
  Placement p;
  for (int i : chosen) {
    NodeId h = order[i];
    p.hosts.push_back(h);
    p.gpus.push_back(ask.gpus_per_node);
    int leaf = tree.home_leaf(h);
    if (leaf >= 0) {
      NodeId l = tree.leaves()[leaf].node;
      if (std::find(p.leaves.begin(), p.leaves.end(), l) == p.leaves.end()) p.leaves.push_back(l);
    }
  }
  p.score = score(tree, free, request, p.hosts, Weights{}, false);
  p.feasible = !p.hosts.empty();
  p.reasons.push_back(std::move(why));
  return p;
}

}  // namespace slurm_detail

using namespace slurm_detail;

namespace {

constexpr uint32_t kFar = SlurmSwitchTable::kUnreachable;

// --- topology/tree -----------------------------------------------------------

// _topo_compare_switches: > 0 when switch i suits `rem` more hosts better
// than switch j. A switch that holds them all beats one that does not, and
// of two that do the smaller wins; when neither does, the question goes up
// to their parents while those differ; then the larger wins, then the lower.
int compare_switches(const SlurmSwitchTable& t, int i, int j, int rem, const std::vector<int>& count) {
  const auto& sw = t.switches;
  // Slurm loops until the parents agree; a parent chain through switch 0
  // (the parent of every root) could cycle, so the climb is bounded.
  for (size_t climb = 0; climb <= sw.size(); ++climb) {
    bool i_fit = count[i] >= rem, j_fit = count[j] >= rem;
    if (i_fit && j_fit) {
      if (count[i] != count[j]) return count[i] < count[j] ? 1 : -1;
      break;
    }
    if (i_fit) return 1;
    if (j_fit) return -1;
    bool some_parent = sw[i].parent != i || sw[j].parent != j;
    if (!some_parent || sw[i].parent == sw[j].parent) break;
    i = sw[i].parent;
    j = sw[j].parent;
  }
  if (count[i] != count[j]) return count[i] > count[j] ? 1 : -1;
  if (sw[i].level != sw[j].level) return sw[i].level < sw[j].level ? 1 : -1;
  return 0;
}

// _topo_choose_best_switch: leaf i replaces the best so far when it is
// nearer the leaves already used and no worse, or as near and better.
void choose_best_leaf(const SlurmSwitchTable& t, const std::vector<uint32_t>& dist, const std::vector<int>& count,
                      int rem, int i, int& best) {
  if (best == -1 || dist[i] == kFar || count[i] == 0) {
    if (best == -1 && count[i] > 0 && dist[i] != kFar) best = i;
    return;
  }
  int better = compare_switches(t, i, best, rem, count);
  if ((dist[i] < dist[best] && better >= 0) || (dist[i] == dist[best] && better > 0)) best = i;
}

// _topo_add_dist: the distances of every switch to the leaves used so far,
// summed.
void add_distance(std::vector<uint32_t>& dist, const std::vector<uint32_t>& from_leaf) {
  for (size_t k = 0; k < dist.size(); ++k)
    dist[k] = (dist[k] == kFar || from_leaf[k] == kFar) ? kFar : dist[k] + from_leaf[k];
}

}  // namespace

std::vector<NodeId> slurm_node_order(const Fabric& fabric) {
  std::vector<NodeId> order(fabric.hosts().begin(), fabric.hosts().end());
  std::stable_sort(order.begin(), order.end(),
                   [&](NodeId a, NodeId b) { return natural_less(fabric.node(a).name, fabric.node(b).name); });
  return order;
}

namespace {

// The switches of the file as Slurm reads it, one per SwitchName= line in
// order, a leaf with its hosts and level 0, any other with level -1 (not
// known yet); and each switch's children, by name.
struct ReadSwitches {
  std::vector<SlurmSwitchTable::Switch> switches;
  std::vector<std::vector<std::string>> children;
  std::unordered_map<std::string, int> index;  // by name
};

ReadSwitches read_written_switches(const Fabric& fabric, const std::vector<NodeId>& node_order) {
  std::unordered_map<std::string, int> node_index;
  for (size_t i = 0; i < node_order.size(); ++i) node_index[fabric.node(node_order[i]).name] = static_cast<int>(i);
  std::ostringstream written;
  write_slurm_topology(fabric, written);
  std::istringstream in(written.str());
  ReadSwitches out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("SwitchName=")) continue;
    std::istringstream words(line);
    std::string name_kv, list_kv;
    words >> name_kv >> list_kv;
    SlurmSwitchTable::Switch sw;
    sw.name = name_kv.substr(name_kv.find('=') + 1);
    std::vector<std::string> kids;
    if (list_kv.starts_with("Nodes=")) {
      for (const std::string& host : expand_hostlist(list_kv.substr(6)))
        if (auto it = node_index.find(host); it != node_index.end()) sw.nodes.push_back(it->second);
      std::sort(sw.nodes.begin(), sw.nodes.end());
      sw.nodes.erase(std::unique(sw.nodes.begin(), sw.nodes.end()), sw.nodes.end());
      sw.level = 0;
    } else if (list_kv.starts_with("Switches=")) {
      kids = expand_hostlist(list_kv.substr(9));
      sw.level = -1;
    } else {
      throw FabricError(fmt::format("unexpected topology.conf line from write_slurm_topology: '{}'", line));
    }
    out.index[sw.name] = static_cast<int>(out.switches.size());
    out.switches.push_back(std::move(sw));
    out.children.push_back(std::move(kids));
  }
  return out;
}

// Levels and node sets bottom-up (_validate_switches); the writer lists
// children before parents, so one pass in order would do, but a pass per
// level keeps it right for any order.
void set_levels(ReadSwitches& read) {
  std::vector<SlurmSwitchTable::Switch>& sw = read.switches;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t s = 0; s < sw.size(); ++s) {
      if (sw[s].level != -1) continue;
      int level = 0;
      std::vector<int> nodes;
      bool ready = true;
      for (const std::string& kid : read.children[s]) {
        const SlurmSwitchTable::Switch& c = sw[static_cast<size_t>(read.index.at(kid))];
        if (c.level == -1) {
          ready = false;
          break;
        }
        level = std::max(level, c.level + 1);
        nodes.insert(nodes.end(), c.nodes.begin(), c.nodes.end());
      }
      if (!ready) continue;
      std::sort(nodes.begin(), nodes.end());
      nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
      sw[s].level = level;
      sw[s].nodes = std::move(nodes);
      changed = true;
    }
  }
}

// Parents (_find_child_switches: the last switch listing a child wins;
// a switch no one lists keeps parent 0) and hop distances between
// switches over parent-child links (Slurm's all-pairs _check_better_path).
std::vector<std::vector<uint32_t>> set_parents_and_distances(ReadSwitches& read) {
  const int n = static_cast<int>(read.switches.size());
  std::vector<std::vector<int>> adjacent(n);
  for (int s = 0; s < n; ++s)
    for (const std::string& kid : read.children[s]) {
      int c = read.index.at(kid);
      read.switches[c].parent = s;
      adjacent[s].push_back(c);
      adjacent[c].push_back(s);
    }
  std::vector<std::vector<uint32_t>> distance(n, std::vector<uint32_t>(n, kFar));
  for (int s = 0; s < n; ++s) {
    std::vector<int> queue{s};
    distance[s][s] = 0;
    for (size_t head = 0; head < queue.size(); ++head) {
      int u = queue[head];
      for (int v : adjacent[u])
        if (distance[s][v] == kFar) {
          distance[s][v] = distance[s][u] + 1;
          queue.push_back(v);
        }
    }
  }
  return distance;
}

}  // namespace

SlurmSwitchTable slurm_switch_table(const Fabric& fabric) {
  SlurmSwitchTable t;
  t.node_order = slurm_node_order(fabric);
  ReadSwitches read = read_written_switches(fabric, t.node_order);
  set_levels(read);
  t.distance = set_parents_and_distances(read);
  t.switches = std::move(read.switches);
  return t;
}

Placement place_tree(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request) {
  return place_tree(slurm_switch_table(tree.fabric()), tree, free, request);
}

// _eval_nodes_topo, for a job with no required nodes, one node weight and a
// per-node GRES (--gres=gpu:G, not --gpus).
Placement place_tree(const SlurmSwitchTable& t, const SwitchTree& tree, const FreeMap& free,
                     const PlacementRequest& request) {
  const SlurmAsk ask = slurm_ask(request);
  if (ask.nodes <= 0 || ask.gpus_per_node <= 0)
    return infeasible("the request asks for nothing: give hosts x GPUs per host, or a GPU count");
  int usable_count = 0;
  const std::vector<char> usable = usable_nodes(t.node_order, tree, free, ask, usable_count);
  if (usable_count < ask.nodes) return infeasible(too_few(usable_count, ask));

  const int n = static_cast<int>(t.switches.size());
  std::vector<std::vector<int>> below(n);
  std::vector<int> count(n);
  for (int s = 0; s < n; ++s) {
    for (int i : t.switches[s].nodes)
      if (usable[i]) below[s].push_back(i);
    count[s] = static_cast<int>(below[s].size());
  }

  // The top switch: of the switches with enough usable hosts below them,
  // the highest level, the last in the file on ties (equal node weights).
  int top = -1;
  for (int s = 0; s < n; ++s)
    if (count[s] >= ask.nodes && (top == -1 || t.switches[s].level >= t.switches[top].level)) top = s;
  if (top == -1)
    return infeasible(
        fmt::format("no switch of topology.conf has {} usable hosts below it (Slurm: unable to identify "
                    "top level switch)",
                    ask.nodes));

  // Only what the top switch reaches counts from here on.
  std::vector<char> reached(t.node_order.size(), 0);
  for (int i : below[top]) reached[i] = 1;
  for (int s = 0; s < n; ++s) {
    if (s == top) continue;
    std::erase_if(below[s], [&](int i) { return !reached[i]; });
    count[s] = static_cast<int>(below[s].size());
  }

  // Leaves one at a time, each the best by _topo_choose_best_switch, its
  // hosts taken in node order.
  std::vector<uint32_t> dist(n, 0);
  std::vector<char> taken(t.node_order.size(), 0);
  std::vector<int> chosen;
  std::vector<std::string> leaves_used;
  int rem = ask.nodes;
  while (rem > 0) {
    int best = -1;
    for (int s = 0; s < n; ++s)
      if (t.switches[s].level == 0) choose_best_leaf(t, dist, count, rem, s, best);
    if (best == -1) break;
    add_distance(dist, t.distance[best]);
    int before = rem;
    for (int i : below[best]) {
      if (taken[i]) continue;
      taken[i] = 1;
      chosen.push_back(i);
      if (--rem == 0) break;
    }
    leaves_used.push_back(t.switches[best].name);
    count[best] = 0;
    if (rem == before) break;  // stalled, as Slurm stops
  }
  if (rem > 0)
    return infeasible(
        fmt::format("the leaves below {} gave only {} of {} hosts", t.switches[top].name, ask.nodes - rem, ask.nodes));
  return finish(tree, free, request, ask, t.node_order, std::move(chosen),
                fmt::format("Slurm topology/tree for {}: top switch {}, leaves taken {}", ask.text(),
                            t.switches[top].name, fmt::join(leaves_used, ", ")));
}

Placement place_linear(const SwitchTree& tree, const FreeMap& free, const PlacementRequest& request) {
  SlurmSwitchTable order_only;
  order_only.node_order = slurm_node_order(tree.fabric());
  return place_linear(order_only, tree, free, request);
}

// _eval_nodes without required nodes, for one node weight.
Placement place_linear(const SlurmSwitchTable& table, const SwitchTree& tree, const FreeMap& free,
                       const PlacementRequest& request) {
  const SlurmAsk ask = slurm_ask(request);
  if (ask.nodes <= 0 || ask.gpus_per_node <= 0)
    return infeasible("the request asks for nothing: give hosts x GPUs per host, or a GPU count");
  const std::vector<NodeId>& order = table.node_order;
  int usable_count = 0;
  const std::vector<char> usable = usable_nodes(order, tree, free, ask, usable_count);
  if (usable_count < ask.nodes) return infeasible(too_few(usable_count, ask));

  // Runs of consecutive usable node indexes.
  struct Run {
    int start = 0, size = 0;
  };
  std::vector<Run> runs;
  for (int i = 0; i < static_cast<int>(order.size()); ++i) {
    if (!usable[i]) continue;
    if (runs.empty() || runs.back().start + runs.back().size != i) runs.push_back({i, 0});
    ++runs.back().size;
  }

  std::vector<int> chosen;
  int rem = ask.nodes;
  while (rem > 0) {
    // The first run that holds the rest, then any smaller that does; if
    // none does, the largest (the first of equals).
    int best = -1;
    bool best_holds = false;
    for (int r = 0; r < static_cast<int>(runs.size()); ++r) {
      if (runs[r].size == 0) continue;
      bool holds = runs[r].size >= rem;
      if (best == -1 || (holds && !best_holds) || (holds && runs[r].size < runs[best].size) ||
          (!holds && runs[r].size > runs[best].size)) {
        best = r;
        best_holds = holds;
      }
    }
    if (best == -1) break;
    for (int i = runs[best].start; i < runs[best].start + runs[best].size && rem > 0; ++i, --rem) chosen.push_back(i);
    runs[best].size = 0;
  }
  if (rem > 0) return infeasible(too_few(usable_count, ask));
  return finish(tree, free, request, ask, order, std::move(chosen),
                fmt::format("Slurm cons_tres without topology for {}: best-fit run of consecutive nodes", ask.text()));
}

}  // namespace topo
