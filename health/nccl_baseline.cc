#include "health/nccl_baseline.h"

#include <algorithm>
#include <iterator>
#include <set>

#include <fmt/format.h>

#include "comm_model/estimate.h"
#include "fabric/classify.h"
#include "fabric/diff.h"

namespace topo {
namespace {

// Ranks per host: the run's rank lines, else one process per host.
int ranks_per_host(const NcclTestsRun& run, size_t hosts) {
  int ranks = run.ranks.empty() ? static_cast<int>(hosts) * run.gpus_per_process : static_cast<int>(run.ranks.size());
  return std::max(1, ranks / static_cast<int>(std::max<size_t>(1, hosts)));
}

using Key = std::pair<std::string, std::vector<std::string>>;  // test, hosts

std::map<Key, std::vector<const NcclRunRecord*>> host_sets(const std::vector<NcclRunRecord>& runs) {
  std::map<Key, std::vector<const NcclRunRecord*>> sets;
  for (const NcclRunRecord& r : runs) sets[{r.run.test, r.hosts}].push_back(&r);
  return sets;
}

// Out-of-place busbw at the largest size (and type) both runs measured.
void against_baseline(const NcclRunRecord& base, const NcclRunRecord& now, double drop, SetVerdict& v) {
  bool found = false;
  for (const NcclTestsRow& n : now.run.rows)
    for (const NcclTestsRow& b : base.run.rows)
      if (b.size == n.size && b.type == n.type && (!found || b.size > v.size)) {
        found = true;
        v.size = b.size;
        v.baseline_busbw = b.oop_busbw;
        v.newest_busbw = n.oop_busbw;
      }
  if (!found) return;
  v.baseline_run = base.id;
  v.baseline_snapshot = base.snapshot_id;
  v.slower_than_baseline = v.baseline_busbw > 0 && v.newest_busbw < v.baseline_busbw * (1 - drop);
}

// Out-of-place busbw at the largest predicted size of at least min_bytes.
void against_model(const NcclRunRecord& now, const BaselineOptions& o, SetVerdict& v) {
  for (size_t i = 0; i < now.run.rows.size() && i < now.model_busbw.size(); ++i) {
    const NcclTestsRow& row = now.run.rows[i];
    if (!now.model_busbw[i] || row.size < o.model_min_bytes || (v.model_busbw && row.size <= v.model_size)) continue;
    v.model_size = row.size;
    v.model_busbw = now.model_busbw[i];
    v.measured_at_model_size = row.oop_busbw;
  }
  v.slower_than_model = v.model_busbw && v.measured_at_model_size < *v.model_busbw * (1 - o.model_drop);
}

// Hosts in slow sets only: the one in every slow set first; without one,
// every host that joins slow sets only.
void slow_hosts(const std::vector<SetVerdict>& sets, std::vector<LikelyCause>& out) {
  std::map<std::string, std::pair<int, int>> joins;  // slow, healthy
  int slow = 0;
  for (const SetVerdict& v : sets) {
    slow += v.slow();
    for (const std::string& h : v.hosts) ++(v.slow() ? joins[h].first : joins[h].second);
  }
  for (bool in_every : {true, false}) {
    for (const auto& [h, n] : joins)
      if (n.first > 0 && n.second == 0 && (!in_every || n.first == slow))
        out.push_back(
            {CauseKind::Host, h, fmt::format("host {}: slow in every set it joins ({} of {})", h, n.first, n.first)});
    if (!out.empty()) return;
  }
}

// The cables (described, so that snapshots compare) a set's ring loads on
// the snapshot of its newest run; empty when that snapshot is not given or
// cannot carry the ring.
std::set<std::string> ring_cables(const NcclRunRecord& now, const std::map<int64_t, Fabric>& snapshots) {
  std::set<std::string> out;
  auto f = now.snapshot_id ? snapshots.find(*now.snapshot_id) : snapshots.end();
  if (f == snapshots.end() || now.hosts.size() < 2) return out;
  const Fabric& fabric = f->second;
  try {
    std::vector<NodeId> hosts = find_hosts(fabric, now.hosts);
    Request r;
    r.collective = now.run.collective().value_or(Collective::AllReduce);
    r.bytes = 1 << 20;
    r.gpus_per_host = ranks_per_host(now.run, now.hosts.size());
    PathIndex index(fabric);
    LinkLoad load = ring_load(index, hosts, r);  // cables() points into it
    for (const auto& [directed, bytes] : load.cables())
      if (bytes > 0) out.insert(describe_link(fabric, fabric.cables()[static_cast<size_t>(directed / 2)]));
  } catch (const std::exception&) {
    out.clear();  // a host gone from the fabric, or no path: nothing to say about cables
  }
  return out;
}

void shared_cables(const std::vector<SetVerdict>& sets, const std::map<Key, const NcclRunRecord*>& newest,
                   const std::map<int64_t, Fabric>& snapshots, std::vector<LikelyCause>& out) {
  std::optional<std::set<std::string>> common;
  std::set<std::string> healthy;
  for (const SetVerdict& v : sets) {
    std::set<std::string> c = ring_cables(*newest.at({v.test, v.hosts}), snapshots);
    if (!v.slow()) {
      healthy.insert(c.begin(), c.end());
    } else if (!common) {
      common = std::move(c);
    } else {
      std::set<std::string> both;
      std::set_intersection(common->begin(), common->end(), c.begin(), c.end(), std::inserter(both, both.end()));
      common = std::move(both);
    }
  }
  if (!common) return;
  for (const std::string& c : *common)
    if (!healthy.contains(c))
      out.push_back({CauseKind::Cable, c, fmt::format("cable {}: every slow set crosses it, no healthy one does", c)});
}

void fabric_changes(const std::vector<SetVerdict>& sets, const std::map<int64_t, Fabric>& snapshots,
                    std::vector<LikelyCause>& out) {
  std::set<std::pair<int64_t, int64_t>> said;
  for (const SetVerdict& v : sets) {
    if (!v.slow() || !v.baseline_snapshot || !v.newest_snapshot || *v.baseline_snapshot == *v.newest_snapshot) continue;
    int64_t a = *v.baseline_snapshot, b = *v.newest_snapshot;
    auto before = snapshots.find(a), after = snapshots.find(b);
    if (before == snapshots.end() || after == snapshots.end() || !said.insert({a, b}).second) continue;
    size_t changes = diff(before->second, after->second).size();
    if (changes)
      out.push_back({CauseKind::FabricChange, fmt::format("snapshot {} -> {}", a, b),
                     fmt::format("fabric: {} change{} between snapshot {} (baseline) and {} (topoctl diff {} {})",
                                 changes, changes == 1 ? "" : "s", a, b, a, b)});
  }
}

}  // namespace

const char* name(CauseKind kind) {
  switch (kind) {
    case CauseKind::Host:
      return "host";
    case CauseKind::Cable:
      return "cable";
    case CauseKind::FabricChange:
      return "fabric";
  }
  return "?";
}

size_t BaselineCheck::slow() const {
  return static_cast<size_t>(std::count_if(sets.begin(), sets.end(), [](const SetVerdict& v) { return v.slow(); }));
}

std::vector<std::optional<double>> predict_busbw(const Fabric& fabric, const std::vector<std::string>& hosts,
                                                 const NcclTestsRun& run, std::string& why_not) {
  std::vector<std::optional<double>> out(run.rows.size());
  auto collective = run.collective();
  if (!collective) {
    why_not = fmt::format("no model for '{}'", run.test.empty() ? "an unnamed test" : run.test);
    return out;
  }
  std::vector<NodeId> nodes;
  try {
    nodes = find_hosts(fabric, hosts);
  } catch (const std::exception& e) {
    why_not = e.what();
    return out;
  }
  const int per_host = ranks_per_host(run, hosts.size());
  PathIndex index(fabric);
  for (size_t i = 0; i < run.rows.size(); ++i) {
    auto dtype = parse_dtype(run.rows[i].type);
    if (!dtype || run.rows[i].size == 0) continue;
    Request r{*collective, static_cast<double>(run.rows[i].size), *dtype, per_host};
    out[i] = estimate(index, nodes, r).busbw_gbps / 8;
  }
  return out;
}

BaselineCheck check_baselines(const std::vector<NcclRunRecord>& runs, const std::map<int64_t, Fabric>& snapshots,
                              const BaselineOptions& options) {
  BaselineCheck out;
  std::map<Key, const NcclRunRecord*> newest;
  for (const auto& [key, list] : host_sets(runs)) {
    const NcclRunRecord& now = *list.back();
    SetVerdict v;
    v.test = key.first;
    v.hosts = key.second;
    v.newest_run = now.id;
    v.newest_snapshot = now.snapshot_id;
    if (list.size() > 1) against_baseline(*list.front(), now, options.drop, v);
    against_model(now, options, v);
    if (!v.baseline_run && !v.model_busbw) continue;
    newest[key] = &now;
    out.sets.push_back(std::move(v));
  }
  if (out.slow() == 0) return out;
  slow_hosts(out.sets, out.causes);
  shared_cables(out.sets, newest, snapshots, out.causes);
  fabric_changes(out.sets, snapshots, out.causes);
  return out;
}

}  // namespace topo
