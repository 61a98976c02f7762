// A directory of its own for one test (under TMPDIR, else /tmp), removed
// with everything in it when the test ends; kept when TOPO_KEEP_TMP is set,
// to read what a failed test left behind.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace topo::testing {

class TempDir {
 public:
  // `prefix` names the directory, so that a left-over one says whose it is.
  explicit TempDir(const std::string& prefix = "topo-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!std::getenv("TOPO_KEEP_TMP")) std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace topo::testing
