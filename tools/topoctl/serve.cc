// topoctl serve: a read-only web page over the database: the fabric picture
// (whole, a pod, a leaf; with the running jobs' load and a job's ring), lint
// findings, snapshots and their diffs, recent jobs with their placement,
// reasons and estimate against ideal, the simulation reports of a
// directory (--reports), and /metrics for Prometheus.
//
// Every request opens the database afresh, read-only (WAL: it sees the last
// committed snapshot while discover or the plugin writes the next one; it
// never creates, migrates or writes it) and waits out a writer's lock up to
// the busy timeout. A database that cannot be read is 503 and one line in
// the log. Snapshots never change, so loaded fabrics are kept by id. Only
// the routes below answer; everything else is 404. Every name is
// HTML-escaped; error pages name no server path.
//
// The transport (page_server.h) and the rules every request meets
// (page_guard.h: methods, bodies, Host, ranges, security headers) are
// apart from the pages.
#include <signal.h>

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "common/hostlist.h"
#include "db/error.h"
#include "db/placement_store.h"
#include "db/snapshot_store.h"
#include "fabric/diff.h"
#include "routing/routing_check.h"
#include "tools/topoctl/command.h"
#include "tools/topoctl/metrics.h"
#include "tools/topoctl/page_glance.h"
#include "tools/topoctl/page_guard.h"
#include "tools/topoctl/page_health.h"
#include "tools/topoctl/page_jobs.h"
#include "tools/topoctl/page_layout.h"
#include "tools/topoctl/page_request.h"
#include "tools/topoctl/page_server.h"
#include "tools/topoctl/report_files.h"
#include "tools/topoctl/view_input.h"
#include "tools/view/fabric_scene.h"
#include "tools/view/html.h"
#include "tools/view/jobs.h"
#include "tools/view/page_parts.h"
#include "tools/view/render.h"

namespace topoctl {
namespace {

using topo::view::html_escape;
using topo::view::url_encode;

// A request the page cannot answer: its HTTP status and a sentence.
struct PageError : std::runtime_error {
  int status;
  PageError(int s, const std::string& what) : std::runtime_error(what), status(s) {}
};

// Loaded fabrics by snapshot id; the few most recent are kept.
class FabricCache {
 public:
  static constexpr size_t kKept = 4;
  std::shared_ptr<const topo::Fabric> get(const topo::SnapshotStore& store, int64_t id) {
    {
      std::lock_guard hold(lock_);
      for (auto& [key, fabric] : kept_)
        if (key == id) return fabric;
    }
    auto fabric = std::make_shared<const topo::Fabric>(store.load(id));
    std::lock_guard hold(lock_);
    kept_.emplace_front(id, fabric);
    if (kept_.size() > kKept) kept_.pop_back();
    return fabric;
  }

 private:
  std::mutex lock_;
  std::list<std::pair<int64_t, std::shared_ptr<const topo::Fabric>>> kept_;
};

// Says once in the log that the database cannot be read, and once that it
// can again: a page asked for every second must not fill the log.
class DatabaseWatch {
 public:
  void unavailable(const std::string& why) {
    if (!down_.exchange(true)) fmt::print(stderr, "topoctl serve: the database cannot be read (503): {}\n", why);
  }
  void available() {
    if (down_.exchange(false)) fmt::print(stderr, "topoctl serve: the database can be read again\n");
  }

