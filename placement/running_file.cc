#include "placement/running_file.h"

#include <charconv>
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

double parse_duty(const std::string& field, const std::string& filename, int number) {
  std::string_view value = std::string_view(field).substr(5);
  double duty = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), duty);
  if (ec != std::errc() || end != value.data() + value.size() || !(duty > 0 && duty <= 1))
    throw ParseError(filename, number,
                     fmt::format("duty field '{}': expected duty=SHARE with SHARE in (0, 1]", shown(field)));
  return duty;
}

}  // namespace

void read_running(std::istream& in, const std::string& filename, const Fabric& fabric, int gpus_per_host,
                  FreeMap& free) {
  // Every host of a 100k-host cluster in running jobs is a few megabytes.
  LineSource lines(in, filename, kMaxLineBytes, 64 << 20);
  std::set<NodeId> seen;
  for (std::string_view view; lines.next(view);) {
    int number = lines.number();
    std::string line(view);
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream words(line);
    std::string hosts, field;
    if (!(words >> hosts)) continue;
    RunningJob job;
    job.gpus_per_host = gpus_per_host;
    bool profile_seen = false, duty_seen = false;
    while (words >> field) {
      if (field.rfind("duty=", 0) == 0 && !duty_seen) {
        job.duty = parse_duty(field, filename, number);
        duty_seen = true;
      } else if (auto p = parse_profile(field); p && *p != Profile::None && !profile_seen && !duty_seen) {
        job.profile = *p;
        profile_seen = true;
      } else {
        throw ParseError(filename, number,
                         fmt::format("field '{}': expected 'hosts [profile] [duty=SHARE]' with profile allreduce, "
                                     "fsdp, alltoall, pipeline or mixed",
                                     shown(field)));
      }
    }
    job.ring = read_hosts_field(hosts, fabric, filename, number);
    for (NodeId host : job.ring) {
      if (!seen.insert(host).second)
        throw ParseError(filename, number,
                         fmt::format("hosts field: '{}' already runs a job of this file", fabric.node(host).name));
      if (host < free.free_gpus.size()) free.free_gpus[host] = 0;
    }
    free.running.push_back(std::move(job));
  }
}

void read_running_file(const std::string& path, const Fabric& fabric, int gpus_per_host, FreeMap& free) {
  std::ifstream in(path);
  if (!in) throw ParseError(path, 0, "cannot open the running-jobs file");
  read_running(in, path, fabric, gpus_per_host, free);
}

}  // namespace topo
