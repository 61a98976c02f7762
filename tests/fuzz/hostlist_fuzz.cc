// Slurm hostlist expressions: what expands compresses to an expression that
// expands to the same set of names; what is refused says where.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "common/hostlist.h"
#include "tests/fuzz/fuzz_input.h"

namespace {
constexpr uint64_t kMaxNames = 256;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view expression = topo_fuzz::text(data, size);
  std::vector<std::string> names;
  try {
    // The cap's check counts names before writing any out, so a low cap
    // tests it as well as the default's, and keeps every input fast: at
    // the default a single expression can take seconds under ASan, and
    // the fuzzer ran at 150 inputs a second.
    names = topo::expand_hostlist(expression, kMaxNames);
  } catch (const topo::HostlistError& e) {
    if (e.position() > expression.size())
      topo_fuzz::fail(fmt::format("error at {} past the end ({}): {}", e.position(), expression.size(), e.what()));
    if (std::string_view(e.what()).size() > topo_fuzz::kMaxMessage + expression.size())
      topo_fuzz::fail("error message too long");
    return 0;
  }
  if (names.size() > kMaxNames) topo_fuzz::fail(fmt::format("{} names past the cap of {}", names.size(), kMaxNames));
  std::set<std::string> set;
  for (std::string& n : names)
    if (!n.empty()) set.insert(std::move(n));
  std::vector<std::string> unique(set.begin(), set.end());
  std::string compressed = topo::compress_hostlist(unique);
  std::vector<std::string> back;
  try {
    back = topo::expand_hostlist(compressed);
  } catch (const std::exception& e) {
    topo_fuzz::fail(fmt::format("compressed '{}' does not expand: {}", compressed, e.what()));
  }
  std::set<std::string> back_set(back.begin(), back.end());
  if (back_set != set || back.size() != set.size())
    topo_fuzz::fail(fmt::format("'{}' compressed to '{}', which expands to {} names against {}", expression, compressed,
                                back.size(), set.size()));
  return 0;
}
