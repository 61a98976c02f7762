// topoctl serve: a read-only web page over the database: the fabric picture
// (whole, a pod, a leaf; with the running jobs' load and a job's ring), lint
// findings, snapshots and their diffs, recent jobs with their placement,
// reasons and estimate against ideal, the simulation reports of a
// directory (--reports), and /metrics for Prometheus.
//
// Every request opens the database afresh (WAL: it sees the last committed
// snapshot while discover or the plugin writes the next one) and waits out
// a writer's lock up to the busy timeout. Snapshots never change, so loaded
// fabrics are kept by id. Only the routes below answer; everything else is
// 404. Every name is HTML-escaped.
#include <signal.h>
#include <sys/stat.h>

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
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
#include "tools/topoctl/view_input.h"
#include "tools/view/fabric_scene.h"
#include "tools/view/html.h"
#include "tools/view/jobs.h"
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

struct Site {
  std::string db_path;
  std::string reports_dir;  // empty: no reports served
  std::string conf;         // topo_aware.conf for /metrics' health thresholds
  FabricCache fabrics;
};

std::string layout(std::string_view title, std::string_view body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0} - topo-aware</title>\n"
      "<style>body{{font-family:sans-serif;margin:1em 2em;color:#222}} nav a{{margin-right:1em}} "
      "table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:2px 6px;text-align:left;font-size:13px}} "
      ".picture{{overflow:auto;border:1px solid #ddd;max-height:85vh}} .bad{{color:#b00}} "
      ".muted{{color:#666}}</style>\n"
      "</head><body>\n<nav><a href=\"/\">fabric</a><a href=\"/lint\">lint</a><a href=\"/snapshots\">snapshots</a>"
      "<a href=\"/jobs\">jobs</a><a href=\"/reports\">reports</a><a "
      "href=\"/metrics\">metrics</a></nav>\n<h1>{0}</h1>\n{1}\n</body></html>\n",
      html_escape(title), body);
}

std::string param(const httplib::Request& req, const char* key, std::string fallback = "") {
  return req.has_param(key) ? req.get_param_value(key) : fallback;
}

int64_t resolve(const topo::SnapshotStore& store, const std::string& reference) {
  try {
    return store.resolve(reference);
  } catch (const topo::DbError& e) {
    throw PageError(404, e.what());
  }
}

uint32_t job_number(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    throw PageError(400, fmt::format("'{}' is not a job id", text));
  return static_cast<uint32_t>(std::stoul(text));
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
    if (pod.size() > 6 || pod.find_first_not_of("0123456789") != std::string::npos)
      throw PageError(400, fmt::format("pod '{}' is not a number", pod));
    ask.pod = std::stoi(pod);
  }
  ask.leaf = param(req, "leaf");
  if (req.has_param("job")) ask.job = job_number(param(req, "job"));
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
    records = running_records(site.db_path, ask.snapshot, {}, wanted);
  } catch (const std::invalid_argument& e) {
    throw PageError(404, e.what());
  }
  topo::view::JobsOnFabric jobs = topo::view::jobs_on_fabric(*fabric, records, ask.load);
  topo::view::FabricPicture p;
  topo::SnapshotInfo info = store.info(ask.snapshot);
  p.title = fmt::format("snapshot {} ({}), {}", info.id, info.taken_at, info.source);
  p.cable_gbps = std::move(jobs.cable_gbps);
  p.jobs = std::move(jobs.jobs);
  if (ask.job) p.rings.push_back(std::to_string(*ask.job));
  p.pod = ask.pod;
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

