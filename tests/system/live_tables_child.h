// The child process of the system tests that read a running ibsim's fabric
// and switch tables live: this test binary re-executed under libumad2sim
// (tests/system/ibsim_processes.h). The parent cannot read them itself: the
// preload must be in place before libibumad starts. The child discovers the
// fabric with its LIDs, reads every switch's table, and writes both as
// `live.ibnetdiscover` and `live.lfts` (or its error as `live.error`) in
// the folder named by TOPO_LIVE_TABLES_OUT.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "discovery/ibnetdisc.h"
#include "discovery/ibnetdiscover.h"
#include "routing/opensm_lfts.h"
#include "tests/system/ibsim_processes.h"

namespace topo::system_test {

inline int write_live_tables(const fs::path& dir) {
  try {
    Fabric f = discover_ibnetdisc({});
    f.set_routing(read_lfts_live({}, f));
    std::ofstream fabric_out(dir / "live.ibnetdiscover");
    write_ibnetdiscover(f, fabric_out);
    std::ofstream lfts_out(dir / "live.lfts");
    write_opensm_lfts(f, lfts_out);
  } catch (const std::exception& e) {
    std::ofstream(dir / "live.error") << e.what();
    return 2;
  }
  return 0;
}

// Runs before main(): when TOPO_LIVE_TABLES_OUT is set, this process is the
// child, writes the tables and exits without running a test.
inline const bool kLiveTablesChild = [] {
  if (const char* dir = std::getenv("TOPO_LIVE_TABLES_OUT")) std::exit(write_live_tables(dir));
  return false;
}();

// Runs the child against `sim`, its files in `out`; returns why it failed,
// or an empty string.
inline std::string run_live_tables_child(const Ibsim& sim, const fs::path& out) {
  fs::remove(out / "live.error");
  Process child({fs::read_symlink("/proc/self/exe").string()}, sim.env({"TOPO_LIVE_TABLES_OUT=" + out.string()}),
                sim.dir(), out / "child.log", false);
  auto status = child.wait(60s);
  if (!status || fs::exists(out / "live.error")) return read_file(out / "live.error") + read_file(out / "child.log");
  return "";
}

}  // namespace topo::system_test
