// comm_model's per-job AllReduce times on a busy fabric against SimGrid's.
//
// Each snapshot puts several jobs at once on a 32-host leaf/spine fabric
// (2:1), with random host sets and ring orders, routed by static tables
// (OpenSM's ftree and minhop as topology/routing_engine.h emulates them) or
// adaptively. SimGrid runs every job's ring
// AllReduce (2(n-1) steps of size/n per ring edge, a step ends when its
// slowest edge has arrived) as an S4U actor, on explicit routes: the path
// the tables give, or, for adaptive routing, the flow cut into equal parts
// over every shortest path. Every directed cable is its own SimGrid link at
// its line rate times the network efficiency, without latency; the network
// model is CM02 (plain max-min) with no cross traffic. Every job loops until
// all have finished once, so each job's first run meets all the others.
// The model is asked with textbook options (no latencies, the ring
// algorithm), every job with the others as neighbours.
//
// Each snapshot runs in a child process: a SimGrid engine lives once per
// process. Prints the worst and mean error and every job off by more than
// 5% (the goal). Exits 1 when the mean error passes 2% or a job is off by
// more than 30%: what the model holds today. The per-job 5% goal is missed
// on about 5% of jobs, always with the model faster than SimGrid: the model
// keeps all of a job's flows at its slowest flow's rate, while in SimGrid a
// step's faster flows finish early and leave their cables to the
// neighbours for the rest of the step. `--goal` exits 1 on the 5% goal.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "comm_model/neighbours.h"
#include "topology/route.h"
#include "topology/routing_engine.h"
#include "topology/synthetic.h"

namespace sg4 = simgrid::s4u;
using namespace topo;