std::string fabric_page(Site& site, const httplib::Request& req) {
  topo::SnapshotStore store(site.db_path);
  if (!store.latest()) return layout("fabric", "<p>No snapshot yet: run <code>topoctl discover</code>.</p>");
  PictureAsk ask = picture_ask(req, store);
  auto fabric = site.fabrics.get(store, ask.snapshot);
  topo::SnapshotInfo info = store.info(ask.snapshot);
  const topo::FabricSummary& s = fabric->summary();
  std::string body = fmt::format(
      "<p>Snapshot {} taken {} from <code>{}</code>: {} hosts, {} leaves, {} spines, {} cores, {} cables, {} pods, "
      "routing {}, <a href=\"/lint?snapshot={}\">{} faults</a>.</p>\n",
      info.id, html_escape(info.taken_at), html_escape(info.source), s.hosts, s.leaves, s.spines, s.cores, s.links,
      s.pods, html_escape(info.routing), info.id, fabric->faults().size());
  body += zoom_links(*fabric, ask);
  body +=
      fmt::format("<p><a href=\"/fabric.svg?{}\">picture alone (SVG)</a> | {}</p>\n", picture_query(ask),
                  ask.load ? fmt::format("<a href=\"/fabric?{}&load=0\">without load</a>", picture_query(ask))
                           : fmt::format("<a href=\"/fabric?{}\">with load</a>",
                                         picture_query(PictureAsk{ask.snapshot, ask.pod, ask.leaf, ask.job, true})));
  body += "<div class=\"picture\">" + topo::view::inline_svg(draw(site, store, ask)) + "</div>\n";
  return layout(ask.leaf.empty() ? (ask.pod ? fmt::format("pod {}", *ask.pod) : "fabric") : "leaf " + ask.leaf, body);
}

