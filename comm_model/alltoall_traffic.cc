// AllToAll's traffic pattern in closed form (declared in traffic.h).
#include <map>

#include "comm_model/traffic.h"

namespace topo {
namespace {

struct Leaves {
  std::vector<int> compact;  // by leaf: position in used, or -1
  std::vector<int> used;
  int slot(int leaf) {
    if (compact[leaf] < 0) {
      compact[leaf] = static_cast<int>(used.size());
      used.push_back(leaf);
    }
    return compact[leaf];
  }
};

// Where the crossings go: one per (leaf, receiving port) as they come, or,
// per leaf, summed by (sending, receiving) leaf in the order they come (as
// spread() would sum them) and written out at the end.
class Crossings {
 public:
  Crossings(const Leaves& lv, bool per_leaf, Traffic& t)
      : lv_(lv), t_(t), per_leaf_(per_leaf), sums_(per_leaf ? lv.used.size() * lv.used.size() : 0, 0.0) {}
  void add(size_t x, size_t y, int host, int port, double bytes) {
    if (per_leaf_)
      sums_[x * lv_.used.size() + y] += bytes;
    else
      t_.crossings.push_back({lv_.used[x], host, port, bytes});
  }
  void finish() {
    const size_t n = lv_.used.size();
    for (size_t x = 0; x < n && per_leaf_; ++x)
      for (size_t y = 0; y < n; ++y)
        if (double b = sums_[x * n + y]; b > 0) t_.crossings.push_back({lv_.used[x], -1, -1, b, -1, -1, lv_.used[y]});
  }

 private:
  const Leaves& lv_;
  Traffic& t_;
  bool per_leaf_;
  std::vector<double> sums_;  // by sending x receiving leaf, in used order
};

// Without PXN every GPU sends to every remote GPU through its own lane:
// from leaf x a receiving lane of host j gets per_rank times the GPUs
// behind leaf x (less host j's own) times its GPUs.
void plain(const PathIndex& index, const Allocation& al, double per_rank, Leaves& lv, Traffic& t, Crossings& out) {
  const int N = al.size();
  const double remote_ranks = static_cast<double>(N - 1) * al.gpus_per_host;
  std::vector<double> gpus_on(lv.used.size(), 0.0), own(lv.used.size(), 0.0);
  for (int i = 0; i < N; ++i)
    for (const Lane& l : al.lanes(i)) {
      double bytes = l.gpus * per_rank * remote_ranks;
      t.up[t.offset[i] + l.port] += bytes;
      t.down[t.offset[i] + l.port] += bytes;
      gpus_on[lv.compact[index.ports(al.host[i])[l.port].leaf]] += l.gpus;
    }
  for (int j = 0; j < N; ++j) {
    std::fill(own.begin(), own.end(), 0.0);
    for (const Lane& a : al.lanes(j)) own[lv.compact[index.ports(al.host[j])[a.port].leaf]] += a.gpus;
    for (const Lane& b : al.lanes(j)) {
      int y = lv.compact[index.ports(al.host[j])[b.port].leaf];
      for (size_t x = 0; x < lv.used.size(); ++x) {
        double bytes = per_rank * (gpus_on[x] - own[x]) * b.gpus;
        // Subtracting a host's own GPUs can leave rounding dust behind.
        if (static_cast<int>(x) != y && bytes > 1e-9 * per_rank) out.add(x, static_cast<size_t>(y), j, b.port, bytes);
      }
    }
  }
}

// With PXN, rail r of every host sends all its host's data for the rail-r
// GPUs of the other hosts; the rail set is the same on every host
// (pxn_applies), so rail-r lanes meet only rail-r lanes.
void rail_hopping(const PathIndex& index, const Allocation& al, double per_rank, Leaves& lv, Traffic& t,
                  Crossings& out) {
  const int N = al.size();
  const int G = al.gpus_per_host;
  const double remote_ranks = static_cast<double>(N - 1) * G;
  std::map<int, double> gpus_on_rail;          // rail -> GPUs of the allocation behind it
  std::map<int, std::vector<double>> senders;  // rail -> lanes per used leaf
  for (int i = 0; i < N; ++i)
    for (const Lane& l : al.lanes(i)) gpus_on_rail[l.rail] += l.gpus;
  for (int i = 0; i < N; ++i)
    for (const Lane& l : al.lanes(i)) {
      t.up[t.offset[i] + l.port] += G * per_rank * (gpus_on_rail[l.rail] - l.gpus);
      t.down[t.offset[i] + l.port] += l.gpus * per_rank * remote_ranks;
      auto& s = senders.try_emplace(l.rail, lv.used.size(), 0.0).first->second;
      s[lv.compact[index.ports(al.host[i])[l.port].leaf]] += 1;
    }
  for (int j = 0; j < N; ++j)
    for (const Lane& b : al.lanes(j)) {
      int y = lv.compact[index.ports(al.host[j])[b.port].leaf];
      const std::vector<double>& s = senders[b.rail];
      for (size_t x = 0; x < lv.used.size(); ++x)
        if (static_cast<int>(x) != y && s[x] > 0)
          out.add(x, static_cast<size_t>(y), j, b.port, G * per_rank * s[x] * b.gpus);
    }
}

}  // namespace

Traffic alltoall_traffic(const PathIndex& index, const Allocation& al, double per_rank, bool pxn, bool per_leaf) {
  Traffic t = empty_traffic(index, al);
  t.flow_bytes = per_rank * al.gpus_per_host * al.gpus_per_host;
  Leaves lv{std::vector<int>(index.leaves().size(), -1), {}};
  for (int i = 0; i < al.size(); ++i)
    for (const Lane& l : al.lanes(i)) lv.slot(index.ports(al.host[i])[l.port].leaf);
  // At most one crossing per receiving lane (or leaf) and sending leaf.
  t.crossings.reserve((per_leaf ? lv.used.size() : static_cast<size_t>(al.lane_begin.back())) * lv.used.size());
  Crossings out(lv, per_leaf, t);
  if (pxn)
    rail_hopping(index, al, per_rank, lv, t, out);
  else
    plain(index, al, per_rank, lv, t, out);
  out.finish();
  return t;
}

}  // namespace topo
