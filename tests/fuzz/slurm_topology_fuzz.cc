// Slurm's topology.conf, Include directives and all (relative ones resolve
// in tests/fixtures/slurm, so the fixtures' include/ files can be reached).
// What it accepts is written and read again: the second writing lists the
// same switches and hosts as the first (the first may have had to drop a
// host's second leaf, which its header comments say), and every host comes
// back. What it rejects names a line.
#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "discovery/slurm_topology.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

std::vector<std::string> host_names(const topo::Fabric& f) {
  std::vector<std::string> out;
  for (topo::NodeId h : f.hosts()) out.push_back(f.node(h).name);
  std::sort(out.begin(), out.end());
  return out;
}

// The lines Slurm reads, without the header's comments.
std::string lines(const std::string& conf) {
  std::istringstream in(conf);
  std::string out, line;
  while (std::getline(in, line))
    if (!line.starts_with("#")) out += line + "\n";
  return out;
}

std::string write(const topo::Fabric& f) {
  std::ostringstream out;
  topo::write_slurm_topology(f, out);
  return out.str();
}

}  // namespace

// The file-wide cap on names, low: its check counts names before any is
// written out, so a low cap tests it as well as the default's, and keeps
// every input fast. At the default a 100-byte input building a fabric of
// 10,000 hosts (read, written, read and written again) took 50 ms under
// ASan, and the fuzzer ran at 80 inputs a second; with 2,048, fabrics of
// 2,000 hosts took 0.3 s and it ran at 180-250 a second once its corpus
// had grown. 256 is the hostlist target's cap.
constexpr uint64_t kMaxNames = 256;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = TOPO_FIXTURES "/slurm/fuzz.conf";
  std::string input(topo_fuzz::text(data, size));
  std::istringstream in(input);
  topo::Fabric fabric;
  try {
    fabric = topo::read_slurm_topology(in, file, topo::kSlurmTopologyDefaultRate, kMaxNames);
  } catch (const topo::ParseError& e) {
    // An error inside an included file names that file and its line.
    if (e.file() != file && e.line() > 0) return 0;
    topo_fuzz::check_parse_error(e, file, topo_fuzz::line_count(input), {"no switch defined"});
    return 0;
  }
  std::string first;
  try {
    first = write(fabric);
  } catch (const topo::FabricError&) {
    return 0;  // no host cabled, or a host name Slurm cannot take (documented)
  }
  std::istringstream written(first);
  topo::Fabric again;
  std::string second;
  try {
    again = topo::read_slurm_topology(written, file, topo::kSlurmTopologyDefaultRate, kMaxNames);
    second = write(again);
  } catch (const std::exception& e) {
    topo_fuzz::fail(fmt::format("the written topology.conf does not read and write again: {}\n{}", e.what(), first));
  }
  if (lines(first) != lines(second))
    topo_fuzz::fail(fmt::format("written twice, it differs:\n{}\n---\n{}", first, second));
  if (host_names(fabric) != host_names(again)) topo_fuzz::fail(fmt::format("hosts lost in writing:\n{}", first));
  return 0;
}
