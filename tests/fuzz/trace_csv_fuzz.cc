// Job trace CSV: what it accepts is sorted by submission with times that
// are numbers and at least one GPU a job; what it rejects names a line.
#include <cmath>

#include <fmt/format.h>

#include "simulation/trace.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static topo_fuzz::MemFile file;
  std::string_view input = topo_fuzz::text(data, size);
  file.write(input);
  topo::Trace trace;
  try {
    trace = topo::read_trace_csv(file.path());
  } catch (const topo::ParseError& e) {
    topo_fuzz::check_parse_error(e, file.path(), topo_fuzz::line_count(input), {"is empty"});
    return 0;
  }
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const topo::TraceJob& j = trace.jobs[i];
    if (j.id.empty() || j.gpus < 1 || !std::isfinite(j.submit_s) || !std::isfinite(j.duration_s) || j.submit_s < 0 ||
        j.duration_s < 0)
      topo_fuzz::fail(fmt::format("job {} accepted as id '{}' submit {} duration {} gpus {}", i, j.id, j.submit_s,
                                  j.duration_s, j.gpus));
    if (i > 0 && trace.jobs[i - 1].submit_s > j.submit_s) topo_fuzz::fail("jobs out of submission order");
  }
  (void)trace.offered_gpus();
  return 0;
}
