#include "tools/topoctl/schedule_json.h"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/quote.h"
#include "tools/topoctl/json_file.h"

namespace topoctl {

using nlohmann::json;

namespace {

// What an error quotes of the input: enough to find it, never the input.
std::string clipped(std::string_view text) { return topo::shown(text, 160); }

// Far above a schedule's 4 levels (the document, jobs, a job, its hosts).
constexpr int kMaxScheduleDepth = 64;

}  // namespace

topo::Schedule read_schedule(std::istream& in, const std::string& path, const topo::Fabric& fabric,
                             std::string& trace) {
  // A replay of a million jobs is a few hundred megabytes.
  json doc = read_json(in, path, 1 << 30, kMaxScheduleDepth, "a schedule nests 4");
  auto field = [&](const json& j, const char* key, const std::string& where) -> const json& {
    if (!j.is_object() || !j.contains(key)) throw topo::ParseError(path, 0, fmt::format("{}: no '{}'", where, key));
    return j.at(key);
  };
  // nlohmann converts 1e300 or 2^40 to int by a plain cast: out of range, that is undefined.
  auto count = [&](const json& v, const std::string& where) {
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 1'000'000)
      throw topo::ParseError(path, 0,
                             fmt::format("{}: expected a whole number of GPUs, got {}", where, clipped(v.dump())));
    return static_cast<int>(v.get<int64_t>());
  };
  topo::Schedule s;
  try {
    s.policy = field(doc, "policy", "document").get<std::string>();
    if (doc.contains("trace")) trace = doc["trace"].get<std::string>();
    if (doc.contains("scheduler"))
      for (auto& [k, v] : doc["scheduler"].items())
        if (v.is_number()) s.scheduler[k] = v.get<double>();
    if (doc.contains("rejected")) s.rejected = doc["rejected"].get<std::vector<std::string>>();
    const json& jobs = field(doc, "jobs", "document");
    for (size_t i = 0; i < jobs.size(); ++i) {
      const json& j = jobs[i];
      std::string where = fmt::format("jobs[{}]", i);
      topo::ScheduledJob job;
      job.id = field(j, "id", where).get<std::string>();
      job.gpus = count(field(j, "gpus", where), where + ".gpus");
      job.submit_s = field(j, "submit_s", where).get<double>();
      job.start_s = field(j, "start_s", where).get<double>();
      job.end_s = field(j, "end_s", where).get<double>();
      for (const std::string& host : field(j, "ring", where).get<std::vector<std::string>>()) {
        auto h = fabric.find_host(host);
        if (!h)
          throw topo::ParseError(path, 0,
                                 fmt::format("{} (job {}): unknown host {}", where, clipped(job.id), clipped(host)));
        job.ring.push_back(*h);
      }
      const json& host_gpus = field(j, "host_gpus", where);
      if (!host_gpus.is_array()) throw topo::ParseError(path, 0, fmt::format("{}.host_gpus: expected a list", where));
      for (size_t k = 0; k < host_gpus.size(); ++k)
        job.host_gpus.push_back(count(host_gpus[k], fmt::format("{}.host_gpus[{}]", where, k)));
      if (job.host_gpus.size() != job.ring.size())
        throw topo::ParseError(path, 0,
                               fmt::format("{} (job {}): {} hosts but {} host_gpus", where, clipped(job.id),
                                           job.ring.size(), job.host_gpus.size()));
      // What the job asked of the NVLink domains, when the schedule says.
      if (j.contains("segment")) {
        const json& seg = j.at("segment");
        if (!seg.is_number_integer() || seg.get<int64_t>() < 0 || seg.get<int64_t>() > 1'000'000)
          throw topo::ParseError(path, 0,
                                 fmt::format("{}.segment: expected a whole number of hosts, 0 or more", where));
        job.segment = static_cast<int>(seg.get<int64_t>());
      }
      if (j.contains("cpu_only")) {
        job.cpu_only = j.at("cpu_only").get<bool>();
        if (job.cpu_only) job.gpus = 0;
      }
      if (job.end_s < job.start_s || job.start_s < job.submit_s)
        throw topo::ParseError(path, 0, fmt::format("{} (job {}): times out of order", where, clipped(job.id)));
      s.jobs.push_back(std::move(job));
    }
  } catch (const json::exception& e) {
    throw topo::ParseError(path, 0, fmt::format("wrong type: {}", clipped(e.what())));
  }
  return s;
}

topo::Schedule read_schedule_file(const std::string& path, const topo::Fabric& fabric, std::string& trace) {
  std::ifstream in(path);
  if (!in) throw topo::ParseError(path, 0, "cannot open the schedule file");
  return read_schedule(in, path, fabric, trace);
}

}  // namespace topoctl
