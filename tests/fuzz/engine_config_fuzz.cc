// topo_aware.conf, which slurmctld reads at every reconfigure: what it
// accepts holds values in range and a HostPattern that maps Slurm node
// names without harm; what it rejects names a line.
#include <fmt/format.h>

#include "plugin/engine_config.h"
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
  // What the plugin does with the pattern for every node of slurm.conf.
  for (const char* node : {"gpu001", "node-a12-b03.cluster.example.org", "n1"}) (void)config->fabric_host(node);
  return 0;
}
