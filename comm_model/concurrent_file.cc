#include "comm_model/concurrent_file.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "common/error.h"
#include "common/line_source.h"
#include "common/quote.h"
#include "fabric/hosts_field.h"

namespace topo {
namespace {

// Far above any collective's buffer (a petabyte); a double holds every
// whole number below it exactly.
constexpr double kMaxBytes = 1e15;

// A job of the file, filled field by field; each field once.
class JobLine {
 public:
  JobLine(const std::string& filename, int number, const Request& like) : filename_(filename), number_(number) {
    job_.request = like;
  }

  void field(const std::string& word) {
    auto eq = word.find('=');
    std::string key = eq == std::string::npos ? "collective" : word.substr(0, eq);
    std::string value = eq == std::string::npos ? word : word.substr(eq + 1);
    if (!seen_.insert(key).second) fail(key, word, "appears twice on the line");
    if (key == "collective") {
      auto c = parse_collective(value);
      if (!c) fail(key, word, "expected allreduce, allgather, reducescatter, broadcast or alltoall");
      job_.request.collective = *c;
    } else if (key == "duty") {
      job_.duty = number(key, word, value);
      if (!(job_.duty > 0 && job_.duty <= 1)) fail(key, word, "expected duty=SHARE with SHARE in (0, 1]");
    } else if (key == "size") {
      double bytes = number(key, word, value);
      int element = dtype_bytes(job_.request.dtype);
      if (!(bytes > 0 && bytes <= kMaxBytes) || std::fmod(bytes, element) != 0)
        fail(key, word,
             fmt::format("expected size=BYTES, a whole number of {} elements ({} bytes each) up to 1e15",
                         name(job_.request.dtype), element));
      job_.request.bytes = bytes;
    } else if (key == "gpus-per-host") {
      int gpus = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), gpus);
      if (ec != std::errc() || end != value.data() + value.size() || gpus < 1 || gpus > kMaxConcurrentGpusPerHost)
        fail(key, word, fmt::format("expected gpus-per-host=G with G from 1 to {}", kMaxConcurrentGpusPerHost));
      job_.request.gpus_per_host = gpus;
    } else {
      fail("unknown", word, "expected 'hosts [collective] [duty=D] [gpus-per-host=G] [size=BYTES]'");
    }
  }

  void hosts(const std::string& expression, const Fabric& fabric) {
    job_.ring = read_hosts_field(expression, fabric, filename_, number_);
    std::set<NodeId> in_ring;
    for (NodeId host : job_.ring)
      if (!in_ring.insert(host).second)
        throw ParseError(filename_, number_,
                         fmt::format("hosts field: '{}' is twice in this job's ring", fabric.node(host).name));
  }

  NeighbourJob take() { return std::move(job_); }

 private:
  [[noreturn]] void fail(const std::string& key, const std::string& word, const std::string& why) const {
    throw ParseError(filename_, number_, fmt::format("{} field '{}': {}", key, shown(word), why));
  }

  double number(const std::string& key, const std::string& word, const std::string& value) const {
    double v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v))
      fail(key, word, "is not a number");
    return v;
  }

  const std::string& filename_;
  int number_;
  NeighbourJob job_;
  std::set<std::string> seen_;
};

}  // namespace

std::vector<NeighbourJob> read_concurrent(std::istream& in, const std::string& filename, const Fabric& fabric,
                                          const Request& like) {
  // Every host of a 100k-host cluster in running jobs is a few megabytes.
  LineSource lines(in, filename, kMaxLineBytes, 64 << 20);
  std::vector<NeighbourJob> jobs;
  for (std::string_view view; lines.next(view);) {
    std::string line(view.substr(0, view.find('#')));
    std::istringstream words(line);
    std::string hosts;
    if (!(words >> hosts)) continue;
    JobLine job(filename, lines.number(), like);
    for (std::string word; words >> word;) job.field(word);
    job.hosts(hosts, fabric);
    jobs.push_back(job.take());
  }
  return jobs;
}

std::vector<NeighbourJob> read_concurrent_file(const std::string& path, const Fabric& fabric, const Request& like) {
  std::ifstream in(path);
  if (!in) throw ParseError(path, 0, fmt::format("cannot open the concurrent-jobs file: {}", std::strerror(errno)));
  return read_concurrent(in, path, fabric, like);
}

}  // namespace topo