 private:
  std::atomic<bool> down_{false};
};

struct Site {
  std::string db_path;
  std::string reports_dir;               // empty: no reports served
  std::unique_ptr<ReportFiles> reports;  // with reports_dir
  std::string conf;                      // topo_aware.conf for /metrics' health thresholds
  FabricCache fabrics;
  DatabaseWatch database;
};

// The stores of a request: read-only, so the page never creates or changes
// the database.
topo::SnapshotStore snapshots(const Site& site) {
  return topo::SnapshotStore(site.db_path, {.access = topo::Access::ReadOnly});
}
topo::PlacementStore placements(const Site& site) {
  return topo::PlacementStore(site.db_path, {.access = topo::Access::ReadOnly});
}

std::string layout(std::string_view title, std::string_view body) { return page_layout(title, body); }

std::string param(const httplib::Request& req, const char* key, std::string fallback = "") {
  return req.has_param(key) ? req.get_param_value(key) : fallback;
}

int64_t resolve(const topo::SnapshotStore& store, const std::string& reference) {
  try {
    return store.resolve(reference);
  } catch (const topo::DbError& e) {
    if (e.kind() != topo::DbErrorKind::UnknownSnapshot) throw;
    throw PageError(404, e.detail());
  }
}

uint32_t job_id(const std::string& text) {
  std::optional<uint32_t> id = job_number(text);
  if (!id) throw PageError(400, fmt::format("'{}' is not a job id", text));
  return *id;
}

// The fabric picture a request asks for: ?snapshot=&pod=&leaf=&job=&load=
struct PictureAsk {
  int64_t snapshot = 0;
  std::optional<int> pod;
  std::string leaf;
  std::optional<uint32_t> job;
  bool load = true;
};

PictureAsk picture_ask(const httplib::Request& req, const topo::SnapshotStore& store) {
  PictureAsk ask;
  ask.snapshot = resolve(store, param(req, "snapshot", "latest"));
  std::string pod = param(req, "pod");
  if (!pod.empty()) {
    ask.pod = pod_number(pod);
    if (!ask.pod) throw PageError(400, fmt::format("pod '{}' is not a number", pod));
  }
  ask.leaf = param(req, "leaf");
  if (req.has_param("job")) ask.job = job_id(param(req, "job"));
  ask.load = param(req, "load", "1") != "0";
  return ask;
}

std::string picture_query(const PictureAsk& a) {
  std::string q = fmt::format("snapshot={}", a.snapshot);
  if (a.pod) q += fmt::format("&pod={}", *a.pod);
  if (!a.leaf.empty()) q += "&leaf=" + url_encode(a.leaf);
  if (a.job) q += fmt::format("&job={}", *a.job);
  if (!a.load) q += "&load=0";
  return q;
}

std::string draw(Site& site, const topo::SnapshotStore& store, const PictureAsk& ask) {
  auto fabric = site.fabrics.get(store, ask.snapshot);
  std::vector<uint32_t> wanted;
  if (ask.job) wanted.push_back(*ask.job);
  std::vector<topo::PlacementRecord> records;
  try {
    records = running_records(site.db_path, ask.snapshot, {}, wanted, topo::Access::ReadOnly);
  } catch (const std::invalid_argument&) {
    // Its message names the database file.
    throw PageError(404, fmt::format("job {}: no placement recorded", ask.job.value_or(0)));
  }
  topo::view::JobsOnFabric jobs = topo::view::jobs_on_fabric(*fabric, records, ask.load);
  topo::view::FabricPicture p;
  topo::SnapshotInfo info = store.info(ask.snapshot);
  p.title = fmt::format("snapshot {} ({}), {}", info.id, info.taken_at, info.source);
  p.cable_gbps = std::move(jobs.cable_gbps);
  p.jobs = std::move(jobs.jobs);
  if (ask.job) p.rings.push_back(std::to_string(*ask.job));
  p.pod = ask.pod;
  // Fitted to the window: past 16 leaves side by side the boxes would be
  // too small to read, so leaves wrap into rows of 16.
  p.leaves_in_one_row = 16;
  // Pod and leaf boxes open their own picture, keeping the job and load.
  p.zoom_link = fmt::format("/fabric?{}&", picture_query({ask.snapshot, std::nullopt, "", ask.job, ask.load}));
  if (!ask.leaf.empty()) {
    try {
      p.leaf = find_leaf(*fabric, ask.leaf);
    } catch (const std::invalid_argument& e) {
      throw PageError(404, e.what());
    }
  }
  try {
    topo::view::Scene scene = topo::view::fabric_scene(*fabric, p);
    for (const std::string& s : jobs.skipped) scene.legend.push_back(s);
    return topo::view::render(scene, topo::view::Format::Svg);
  } catch (const std::invalid_argument& e) {
    throw PageError(404, e.what());
  }
}

std::string zoom_links(const topo::Fabric& f, const PictureAsk& ask) {
  std::string out = "<p>Zoom: <a href=\"/fabric?snapshot=" + std::to_string(ask.snapshot) + "\">whole fabric</a>";
  std::set<int> pods;
  for (topo::NodeId sw : f.switches())
    if (f.node(sw).level == topo::Level::Leaf && f.node(sw).pod >= 0) pods.insert(f.node(sw).pod);
  if (pods.size() > 1)
    for (int pod : pods)
      out += fmt::format(" | <a href=\"/fabric?snapshot={}&pod={}\">pod {}</a>", ask.snapshot, pod, pod);
  out += "</p><p>Leaves:";
  for (topo::NodeId sw : f.switches()) {
    const topo::Node& n = f.node(sw);
    if (n.level != topo::Level::Leaf) continue;
    if (ask.pod && n.pod != *ask.pod) continue;
    out += fmt::format(" <a class=\"leaf-link\" href=\"/fabric?snapshot={}&leaf={}\">{}</a>", ask.snapshot,
                       url_encode(n.name), html_escape(n.name));
  }
  return out + "</p>";
}

// The picture with its zoom links and legend, fitted to the page width.
std::string picture_section(Site& site, const topo::SnapshotStore& store, const PictureAsk& ask,
                            const topo::Fabric& fabric) {
  std::string body = zoom_links(fabric, ask);
  body +=
      fmt::format("<p><a href=\"/fabric.svg?{}\">picture alone (SVG)</a> | {}</p>\n", picture_query(ask),
                  ask.load ? fmt::format("<a href=\"/fabric?{}&amp;load=0\">without load</a>", picture_query(ask))
                           : fmt::format("<a href=\"/fabric?{}\">with load</a>",
                                         picture_query(PictureAsk{ask.snapshot, ask.pod, ask.leaf, ask.job, true})));
  body += topo::view::load_legend_html();
  body += "<div class=\"picture\" id=\"picture\">" + topo::view::fitted_svg(draw(site, store, ask)) + "</div>\n";
  return body;
}

std::string fabric_page(Site& site, const httplib::Request& req) {
  topo::SnapshotStore store = snapshots(site);
  if (!store.latest()) return layout("fabric", "<p>No snapshot yet: run <code>topoctl discover</code>.</p>");
  PictureAsk ask = picture_ask(req, store);
  auto fabric = site.fabrics.get(store, ask.snapshot);
  topo::SnapshotInfo info = store.info(ask.snapshot);
  const topo::FabricSummary& s = fabric->summary();
  using topo::view::count_of;
  std::string body = fmt::format(
      "<p>Snapshot {} taken {} from <code>{}</code>: {}, {}, {}, {}, {}, {}, routing {}, <a "
      "href=\"/lint?snapshot={}\">{}</a>.</p>\n",
      info.id, html_escape(info.taken_at), html_escape(info.source), count_of(s.hosts, "host"),
      count_of(s.leaves, "leaf", "leaves"), count_of(s.spines, "spine"), count_of(s.cores, "core"),
      count_of(s.links, "cable"), count_of(s.pods, "pod"), html_escape(info.routing), info.id,
      count_of(static_cast<long long>(fabric->faults().size()), "fault"));
  body += picture_section(site, store, ask, *fabric);
  return layout(ask.leaf.empty() ? (ask.pod ? fmt::format("pod {}", *ask.pod) : "fabric") : "leaf " + ask.leaf, body);
}

// Seconds since the epoch, now.
double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The first screen: the cards, then the whole fabric with the running
// jobs' load.
std::string home_page(Site& site, const httplib::Request& req) {
  topo::SnapshotStore store = snapshots(site);
  if (!store.latest()) return layout("overview", "<p>No snapshot yet: run <code>topoctl discover</code>.</p>");
  PictureAsk ask = picture_ask(req, store);
  auto fabric = site.fabrics.get(store, ask.snapshot);
  Glance g;
  g.fabric = fabric.get();
  g.info = store.info(ask.snapshot);
  g.now_s = now_seconds();
  std::vector<topo::SnapshotInfo> all = store.list();
  for (const topo::SnapshotInfo& s : all)
    if (s.id < ask.snapshot) g.previous = s.id;
  if (g.previous) g.changes = topo::diff(*site.fabrics.get(store, *g.previous), *fabric);
  g.running = running_records(site.db_path, ask.snapshot, {}, {}, topo::Access::ReadOnly);
  g.routing_findings = topo::check_routing(*fabric).size();
  const topo::EngineConfig config = site_config(site.conf);
  HealthTable health =
      health_table(site.db_path, ask.snapshot, *fabric, config.health, config.nic, topo::Access::ReadOnly, 2);
  if (health.port_collections >= 2 || health.nic_collections >= 2) {
    g.rated = health.rows.size();
    g.sick_rated = static_cast<size_t>(
        std::count_if(health.rows.begin(), health.rows.end(), [](const HealthRow& r) { return r.sick; }));
  }
  std::string body = topo::view::cards_html(glance_cards(g));
  body += fmt::format("<h2>Fabric, snapshot {}</h2>\n", ask.snapshot);
  body += picture_section(site, store, ask, *fabric);
  return layout("overview", body);
}

std::string health_page(Site& site, const httplib::Request& req) {
  topo::SnapshotStore store = snapshots(site);
  if (!store.latest()) return layout("health", "<p>No snapshot yet.</p>");
  int64_t id = resolve(store, param(req, "snapshot", "latest"));
  auto fabric = site.fabrics.get(store, id);
  const topo::EngineConfig config = site_config(site.conf);
  HealthTable t = health_table(site.db_path, id, *fabric, config.health, config.nic, topo::Access::ReadOnly);
  return layout(fmt::format("health, snapshot {}", id), health_html(t));
}

std::string lint_page(Site& site, const httplib::Request& req) {
  topo::SnapshotStore store = snapshots(site);
  if (!store.latest()) return layout("lint", "<p>No snapshot yet.</p>");
  int64_t id = resolve(store, param(req, "snapshot", "latest"));
  auto fabric = site.fabrics.get(store, id);
  std::vector<topo::RoutingFinding> routing = topo::check_routing(*fabric);
  std::string body =
      fmt::format("<p>Snapshot {}: {} faults, {} routing findings (routing {}).</p>\n", id, fabric->faults().size(),
                  routing.size(), html_escape(topo::routing_name(fabric->routing())));
  body += "<table id=\"faults\"><tr><th>kind</th><th>subject</th><th>detail</th></tr>\n";
  for (const topo::Fault& f : fabric->faults())
    body +=
        fmt::format("<tr class=\"fault {}\"><td>{}</td><td>{}</td><td>{}</td></tr>\n", html_escape(topo::name(f.kind)),
                    html_escape(topo::name(f.kind)), html_escape(f.subject), html_escape(f.detail));
  body += "</table>\n<h2>Routing</h2><table id=\"routing\"><tr><th>kind</th><th>subject</th><th>detail</th></tr>\n";
  for (const topo::RoutingFinding& r : routing)
    body += fmt::format("<tr class=\"routing\"><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        html_escape(topo::name(r.kind)), html_escape(r.subject), html_escape(r.detail));
  return layout("lint", body + "</table>\n");
}

std::string snapshots_page(Site& site) {
  topo::SnapshotStore store = snapshots(site);
  std::vector<topo::SnapshotInfo> all = store.list();
  std::string body =
      "<table id=\"snapshots\"><tr><th>id</th><th>taken</th><th>source</th><th>hosts</th><th>switches</th>"
      "<th>faults</th><th>routing</th><th></th></tr>\n";
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    const topo::SnapshotInfo& s = *it;
    std::string diff = it + 1 != all.rend() ? fmt::format("<a href=\"/diff?from={}&to={}\">diff with {}</a>",
                                                          (it + 1)->id, s.id, (it + 1)->id)
                                            : "";
    body += fmt::format(
        "<tr><td><a href=\"/fabric?snapshot={0}\">{0}</a></td><td>{1}</td><td>{2}</td><td>{3}</td><td>{4}</td>"
        "<td><a href=\"/lint?snapshot={0}\">{5}</a></td><td>{6}</td><td>{7}</td></tr>\n",
        s.id, html_escape(s.taken_at), html_escape(s.source), s.summary.hosts, s.switches, s.faults,
        html_escape(s.routing), diff);
  }
  return layout("snapshots", body + "</table>\n");
}

std::string diff_page(Site& site, const httplib::Request& req) {
  topo::SnapshotStore store = snapshots(site);
  int64_t from = resolve(store, param(req, "from", "-2")), to = resolve(store, param(req, "to", "latest"));
  auto before = site.fabrics.get(store, from), after = site.fabrics.get(store, to);
  std::vector<topo::FabricChange> changes = topo::diff(*before, *after);
  std::string body = fmt::format("<p>{} changes from snapshot {} to {}.</p>\n", changes.size(), from, to);
  body += "<table id=\"changes\"><tr><th>change</th><th>subject</th><th>detail</th></tr>\n";
  for (const topo::FabricChange& c : changes)
    body += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", html_escape(topo::name(c.kind)),
                        html_escape(c.subject), html_escape(c.detail));
  return layout(fmt::format("diff {} to {}", from, to), body + "</table>\n");
}

std::string slowdown_cell(const topo::PlacementRecord& r) {
  if (r.ideal_s <= 0) return "";
  return fmt::format("{:.3f} ms / {:.3f} ms = {:.2f}x", r.estimate_s * 1e3, r.ideal_s * 1e3, r.estimate_s / r.ideal_s);
}

std::string jobs_page(Site& site, const httplib::Request& req) {
  std::vector<topo::PlacementRecord> recent = placements(site).recent(200);
  topo::SnapshotStore store = snapshots(site);
  std::optional<int64_t> latest = store.latest();
  std::set<uint32_t> running;
  if (latest)
    for (const topo::PlacementRecord& r : running_records(site.db_path, *latest, {}, {}, topo::Access::ReadOnly))
      running.insert(r.job_id);
  std::vector<JobRow> rows;
  for (const topo::PlacementRecord& r : recent) {
    std::shared_ptr<const topo::Fabric> fabric;
    if (r.snapshot_id) {
      try {
        fabric = site.fabrics.get(store, *r.snapshot_id);
      } catch (const topo::DbError& e) {
        if (e.kind() != topo::DbErrorKind::UnknownSnapshot) throw;
      }
    }
    rows.push_back(job_row(r, fabric.get(), running.count(r.job_id) > 0));
  }
  topo::view::SortAsk sort = job_sort(param(req, "sort"), param(req, "order"));
  sort_jobs(rows, sort);
  return layout("jobs", jobs_html(rows, sort));
}

std::string job_page(Site& site, const httplib::Request& req) {
  uint32_t id = job_id(req.matches[1]);
  std::vector<topo::PlacementRecord> history = placements(site).history(id);
  if (history.empty()) throw PageError(404, fmt::format("job {}: no placement recorded", id));
  const topo::PlacementRecord& r = history.back();
  std::string body = fmt::format(
      "<table id=\"placement\"><tr><th>placed</th><td>{}</td></tr><tr><th>snapshot</th><td>{}</td></tr>"
      "<tr><th>hosts</th><td>{} ({})</td></tr><tr><th>ring order</th><td id=\"ring-order\">{}</td></tr>"
      "<tr><th>profile</th><td>{}</td></tr><tr><th>estimate / ideal</th><td>{}</td></tr>"
      "<tr><th>choice</th><td>{}</td></tr>{}<tr><th>placements</th><td>{}</td></tr></table>\n",
      html_escape(r.placed_at), r.snapshot_id ? std::to_string(*r.snapshot_id) : "-",
      html_escape(topo::compress_hostlist(r.hosts)), r.hosts.size(),
      html_escape(fmt::format("{}", fmt::join(r.ring_order, " -> "))), html_escape(r.profile), slowdown_cell(r),
      r.fallback ? "cons_tres's own: " + html_escape(r.fallback_why) : "topo-aware's",
      r.deferred_why.empty()
          ? ""
          : "<tr><th>held back</th><td id=\"deferred\">" + html_escape(r.deferred_why) + "</td></tr>",
      history.size());
  body += "<h2>Reasons</h2><ul id=\"reasons\">";
  for (const std::string& reason : r.reasons) body += "<li>" + html_escape(reason) + "</li>";
  body += "</ul>\n";
  topo::SnapshotStore store = snapshots(site);
  if (r.snapshot_id) {
    PictureAsk ask;
    ask.snapshot = resolve(store, std::to_string(*r.snapshot_id));
    ask.job = id;
    body += fmt::format("<h2>Its ring on snapshot {}</h2><p><a href=\"/fabric?{}\">open in the fabric view</a></p>",
                        ask.snapshot, picture_query(ask));
    body += "<div class=\"picture\" id=\"picture\">" + topo::view::fitted_svg(draw(site, store, ask)) + "</div>\n";
  }
  return layout(fmt::format("job {}", id), body);
}

// Simulation reports: the directories `topoctl report --out` wrote, under
// --reports (report_files.h: read through the directory's descriptor, no
// link followed). Runs are not stored in the database: a report is files
// that simulate and report already write, and serving them needs no schema.
const ReportFiles& reports(const Site& site) {
  if (!site.reports) throw PageError(404, "no reports: serve was started without --reports DIR");
  return *site.reports;
}

ReportFiles::Report report_named(const Site& site, const std::string& name) {
  std::optional<ReportFiles::Report> r = reports(site).find(name);
  if (!r) throw PageError(404, fmt::format("no report named '{}'", name));
  return *r;
}

std::string reports_page(Site& site) {
  if (site.reports_dir.empty())
    return layout("reports",
                  "<p>No reports: start <code>topoctl serve --reports DIR</code> on the directories "
                  "<code>topoctl report --out</code> writes.</p>");
  std::string body = fmt::format(
      "<p>Simulation reports under <code>{}</code>.</p>\n<table id=\"reports\"><tr><th>report</th>"
      "<th>written</th><th>pictures</th></tr>\n",
      html_escape(site.reports_dir));
  for (const ReportFiles::Report& r : reports(site).list()) {
    std::string written = fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", fmt::gmtime(static_cast<std::time_t>(r.written)));
    body +=
        fmt::format("<tr><td><a class=\"report-link\" href=\"/report/{0}\">{1}</a></td><td>{2}</td><td>{3}</td></tr>\n",
                    url_encode(r.name), html_escape(r.name), written, r.pictures.size());
  }
  return layout("reports", body + "</table>\n");
}

std::string report_page(Site& site, const httplib::Request& req) {
  std::string name = req.matches[1];
  ReportFiles::Report report = report_named(site, name);
  std::optional<std::string> text = reports(site).read(name, "report.md");
  if (!text) throw PageError(404, "report.md: cannot read");
  std::string body = "<p><a href=\"/reports\">all reports</a></p>\n";
  for (const std::string& picture : report.pictures)
    // Fitted to the page; a click opens it at full size.
    body += fmt::format(
        "<figure><a href=\"/report/{0}/{1}\"><img class=\"report-picture\" src=\"/report/{0}/{1}\" "
        "alt=\"{2}\" style=\"max-width:100%\"></a><figcaption>{2}</figcaption></figure>\n",
        url_encode(name), url_encode(picture), html_escape(picture));
  body += "<pre id=\"report\">" + html_escape(*text) + "</pre>\n";
  return layout("report " + name, body);
}

void error_page(httplib::Response& res, int status, std::string_view title, std::string_view sentence) {
  res.status = status;
  res.set_content(layout(title, "<p class=\"bad\">" + html_escape(sentence) + "</p>"), "text/html; charset=utf-8");
}

// Runs a page, turning what went wrong into a status and a short page that
// names no server path (what the log gets may). `database`: the page reads
// the database, whose state the log follows.
void answer(const httplib::Request& req, httplib::Response& res, const std::function<std::string()>& page,
            DatabaseWatch* database, const char* type = "text/html; charset=utf-8") {
  try {
    res.set_content(page(), type);
    if (database) database->available();
  } catch (const PageError& e) {
    error_page(res, e.status, e.status == 404 ? "not found" : "bad request", e.what());
  } catch (const topo::DbError& e) {
    if (e.kind() == topo::DbErrorKind::UnknownSnapshot) return error_page(res, 404, "not found", e.detail());
    if (e.kind() == topo::DbErrorKind::Inconsistent) {
      fmt::print(stderr, "topoctl serve: {} {}: {}\n", req.method, req.path, e.what());
      return error_page(res, 500, "error", "a stored snapshot does not read back; the server's log says more");
    }
    if (database) database->unavailable(e.what());
    res.set_header("Retry-After", "10");
    error_page(res, 503, "unavailable", "the database cannot be read now; the server's log says why");
  } catch (const std::exception& e) {
    fmt::print(stderr, "topoctl serve: {} {}: {}\n", req.method, req.path, e.what());
    error_page(res, 500, "error", "internal error; the server's log says more");
  }
}

std::pair<std::string, int> parse_listen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw std::invalid_argument(fmt::format("--listen {}: expected HOST:PORT, e.g. 127.0.0.1:8650", listen));
  std::string host = listen.substr(0, colon), port = listen.substr(colon + 1);
  if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535)
    throw std::invalid_argument(fmt::format("--listen {}: '{}' is not a port (0-65535)", listen, port));
  return {host, std::stoi(port)};
}

