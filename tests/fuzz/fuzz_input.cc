#include "tests/fuzz/fuzz_input.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace topo_fuzz {

size_t line_count(std::string_view text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1; }

void fail(std::string_view what) {
  std::fprintf(stderr, "fuzz: %.*s\n", static_cast<int>(std::min<size_t>(what.size(), 4000)), what.data());
  std::abort();
}

MemFile::MemFile() {
  fd_ = memfd_create("topo-fuzz", MFD_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error("memfd_create failed");
  path_ = fmt::format("/proc/self/fd/{}", fd_);
}

MemFile::~MemFile() { close(fd_); }

void MemFile::write(std::string_view bytes) {
  if (ftruncate(fd_, 0) != 0) fail("ftruncate on the memfd failed");
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) fail("pwrite on the memfd failed");
    done += static_cast<size_t>(n);
  }
}

void check_parse_error(const topo::ParseError& e, std::string_view file, size_t max_line,
                       std::initializer_list<std::string_view> file_level) {
  std::string_view what = e.what();
  if (e.file() != file) fail(fmt::format("error names file '{}', not '{}': {}", e.file(), file, what));
  if (e.line() < 0 || static_cast<size_t>(e.line()) > max_line)
    fail(fmt::format("error names line {} of a {}-line input: {}", e.line(), max_line, what));
  if (e.line() == 0 &&
      std::none_of(file_level.begin(), file_level.end(), [&](std::string_view s) { return what.find(s) != what.npos; }))
    fail(fmt::format("error names no line: {}", what));
  if (what.size() > kMaxMessage + file.size()) fail(fmt::format("error message of {} bytes", what.size()));
}

}  // namespace topo_fuzz

#include "fabric/diff.h"
#include "fabric/fabric.h"

namespace topo_fuzz {

std::string fabric_difference(const topo::Fabric& a, const topo::Fabric& b) {
  std::vector<topo::FabricChange> changes = topo::diff(a, b);
  if (!changes.empty())
    return fmt::format("{} changes, first {} {}: {}", changes.size(), topo::name(changes[0].kind), changes[0].subject,
                       changes[0].detail);
  if (a.node_count() != b.node_count() || a.cables().size() != b.cables().size())
    return fmt::format("{} nodes and {} cables against {} and {}", a.node_count(), a.cables().size(), b.node_count(),
                       b.cables().size());
  for (topo::NodeId v = 0; v < a.node_count(); ++v) {
    const topo::Node& n = a.node(v);
    auto w = b.find(n.id);
    if (!w) return fmt::format("node '{}' is gone", n.id);
    const topo::Node& m = b.node(*w);
    if (n.kind != m.kind || n.name != m.name || n.guid != m.guid || n.lid != m.lid)
      return fmt::format("node '{}': name '{}' guid {:#x} lid {} against '{}' {:#x} {}", n.id, n.name, n.guid, n.lid,
                         m.name, m.guid, m.lid);
  }
  return {};
}

}  // namespace topo_fuzz