namespace {

constexpr const char* kFabric = "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2";
constexpr double kBytes = 64.0 * 1024 * 1024;
constexpr double kEfficiency = 0.96;

struct Snapshot {
  bool adaptive = false;
  std::vector<std::vector<NodeId>> rings;
};

Snapshot random_snapshot(const Fabric& f, std::mt19937& rng, bool adaptive) {
  Snapshot s;
  s.adaptive = adaptive;
  std::vector<NodeId> free(f.hosts().begin(), f.hosts().end());
  std::shuffle(free.begin(), free.end(), rng);
  int jobs = std::uniform_int_distribution<int>(2, 6)(rng);
  for (int j = 0; j < jobs && free.size() >= 2; ++j) {
    size_t n = std::uniform_int_distribution<size_t>(2, std::min<size_t>(10, free.size()))(rng);
    std::vector<NodeId> ring(free.end() - static_cast<long>(n), free.end());
    free.resize(free.size() - n);
    // Half the rings in host order, as a tree-style placement leaves them.
    if (rng() % 2) std::sort(ring.begin(), ring.end());
    s.rings.push_back(ring);
  }
  return s;
}

// The directed cables of each equal part of a flow between two HCAs.
std::vector<std::vector<int>> parts(const Fabric& f, NodeId from, NodeId to, bool adaptive, int& count) {
  std::vector<std::vector<int>> out;
  if (!adaptive) {
    StaticRoute r = trace_static_route(f, from, to);
    if (r.status != RouteStatus::Ok) throw std::runtime_error("unrouted pair");
    std::vector<int> path;
    for (const RouteHop& h : r.hops) path.push_back(directed_cable(f.link(h.cable), h.from));
    out.push_back(path);
    count = 1;
    return out;
  }
  auto cable_of = [&](NodeId n) {
    for (auto e : boost::make_iterator_range(boost::out_edges(n, f.graph())))
      if (f.link(e).kind == LinkKind::Cable) return e;
    throw std::runtime_error("no cable");
  };
  LinkId up = cable_of(from), down = cable_of(to);
  NodeId a = f.peer(up, from), b = f.peer(down, to);
  int first = directed_cable(f.link(up), from), last = directed_cable(f.link(down), b);
  if (a == b) return {{first, last}};
  std::vector<LinkId> uplinks;
  for (auto e : boost::make_iterator_range(boost::out_edges(a, f.graph())))
    if (f.node(f.peer(e, a)).kind == NodeKind::Switch) uplinks.push_back(e);
  // Spread evenly at each switch: uplink u, then the k-th cable down to b.
  const int per_spine = 2;
  count = static_cast<int>(uplinks.size()) * per_spine;
  for (int k = 0; k < count; ++k) {
    LinkId u = uplinks[k % uplinks.size()];
    NodeId spine = f.peer(u, a);
    std::vector<LinkId> downs;
    for (auto e : boost::make_iterator_range(boost::out_edges(spine, f.graph())))
      if (f.peer(e, spine) == b) downs.push_back(e);
    if (static_cast<int>(downs.size()) != per_spine) throw std::runtime_error("not a symmetric leaf/spine");
    LinkId d = downs[(k / uplinks.size()) % downs.size()];
    out.push_back({first, directed_cable(f.link(u), a), directed_cable(f.link(d), spine), last});
  }
  return out;
}

// SimGrid's first-run time of every job.
std::vector<double> simulate(const Fabric& f, const Snapshot& s) {
  int argc = 1;
  char name[] = "simgrid_check";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  xbt_log_control_set("root.thresh:warning");
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  auto* zone = sg4::create_full_zone("fabric");
  std::vector<sg4::Link*> cable(2 * f.cables().size());
  for (size_t d = 0; d < cable.size(); ++d)
    cable[d] = zone->create_link("c" + std::to_string(d), f.link(f.cables()[d / 2]).gbps() * kEfficiency * 1e9 / 8)
                   ->set_latency(0)
                   ->seal();
  // A host per (HCA, part), so that every part of a flow has its own route.
  const int P = s.adaptive ? 8 : 1;
  std::vector<std::vector<sg4::Host*>> end(f.node_count());
  for (NodeId hca : f.hcas())
    for (int k = 0; k < P; ++k)
      end[hca].push_back(zone->create_host("h" + std::to_string(hca) + "." + std::to_string(k), 1e9));
  for (NodeId x : f.hcas())
    for (NodeId y : f.hcas()) {
      if (x == y) continue;
      int count = 1;
      auto ps = parts(f, x, y, s.adaptive, count);
      for (int k = 0; k < P; ++k) {
        std::vector<sg4::LinkInRoute> route;
        for (int d : ps[k % ps.size()]) route.emplace_back(cable[d]);
        zone->add_route(end[x][k]->get_netpoint(), end[y][k]->get_netpoint(), nullptr, nullptr, route, false);
      }
    }
  zone->seal();

  // Rank i sends its step-s chunk to rank i+1 once its own step s-1 left
  // and the step s-1 chunk of rank i-1 arrived, as NCCL's ring pipelines.
  const size_t J = s.rings.size();
  std::vector<double> first(J, -1);
  auto done = std::make_shared<size_t>(0);
  // The ranks loop forever as daemons; the run ends when every job has
  // finished once.
  sg4::SemaphorePtr all_done = sg4::Semaphore::create(0);
  sg4::Actor::create("watch", end[f.hcas().front()][0], [all_done] { all_done->acquire(); });
  for (size_t j = 0; j < J; ++j) {
    std::vector<NodeId> hcas;
    for (NodeId h : s.rings[j]) hcas.push_back(f.hcas_of(h).front());
    const size_t n = hcas.size();
    auto arrived = std::make_shared<std::vector<sg4::SemaphorePtr>>();
    for (size_t i = 0; i < n; ++i) arrived->push_back(sg4::Semaphore::create(0));
    auto finished = std::make_shared<size_t>(0);
    auto start = std::make_shared<double>(0);
    for (size_t i = 0; i < n; ++i)
      sg4::Actor::create("job" + std::to_string(j) + "." + std::to_string(i), end[hcas[i]][0],
                         [&, j, i, n, hcas, done, arrived, finished, start, all_done] {
        const uint64_t part = static_cast<uint64_t>(kBytes / n / P);
        for (;;) {
          for (size_t step = 0; step < 2 * (n - 1); ++step) {
            if (step > 0) (*arrived)[i]->acquire();
            std::vector<sg4::CommPtr> comms;
            for (int k = 0; k < P; ++k)
              comms.push_back(sg4::Comm::sendto_async(end[hcas[i]][k], end[hcas[(i + 1) % n]][k], part));
            sg4::Comm::wait_all(comms);
            (*arrived)[(i + 1) % n]->release();
          }
          (*arrived)[i]->acquire();  // the last chunk of rank i-1
          if (++*finished % n != 0) continue;
          // The run ends when every rank has its last chunk.
          if (first[j] < 0) {
            first[j] = sg4::Engine::get_clock() - *start;
            if (++*done == J) all_done->release();
          }
          *start = sg4::Engine::get_clock();
        }
      })->daemonize();
  }
  engine.run();
  return first;
}

// Runs one snapshot in a child; its times come back through a pipe.
std::vector<double> simulate_apart(const Fabric& f, const Snapshot& s) {
  std::fflush(stdout);
  int fd[2];
  if (pipe(fd) != 0) throw std::runtime_error("pipe");
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    std::vector<double> t = simulate(f, s);
    ssize_t want = static_cast<ssize_t>(t.size() * sizeof(double));
    _exit(write(fd[1], t.data(), t.size() * sizeof(double)) == want ? 0 : 1);
  }
  close(fd[1]);
  std::vector<double> t(s.rings.size());
  ssize_t got = read(fd[0], t.data(), t.size() * sizeof(double));
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != static_cast<ssize_t>(t.size() * sizeof(double)) || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("the SimGrid child failed");
  return t;
}