bool loopback(const std::string& host) { return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0; }

const char* const kSvg = "image/svg+xml";

// Every route of the page; any other path is 404 by the error handler.
void add_routes(httplib::Server& server, const std::shared_ptr<Site>& site) {
  // A page of the database, or of the reports directory (no database).
  auto html = [site](auto page, bool of_database = true) {
    return [site, page, of_database](const httplib::Request& req, httplib::Response& res) {
      answer(
          req, res, [&] { return page(*site, req); }, of_database ? &site->database : nullptr);
    };
  };
  server.Get("/", html([](Site& s, const httplib::Request& r) { return home_page(s, r); }));
  server.Get("/health", html([](Site& s, const httplib::Request& r) { return health_page(s, r); }));
  server.Get("/page.js", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(topo::view::page_script()), "text/javascript; charset=utf-8");
  });
  server.Get("/fabric", html([](Site& s, const httplib::Request& r) { return fabric_page(s, r); }));
  server.Get("/lint", html([](Site& s, const httplib::Request& r) { return lint_page(s, r); }));
  server.Get("/snapshots", html([](Site& s, const httplib::Request&) { return snapshots_page(s); }));
  server.Get("/diff", html([](Site& s, const httplib::Request& r) { return diff_page(s, r); }));
  server.Get("/jobs", html([](Site& s, const httplib::Request& r) { return jobs_page(s, r); }));
  server.Get(R"(/job/(\d+))", html([](Site& s, const httplib::Request& r) { return job_page(s, r); }));
  server.Get("/reports", html([](Site& s, const httplib::Request&) { return reports_page(s); }, false));
  server.Get(R"(/report/([A-Za-z0-9_][A-Za-z0-9._-]*)/?)",
             html([](Site& s, const httplib::Request& r) { return report_page(s, r); }, false));
  server.Get(R"(/report/([A-Za-z0-9_][A-Za-z0-9._-]*)/([A-Za-z0-9_][A-Za-z0-9._-]*\.svg))",
             [site](const httplib::Request& req, httplib::Response& res) {
               answer(
                   req, res,
                   [&] {
                     std::string picture = req.matches[2];
                     std::optional<std::string> svg = reports(*site).read(req.matches[1], picture);
                     if (!svg) throw PageError(404, fmt::format("no picture {}", picture));
                     return *svg;
                   },
                   nullptr, kSvg);
             });
  server.Get("/fabric.svg", [site](const httplib::Request& req, httplib::Response& res) {
    answer(
        req, res,
        [&] {
          topo::SnapshotStore store = snapshots(*site);
          return draw(*site, store, picture_ask(req, store));
        },
        &site->database, kSvg);
  });
  server.Get("/metrics", [site](const httplib::Request& req, httplib::Response& res) {
    answer(
        req, res,
        [&] {
          topo::SnapshotStore store = snapshots(*site);
          std::optional<int64_t> latest = store.latest();
          std::shared_ptr<const topo::Fabric> fabric = latest ? site->fabrics.get(store, *latest) : nullptr;
          return metrics_text(site->db_path, fabric.get(), site->conf, topo::Access::ReadOnly);
        },
        &site->database, "text/plain; version=0.0.4; charset=utf-8");
  });
  server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    res.set_content(
        layout(fmt::format("{}", res.status), fmt::format("<p class=\"bad\">{} {}: not a page of this site.</p>",
                                                          html_escape(req.method), html_escape(req.path))),
        "text/html; charset=utf-8");
  });
}

}  // namespace

