// nccl-tests' standard output (all_reduce_perf and friends), as admins paste
// it from a job's log. What the reader rejects names a line; what it
// accepts is a table of positive sizes in the order the test printed them.
#include <fmt/format.h>

#include "health/nccl_tests.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "nccl-tests.out";
  std::string_view input = topo_fuzz::text(data, size);
  topo::NcclTestsRun run;
  try {
    run = topo::parse_nccl_tests(input, file);
  } catch (const topo::ParseError& e) {
    topo_fuzz::check_parse_error(e, file, topo_fuzz::line_count(input), {"no nccl-tests table"});
    return 0;
  }
  if (run.rows.empty()) topo_fuzz::fail("an accepted output has no rows");
  return 0;
}