std::vector<double> model(const PathIndex& index, const Snapshot& s) {
  ModelOptions o;
  o.nccl_tuning = false;
  o.switch_latency_us = 0;
  o.algorithm = Algorithm::Ring;
  o.protocol = Protocol::Simple;
  o.network_efficiency = kEfficiency;
  std::vector<NeighbourJob> jobs;
  for (const auto& ring : s.rings) jobs.push_back({ring, Request{Collective::AllReduce, kBytes, Dtype::Fp32, 1}});
  std::vector<double> t;
  for (const Estimate& e : estimate_each(index, jobs, o)) t.push_back(e.time_s);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  bool goal = argc > 1 && std::string(argv[1]) == "--goal";
  if (goal) --argc, ++argv;
  const int snapshots = argc > 1 ? std::atoi(argv[1]) : 120;
  const char* const kRoutings[] = {"static:ftree", "static:minhop", "adaptive"};
  Fabric fabrics[3] = {make_synthetic(kFabric), make_synthetic(kFabric), make_synthetic(kFabric)};
  fabrics[0].set_routing(emulate_routing(fabrics[0], "ftree"));
  fabrics[1].set_routing(emulate_routing(fabrics[1], "minhop"));
  std::vector<PathIndex> indexes;
  for (const Fabric& f : fabrics) indexes.emplace_back(f);
  std::mt19937 rng(2026);
  double worst = 0, sum = 0;
  int jobs = 0, off = 0, contended = 0;
  for (int i = 0; i < snapshots; ++i) {
    const int r = i % 3;
    const Fabric& f = fabrics[r];
    Snapshot s = random_snapshot(f, rng, r == 2);
    std::vector<double> sim = simulate_apart(f, s), est = model(indexes[r], s);
    for (size_t j = 0; j < s.rings.size(); ++j) {
      double err = est[j] / sim[j] - 1;
      double alone = 2.0 * (s.rings[j].size() - 1) / s.rings[j].size() * kBytes * 8 / (400e9 * kEfficiency);
      contended += sim[j] > alone * 1.01;
      worst = std::max(worst, std::abs(err));
      sum += std::abs(err);
      ++jobs;
      if (std::abs(err) > 0.05) {
        ++off;
        std::printf("snapshot %d (%s) job %zu of %zu, %zu hosts: model %.6f s, SimGrid %.6f s (%+.2f%%)\n", i,
                    kRoutings[r], j, s.rings.size(), s.rings[j].size(), est[j], sim[j], 100 * err);
      }
    }
  }
  std::printf("%d snapshots (static ftree, static minhop, adaptive), %d jobs, %d slower than alone on a "
              "non-blocking fabric: worst error %.2f%%, mean %.2f%%, %d beyond 5%%\n",
              snapshots, jobs, contended, 100 * worst, 100 * sum / jobs, off);
  const double mean = sum / jobs;
  if (goal) return off == 0 ? 0 : 1;
  return mean <= 0.02 && worst <= 0.30 ? 0 : 1;
}
