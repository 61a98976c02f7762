#include "tools/topoctl/page_jobs.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/hostlist.h"
#include "tools/topoctl/page_glance.h"
#include "tools/view/html.h"

namespace topoctl {
namespace {

using topo::view::html_escape;

// The first leaf of a host (a railed host is on several: its first rail's).
std::optional<topo::NodeId> first_leaf(const topo::Fabric& f, const std::string& host) {
  std::optional<topo::NodeId> h = f.find_host(host);
  if (!h) return std::nullopt;
  std::vector<topo::NodeId> leaves = f.leaves_of(*h);
  if (leaves.empty()) return std::nullopt;
  return leaves.front();
}

// Why the engine held the job back before it started (what Slurm was
// told), else a deferral noted among the reasons, when any.
std::string deferral_of(const topo::PlacementRecord& r) {
  if (!r.deferred_why.empty()) return r.deferred_why;
  for (const std::string& reason : r.reasons)
    if (reason.find("defer") != std::string::npos) return reason;
  return "";
}

// Why not topo-aware's own choice, or not at once: cons_tres's reason when
// it fell back, then the engine's deferral.
std::string held_text(const topo::PlacementRecord& r) {
  std::string held = r.fallback ? "cons_tres: " + r.fallback_why : "";
  const std::string deferral = r.fallback && r.deferred_why.empty() ? "" : deferral_of(r);
  if (!deferral.empty()) held += (held.empty() ? "" : "; ") + deferral;
  return held;
}

// The value a column sorts by, as page.js reads it from data-KEY.
std::string sort_value(const JobRow& row, const std::string& key) {
  const topo::PlacementRecord& r = row.record;
  if (key == "job") return std::to_string(r.job_id);
  if (key == "state") return row.running ? "running" : "recent";
  if (key == "placed") return r.placed_at;
  if (key == "hosts") return std::to_string(r.hosts.size());
  if (key == "leaves") return row.leaves ? std::to_string(*row.leaves) : "";
  if (key == "crossings") return row.crossings ? std::to_string(*row.crossings) : "";
  if (key == "slowdown") return row.slowdown ? fmt::format("{:.4f}", *row.slowdown) : "";
  if (key == "held") return row.held;
  return "";
}

}  // namespace

JobRow job_row(const topo::PlacementRecord& record, const topo::Fabric* fabric, bool running) {
  JobRow row{record, running, std::nullopt, std::nullopt, std::nullopt, ""};
  if (record.ideal_s > 0) row.slowdown = record.estimate_s / record.ideal_s;
  row.held = held_text(record);
  if (!fabric) return row;
  std::set<topo::NodeId> leaves;
  for (const std::string& host : record.hosts)
    if (std::optional<topo::NodeId> leaf = first_leaf(*fabric, host)) leaves.insert(*leaf);
  row.leaves = static_cast<int>(leaves.size());
  const std::vector<std::string>& ring = record.ring_order.empty() ? record.hosts : record.ring_order;
  int crossings = 0;
  for (size_t i = 0; ring.size() > 1 && i < ring.size(); ++i)
    if (first_leaf(*fabric, ring[i]) != first_leaf(*fabric, ring[(i + 1) % ring.size()])) ++crossings;
  row.crossings = crossings;
  return row;
}

const std::vector<topo::view::Column>& job_columns() {
  static const std::vector<topo::view::Column> columns = {{"job", "job", true},
                                                          {"state", "state", false},
                                                          {"placed", "placed", false},
                                                          {"hosts", "hosts", true},
                                                          {"leaves", "leaves", true},
                                                          {"crossings", "ring crossings", true},
                                                          {"slowdown", "estimate / ideal", true},
                                                          {"held", "fallback or deferral", false}};
  return columns;
}

topo::view::SortAsk job_sort(const std::string& key, const std::string& order) {
  for (const topo::view::Column& c : job_columns())
    if (c.key == key) return {key, order == "desc"};
  return {"placed", true};
}

void sort_jobs(std::vector<JobRow>& rows, const topo::view::SortAsk& sort) {
  bool numeric = false;
  for (const topo::view::Column& c : job_columns())
    if (c.key == sort.key) numeric = c.numeric;
  std::stable_sort(rows.begin(), rows.end(), [&](const JobRow& a, const JobRow& b) {
    std::string x = sort_value(a, sort.key), y = sort_value(b, sort.key);
    bool less = numeric ? std::atof(x.c_str()) < std::atof(y.c_str()) : x < y;
    bool more = numeric ? std::atof(y.c_str()) < std::atof(x.c_str()) : y < x;
    return sort.descending ? more : less;
  });
}

std::string jobs_html(const std::vector<JobRow>& rows, const topo::view::SortAsk& sort) {
  std::string out =
      "<p class=\"muted\">The newest placement of each of the most recent jobs; running: placed by topo-aware on "
      "the latest snapshot (the database keeps no job ends: Slurm says which still run). A job the engine held back "
      "(DeferAbove=, an NVLink domain to wait for) shows why once it starts; one still held back has no placement "
      "yet: its reason is in its AdminComment.</p>\n"
      "<div class=\"wide\"><table id=\"jobs\" class=\"sortable\">";
  out += topo::view::sortable_head(job_columns(), sort, "/jobs?");
  out += "<tbody>\n";
  for (const JobRow& row : rows) {
    const topo::PlacementRecord& r = row.record;
    std::string data;
    for (const topo::view::Column& c : job_columns())
      data += fmt::format(" data-{}=\"{}\"", c.key, html_escape(sort_value(row, c.key)));
    std::string slow = row.slowdown ? fmt::format("{:.2f}x", *row.slowdown) : "";
    out += fmt::format(
        "<tr{}><td><a href=\"/job/{}\">{}</a></td><td>{}</td><td>{}</td><td>{} ({})</td><td>{}</td><td>{}</td>"
        "<td{}>{}</td><td>{}</td></tr>\n",
        data, r.job_id, r.job_id, row.running ? "running" : "recent", html_escape(r.placed_at),
        html_escape(topo::compress_hostlist(r.hosts)), r.hosts.size(), row.leaves ? std::to_string(*row.leaves) : "-",
        row.crossings ? std::to_string(*row.crossings) : "-",
        row.slowdown && *row.slowdown > kSlowJob ? " class=\"bad\"" : "", slow, html_escape(row.held));
  }
  return out + "</tbody></table></div>\n";
}

}  // namespace topoctl
