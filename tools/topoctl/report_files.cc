#include "tools/topoctl/report_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "tools/topoctl/page_request.h"

namespace topoctl {
namespace {

// A report file larger than this is not served: a report is a few pictures.
constexpr off_t kMaxFile = 64 << 20;

// Closes a descriptor when it goes.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// `name` in the directory `dir_fd` as a regular file with one link, opened
// for reading; -1 otherwise. O_NONBLOCK: a FIFO put there cannot hold the
// open; O_NOFOLLOW: a symbolic link fails the open itself.
int open_plain_file(int dir_fd, const std::string& name, struct stat& st) {
  if (!plain_name(name)) return -1;
  int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The names in directory `dir_fd`, read through a descriptor of its own
// (a dup would share the reading position with other threads).
std::vector<std::string> names_in(int dir_fd) {
  std::vector<std::string> out;
  int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return out;
  DIR* dir = ::fdopendir(fd);
  if (!dir) {
    ::close(fd);
    return out;
  }
  while (dirent* e = ::readdir(dir))
    if (plain_name(e->d_name)) out.emplace_back(e->d_name);
  ::closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> read_all(int fd, off_t size) {
  if (size > kMaxFile) return std::nullopt;
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > static_cast<size_t>(kMaxFile)) return std::nullopt;
  }
}

}  // namespace

ReportFiles::ReportFiles(const std::string& dir) {
  dir_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd_ < 0)
    throw std::runtime_error(fmt::format("{}: cannot open the directory: {}", dir, std::strerror(errno)));
  std::error_code ec;
  std::string own = std::filesystem::weakly_canonical(dir, ec).filename().string();
  if (plain_name(own)) own_name_ = own;
}

ReportFiles::~ReportFiles() { ::close(dir_fd_); }

std::optional<ReportFiles::Report> ReportFiles::describe(int dir_fd, const std::string& name) const {
  struct stat st {};
  Fd md(open_plain_file(dir_fd, "report.md", st));
  if (md.fd < 0) return std::nullopt;
  Report r;
  r.name = name;
  r.written = st.st_mtime;
  for (const std::string& file : names_in(dir_fd)) {
    struct stat picture {};
    if (file.size() > 4 && file.ends_with(".svg") && Fd(open_plain_file(dir_fd, file, picture)).fd >= 0)
      r.pictures.push_back(file);
  }
  return r;
}

int ReportFiles::open_report(const std::string& name) const {
  if (!plain_name(name)) return -1;
  int fd = ::openat(dir_fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    struct stat st {};
    Fd md(open_plain_file(fd, "report.md", st));
    if (md.fd >= 0) return fd;
    ::close(fd);
  }
  if (name == own_name_) return ::openat(dir_fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return -1;
}

std::vector<ReportFiles::Report> ReportFiles::list() const {
  std::map<std::string, Report> found;
  for (const std::string& name : names_in(dir_fd_)) {
    Fd sub(::openat(dir_fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (sub.fd < 0) continue;
    if (std::optional<Report> r = describe(sub.fd, name)) found.emplace(name, std::move(*r));
  }
  if (!own_name_.empty() && !found.contains(own_name_))
    if (std::optional<Report> r = describe(dir_fd_, own_name_)) found.emplace(own_name_, std::move(*r));
  std::vector<Report> out;
  for (auto& [name, r] : found) out.push_back(std::move(r));
  return out;
}

std::optional<ReportFiles::Report> ReportFiles::find(const std::string& name) const {
  Fd dir(open_report(name));
  if (dir.fd < 0) return std::nullopt;
  return describe(dir.fd, name);
}

std::optional<std::string> ReportFiles::read(const std::string& name, const std::string& file) const {
  Fd dir(open_report(name));
  if (dir.fd < 0) return std::nullopt;
  struct stat st {};
  Fd f(open_plain_file(dir.fd, file, st));
  if (f.fd < 0) return std::nullopt;
  return read_all(f.fd, st.st_size);
}

}  // namespace topoctl
