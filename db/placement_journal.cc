#include "db/placement_journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "db/error.h"
#include "db/placement_json.h"

namespace topo {
namespace {

[[noreturn]] void fail_io(const std::string& path, std::string_view doing, int err) {
  throw DbError(DbErrorKind::Io, path, fmt::format("{}: {}", doing, std::strerror(err)));
}

}  // namespace

std::string journal_line(const PlacementRecord& r, uint64_t seq) {
  nlohmann::json j = placement_record_fields(r);
  j["snapshot_id"] = snapshot_id_json(r);
  j["seq"] = seq;
  // Invalid UTF-8 (a byte of a Slurm comment) is replaced, not refused.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<JournalLine> parse_journal_line(std::string_view line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  try {
    PlacementRecord r;
    r.job_id = j.at("job_id").get<uint32_t>();
    r.placed_at = j.at("placed_at").get<std::string>();
    if (!j.at("snapshot_id").is_null()) r.snapshot_id = j.at("snapshot_id").get<int64_t>();
    r.hosts = j.at("hosts").get<std::vector<std::string>>();
    r.ring_order = j.at("ring_order").get<std::vector<std::string>>();
    r.profile = j.at("profile").get<std::string>();
    r.estimate_s = j.at("estimate_s").get<double>();
    r.ideal_s = j.at("ideal_s").get<double>();
    r.reasons = j.at("reasons").get<std::vector<std::string>>();
    r.fallback = j.at("fallback").get<bool>();
    r.fallback_why = j.at("fallback_why").get<std::string>();
    // Lines journaled by a build before deferral reasons have none.
    r.deferred_why = j.value("deferred_why", std::string());
    if (r.job_id == 0 || r.placed_at.empty()) return std::nullopt;
    return JournalLine{std::move(r), j.at("seq").get<uint64_t>()};
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

PlacementJournal::PlacementJournal(std::string path) : path_(std::move(path)) {
  for (int side : {0, 1}) {
    fd_[side] = ::open(file(side).c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd_[side] < 0) {
      int err = errno;
      if (side == 1) ::close(fd_[0]);
      throw DbError(DbErrorKind::CantOpen, file(side),
                    fmt::format("cannot open the placement journal: {}", std::strerror(err)));
    }
  }
}

PlacementJournal::~PlacementJournal() {
  for (int fd : fd_)
    if (fd >= 0) ::close(fd);
}

void PlacementJournal::append(PlacementRecord record) {
  check_placement_record(record);
  if (record.placed_at.empty()) record.placed_at = placement_time_now();
  std::string line = journal_line(record, seq_ + 1);
  line += '\n';
  // One write: O_APPEND places it whole at the end. A short write (disk
  // full) leaves a torn line, which read() skips; say so.
  ssize_t n;
  do n = ::write(fd_[side_], line.data(), line.size());
  while (n < 0 && errno == EINTR);
  if (n < 0) fail_io(file(side_), "cannot append a placement record", errno);
  if (static_cast<size_t>(n) != line.size())
    throw DbError(DbErrorKind::Full, file(side_),
                  fmt::format("placement record written in part ({} of {} bytes)", n, line.size()));
  ++seq_;
}

int PlacementJournal::seal() {
  int sealed = side_;
  side_ = 1 - side_;
  return sealed;
}

void PlacementJournal::sync(int side) {
  if (::fdatasync(fd_[side]) != 0) fail_io(file(side), "cannot sync the placement journal", errno);
}

void PlacementJournal::clear(int side) {
  if (::ftruncate(fd_[side], 0) != 0) fail_io(file(side), "cannot empty the placement journal", errno);
}

PlacementJournal::Contents PlacementJournal::read() const {
  std::vector<JournalLine> lines;
  Contents out;
  for (int side : {0, 1}) {
    std::ifstream in(file(side));
    if (!in) fail_io(file(side), "cannot read the placement journal", errno);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      if (auto l = parse_journal_line(line))
        lines.push_back(std::move(*l));
      else
        ++out.unreadable_lines;
    }
    if (in.bad()) fail_io(file(side), "cannot read the placement journal", errno);
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const JournalLine& a, const JournalLine& b) { return a.seq < b.seq; });
  for (JournalLine& l : lines) out.records.push_back(std::move(l.record));
  return out;
}

}  // namespace topo
