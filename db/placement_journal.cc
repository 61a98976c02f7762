#include "db/placement_journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "db/error.h"

namespace topo {
namespace {

[[noreturn]] void fail_io(const std::string& path, std::string_view doing, int err) {
  throw DbError(DbErrorKind::Io, path, fmt::format("{}: {}", doing, std::strerror(err)));
}

}  // namespace

std::string journal_line(const PlacementRecord& r) {
  nlohmann::json j = {{"job_id", r.job_id},       {"placed_at", r.placed_at}, {"hosts", r.hosts},
                      {"ring_order", r.ring_order}, {"profile", r.profile},     {"estimate_s", r.estimate_s},
                      {"ideal_s", r.ideal_s},     {"reasons", r.reasons},     {"fallback", r.fallback},
                      {"fallback_why", r.fallback_why}};
  j["snapshot_id"] = r.snapshot_id ? nlohmann::json(*r.snapshot_id) : nlohmann::json(nullptr);
  // Invalid UTF-8 (a byte of a Slurm comment) is replaced, not refused.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<PlacementRecord> parse_journal_line(std::string_view line) {
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
    if (r.job_id == 0 || r.placed_at.empty()) return std::nullopt;
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

PlacementJournal::PlacementJournal(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) throw DbError(DbErrorKind::CantOpen, path_, fmt::format("cannot open the placement journal: {}",
                                                                       std::strerror(errno)));
}

PlacementJournal::~PlacementJournal() {
  if (fd_ >= 0) ::close(fd_);
}

void PlacementJournal::append(PlacementRecord record) {
  check_placement_record(record);
  if (record.placed_at.empty()) record.placed_at = placement_time_now();
  std::string line = journal_line(record);
  line += '\n';
  // One write: O_APPEND places it whole at the end. A short write (disk
  // full) leaves a torn line, which read() skips; say so.
  ssize_t n;
  do n = ::write(fd_, line.data(), line.size());
  while (n < 0 && errno == EINTR);
  if (n < 0) fail_io(path_, "cannot append a placement record", errno);
  if (static_cast<size_t>(n) != line.size())
    throw DbError(DbErrorKind::Full, path_, fmt::format("placement record written in part ({} of {} bytes)", n,
                                                        line.size()));
}

void PlacementJournal::sync() {
  if (::fdatasync(fd_) != 0) fail_io(path_, "cannot sync the placement journal", errno);
}

void PlacementJournal::clear() {
  if (::ftruncate(fd_, 0) != 0) fail_io(path_, "cannot empty the placement journal", errno);
}

PlacementJournal::Contents PlacementJournal::read() const {
  Contents out;
  std::ifstream in(path_);
  if (!in) fail_io(path_, "cannot read the placement journal", errno);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (auto r = parse_journal_line(line)) out.records.push_back(std::move(*r));
    else ++out.unreadable_lines;
  }
  if (in.bad()) fail_io(path_, "cannot read the placement journal", errno);
  return out;
}

}  // namespace topo
