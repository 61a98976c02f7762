// The job's --network string, parsed by the C code job_submit and the
// placement plugins share inside slurmctld. What it accepts is written
// back as an option and parses to the same request; what it rejects gives a
// terminated message naming the syntax, whatever the buffer size, and a
// zeroed request. The answer never depends on the buffer.
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "plugin/slurm/common/network_option.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

bool same(const topo_network_request& a, const topo_network_request& b) {
  return a.topo_aware == b.topo_aware && a.profile == b.profile && a.max_leaves == b.max_leaves && a.pod == b.pod &&
         a.segment == b.segment;
}

std::string write(const topo_network_request& r) {
  std::string out = "topo-aware";
  if (r.profile != TOPO_PROFILE_DEFAULT) out += fmt::format(",profile={}", topo_profile_name(r.profile));
  if (r.max_leaves) out += fmt::format(",maxleaves={}", r.max_leaves);
  if (r.pod) out += ",pod";
  if (r.segment) out += fmt::format(",segment={}", r.segment);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string network(topo_fuzz::text(data, size));
  network = network.c_str();  // Slurm hands over a C string
  topo_network_request request;
  char error[512];
  std::memset(error, 'x', sizeof error);
  int rc = topo_network_parse(network.c_str(), &request, error, sizeof error);
  if (std::memchr(error, '\0', sizeof error) == nullptr) topo_fuzz::fail("error buffer not terminated");
  for (size_t small : {size_t{0}, size_t{1}, size_t{7}}) {
    char buffer[8];
    std::memset(buffer, 'x', sizeof buffer);
    topo_network_request other;
    if (topo_network_parse(network.c_str(), &other, buffer, small) != rc || !same(other, request))
      topo_fuzz::fail(fmt::format("the answer changed with a {}-byte error buffer", small));
    if (small > 0 && std::memchr(buffer, '\0', small) == nullptr) topo_fuzz::fail("small error buffer not terminated");
    if (small == 0 && buffer[0] != 'x') topo_fuzz::fail("a 0-byte error buffer was written");
  }
  if (rc != 0) {
    topo_network_request zero{};
    if (!same(request, zero)) topo_fuzz::fail("a refused option left a request behind");
    if (rc != -1 || std::strstr(error, "expected --network=") == nullptr)
      topo_fuzz::fail(fmt::format("refused with rc {} and message '{}'", rc, error));
    return 0;
  }
  if (error[0] != '\0') topo_fuzz::fail(fmt::format("accepted with message '{}'", error));
  if (!request.topo_aware) {
    if (request.profile != TOPO_PROFILE_DEFAULT || request.max_leaves || request.pod || request.segment)
      topo_fuzz::fail("options without topo-aware accepted");
    return 0;
  }
  std::string written = write(request);
  topo_network_request again;
  if (topo_network_parse(written.c_str(), &again, error, sizeof error) != 0 || !same(again, request))
    topo_fuzz::fail(fmt::format("'{}' parsed, written as '{}', parses differently: {}", network, written, error));
  return 0;
}
