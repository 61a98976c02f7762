// The simulation reports `topoctl serve --reports DIR` shows: the
// directories `topoctl report --out` wrote, DIR itself or its
// subdirectories holding a report.md.
//
// Everything is read through DIR's descriptor, opened once: each name is
// one path component (plain_name, page_request.h) opened with openat and
// O_NOFOLLOW, and each file is checked after its open (fstat: a regular
// file with one link). So neither a symbolic link, nor a hard link to a
// file elsewhere, nor a link swapped in between a check and the open,
// serves anything outside DIR.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace topoctl {

class ReportFiles {
 public:
  // Throws std::runtime_error when `dir` cannot be opened as a directory.
  explicit ReportFiles(const std::string& dir);
  ~ReportFiles();
  ReportFiles(const ReportFiles&) = delete;
  ReportFiles& operator=(const ReportFiles&) = delete;

  struct Report {
    std::string name;
    int64_t written = 0;                // report.md's modification time (Unix seconds)
    std::vector<std::string> pictures;  // its .svg files, sorted
  };
  // Every report, by name: the subdirectories', then DIR's own under DIR's name.
  std::vector<Report> list() const;
  std::optional<Report> find(const std::string& name) const;
  // A file of report `name` (report.md or a picture): its bytes, or nullopt
  // when there is no such report or no such plain file in it.
  std::optional<std::string> read(const std::string& name, const std::string& file) const;

 private:
  // A descriptor of the report's directory, -1 when there is none.
  int open_report(const std::string& name) const;
  std::optional<Report> describe(int dir_fd, const std::string& name) const;

  int dir_fd_ = -1;
  std::string own_name_;  // DIR's last component, when DIR itself is a report
};

}  // namespace topoctl
