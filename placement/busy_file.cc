#include "placement/busy_file.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/error.h"
#include "common/line_source.h"
#include "common/quote.h"
#include "fabric/hosts_field.h"

namespace topo {

void read_busy(std::istream& in, const std::string& filename, const Fabric& fabric, FreeMap& free) {
  // A busy file of every host of a 100k-host cluster is under 2 MB.
  LineSource lines(in, filename, kMaxLineBytes, 64 << 20);
  for (std::string_view view; lines.next(view);) {
    int number = lines.number();
    std::string line(view);
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream words(line);
    std::string hosts, count, extra;
    if (!(words >> hosts)) continue;
    words >> count >> extra;
    if (!extra.empty())
      throw ParseError(filename, number,
                       fmt::format("expected 'host [GPUs in use]', found extra field '{}'", shown(extra)));
    std::vector<NodeId> named = read_hosts_field(hosts, fabric, filename, number, "host");
    int used = -1;
    if (!count.empty()) {
      auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), used);
      if (ec != std::errc() || end != count.data() + count.size() || used < 0)
        throw ParseError(filename, number, fmt::format("GPUs in use field '{}' is not a whole number", shown(count)));
    }
    for (NodeId host : named) {
      int& slot = free.free_gpus.at(host);
      if (used > slot)
        throw ParseError(filename, number,
                         fmt::format("GPUs in use field: {} has {} GPUs free, {} cannot be in use",
                                     fabric.node(host).name, slot, used));
      slot = used < 0 ? 0 : slot - used;
    }
  }
}

void read_busy_file(const std::string& path, const Fabric& fabric, FreeMap& free) {
  std::ifstream in(path);
  if (!in) throw ParseError(path, 0, "cannot open the busy-hosts file");
  read_busy(in, path, fabric, free);
}

}  // namespace topo
