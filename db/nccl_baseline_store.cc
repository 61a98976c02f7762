#include "db/nccl_baseline_store.h"

#include <chrono>
#include <ctime>
#include <map>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "db/schema.h"

namespace topo {
namespace {

std::string now_iso() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(now));
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

NcclBaselineStore::NcclBaselineStore(std::string path, Access access)
    : connection_(std::move(path), std::chrono::milliseconds(5000), access) {
  open_schema(connection_);
}

int64_t NcclBaselineStore::add(const NcclRunRecord& r) {
  Transaction tx(connection_, "an nccl-tests run");
  Statement s = connection_.prepare(
      "INSERT INTO nccl_run (imported_at, ran_at, snapshot_id, file, job_id, test, nccl_version, ranks, hosts, "
      "devices, avg_busbw) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
      "cannot save an nccl-tests run");
  std::string devices;
  for (const NcclTestsRank& k : r.run.ranks)
    devices += fmt::format("{} {} {} {} {}\n", k.rank, k.host, k.device, k.bus.empty() ? "-" : k.bus, k.name);
  std::string now = now_iso();
  s.bind(1, now).bind(2, r.ran_at.empty() ? now : r.ran_at);
  if (r.snapshot_id) s.bind(3, *r.snapshot_id);
  s.bind(4, r.file);
  if (r.job_id) s.bind(5, *r.job_id);
  s.bind(6, r.run.test).bind(7, r.run.nccl_version).bind(8, static_cast<int64_t>(r.run.ranks.size()));
  s.bind(9, fmt::format("{}", fmt::join(r.hosts, ","))).bind(10, devices).bind(11, r.run.avg_busbw.value_or(0));
  s.run();
  int64_t id = connection_.last_insert_rowid();
  Statement row = connection_.prepare(
      "INSERT INTO nccl_result (run_id, ordinal, size, count, type, redop, root, oop_time_us, oop_algbw, oop_busbw, "
      "ip_time_us, ip_algbw, ip_busbw, model_busbw) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
      "?14)",
      "cannot save a row of an nccl-tests run");
  for (size_t i = 0; i < r.run.rows.size(); ++i) {
    const NcclTestsRow& x = r.run.rows[i];
    row.bind(1, id).bind(2, static_cast<int64_t>(i)).bind(3, x.size).bind(4, x.count).bind(5, x.type);
    row.bind(6, x.redop).bind(7, x.root).bind(8, x.oop_time_us).bind(9, x.oop_algbw).bind(10, x.oop_busbw);
    row.bind(11, x.ip_time_us).bind(12, x.ip_algbw).bind(13, x.ip_busbw);
    if (i < r.model_busbw.size() && r.model_busbw[i]) row.bind(14, *r.model_busbw[i]);
    row.run();
  }
  tx.commit();
  return id;
}

std::vector<NcclRunRecord> NcclBaselineStore::list() const {
  Statement s = connection_.prepare(
      "SELECT id, imported_at, ran_at, snapshot_id, file, job_id, test, nccl_version, hosts, devices, avg_busbw "
      "FROM nccl_run ORDER BY id",
      "cannot list the nccl-tests runs");
  std::vector<NcclRunRecord> out;
  std::map<int64_t, size_t> by_id;
  while (s.step()) {
    NcclRunRecord r;
    r.id = s.column_int(0);
    r.imported_at = s.column_text(1);
    r.ran_at = s.column_text(2);
    if (!s.column_is_null(3)) r.snapshot_id = s.column_int(3);
    r.file = s.column_text(4);
    if (!s.column_is_null(5)) r.job_id = s.column_int(5);
    r.run.test = s.column_text(6);
    r.run.nccl_version = s.column_text(7);
    r.hosts = split(s.column_text(8), ',');
    for (const std::string& line : split(s.column_text(9), '\n')) {
      std::vector<std::string> w = split(line, ' ');
      if (w.size() < 4) continue;
      NcclTestsRank k{std::stoi(w[0]), w[1], std::stoi(w[2]), w[3] == "-" ? "" : w[3], {}};
      for (size_t i = 4; i < w.size(); ++i) k.name += (i > 4 ? " " : "") + w[i];
      r.run.ranks.push_back(std::move(k));
    }
    if (s.column_double(10) > 0) r.run.avg_busbw = s.column_double(10);
    by_id[r.id] = out.size();
    out.push_back(std::move(r));
  }
  Statement rows = connection_.prepare(
      "SELECT run_id, size, count, type, redop, root, oop_time_us, oop_algbw, oop_busbw, ip_time_us, ip_algbw, "
      "ip_busbw, model_busbw FROM nccl_result ORDER BY run_id, ordinal",
      "cannot read the nccl-tests rows");
  while (rows.step()) {
    NcclRunRecord& r = out[by_id.at(rows.column_int(0))];
    NcclTestsRow x;
    x.size = rows.column_int(1);
    x.count = rows.column_int(2);
    x.type = rows.column_text(3);
    x.redop = rows.column_text(4);
    x.root = static_cast<int>(rows.column_int(5));
    x.oop_time_us = rows.column_double(6);
    x.oop_algbw = rows.column_double(7);
    x.oop_busbw = rows.column_double(8);
    x.ip_time_us = rows.column_double(9);
    x.ip_algbw = rows.column_double(10);
    x.ip_busbw = rows.column_double(11);
    r.run.rows.push_back(std::move(x));
    r.model_busbw.push_back(rows.column_is_null(12) ? std::nullopt : std::optional<double>(rows.column_double(12)));
  }
  return out;
}

}  // namespace topo
