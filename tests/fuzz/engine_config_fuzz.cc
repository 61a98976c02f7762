// topo_aware.conf, which slurmctld reads at every reconfigure: what it
// accepts holds values in range and a HostPattern that maps Slurm node
// names without harm; what it rejects names a line.
#include <cmath>

#include <fmt/format.h>

#include "fabric/routing.h"
#include "plugin/engine/engine_config.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static topo_fuzz::MemFile file;
  std::string_view input = topo_fuzz::text(data, size);
  file.write(input);
  std::optional<topo::EngineConfig> config;
  try {
    config = topo::read_engine_config(file.path());
  } catch (const topo::ParseError& e) {
    topo_fuzz::check_parse_error(e, file.path(), topo_fuzz::line_count(input), {});
    return 0;
  }
  if (!config) topo_fuzz::fail("an existing file read as absent");
  if (config->candidates < 1 || config->candidates > 64)
    topo_fuzz::fail(fmt::format("Candidates {} accepted", config->candidates));
  if (config->db_path.empty()) topo_fuzz::fail("an empty DbPath accepted");
  // Every number accepted is finite and in its range: the scoring sorts on
  // the weights, and the health checks compare against the thresholds.
  const topo::Weights& w = config->weights;
  for (double weight :
       {w.degraded, w.pod_edge, w.spine_edge, w.overloaded_leaf, w.leaf, w.pressure, w.slowdown, w.fragment})
    if (!std::isfinite(weight) || weight < 0) topo_fuzz::fail(fmt::format("weight {} accepted", weight));
  const topo::NicThresholds& nic = config->nic;
  for (double threshold : {config->health.errors_per_hour, config->health.xmit_wait_share, nic.pauses_per_second,
                           nic.ecn_over_median, nic.ecn_marks_per_second})
    if (!std::isfinite(threshold) || threshold <= 0)
      topo_fuzz::fail(fmt::format("health threshold {} accepted", threshold));
  if (config->health.xmit_wait_share > 1)
    topo_fuzz::fail(fmt::format("HealthXmitWaitShare {} accepted", config->health.xmit_wait_share));
  const topo::NcclSiteHints& h = config->nccl;
  if (h.gid_index < -1 || h.gid_index > 255 || h.traffic_class < -1 || h.traffic_class > 255 || h.ecmp_qps < 0 ||
      h.ecmp_qps > topo::kMaxQps)
    topo_fuzz::fail(
        fmt::format("RoCE hints out of range accepted: gid {} tc {} qps {}", h.gid_index, h.traffic_class, h.ecmp_qps));
  // They go into jobs' environments as they are.
  for (const std::string* list : {&h.ib_hca, &h.socket_ifname})
    for (char c : *list)
      if (c <= ' ' || c == 0x7f) topo_fuzz::fail(fmt::format("a name list with byte {} accepted", int(c)));
  // What the plugin does with the pattern for every node of slurm.conf.
  for (const char* node : {"gpu001", "node-a12-b03.cluster.example.org", "n1"}) (void)config->fabric_host(node);
  return 0;
}
