// The concurrent-jobs file of `topoctl estimate --concurrent`, on a 4-leaf
// fabric of 32 hosts: what it accepts are rings of distinct hosts with
// duties in (0, 1], sizes of whole elements and GPU counts in bounds, and
// the model estimates a job beside them without refusing any; what it
// rejects names a line.
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "comm_model/concurrent_file.h"
#include "comm_model/paths.h"
#include "fabric/synthetic.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

void check(const topo::NeighbourJob& job, const topo::Fabric& fabric) {
  std::set<topo::NodeId> ring(job.ring.begin(), job.ring.end());
  if (ring.size() != job.ring.size()) topo_fuzz::fail("a host twice in one ring");
  for (topo::NodeId h : job.ring)
    if (fabric.node(h).kind != topo::NodeKind::Host) topo_fuzz::fail(fmt::format("node {} in a ring is not a host", h));
  if (!(job.duty > 0 && job.duty <= 1)) topo_fuzz::fail(fmt::format("duty {} accepted", job.duty));
  const topo::Request& r = job.request;
  if (r.gpus_per_host < 1 || r.gpus_per_host > topo::kMaxConcurrentGpusPerHost)
    topo_fuzz::fail(fmt::format("gpus-per-host {} accepted", r.gpus_per_host));
  if (!(r.bytes > 0) || std::fmod(r.bytes, topo::dtype_bytes(r.dtype)) != 0)
    topo_fuzz::fail(fmt::format("size {} accepted", r.bytes));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const topo::Fabric fabric = topo::make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2");
  static const topo::PathIndex index(fabric);
  const topo::Request like{topo::Collective::AllReduce, 1 << 20, topo::Dtype::Bf16, 8};
  const std::string file = "fuzz.concurrent";
  std::string input(topo_fuzz::text(data, size));
  std::istringstream in(input);
  std::vector<topo::NeighbourJob> jobs;
  try {
    jobs = topo::read_concurrent(in, file, fabric, like);
  } catch (const topo::ParseError& e) {
    topo_fuzz::check_parse_error(e, file, topo_fuzz::line_count(input), {});
    return 0;
  }
  topo::Neighbours neighbours(index);
  for (const topo::NeighbourJob& job : jobs) {
    check(job, fabric);
    // The model's time, not the reader's, bounds the rate: it takes the
    // first four jobs of up to 8 GPUs a host (more only cost time).
    if (neighbours.size() >= 4 || job.request.gpus_per_host > 8) continue;
    try {
      neighbours.add(job);
    } catch (const std::exception& e) {
      topo_fuzz::fail(fmt::format("the model refuses an accepted job: {}", e.what()));
    }
  }
  const std::vector<topo::NodeId> ring{fabric.hosts()[0], fabric.hosts()[9]};
  try {
    topo::estimate(index, ring, like, neighbours);
  } catch (const std::exception& e) {
    topo_fuzz::fail(fmt::format("the model refuses the job beside accepted ones: {}", e.what()));
  }
  return 0;
}
