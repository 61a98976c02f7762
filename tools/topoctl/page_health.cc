#include "tools/topoctl/page_health.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "db/health_store.h"
#include "tools/view/html.h"
#include "tools/view/page_parts.h"

namespace topoctl {
namespace {

using topo::view::html_escape;

std::string cable_rates(const topo::CableHealth& h) {
  std::string out = fmt::format("{:.3g} errors/h, XmitWait {:.1f}%", h.errors_per_hour, 100 * h.xmit_wait_share);
  if (h.worst_per_hour > 0) out += fmt::format(" (most: {} {:.3g}/h)", topo::name(h.worst), h.worst_per_hour);
  return out;
}

void add_cables(HealthTable& t, const topo::HealthStore& store, int64_t snapshot, const topo::Fabric& f,
                const topo::HealthThresholds& thresholds, int collections) {
  std::vector<topo::CounterCollection> all = store.latest(snapshot, collections);
  t.port_collections = all.size();
  if (all.size() < 2) return;
  std::map<int, HealthRow> rows;  // by cable id
  std::vector<topo::CableHealth> last;
  for (size_t i = 1; i < all.size(); ++i) {
    last = topo::cable_health(f, all[i - 1], all[i]);
    for (const topo::CableHealth& h : last) {
      HealthRow& row = rows[h.cable];
      // A cable first read later gets zeros before: its line starts flat.
      row.trend.resize(i - 1, 0);
      row.trend.push_back(h.errors_per_hour);
    }
  }
  std::set<int> in_last;
  for (const topo::CableHealth& h : last) {
    HealthRow& row = rows[h.cable];
    row.kind = "cable";
    row.subject = h.subject;
    row.rates = cable_rates(h);
    row.unit = "errors/h";
    in_last.insert(h.cable);
  }
  for (const topo::HealthFinding& finding : topo::check_health(last, thresholds)) {
    rows[finding.cable].sick = true;
    rows[finding.cable].why = finding.why;
  }
  for (auto& [cable, row] : rows)
    if (in_last.count(cable)) t.rows.push_back(std::move(row));
}

std::string nic_rates_text(const topo::NicRates& r) {
  std::string out = fmt::format("pauses {:.3g}/s rx, {:.3g}/s tx", r.rx_pauses_per_second, r.tx_pauses_per_second);
  if (r.ecn_marks_per_second) out += fmt::format(", ECN marks {:.3g}/s", *r.ecn_marks_per_second);
  if (r.discards_per_second > 0) out += fmt::format(", discards {:.3g}/s", r.discards_per_second);
  return out;
}

void add_nics(HealthTable& t, const topo::HealthStore& store, int64_t snapshot, const topo::Fabric& f,
              const topo::NicThresholds& thresholds, int collections) {
  std::vector<topo::NicCollection> all = store.latest_nics(snapshot, collections);
  t.nic_collections = all.size();
  if (all.size() < 2) return;
  std::map<std::string, HealthRow> rows;  // by "host iface"
  std::vector<topo::NicRates> last;
  for (size_t i = 1; i < all.size(); ++i) {
    last = topo::nic_rates(f, all[i - 1], all[i]);
    for (const topo::NicRates& r : last) {
      HealthRow& row = rows[r.host + " " + r.iface];
      row.trend.resize(i - 1, 0);
      row.trend.push_back(r.rx_pauses_per_second + r.tx_pauses_per_second);
    }
  }
  std::set<std::string> in_last;
  for (const topo::NicRates& r : last) {
    std::string key = r.host + " " + r.iface;
    HealthRow& row = rows[key];
    row.kind = "nic";
    row.subject = r.subject.empty() ? key : r.subject;
    row.rates = nic_rates_text(r);
    row.unit = "pauses/s";
    in_last.insert(key);
  }
  for (const topo::NicFinding& finding : topo::check_nic_health(last, thresholds)) {
    HealthRow& row = rows[finding.host + " " + finding.iface];
    row.sick = true;
    row.why = finding.why;
  }
  for (auto& [key, row] : rows)
    if (in_last.count(key)) t.rows.push_back(std::move(row));
}

}  // namespace

HealthTable health_table(const std::string& db_path, int64_t snapshot_id, const topo::Fabric& fabric,
                         const topo::HealthThresholds& cables, const topo::NicThresholds& nics, topo::Access access,
                         int collections) {
  topo::HealthStore store(db_path, access);
  HealthTable t;
  collections = std::max(collections, 2);
  add_cables(t, store, snapshot_id, fabric, cables, collections);
  add_nics(t, store, snapshot_id, fabric, nics, collections);
  std::stable_sort(t.rows.begin(), t.rows.end(), [](const HealthRow& a, const HealthRow& b) {
    if (a.sick != b.sick) return a.sick;
    double x = a.trend.empty() ? 0 : a.trend.back(), y = b.trend.empty() ? 0 : b.trend.back();
    return x > y;
  });
  return t;
}

std::string health_html(const HealthTable& t) {
  size_t sick = std::count_if(t.rows.begin(), t.rows.end(), [](const HealthRow& r) { return r.sick; });
  std::string out = fmt::format(
      "<p>{} port counter and {} NIC counter collections of this snapshot (the trend covers the newest {}); "
      "{} of {} rated past the thresholds.</p>\n",
      t.port_collections, t.nic_collections, kHealthCollections, sick, t.rows.size());
  if (t.rows.empty()) {
    return out +
           "<p class=\"muted\">Nothing rated: rates need two collections (<code>topoctl health --collect</code>, or "
           "<code>--ethtool DIR</code> for RoCE NICs).</p>\n";
  }
  out +=
      "<div class=\"wide\"><table id=\"health\"><thead><tr><th>state</th><th>kind</th><th>cable or NIC</th>"
      "<th>last rates</th><th>trend</th></tr></thead><tbody>\n";
  for (const HealthRow& r : t.rows)
    out += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", r.sick ? "sick" : "ok",
        r.sick ? "<span class=\"bad\" title=\"" + html_escape(r.why) + "\">sick</span>" : "ok", html_escape(r.kind),
        html_escape(r.subject),
        html_escape(r.rates) + (r.sick ? "<br><span class=\"muted\">" + html_escape(r.why) + "</span>" : ""),
        topo::view::sparkline_svg(r.trend, r.unit));
  return out + "</tbody></table></div>\n";
}

}  // namespace topoctl
