// What the placement shims' engine adds to one run-now test: ranking the
// candidates by Slurm node index (snapshot check, search, estimates) and
// recording the placement (one journal append; the database write happens
// in the engine's writer thread), on a 32-host cluster like the Slurm
// tests' and a 4,096-host one; the Slurm tests' 4 x 8 cluster also beside
// running jobs, whose traffic every candidate's estimate shares cables
// with (a busy cluster, as in tests/slurm/burst.sh), and in a burst, where
// a running job ends and another starts between every two rank calls.
// Prints figures; asserts nothing.
#include "plugin/engine/engine.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "db/snapshot_store.h"
#include "fabric/synthetic.h"
#include "tests/bench/counted.h"

namespace {

struct Cluster {
  std::filesystem::path dir;
  topo_engine_t* engine = nullptr;
  std::vector<std::string> names;
  std::vector<int> free;  // by node index

  explicit Cluster(const std::string& spec) {
    dir = std::filesystem::temp_directory_path() / ("engine-bench-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    topo::Fabric fabric = topo::make_synthetic(spec);
    for (topo::NodeId h : fabric.hosts()) names.push_back(fabric.node(h).name);
    topo::SnapshotStore((dir / "fabric.db").string()).save(fabric);
    std::ofstream(dir / "topo_aware.conf") << "DbPath=" << (dir / "fabric.db").string() << "\n";
    char msg[512];
    if (topo_engine_open((dir / "topo_aware.conf").c_str(), &engine, msg, sizeof msg) != TOPO_ENGINE_OK)
      throw std::runtime_error(msg);
    // Loaded at start-up in slurmctld too: keep it out of the timed calls.
    std::vector<const char*> name_ptrs;
    for (const std::string& n : names) name_ptrs.push_back(n.c_str());
    // Slurm gives its node table once; every call after speaks in indices.
    if (topo_engine_set_nodes(engine, name_ptrs.data(), name_ptrs.size(), msg, sizeof msg) != TOPO_ENGINE_OK)
      throw std::runtime_error(msg);
    // Every third host busy, so the search has leaves of different sizes.
    for (size_t i = 0; i < names.size(); ++i) free.push_back(i % 3 == 0 ? 0 : 8);
    if (topo_engine_prepare(engine, msg, sizeof msg) != TOPO_ENGINE_OK) throw std::runtime_error(msg);
  }
  ~Cluster() {
    topo_engine_close(engine);
    std::filesystem::remove_all(dir);
  }
};

// Places job `job_id` on `nodes` whole hosts through the engine and leaves
// it running: its hosts are taken and its traffic loads the fabric.
std::vector<size_t> start_job(Cluster& c, uint32_t job_id, uint32_t nodes) {
  char msg[512];
  topo_engine_job job{};
  job.job_id = job_id;
  job.nodes = nodes;
  job.gpus_per_node = 8;
  job.request.topo_aware = true;
  topo_engine_ranking ranking{};
  if (topo_engine_rank(c.engine, &job, c.free.data(), c.free.size(), &ranking, msg, sizeof msg) != TOPO_ENGINE_OK)
    throw std::runtime_error(msg);
  const topo_engine_candidate& best = ranking.candidates[0];
  std::vector<size_t> allocated(best.nodes, best.nodes + best.count);
  std::sort(allocated.begin(), allocated.end());
  char *ring = nullptr, *hcas = nullptr;
  if (topo_engine_record(c.engine, &job, &ranking, 0, allocated.data(), allocated.size(), nullptr, &ring, &hcas, msg,
                         sizeof msg) != TOPO_ENGINE_OK)
    throw std::runtime_error(msg);
  for (size_t node : allocated) c.free[node] = 0;
  free(ring);
  free(hcas);
  topo_engine_ranking_free(&ranking);
  return allocated;
}

void start_running(Cluster& c, size_t jobs, uint32_t nodes) {
  for (size_t j = 0; j < jobs; ++j) (void)start_job(c, 1000000 + static_cast<uint32_t>(j), nodes);
}

// One rank call, the part scripts/speed-gate.sh counts.
int counted_rank(Cluster& c, const topo_engine_job& job, topo_engine_ranking& ranking, char* msg, size_t size) {
  topo::bench::Counted counted;
  return topo_engine_rank(c.engine, &job, c.free.data(), c.free.size(), &ranking, msg, size);
}

double cpu_now_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

void rank_and_record(benchmark::State& state, const char* spec, uint32_t nodes, size_t running = 0,
                     uint32_t running_nodes = 0) {
  Cluster c(spec);
  if (running) start_running(c, running, running_nodes);
  topo_engine_job job{};
  job.nodes = nodes;
  job.gpus_per_node = 8;
  job.request.topo_aware = true;
  char msg[512];
  // Thread CPU time: the machine may be shared, and wall time then counts
  // other processes' turns.
  auto cpu_now = cpu_now_us;
  double rank_us = 0, record_us = 0, rank_cpu_us = 0, record_cpu_us = 0;
  uint32_t id = 0;
  for (auto _ : state) {
    job.job_id = ++id;
    topo_engine_ranking ranking{};
    double c0 = cpu_now();
    auto t0 = std::chrono::steady_clock::now();
    if (counted_rank(c, job, ranking, msg, sizeof msg) != TOPO_ENGINE_OK) {
      state.SkipWithError(msg);
      break;
    }
    auto t1 = std::chrono::steady_clock::now();
    double c1 = cpu_now();
    // Slurm hands back the allocation in node order.
    std::vector<size_t> allocated(ranking.candidates[0].nodes,
                                  ranking.candidates[0].nodes + ranking.candidates[0].count);
    std::sort(allocated.begin(), allocated.end());
    char *ring = nullptr, *hcas = nullptr;
    if (topo_engine_record(c.engine, &job, &ranking, 0, allocated.data(), allocated.size(), nullptr, &ring, &hcas, msg,
                           sizeof msg) != TOPO_ENGINE_OK) {
      state.SkipWithError(msg);
      break;
    }
    auto t2 = std::chrono::steady_clock::now();
    double c2 = cpu_now();
    rank_cpu_us += c1 - c0;
    record_cpu_us += c2 - c1;
    free(ring);
    free(hcas);
    topo_engine_ranking_free(&ranking);
    // Recorded jobs count as running until they end; ending each keeps the
    // running set what it is on the cluster (the busy hosts' jobs are not
    // modelled here).
    topo_engine_job_ended(c.engine, job.job_id, msg, sizeof msg);
    rank_us += std::chrono::duration<double, std::micro>(t1 - t0).count();
    record_us += std::chrono::duration<double, std::micro>(t2 - t1).count();
  }
  double n = static_cast<double>(state.iterations());
  state.counters["rank_us"] = n > 0 ? rank_us / n : 0;
  state.counters["record_us"] = n > 0 ? record_us / n : 0;
  state.counters["rank_cpu_us"] = n > 0 ? rank_cpu_us / n : 0;
  state.counters["record_cpu_us"] = n > 0 ? record_cpu_us / n : 0;
}

void BM_Engine8Of32Hosts(benchmark::State& state) {
  rank_and_record(state, "leafspine:leaves=8,hosts_per_leaf=4,spines=2,oversub=2", 8);
}
BENCHMARK(BM_Engine8Of32Hosts)->Unit(benchmark::kMicrosecond)->Apply(topo::bench::iterations_from_environment);

void BM_Engine64Of4096Hosts(benchmark::State& state) {
  rank_and_record(state, "leafspine:leaves=128,hosts_per_leaf=32,spines=16,oversub=2", 64);
}
BENCHMARK(BM_Engine64Of4096Hosts)->Unit(benchmark::kMicrosecond)->Apply(topo::bench::iterations_from_environment);

// The Slurm tests' cluster (4 leaves of 8, 2:1) with two 6-host jobs
// running, each across two leaves (a leaf has 5 or 6 hosts free): a 4-host
// job's candidates share cables with them.
void BM_Engine4Of32BesideRunning(benchmark::State& state) {
  rank_and_record(state, "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2", 4, 2, 6);
}
BENCHMARK(BM_Engine4Of32BesideRunning)->Unit(benchmark::kMicrosecond)->Apply(topo::bench::iterations_from_environment);

// A burst as tests/slurm/burst.sh makes it: short jobs of 2-4 whole hosts
// start and end all the time, so between two evaluations of a pending job
// one running job ended and another started (the running traffic changed,
// and with it every earlier answer). Per iteration: the oldest of the
// running jobs ends, a new one starts (ranked and recorded), and a 3-host
// job is ranked beside them; rank_cpu_us is that last call, the test
// slurmctld's evaluation makes, and churn_cpu_us the end and start before
// it. With a range of N, N MiB are written between the churn and the
// rank call (untimed): the engine's data leave the CPU's caches (here L2
// is 1 MiB), as Slurm's work and other processes push them out between
// two evaluations in slurmctld.
void BM_Engine3Of32InABurst(benchmark::State& state) {
  std::vector<char> other_work(static_cast<size_t>(state.range(0)) << 20);
  Cluster c("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  std::fill(c.free.begin(), c.free.end(), 8);
  std::deque<std::pair<uint32_t, std::vector<size_t>>> running;
  uint32_t next_id = 1;
  for (uint32_t nodes : {2u, 3u, 4u, 2u, 3u, 4u, 2u, 3u}) {
    running.emplace_back(next_id, start_job(c, next_id, nodes));
    ++next_id;
  }
  topo_engine_job job{};
  job.nodes = 3;
  job.gpus_per_node = 8;
  job.request.topo_aware = true;
  char msg[512];
  double rank_cpu_us = 0, churn_cpu_us = 0;
  for (auto _ : state) {
    double c0 = cpu_now_us();
    auto [ended, nodes] = running.front();
    running.pop_front();
    topo_engine_job_ended(c.engine, ended, msg, sizeof msg);
    for (size_t node : nodes) c.free[node] = 8;
    running.emplace_back(next_id, start_job(c, next_id, 2 + next_id % 3));
    ++next_id;
    double churned = cpu_now_us();
    for (size_t i = 0; i < other_work.size(); i += 64) other_work[i] = static_cast<char>(i + next_id);
    benchmark::DoNotOptimize(other_work.data());
    double c1 = cpu_now_us();
    job.job_id = next_id;
    topo_engine_ranking ranking{};
    if (counted_rank(c, job, ranking, msg, sizeof msg) != TOPO_ENGINE_OK) {
      state.SkipWithError(msg);
      break;
    }
    double c2 = cpu_now_us();
    topo_engine_ranking_free(&ranking);
    churn_cpu_us += churned - c0;
    rank_cpu_us += c2 - c1;
  }
  double n = static_cast<double>(state.iterations());
  state.counters["rank_cpu_us"] = n > 0 ? rank_cpu_us / n : 0;
  state.counters["churn_cpu_us"] = n > 0 ? churn_cpu_us / n : 0;
}
BENCHMARK(BM_Engine3Of32InABurst)
    ->Arg(0)
    ->Arg(4)
    ->Arg(64)
    ->Unit(benchmark::kMicrosecond)
    ->Apply(topo::bench::iterations_from_environment);

// The burst's mix (tests/slurm/burst.sh): topo-aware jobs of 2-4 whole
// hosts (placed by the engine), one-host jobs of 1-8 GPUs and plain jobs
// of 2-4 hosts with 4 or 8 GPUs each (placed as Slurm would, first fit),
// starting and ending at random; between two changes, a scheduling pass
// evaluates pending topo-aware jobs of 2, 3 and 4 hosts. rank_cpu_us is
// the mean of those evaluations, reused the share the engine answered
// without a search. With TOPO_ENGINE_DECISIONS=FILE every evaluation's
// answer (candidates, scores) goes to FILE, one line each: two builds on
// the same seed give the same file when they make the same decisions.
struct MixedBurst {
  explicit MixedBurst(Cluster& cluster) : c(cluster) {}
  Cluster& c;
  std::mt19937 random{20261207};
  struct Job {
    uint32_t id;
    std::vector<size_t> nodes;
    int gpus;
    bool engine;
  };
  std::deque<Job> running;
  uint32_t next_id = 1;
  FILE* decisions = nullptr;

  // First fit, as Slurm's own choice: the lowest nodes with `gpus` free.
  std::vector<size_t> first_fit(uint32_t nodes, int gpus) const {
    std::vector<size_t> out;
    for (size_t i = 0; i < c.free.size() && out.size() < nodes; ++i)
      if (c.free[i] >= gpus) out.push_back(i);
    if (out.size() < nodes) out.clear();
    return out;
  }
  void take(Job job) {
    for (size_t n : job.nodes) c.free[n] -= job.gpus;
    running.push_back(std::move(job));
  }
  void end_one() {
    if (running.empty()) return;
    size_t k = std::uniform_int_distribution<size_t>(0, running.size() - 1)(random);
    Job job = running[k];
    running.erase(running.begin() + static_cast<long>(k));
    for (size_t n : job.nodes) c.free[n] += job.gpus;
    char msg[512];
    if (job.engine) topo_engine_job_ended(c.engine, job.id, msg, sizeof msg);
  }
  void start_one() {
    int kind = std::uniform_int_distribution<int>(0, 3)(random);
    uint32_t nodes = kind == 0 || kind == 3 ? std::uniform_int_distribution<uint32_t>(2, 4)(random) : 1;
    int gpus = kind == 0   ? 8
               : kind == 3 ? 4 * std::uniform_int_distribution<int>(1, 2)(random)
                           : std::uniform_int_distribution<int>(1, 8)(random);
    uint32_t id = next_id++;
    if (kind != 0) {
      std::vector<size_t> at = first_fit(nodes, gpus);
      if (!at.empty()) take({id, at, gpus, false});
      return;
    }
    topo_engine_ranking ranking{};
    topo_engine_job job = topo_job(id, nodes);
    char msg[512];
    if (topo_engine_rank(c.engine, &job, c.free.data(), c.free.size(), &ranking, msg, sizeof msg) == TOPO_ENGINE_OK) {
      std::vector<size_t> at(ranking.candidates[0].nodes, ranking.candidates[0].nodes + ranking.candidates[0].count);
      std::sort(at.begin(), at.end());
      char *ring = nullptr, *hcas = nullptr;
      if (topo_engine_record(c.engine, &job, &ranking, 0, at.data(), at.size(), nullptr, &ring, &hcas, msg,
                             sizeof msg) == TOPO_ENGINE_OK)
        take({id, at, 8, true});
      free(ring);
      free(hcas);
    }
    topo_engine_ranking_free(&ranking);
  }
  static topo_engine_job topo_job(uint32_t id, uint32_t nodes) {
    topo_engine_job job{};
    job.job_id = id;
    job.nodes = nodes;
    job.gpus_per_node = 8;
    job.request.topo_aware = true;
    return job;
  }
  void write(const topo_engine_job& job, int rc, const topo_engine_ranking& r) const {
    if (!decisions) return;
    std::fprintf(decisions, "job %u nodes %u rc %d", job.job_id, job.nodes, rc);
    for (size_t k = 0; k < r.count; ++k) {
      std::fprintf(decisions, " |");
      for (size_t i = 0; i < r.candidates[k].count; ++i) std::fprintf(decisions, " %zu", r.candidates[k].nodes[i]);
      std::fprintf(decisions, " score %.17g estimate %.17g ideal %.17g", r.candidates[k].score,
                   r.candidates[k].estimate_s, r.candidates[k].ideal_s);
    }
    std::fprintf(decisions, "\n");
  }
};

void BM_EngineBurstMix(benchmark::State& state) {
  Cluster c("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  std::fill(c.free.begin(), c.free.end(), 8);
  MixedBurst burst{c};
  const char* dump = std::getenv("TOPO_ENGINE_DECISIONS");
  if (dump && *dump) burst.decisions = std::fopen(dump, "w");
  for (int i = 0; i < 16; ++i) burst.start_one();
  char msg[512];
  double rank_cpu_us = 0, evaluations = 0, reused = 0;
  for (auto _ : state) {
    // About as many jobs end as start, around 16 running (a third of the
    // GPUs busy, some hosts partly).
    if (burst.running.size() > 16 || burst.random() % 2) burst.end_one();
    burst.start_one();
    for (uint32_t nodes : {2u, 3u, 4u, 3u}) {
      topo_engine_job job = MixedBurst::topo_job(burst.next_id, nodes);
      topo_engine_ranking ranking{};
      double c0 = cpu_now_us();
      int rc = counted_rank(c, job, ranking, msg, sizeof msg);
      rank_cpu_us += cpu_now_us() - c0;
      ++evaluations;
      reused += ranking.answered_before;
      burst.write(job, rc, ranking);
      topo_engine_ranking_free(&ranking);
    }
  }
  if (burst.decisions) std::fclose(burst.decisions);
  state.counters["rank_cpu_us"] = evaluations > 0 ? rank_cpu_us / evaluations : 0;
  state.counters["reused"] = evaluations > 0 ? reused / evaluations : 0;
}
BENCHMARK(BM_EngineBurstMix)->Unit(benchmark::kMicrosecond)->Apply(topo::bench::iterations_from_environment);

// What 24.05+'s shim adds when a job starts: at the next evaluation the
// started job's ring goes to the engine (topo_engine_job_started); its
// record follows on the writer's thread. handover_cpu_us is the first,
// the part on the scheduler's path; record_cpu_us the record after it.
void BM_EngineHandOver4Of32(benchmark::State& state) {
  Cluster c("leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2");
  std::fill(c.free.begin(), c.free.end(), 8);
  start_running(c, 2, 6);
  char msg[512];
  double handover_cpu_us = 0, record_cpu_us = 0;
  uint32_t id = 0;
  for (auto _ : state) {
    topo_engine_job job = MixedBurst::topo_job(++id, 4);
    topo_engine_ranking ranking{};
    if (topo_engine_rank(c.engine, &job, c.free.data(), c.free.size(), &ranking, msg, sizeof msg) != TOPO_ENGINE_OK) {
      state.SkipWithError(msg);
      break;
    }
    std::vector<size_t> at(ranking.candidates[0].nodes, ranking.candidates[0].nodes + ranking.candidates[0].count);
    std::sort(at.begin(), at.end());
    double c0 = cpu_now_us();
    int rc = topo_engine_job_started(c.engine, &job, &ranking, 0, at.data(), at.size(), msg, sizeof msg);
    double c1 = cpu_now_us();
    char *ring = nullptr, *hcas = nullptr;
    if (rc == TOPO_ENGINE_OK)
      rc =
          topo_engine_record(c.engine, &job, &ranking, 0, at.data(), at.size(), nullptr, &ring, &hcas, msg, sizeof msg);
    double c2 = cpu_now_us();
    free(ring);
    free(hcas);
    topo_engine_ranking_free(&ranking);
    topo_engine_job_ended(c.engine, job.job_id, msg, sizeof msg);
    if (rc != TOPO_ENGINE_OK) {
      state.SkipWithError(msg);
      break;
    }
    handover_cpu_us += c1 - c0;
    record_cpu_us += c2 - c1;
  }
  double n = static_cast<double>(state.iterations());
  state.counters["handover_cpu_us"] = n > 0 ? handover_cpu_us / n : 0;
  state.counters["record_cpu_us"] = n > 0 ? record_cpu_us / n : 0;
}
BENCHMARK(BM_EngineHandOver4Of32)->Unit(benchmark::kMicrosecond)->Apply(topo::bench::iterations_from_environment);

}  // namespace
