#include "health/nccl_tests.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "common/line_source.h"
#include "common/quote.h"

namespace topo {
namespace {

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool is_integer(std::string_view w) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
  return ec == std::errc() && end == w.data() + w.size();
}

class Reader {
 public:
  Reader(const std::string& file) : file_(file) {}

  int64_t integer(std::string_view w, int line, std::string_view field) const {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || end != w.data() + w.size())
      throw ParseError(file_, line, fmt::format("{} '{}' is not a whole number", field, shown(w)));
    return v;
  }
  double number(std::string_view w, int line, std::string_view field) const {
    double v = 0;
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || end != w.data() + w.size())
      throw ParseError(file_, line, fmt::format("{} '{}' is not a number", field, shown(w)));
    return v;
  }

  // size count type [redop [root]] time algbw busbw wrong time algbw busbw wrong
  NcclTestsRow row(const std::vector<std::string_view>& w, int line) const {
    if (w.size() < 11 || w.size() > 13)
      throw ParseError(file_, line,
                       fmt::format("a table row has 11 to 13 columns (size count type [redop [root]], then time "
                                   "algbw busbw #wrong out of place and in place); this one has {}",
                                   w.size()));
    NcclTestsRow r;
    r.size = integer(w[0], line, "size");
    r.count = integer(w[1], line, "count");
    r.type = w[2];
    size_t i = 3;
    if (w.size() >= 12) r.redop = w[i++];
    if (w.size() == 13) r.root = static_cast<int>(integer(w[i++], line, "root"));
    r.oop_time_us = number(w[i], line, "out-of-place time");
    r.oop_algbw = number(w[i + 1], line, "out-of-place algbw");
    r.oop_busbw = number(w[i + 2], line, "out-of-place busbw");
    r.oop_wrong = w[i + 3];
    r.ip_time_us = number(w[i + 4], line, "in-place time");
    r.ip_algbw = number(w[i + 5], line, "in-place algbw");
    r.ip_busbw = number(w[i + 6], line, "in-place busbw");
    r.ip_wrong = w[i + 7];
    return r;
  }

 private:
  const std::string& file_;
};

// The first "<name>_perf" (or "<name>_perf_mpi") ending a word, <name> of
// [a-z_]+ and at most 64 long (nccl-tests' longest is "reduce_scatter"):
// the test. A scan rather than std::regex: libstdc++'s matcher recurses
// once per character of a run it repeats over, and one word of megabytes in
// a job log would overflow the stack.
std::string test_named(std::string_view text) {
  auto name_char = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  auto ends_word = [&](size_t at) {
    return at == text.size() || !(std::isalnum(static_cast<unsigned char>(text[at])) || text[at] == '_');
  };
  constexpr std::string_view kPerf = "_perf", kMpi = "_mpi";
  for (size_t at = text.find(kPerf); at != std::string_view::npos; at = text.find(kPerf, at + 1)) {
    size_t after = at + kPerf.size();
    bool mpi = text.substr(after).starts_with(kMpi) && ends_word(after + kMpi.size());
    if (!mpi && !ends_word(after)) continue;
    size_t start = at;
    while (start > 0 && name_char(text[start - 1])) --start;
    if (start < at && at - start <= 64) return std::string(text.substr(start, at - start)) + "_perf";
  }
  return {};
}

// A line's words without the comment mark nccl-tests puts before its header
// and footer lines ("#" alone or glued to the first word).
std::vector<std::string_view> unmarked_words(std::string_view line) {
  std::vector<std::string_view> w = words(line);
  if (w.empty()) return w;
  if (w[0] == "#")
    w.erase(w.begin());
  else if (w[0].starts_with("#"))
    w[0].remove_prefix(1);
  return w;
}

// "nccl-library=23102" on the "nccl-tests version" line: NCCL_VERSION_CODE,
// major*10000 + minor*100 + patch. "" when the line has none.
std::string library_version(const std::vector<std::string_view>& w, int line_no, const Reader& reader) {
  for (std::string_view x : w)
    if (x.starts_with("nccl-library=")) {
      int64_t code = reader.integer(x.substr(13), line_no, "nccl-library");
      return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
    }
  return {};
}