std::string lint_page(Site& site, const httplib::Request& req) {
  topo::SnapshotStore store(site.db_path);
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
  for (const topo::RoutingFinding& r : routing)
    body += fmt::format("<tr class=\"routing\"><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        html_escape(topo::name(r.kind)), html_escape(r.subject), html_escape(r.detail));
  return layout("lint", body + "</table>\n");
}

std::string snapshots_page(Site& site) {
  topo::SnapshotStore store(site.db_path);
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
  topo::SnapshotStore store(site.db_path);
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

std::string jobs_page(Site& site) {
  std::vector<topo::PlacementRecord> recent = topo::PlacementStore(site.db_path).recent(200);
  std::string body =
      "<p class=\"muted\">The newest placement of each of the most recent jobs. The database keeps no job ends: "
      "Slurm says which still run.</p>\n<table id=\"jobs\"><tr><th>job</th><th>placed</th><th>snapshot</th>"
      "<th>hosts</th><th>profile</th><th>estimate / ideal</th><th>choice</th></tr>\n";
  for (const topo::PlacementRecord& r : recent)
    body += fmt::format(
        "<tr><td><a href=\"/job/{0}\">{0}</a></td><td>{1}</td><td>{2}</td><td>{3} ({4})</td><td>{5}</td><td>{6}</td>"
        "<td>{7}</td></tr>\n",
        r.job_id, html_escape(r.placed_at), r.snapshot_id ? std::to_string(*r.snapshot_id) : "-",
        html_escape(topo::compress_hostlist(r.hosts)), r.hosts.size(), html_escape(r.profile), slowdown_cell(r),
        r.fallback ? "<span class=\"bad\">cons_tres: " + html_escape(r.fallback_why) + "</span>" : "topo-aware");
  return layout("jobs", body + "</table>\n");
}

std::string job_page(Site& site, const httplib::Request& req) {
  uint32_t id = job_number(req.matches[1]);
  std::vector<topo::PlacementRecord> history = topo::PlacementStore(site.db_path).history(id);
  if (history.empty()) throw PageError(404, fmt::format("job {}: no placement recorded", id));
  const topo::PlacementRecord& r = history.back();
  std::string body = fmt::format(
      "<table id=\"placement\"><tr><th>placed</th><td>{}</td></tr><tr><th>snapshot</th><td>{}</td></tr>"
      "<tr><th>hosts</th><td>{} ({})</td></tr><tr><th>ring order</th><td id=\"ring-order\">{}</td></tr>"
      "<tr><th>profile</th><td>{}</td></tr><tr><th>estimate / ideal</th><td>{}</td></tr>"
      "<tr><th>choice</th><td>{}</td></tr><tr><th>placements</th><td>{}</td></tr></table>\n",
      html_escape(r.placed_at), r.snapshot_id ? std::to_string(*r.snapshot_id) : "-",
      html_escape(topo::compress_hostlist(r.hosts)), r.hosts.size(),
      html_escape(fmt::format("{}", fmt::join(r.ring_order, " -> "))), html_escape(r.profile), slowdown_cell(r),
      r.fallback ? "cons_tres's own: " + html_escape(r.fallback_why) : "topo-aware's", history.size());
  body += "<h2>Reasons</h2><ul id=\"reasons\">";
  for (const std::string& reason : r.reasons) body += "<li>" + html_escape(reason) + "</li>";
  body += "</ul>\n";
  topo::SnapshotStore store(site.db_path);
  if (r.snapshot_id) {
    PictureAsk ask;
    ask.snapshot = resolve(store, std::to_string(*r.snapshot_id));
    ask.job = id;
    body += fmt::format("<h2>Its ring on snapshot {}</h2><p><a href=\"/fabric?{}\">open in the fabric view</a></p>",
                        ask.snapshot, picture_query(ask));
    body += "<div class=\"picture\">" + topo::view::inline_svg(draw(site, store, ask)) + "</div>\n";
  }
  return layout(fmt::format("job {}", id), body);
}

// Simulation reports: the directories `topoctl report --out` wrote, found
// under --reports (that directory itself and its subdirectories holding a
// report.md). Runs are not stored in the database: a report is files that
// simulate and report already write, and serving them needs no schema.
// Names in URLs keep to [A-Za-z0-9._-] and never start with a dot, so no
// request leaves the reports directory; symbolic links are not followed.
bool plain_name(std::string_view name) {
  return !name.empty() && name.front() != '.' && name.size() <= 128 &&
         name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
             std::string_view::npos;
}

bool plain_file(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::symlink_status(path, ec).type() == std::filesystem::file_type::regular;
}

// Report name -> its directory.
std::map<std::string, std::filesystem::path> find_reports(const Site& site) {
  std::map<std::string, std::filesystem::path> out;
  if (site.reports_dir.empty()) return out;
  std::filesystem::path top(site.reports_dir);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(top, ec)) {
    std::string name = entry.path().filename().string();
    if (entry.is_directory(ec) && !entry.is_symlink(ec) && plain_name(name) && plain_file(entry.path() / "report.md"))
      out.emplace(name, entry.path());
  }
  std::string own = std::filesystem::weakly_canonical(top, ec).filename().string();
  if (plain_file(top / "report.md") && plain_name(own)) out.try_emplace(own, top);
  return out;
}

std::filesystem::path report_dir(const Site& site, const std::string& name) {
  if (site.reports_dir.empty()) throw PageError(404, "no reports: serve was started without --reports DIR");
  auto reports = find_reports(site);
  auto it = reports.find(name);
  if (!plain_name(name) || it == reports.end()) throw PageError(404, fmt::format("no report named '{}'", name));
  return it->second;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PageError(404, fmt::format("{}: cannot read", path.filename().string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> pictures_in(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".svg" && plain_name(name) && plain_file(entry.path())) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
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
  for (const auto& [name, dir] : find_reports(site)) {
    struct stat st {};
    std::string written = ::stat((dir / "report.md").c_str(), &st) == 0
                              ? fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", fmt::gmtime(st.st_mtime))
                              : "";
    body +=
        fmt::format("<tr><td><a class=\"report-link\" href=\"/report/{0}\">{1}</a></td><td>{2}</td><td>{3}</td></tr>\n",
                    url_encode(name), html_escape(name), written, pictures_in(dir).size());
  }
  return layout("reports", body + "</table>\n");
}

std::string report_page(Site& site, const httplib::Request& req) {
  std::string name = req.matches[1];
  std::filesystem::path dir = report_dir(site, name);
  std::string body = "<p><a href=\"/reports\">all reports</a></p>\n";
  for (const std::string& picture : pictures_in(dir))
    // Fitted to the page; a click opens it at full size.
    body += fmt::format(
        "<figure><a href=\"/report/{0}/{1}\"><img class=\"report-picture\" src=\"/report/{0}/{1}\" "
        "alt=\"{2}\" style=\"max-width:100%\"></a><figcaption>{2}</figcaption></figure>\n",
        url_encode(name), url_encode(picture), html_escape(picture));
  body += "<pre id=\"report\">" + html_escape(read_text(dir / "report.md")) + "</pre>\n";
  return layout("report " + name, body);
}

// Runs a page, turning what went wrong into a status and a short page.
void answer(httplib::Response& res, const std::function<std::string()>& page,
            const char* type = "text/html; charset=utf-8") {
  try {
    res.set_content(page(), type);
  } catch (const PageError& e) {
    res.status = e.status;
    res.set_content(
        layout(e.status == 404 ? "not found" : "bad request", "<p class=\"bad\">" + html_escape(e.what()) + "</p>"),
        "text/html; charset=utf-8");
  } catch (const std::exception& e) {
    res.status = 500;
    res.set_content(layout("error", "<p class=\"bad\">" + html_escape(e.what()) + "</p>"), "text/html; charset=utf-8");
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

// Every route of the page; any other path is 404 by the error handler.
void add_routes(httplib::Server& server, const std::shared_ptr<Site>& site) {
  auto html = [site](auto page) {
    return [site, page](const httplib::Request& req, httplib::Response& res) {
      answer(res, [&] { return page(*site, req); });
    };
  };
  server.Get("/", html([](Site& s, const httplib::Request& r) { return fabric_page(s, r); }));
  server.Get("/fabric", html([](Site& s, const httplib::Request& r) { return fabric_page(s, r); }));
  server.Get("/lint", html([](Site& s, const httplib::Request& r) { return lint_page(s, r); }));
  server.Get("/snapshots", html([](Site& s, const httplib::Request&) { return snapshots_page(s); }));
  server.Get("/diff", html([](Site& s, const httplib::Request& r) { return diff_page(s, r); }));
  server.Get("/jobs", html([](Site& s, const httplib::Request&) { return jobs_page(s); }));
  server.Get(R"(/job/(\d+))", html([](Site& s, const httplib::Request& r) { return job_page(s, r); }));
  server.Get("/reports", html([](Site& s, const httplib::Request&) { return reports_page(s); }));
  server.Get(R"(/report/([A-Za-z0-9_][A-Za-z0-9._-]*)/?)",
             html([](Site& s, const httplib::Request& r) { return report_page(s, r); }));
  server.Get(R"(/report/([A-Za-z0-9_][A-Za-z0-9._-]*)/([A-Za-z0-9_][A-Za-z0-9._-]*\.svg))",
             [site](const httplib::Request& req, httplib::Response& res) {
               // A picture on disk is shown, never run: no scripts, no fetches.
               res.set_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
               answer(
                   res,
                   [&] {
                     std::filesystem::path file = report_dir(*site, req.matches[1]) / std::string(req.matches[2]);
                     if (!plain_file(file))
                       throw PageError(404, fmt::format("no picture {}", std::string(req.matches[2])));
                     return read_text(file);
                   },
                   "image/svg+xml");
             });
  server.Get("/fabric.svg", [site](const httplib::Request& req, httplib::Response& res) {
    answer(
        res,
        [&] {
          topo::SnapshotStore store(site->db_path);
          return draw(*site, store, picture_ask(req, store));
        },
        "image/svg+xml");
  });
  server.Get("/metrics", [site](const httplib::Request&, httplib::Response& res) {
    answer(
        res,
        [&] {
          topo::SnapshotStore store(site->db_path);
          std::optional<int64_t> latest = store.latest();
          std::shared_ptr<const topo::Fabric> fabric = latest ? site->fabrics.get(store, *latest) : nullptr;
          return metrics_text(site->db_path, fabric.get(), site->conf);
        },
        "text/plain; version=0.0.4; charset=utf-8");
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
  cmd->footer(
      "Routes: / and /fabric (?snapshot=&pod=&leaf=&job=&load=0), /fabric.svg, /lint, /snapshots, /diff?from=&to=, "
      "/jobs, /job/ID, /reports, /report/NAME, /metrics. The page has no login: keep it on loopback or behind a proxy "
      "that has one. "
      "Stops on SIGINT or SIGTERM.");
  return [opts] {
    auto [host, port] = parse_listen(opts->listen);
    require_database(opts->db_path);
    { topo::SnapshotStore check(opts->db_path); }  // refuses a file that is not our database, now rather than per page
    site_config(opts->conf);                       // a bad topo_aware.conf line is an error now, not on every /metrics
    auto site = std::make_shared<Site>();
    site->db_path = opts->db_path;
    site->reports_dir = opts->reports;
    site->conf = opts->conf;

    // Signals are taken by one thread that stops the server; the server's
    // threads, started after this, inherit the mask.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    httplib::Server server;
    add_routes(server, site);

    int bound = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
    if (bound <= 0)
      throw std::runtime_error(
          fmt::format("--listen {}: cannot listen there (in use, or no such address)", opts->listen));
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
    bool ok = server.listen_after_bind();
    // listen_after_bind returned by itself (not by a signal): wake the stopper.
    pthread_kill(stopper.native_handle(), SIGTERM);
    stopper.join();
    return ok ? kOk : kError;
  };
}

}  // namespace topoctl
