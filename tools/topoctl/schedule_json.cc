#include "tools/topoctl/schedule_json.h"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "topology/error.h"

namespace topoctl {

using nlohmann::json;

topo::Schedule read_schedule(std::istream& in, const std::string& path, const topo::Fabric& fabric,
                             std::string& trace) {
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    throw topo::ParseError(path, 0, fmt::format("not JSON: {}", e.what()));
  }
  auto field = [&](const json& j, const char* key, const std::string& where) -> const json& {
    if (!j.is_object() || !j.contains(key)) throw topo::ParseError(path, 0, fmt::format("{}: no '{}'", where, key));
    return j.at(key);
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
      job.gpus = field(j, "gpus", where).get<int>();
      job.submit_s = field(j, "submit_s", where).get<double>();
      job.start_s = field(j, "start_s", where).get<double>();
      job.end_s = field(j, "end_s", where).get<double>();
      for (const std::string& host : field(j, "ring", where).get<std::vector<std::string>>()) {
        auto h = fabric.find_host(host);
        if (!h) throw topo::ParseError(path, 0, fmt::format("{} (job {}): unknown host {}", where, job.id, host));
        job.ring.push_back(*h);
      }
      job.host_gpus = field(j, "host_gpus", where).get<std::vector<int>>();
      if (job.host_gpus.size() != job.ring.size())
        throw topo::ParseError(path, 0, fmt::format("{} (job {}): {} hosts but {} host_gpus", where, job.id,
                                                    job.ring.size(), job.host_gpus.size()));
      if (job.end_s < job.start_s || job.start_s < job.submit_s)
        throw topo::ParseError(path, 0, fmt::format("{} (job {}): times out of order", where, job.id));
      s.jobs.push_back(std::move(job));
    }
  } catch (const json::type_error& e) {
    throw topo::ParseError(path, 0, fmt::format("wrong type: {}", e.what()));
  }
  return s;
}

topo::Schedule read_schedule_file(const std::string& path, const topo::Fabric& fabric, std::string& trace) {
  std::ifstream in(path);
  if (!in) throw topo::ParseError(path, 0, "cannot open the schedule file");
  return read_schedule(in, path, fabric, trace);
}

}  // namespace topoctl