// Rank R [Group G] Pid P on HOST device D [BUS] NAME...
NcclTestsRank rank_line(const std::vector<std::string_view>& w, int line_no, const Reader& reader,
                        const std::string& file) {
  auto on = std::find(w.begin(), w.end(), "on");
  auto dev = std::find(w.begin(), w.end(), "device");
  if (on == w.end() || on + 1 >= w.end() || dev == w.end() || dev + 1 >= w.end() || dev < on)
    throw ParseError(file, line_no, "a rank line reads 'Rank R ... on HOST device D [BUS] NAME'");
  NcclTestsRank r;
  r.rank = static_cast<int>(reader.integer(w[1], line_no, "rank"));
  r.host = std::string(*(on + 1));
  r.device = static_cast<int>(reader.integer(*(dev + 1), line_no, "device"));
  auto rest = dev + 2;
  if (rest < w.end() && rest->starts_with("[")) {
    r.bus = std::string(rest->substr(1, rest->size() - (rest->ends_with("]") ? 2 : 1)));
    ++rest;
  }
  for (; rest < w.end(); ++rest) r.name += (r.name.empty() ? "" : " ") + std::string(*rest);
  return r;
}

}  // namespace

std::vector<std::string> NcclTestsRun::hosts() const {
  std::set<std::string> s;
  for (const NcclTestsRank& r : ranks) s.insert(r.host);
  return {s.begin(), s.end()};
}

std::optional<Collective> NcclTestsRun::collective() const {
  if (test == "all_reduce_perf") return Collective::AllReduce;
  if (test == "all_gather_perf") return Collective::AllGather;
  if (test == "reduce_scatter_perf") return Collective::ReduceScatter;
  if (test == "broadcast_perf") return Collective::Broadcast;
  if (test == "alltoall_perf") return Collective::AllToAll;
  return std::nullopt;
}

NcclTestsRun parse_nccl_tests(std::string_view text, const std::string& file) {
  Reader reader(file);
  NcclTestsRun run;
  run.test = test_named(text);
  if (run.test.empty()) run.test = test_named(file);
  std::set<std::tuple<int, std::string, int>> seen_ranks;
  int header_line = 0;  // of the table's column header, once seen
  int line_no = 0;
  for (size_t pos = 0; pos <= text.size();) {
    size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.size() > kMaxLineBytes)
      throw ParseError(
          file, line_no,
          fmt::format("line longer than {} bytes; expected text lines of nccl-tests output", kMaxLineBytes));
    std::vector<std::string_view> w = unmarked_words(line);
    if (w.empty()) continue;
    if (w[0] == "nccl-tests" && w.size() >= 3 && w[1] == "version") {
      if (run.nccl_version.empty()) run.nccl_version = library_version(w, line_no, reader);
    } else if (w[0] == "nThread") {
      for (size_t i = 0; i + 1 < w.size(); ++i)
        if (w[i] == "nGpus") run.gpus_per_process = static_cast<int>(reader.integer(w[i + 1], line_no, "nGpus"));
    } else if (w[0] == "Rank" && w.size() >= 2 && is_integer(w[1])) {
      NcclTestsRank r = rank_line(w, line_no, reader, file);
      // MPI may print the header once per process.
      if (seen_ranks.insert({r.rank, r.host, r.device}).second) run.ranks.push_back(std::move(r));
    } else if (w[0] == "NCCL" && w.size() >= 3 && w[1] == "version") {
      run.nccl_version = w[2];
    } else if (w[0] == "size" && w.size() >= 3 && w[1] == "count") {
      header_line = line_no;
    } else if (w[0] == "Avg" && w.size() >= 5 && w[1] == "bus" && w[2] == "bandwidth") {
      run.avg_busbw = reader.number(w.back(), line_no, "Avg bus bandwidth");
    } else if (header_line > 0 && is_integer(w[0]) && line.find('#') == std::string_view::npos && w.size() >= 4 &&
               is_integer(w[1])) {
      run.rows.push_back(reader.row(w, line_no));
    }
  }
  if (header_line == 0)
    throw ParseError(file, 0, "no nccl-tests table: expected a '#  size  count  type ...' header line");
  if (run.rows.empty()) throw ParseError(file, header_line, "the nccl-tests table under this header has no rows");
  return run;
}

NcclTestsRun read_nccl_tests_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, fmt::format("cannot open: {}", std::strerror(errno)));
  return parse_nccl_tests(read_all(in, path, kMaxNcclTestsBytes), path);
}

}  // namespace topo
