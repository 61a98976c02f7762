#include "tools/topoctl/outcome_json.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include <fmt/format.h>

#include "common/error.h"
#include "tools/topoctl/json_file.h"

namespace topoctl {
namespace {

using nlohmann::json;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// JSON has no infinity: a full cable's slowdown goes out as null.
json slowdown(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// Reads fields of one object, naming the full key in every error.
class Fields {
 public:
  Fields(const json& j, std::string file, std::string where) : j_(j), file_(std::move(file)), where_(std::move(where)) {
    if (!j_.is_object()) fail(where_.empty() ? "the document" : where_, "expected an object");
  }

  const json* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  const json& at(const char* key) const {
    const json* v = find(key);
    if (!v) fail(name(key), "is missing");
    return *v;
  }
  std::string text(const char* key) const {
    const json& v = at(key);
    if (!v.is_string()) fail(name(key), "expected a string");
    return v.get<std::string>();
  }
  double number(const char* key) const {
    const json& v = at(key);
    if (!v.is_number()) fail(name(key), "expected a number");
    return v.get<double>();
  }
  // A slowdown: a number >= 0, or null for infinity.
  double slowdown(const char* key) const {
    const json& v = at(key);
    if (v.is_null()) return kInfinity;
    if (!v.is_number()) fail(name(key), "expected a number or null (infinite)");
    double d = v.get<double>();
    if (d < 0) fail(name(key), fmt::format("expected a slowdown >= 0, got {}", d));
    return d;
  }
  long whole(const char* key) const {
    const json& v = at(key);
    if (!v.is_number_integer()) fail(name(key), "expected a whole number");
    return v.get<long>();
  }
  std::string name(const std::string& key) const { return where_.empty() ? key : where_ + "." + key; }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw topo::ParseError(file_, 0, fmt::format("key '{}': {}", key, what));
  }
  const std::string& file() const { return file_; }

 private:
  const json& j_;
  std::string file_;
  std::string where_;
};

json job_json(const topo::JobOutcome& o) {
  json j = {{"id", o.id},
            {"profile", topo::name(o.profile)},
            {"gpus", o.gpus},
            {"hosts", o.hosts},
            {"ring", o.ring},
            {"wait_s", o.wait_s},
            {"leaves", o.leaves},
            {"pods", o.pods},
            {"spines", o.spines},
            {"spine_ring_edges", o.spine_ring_edges},
            {"pod_ring_edges", o.pod_ring_edges},
            {"allreduce_slowdown", slowdown(o.allreduce_slowdown)},
            {"allreduce_alone_slowdown", slowdown(o.allreduce_alone_slowdown)},
            {"alltoall_slowdown", slowdown(o.alltoall_slowdown)},
            {"run_s", o.run_s},
            {"jct_s", o.jct_s}};
  if (o.free_hosts_at_start >= 0) j["free_hosts_at_start"] = o.free_hosts_at_start;
  if (o.segment > 0) {
    j["segment"] = o.segment;
    j["segments_split"] = o.segments_split;
  }
  if (o.cpu_only) j["cpu_only"] = true;
  return j;
}

json nvlink_json(const topo::DomainFigures& d) {
  return {{"domains", d.domains},
          {"decisions", d.decisions},
          {"mean_free_whole_domains", d.mean_free_whole_domains},
          {"min_free_whole_domains", d.min_free_whole_domains},
          {"mean_largest_free_block", d.mean_largest_free_block},
          {"segmented_jobs", d.segmented_jobs},
          {"segments", d.segments},
          {"segments_split", d.segments_split},
          {"cpu_only_jobs", d.cpu_only_jobs},
          {"cpu_only_jobs_in_domains", d.cpu_only_jobs_in_domains}};
}

// A count: a whole number, 0 or more.
long count_of(const Fields& f, const char* key) {
  const long n = f.whole(key);
  if (n < 0 || n > std::numeric_limits<int>::max()) f.fail(f.name(key), "expected a count, 0 or more");
  return n;
}

topo::DomainFigures nvlink_from(const Fields& f) {
  topo::DomainFigures d;
  d.domains = static_cast<int>(count_of(f, "domains"));
  d.decisions = static_cast<int>(count_of(f, "decisions"));
  d.mean_free_whole_domains = f.number("mean_free_whole_domains");
  d.min_free_whole_domains = static_cast<int>(count_of(f, "min_free_whole_domains"));
  d.mean_largest_free_block = f.number("mean_largest_free_block");
  d.segmented_jobs = static_cast<int>(count_of(f, "segmented_jobs"));
  d.segments = count_of(f, "segments");
  d.segments_split = count_of(f, "segments_split");
  d.cpu_only_jobs = static_cast<int>(count_of(f, "cpu_only_jobs"));
  d.cpu_only_jobs_in_domains = static_cast<int>(count_of(f, "cpu_only_jobs_in_domains"));
  return d;
}

topo::JobOutcome job_from(const json& j, const std::string& file, const std::string& where) {
  Fields f(j, file, where);
  topo::JobOutcome o;
  o.id = f.text("id");
  o.gpus = static_cast<int>(f.whole("gpus"));
  o.hosts = static_cast<int>(f.whole("hosts"));
  // Older results carry no ring.
  if (const json* ring = f.find("ring")) {
    if (!ring->is_array()) f.fail(f.name("ring"), "expected an array of host names");
    for (const json& h : *ring) {
      if (!h.is_string()) f.fail(f.name("ring"), "expected an array of host names");
      o.ring.push_back(h.get<std::string>());
    }
  }
  o.wait_s = f.number("wait_s");
  // Results of a real cluster's schedule, and older results, carry none.
  if (f.find("free_hosts_at_start")) {
    const long n = f.whole("free_hosts_at_start");
    if (n < 0 || n > std::numeric_limits<int>::max())
      f.fail(f.name("free_hosts_at_start"), "expected a count of hosts, 0 or more");
    o.free_hosts_at_start = static_cast<int>(n);
  }
  o.leaves = static_cast<int>(f.whole("leaves"));
  o.pods = static_cast<int>(f.whole("pods"));
  o.spines = static_cast<int>(f.whole("spines"));
  o.spine_ring_edges = static_cast<int>(f.whole("spine_ring_edges"));
  o.pod_ring_edges = static_cast<int>(f.whole("pod_ring_edges"));
  o.allreduce_slowdown = f.slowdown("allreduce_slowdown");
  o.allreduce_alone_slowdown = f.slowdown("allreduce_alone_slowdown");
  o.alltoall_slowdown = f.slowdown("alltoall_slowdown");
  // Results of fabrics without domains, and older ones, carry none.
  if (f.find("segment")) {
    o.segment = static_cast<int>(count_of(f, "segment"));
    o.segments_split = static_cast<int>(count_of(f, "segments_split"));
  }
  if (const json* cpu = f.find("cpu_only")) {
    if (!cpu->is_boolean()) f.fail(f.name("cpu_only"), "expected true or false");
    o.cpu_only = cpu->get<bool>();
  }
  // Older results carry no run or completion time.
  if (f.find("run_s")) o.run_s = f.number("run_s");
  if (f.find("jct_s")) o.jct_s = f.number("jct_s");
  // Older results carry no profile: every job was judged by its AllReduce.
  if (f.find("profile")) {
    auto p = topo::parse_profile(f.text("profile"));
    if (!p) f.fail(f.name("profile"), "expected allreduce, fsdp, alltoall, pipeline, mixed or none");
    o.profile = *p;
  } else if (o.hosts <= 1) {
    o.profile = topo::Profile::None;
  }
  return o;
}

topo::PolicyOutcome outcome_from(const json& j, const std::string& file, const std::string& where) {
  Fields f(j, file, where);
  topo::PolicyOutcome o;
  o.policy = f.text("policy");
  o.routing = f.find("routing") ? f.text("routing") : "adaptive";
  o.multi_host_jobs = static_cast<int>(f.whole("multi_host_jobs"));
  o.mean_allreduce_slowdown = f.slowdown("mean_allreduce_slowdown");
  o.p95_allreduce_slowdown = f.slowdown("p95_allreduce_slowdown");
  o.mean_alltoall_slowdown = f.slowdown("mean_alltoall_slowdown");
  o.mean_slowdown = f.find("mean_slowdown") ? f.slowdown("mean_slowdown") : o.mean_allreduce_slowdown;
  if (const json* profiles = f.find("profiles")) {
    if (!profiles->is_object()) f.fail(f.name("profiles"), "expected an object of summaries by profile");
    for (auto it = profiles->begin(); it != profiles->end(); ++it) {
      Fields p(it.value(), file, f.name("profiles." + it.key()));
      o.profiles[it.key()] = {static_cast<int>(p.whole("jobs")), p.slowdown("mean_slowdown"),
                              p.slowdown("p95_slowdown")};
    }
  }
  o.spine_ring_edges = f.whole("spine_ring_edges");
  o.pod_ring_edges = f.whole("pod_ring_edges");
  o.mean_leaves = f.number("mean_leaves");
  o.makespan_s = f.number("makespan_s");
  o.gpu_utilization = f.number("gpu_utilization");
  o.mean_wait_s = f.number("mean_wait_s");
  if (f.find("mean_jct_s")) o.mean_jct_s = f.number("mean_jct_s");
  if (f.find("p95_jct_s")) o.p95_jct_s = f.number("p95_jct_s");
  if (f.find("nvlink")) o.nvlink = nvlink_from(Fields(f.at("nvlink"), file, f.name("nvlink")));
  if (const json* rejected = f.find("rejected")) {
    if (!rejected->is_array()) f.fail(f.name("rejected"), "expected an array of job ids");
    for (size_t i = 0; i < rejected->size(); ++i) {
      if (!(*rejected)[i].is_string()) f.fail(fmt::format("{}[{}]", f.name("rejected"), i), "expected a job id string");
      o.rejected.push_back((*rejected)[i].get<std::string>());
    }
  }
  if (const json* scheduler = f.find("scheduler")) {
    if (!scheduler->is_object()) f.fail(f.name("scheduler"), "expected an object of named figures");
    for (auto it = scheduler->begin(); it != scheduler->end(); ++it) {
      if (it.value().is_null()) {  // written for a non-finite figure
        o.scheduler[it.key()] = kInfinity;
        continue;
      }
      if (!it.value().is_number()) f.fail(f.name("scheduler." + it.key()), "expected a number or null (infinite)");
      o.scheduler[it.key()] = it.value().get<double>();
    }
  }
  if (const json* jobs = f.find("jobs")) {
    if (!jobs->is_array()) f.fail(f.name("jobs"), "expected an array of jobs");
    o.jobs.reserve(jobs->size());
    for (size_t i = 0; i < jobs->size(); ++i)
      o.jobs.push_back(job_from((*jobs)[i], file, fmt::format("{}[{}]", f.name("jobs"), i)));
  }
  return o;
}

}  // namespace

json to_json(const topo::PolicyOutcome& o) {
  json jobs = json::array();
  for (const topo::JobOutcome& job : o.jobs) jobs.push_back(job_json(job));
  json scheduler = json::object();
  for (const auto& [key, value] : o.scheduler) scheduler[key] = std::isfinite(value) ? json(value) : json(nullptr);
  json profiles = json::object();
  for (const auto& [name, p] : o.profiles)
    profiles[name] = {
        {"jobs", p.jobs}, {"mean_slowdown", slowdown(p.mean_slowdown)}, {"p95_slowdown", slowdown(p.p95_slowdown)}};
  json out = {{"policy", o.policy},
              {"routing", o.routing},
              {"multi_host_jobs", o.multi_host_jobs},
              {"mean_slowdown", slowdown(o.mean_slowdown)},
              {"profiles", std::move(profiles)},
              {"mean_allreduce_slowdown", slowdown(o.mean_allreduce_slowdown)},
              {"p95_allreduce_slowdown", slowdown(o.p95_allreduce_slowdown)},
              {"mean_alltoall_slowdown", slowdown(o.mean_alltoall_slowdown)},
              {"spine_ring_edges", o.spine_ring_edges},
              {"pod_ring_edges", o.pod_ring_edges},
              {"mean_leaves", o.mean_leaves},
              {"makespan_s", o.makespan_s},
              {"gpu_utilization", o.gpu_utilization},
              {"mean_wait_s", o.mean_wait_s},
              {"mean_jct_s", o.mean_jct_s},
              {"p95_jct_s", o.p95_jct_s},
              {"rejected", o.rejected},
              {"scheduler", std::move(scheduler)},
              {"jobs", std::move(jobs)}};
  if (o.nvlink.domains > 0) out["nvlink"] = nvlink_json(o.nvlink);
  return out;
}

topo::PolicyOutcome outcome_from_json(const json& j, const std::string& file) { return outcome_from(j, file, ""); }

json to_json(const topo::Comparison& c) {
  json policies = json::object();
  for (const topo::PolicyOutcome& p : c.policies) policies[p.policy] = to_json(p);
  return {{"title", c.title}, {"fabric", c.fabric}, {"trace", c.trace}, {"policies", std::move(policies)}};
}

topo::Comparison comparison_from_json(const json& j, const std::string& file) {
  Fields f(j, file, "");
  topo::Comparison c;
  c.title = f.find("title") ? f.text("title") : "";
  c.fabric = f.text("fabric");
  c.trace = f.text("trace");
  const json& policies = f.at("policies");
  if (!policies.is_object() || policies.empty()) f.fail("policies", "expected an object of outcomes by policy name");
  for (auto it = policies.begin(); it != policies.end(); ++it) {
    std::string where = "policies." + it.key();
    json outcome = it.value();
    if (outcome.is_object() && !outcome.contains("policy")) outcome["policy"] = it.key();
    topo::PolicyOutcome p = outcome_from(outcome, file, where);
    if (p.policy != it.key())
      f.fail(where + ".policy", fmt::format("names '{}' but the outcome is filed under '{}'", p.policy, it.key()));
    c.policies.push_back(std::move(p));
  }
  // The baselines first, as the report reads: linear, tree, topo-aware.
  auto rank = [](const std::string& name) {
    return name == "linear" ? 0 : name == "tree" ? 1 : name == "block" ? 2 : name == "topo-aware" ? 3 : 4;
  };
  std::stable_sort(
      c.policies.begin(), c.policies.end(),
      [&](const topo::PolicyOutcome& a, const topo::PolicyOutcome& b) { return rank(a.policy) < rank(b.policy); });
  return c;
}

topo::Comparison read_comparison_file(const std::string& path, uint64_t max_bytes) {
  std::ifstream in(path);
  if (!in) throw topo::ParseError(path, 0, fmt::format("cannot read: {}", std::strerror(errno)));
  // Far above the 6 levels simulate's results reach.
  json j = read_json(in, path, max_bytes, 64, "results JSON nests 6");
  return comparison_from_json(j, path);
}

}  // namespace topoctl
