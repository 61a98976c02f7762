#include "routing/opensm_handoff.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "common/shell_command.h"
#include "routing/job_routes.h"
#include "routing/opensm_lfts.h"

namespace topo {
namespace {

namespace fs = std::filesystem;

void check_tables(const Fabric& fabric, const Routing& routing) {
  // The planner never keeps a failing LID; this refuses anything the base brought.
  auto faults = check_up_down(fabric, routing);
  if (!faults.empty())
    throw HandoffError(
        fmt::format("the tables would not be deadlock-free and complete ({} findings; first: {}); "
                    "nothing written",
                    faults.size(), describe(fabric, faults.front())));
}

void write_tables(const Fabric& fabric, const Routing& routing, const std::string& tmp) {
  Fabric planned = fabric;
  planned.set_routing(routing);
  std::ofstream out(tmp);
  if (out) write_opensm_lfts(planned, out);
  if (!out || !out.flush()) {
    const int err = errno;
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw HandoffError(fmt::format("cannot write {}: {}", tmp, std::strerror(err)));
  }
}

}  // namespace

void hand_to_opensm(const Fabric& fabric, const Routing& routing, const OpensmHandoff& h) {
  check_tables(fabric, routing);
  const std::string tmp = h.file + ".tmp", previous = h.file + ".previous";
  write_tables(fabric, routing, tmp);
  std::error_code ec;
  // The file OpenSM reads now, kept under a second name (a link: no copy)
  // until the sweep command has succeeded.
  const bool had_file = fs::exists(h.file, ec);
  fs::remove(previous, ec);
  if (had_file && ::link(h.file.c_str(), previous.c_str()) != 0) {
    const int err = errno;
    fs::remove(tmp, ec);
    throw HandoffError(fmt::format("cannot keep {} as {}: {}; nothing written", h.file, previous, std::strerror(err)));
  }
  fs::rename(tmp, h.file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    fs::remove(previous, ec);
    throw HandoffError(fmt::format("cannot replace {}: {}", h.file, ec.message()));
  }
  if (!h.sweep_command.empty()) {
    std::string failed;
    try {
      ShellResult r = run_shell(h.sweep_command, h.timeout);
      if (!r.ok()) failed = fmt::format("'{}' {}", h.sweep_command, r.describe());
    } catch (const std::exception& e) {
      failed = fmt::format("'{}' did not start: {}", h.sweep_command, e.what());
    }
    if (!failed.empty()) {
      if (had_file)
        fs::rename(previous, h.file, ec);
      else
        fs::remove(h.file, ec);
      throw HandoffError(failed + fmt::format("; {} {}", h.file,
                                              ec         ? "could not be put back: " + ec.message()
                                              : had_file ? "put back as it was"
                                                         : "removed again"));
    }
  }
  fs::remove(previous, ec);
}

}  // namespace topo
