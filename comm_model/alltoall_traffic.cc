// AllToAll's traffic pattern in closed form (declared in traffic.h).
#include <algorithm>
#include <map>
#include <span>

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
  bool per_leaf() const { return per_leaf_; }
  void add(size_t x, size_t y, int host, int port, double bytes) {
    if (per_leaf_)
      sums_[y * lv_.used.size() + x] += bytes;
    else
      t_.crossings.push_back({lv_.used[x], host, port, bytes});
  }
  // Per leaf: the sums into receiving leaf y, by sending leaf.
  std::span<double> into(size_t y) { return {sums_.data() + y * lv_.used.size(), lv_.used.size()}; }
  void finish() {
    const size_t n = lv_.used.size();
    for (size_t x = 0; x < n && per_leaf_; ++x)
      for (size_t y = 0; y < n; ++y)
        if (double b = sums_[y * n + x]; b > 0) t_.crossings.push_back({lv_.used[x], -1, -1, b, -1, -1, lv_.used[y]});
  }

 private:
  const Leaves& lv_;
  Traffic& t_;
  bool per_leaf_;
  std::vector<double> sums_;  // by receiving x sending leaf, in used order
};

// What a receiving lane of `gpus` GPUs gets from each used leaf when its
// host has no GPU behind that leaf: per_rank times the leaf's GPUs times
// its own, or 0 where that is rounding dust.
void from_every_leaf(std::span<const double> gpus_on, double per_rank, int gpus, double dust,
                     std::vector<double>& out) {
  out.resize(gpus_on.size());
  for (size_t x = 0; x < gpus_on.size(); ++x) {
    // As the full sum computes it: gpus_on[x] - 0.0 is gpus_on[x].
    const double bytes = per_rank * gpus_on[x] * gpus;
    out[x] = bytes > dust ? bytes : 0.0;
  }
}

// Without PXN every GPU sends to every remote GPU through its own lane:
// from leaf x a receiving lane of host j gets per_rank times the GPUs
// behind leaf x (less host j's own) times its GPUs. Summed per leaf pair,
// that is hosts times leaves additions; a lane adds one row, and a sum
// gains at most one term per lane, so the row is added as one loop over
// the leaves where host j has no GPU (adding 0 leaves a sum as it is) and
// then at its own leaves: every sum takes the same terms in the same order
// as term by term.
void plain(const PathIndex& index, const Allocation& al, double per_rank, Leaves& lv, Traffic& t, Crossings& out) {
  const int N = al.size();
  const size_t U = lv.used.size();
  const double remote_ranks = static_cast<double>(N - 1) * al.gpus_per_host;
  std::vector<double> gpus_on(U, 0.0), own(U, 0.0);
  for (int i = 0; i < N; ++i)
    for (const Lane& l : al.lanes(i)) {
      double bytes = l.gpus * per_rank * remote_ranks;
      t.up[t.offset[i] + l.port] += bytes;
      t.down[t.offset[i] + l.port] += bytes;
      gpus_on[lv.compact[index.ports(al.host[i])[l.port].leaf]] += l.gpus;
    }
  // Subtracting a host's own GPUs can leave rounding dust behind.
  const double dust = 1e-9 * per_rank;
  std::vector<double> row;
  int row_gpus = -1;
  std::vector<size_t> mine;  // host j's leaves, and the receiving lane's
  for (int j = 0; j < N; ++j) {
    for (size_t x : mine) own[x] = 0.0;
    mine.clear();
    for (const Lane& a : al.lanes(j)) {
      const size_t x = static_cast<size_t>(lv.compact[index.ports(al.host[j])[a.port].leaf]);
      mine.push_back(x);
      own[x] += a.gpus;
    }
    if (mine.size() > 1) {
      std::sort(mine.begin(), mine.end());
      mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    }
    for (const Lane& b : al.lanes(j)) {
      const size_t y = static_cast<size_t>(lv.compact[index.ports(al.host[j])[b.port].leaf]);
      if (!out.per_leaf()) {
        for (size_t x = 0; x < U; ++x) {
          double bytes = per_rank * (gpus_on[x] - own[x]) * b.gpus;
          if (x != y && bytes > dust) out.add(x, y, j, b.port, bytes);
        }
        continue;
      }
      if (b.gpus != row_gpus) from_every_leaf(gpus_on, per_rank, b.gpus, dust, row);
      row_gpus = b.gpus;
      std::span<double> into = out.into(y);
      size_t x = 0;
      for (size_t m : mine) {  // y is one of them
        for (; x < m; ++x) into[x] += row[x];
        x = m + 1;
      }
      for (; x < U; ++x) into[x] += row[x];
      for (size_t m : mine) {
        double bytes = per_rank * (gpus_on[m] - own[m]) * b.gpus;
        if (m != y && bytes > dust) into[m] += bytes;
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