Run add_serve(CLI::App& app) {
  struct Options {
    std::string db_path = default_db_path();
    std::string listen = "127.0.0.1:8650";
    std::string reports;
    std::string conf;
    std::vector<std::string> allow_hosts;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("serve", "serve a read-only web page of the fabric, its faults, snapshots and jobs");
  add_db_option(*cmd, opts->db_path);
  add_conf_option(*cmd, opts->conf);
  cmd->add_option("--listen", opts->listen, "HOST:PORT to listen on (port 0: any free port, printed)")
      ->capture_default_str();
  cmd->add_option("--reports", opts->reports,
                  "a directory of simulation reports (`topoctl report --out` directories: itself or its "
                  "subdirectories) to show under /reports")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--allow-host", opts->allow_hosts,
                  "a name the Host header may give besides the --listen address and loopback names, e.g. the name "
                  "a reverse proxy forwards (repeatable); other names get 421");
  cmd->footer(
      "Routes: / (overview cards and the fabric) and /fabric (?snapshot=&pod=&leaf=&job=&load=0), /fabric.svg, "
      "/lint, /snapshots, /diff?from=&to=, /jobs (?sort=&order=), /job/ID, /health, /page.js, /reports, /report/NAME, "
      "/metrics. GET and HEAD only. The database is opened read-only. The "
      "page has no login: keep it on loopback or behind a proxy that has one (docs/page.md). "
      "Stops on SIGINT or SIGTERM.");
  return [opts] {
    auto [host, port] = parse_listen(opts->listen);
    require_database(opts->db_path);
    // A file that is not our database at this schema is refused now rather
    // than on every page; read-only, like every page.
    { topo::SnapshotStore check(opts->db_path, {.access = topo::Access::ReadOnly}); }
    site_config(opts->conf);  // a bad topo_aware.conf line is an error now, not on every /metrics
    auto site = std::make_shared<Site>();
    site->db_path = opts->db_path;
    site->reports_dir = opts->reports;
    if (!opts->reports.empty()) site->reports = std::make_unique<ReportFiles>(opts->reports);
    site->conf = opts->conf;

    // Signals are taken by one thread that stops the server; the server's
    // threads, started after this, inherit the mask.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    PageApp app;
    add_routes(app, site);
    guard(app, HostPolicy(host, opts->allow_hosts));
    PageServer server(app, TransportLimits{});
    int bound = -1;
    try {
      bound = server.bind(host, port);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(fmt::format("--listen {}: cannot listen there: {}", opts->listen, e.what()));
    }
    if (!loopback(host))
      fmt::print(stderr, "topoctl serve: listening on {}, beyond this machine; the page has no login\n", host);
    fmt::print("listening on http://{}:{}/ (database {})\n",
               host.find(':') != std::string::npos ? "[" + host + "]" : host, bound, opts->db_path);
    std::fflush(stdout);

    std::thread stopper([&server, stop_signals] {
      int sig = 0;
      sigwait(&stop_signals, &sig);
      server.stop();
    });
    bool ok = server.run();
    // run returned by itself (not by a signal): wake the stopper.
    pthread_kill(stopper.native_handle(), SIGTERM);
    stopper.join();
    return ok ? kOk : kError;
  };
}

}  // namespace topoctl
