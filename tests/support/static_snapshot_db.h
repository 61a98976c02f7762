// A snapshot database of its own per CLI test, holding fabrics with static
// tables built by hand (static_routing_fixture.h); removed afterwards.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "db/snapshot_store.h"
#include "fabric/synthetic.h"
#include "tests/support/static_routing_fixture.h"

namespace topo::testing {

class StaticSnapshotDb : public ::testing::Test {
 protected:
  StaticSnapshotDb()
      : db_(::testing::TempDir() + fmt::format("static-snapshots-{}-{}.db", getpid(),
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {}
  ~StaticSnapshotDb() override {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_ + suffix);
  }

  // Saves the spec's fabric with hand-made static tables; `edit` may change them first.
  template <class Edit>
  int64_t save_static(const std::string& spec, Edit edit) {
    Fabric f = make_synthetic(spec);
    Routing r = shortest_path_routing(f, "", "opensm-dump:/tmp/opensm-lfts.dump");
    edit(f, r);
    f.set_routing(std::move(r));
    return SnapshotStore(db_).save(f);
  }
  int64_t save_static(const std::string& spec) {
    return save_static(spec, [](const Fabric&, Routing&) {});
  }
  // "--db PATH" for a topoctl command line.
  std::string db() const { return "--db " + db_; }

  std::string db_;
};

// The LID of a host's first HCA.
inline uint32_t lid_of(const Fabric& f, const std::string& host) {
  return f.node(f.hcas_of(*f.find_host(host))[0]).lid;
}

}  // namespace topo::testing
