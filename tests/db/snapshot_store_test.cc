// Snapshots in SQLite: round trips, ids, concurrent readers, failed and
// killed imports, damaged files, locks and schema versions.
#include "db/snapshot_store.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "db/connection.h"
#include "db/schema.h"
#include "fabric/diff.h"
#include "fabric/synthetic.h"
#include "routing/route.h"
#include "tests/support/static_routing_fixture.h"
#include "tests/support/temp_dir.h"

namespace topo {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr const char* kFaulty =
    "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2,degrade=leaf02:9,unplug=leaf03:10";
// About 0.7 MB of rows: big enough to spill past a small file size limit.
constexpr const char* kBig = "clos3:pods=4,leaves_per_pod=16,hosts_per_leaf=32";

using testing::TempDir;

class SnapshotStoreTest : public ::testing::Test {
 protected:
  std::string db() const { return (dir_.path() / "fabric.db").string(); }
  TempDir dir_;
};

Fabric with_gpus(Fabric f) {
  f.set_gpus(*f.find_host("gpu001"),
             {{0, "cuda0", "0000:17:00.0", 0, "mlx5_0", 0}, {1, "cuda1", "0000:31:00.0", 1, "", -1}});
  f.set_gpus(*f.find_host("gpu017"), {{0, "nvidia0", "0000:b1:00.0", 3, "mlx5_0", 0}});
  return f;
}

void expect_same_gpus(const std::vector<Gpu>& a, const std::vector<Gpu>& b, const std::string& host) {
  ASSERT_EQ(a.size(), b.size()) << host;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, b[i].index) << host;
    EXPECT_EQ(a[i].name, b[i].name) << host;
    EXPECT_EQ(a[i].pci_bus, b[i].pci_bus) << host;
    EXPECT_EQ(a[i].numa, b[i].numa) << host;
    EXPECT_EQ(a[i].closest_hca, b[i].closest_hca) << host;
    EXPECT_EQ(a[i].rail, b[i].rail) << host;
  }
}

// Everything a reader of the fabric can see, node by node and cable by cable.
void expect_same_fabric(const Fabric& a, const Fabric& b) {
  EXPECT_EQ(a.source(), b.source());
  EXPECT_EQ(a.naming().pattern(), b.naming().pattern());
  const FabricSummary &x = a.summary(), &y = b.summary();
  EXPECT_EQ(x.hosts, y.hosts);
  EXPECT_EQ(x.hcas, y.hcas);
  EXPECT_EQ(x.leaves, y.leaves);
  EXPECT_EQ(x.spines, y.spines);
  EXPECT_EQ(x.cores, y.cores);
  EXPECT_EQ(x.links, y.links);
  EXPECT_EQ(x.pods, y.pods);
  EXPECT_EQ(x.rails, y.rails);
  EXPECT_EQ(x.rail_optimized, y.rail_optimized);

  ASSERT_EQ(a.faults().size(), b.faults().size());
  for (size_t i = 0; i < a.faults().size(); ++i) {
    EXPECT_EQ(a.faults()[i].kind, b.faults()[i].kind);
    EXPECT_EQ(a.faults()[i].subject, b.faults()[i].subject);
    EXPECT_EQ(a.faults()[i].detail, b.faults()[i].detail);
  }

  ASSERT_EQ(a.node_count(), b.node_count());
  EXPECT_TRUE(std::equal(a.hosts().begin(), a.hosts().end(), b.hosts().begin(), b.hosts().end()));
  EXPECT_TRUE(std::equal(a.hcas().begin(), a.hcas().end(), b.hcas().begin(), b.hcas().end()));
  EXPECT_TRUE(std::equal(a.switches().begin(), a.switches().end(), b.switches().begin(), b.switches().end()));
  for (NodeId v = 0; v < a.node_count(); ++v) {
    const Node &n = a.node(v), &m = b.node(v);
    EXPECT_EQ(n.kind, m.kind) << n.id;
    EXPECT_EQ(n.id, m.id);
    EXPECT_EQ(n.name, m.name) << n.id;
    EXPECT_EQ(n.guid, m.guid) << n.id;
    EXPECT_EQ(n.ports, m.ports) << n.id;
    EXPECT_EQ(n.host, m.host) << n.id;
    EXPECT_EQ(n.device, m.device) << n.id;
    EXPECT_EQ(n.rail, m.rail) << n.id;
    EXPECT_EQ(n.level, m.level) << n.id;
    EXPECT_EQ(n.pod, m.pod) << n.id;
    EXPECT_EQ(n.down_gbps, m.down_gbps) << n.id;
    EXPECT_EQ(n.up_gbps, m.up_gbps) << n.id;
    expect_same_gpus(n.gpus, m.gpus, n.name);
  }

  std::vector<const Link*> la, lb;
  for (auto e : boost::make_iterator_range(boost::edges(a.graph())))
    if (a.link(e).kind == LinkKind::Cable) la.push_back(&a.link(e));
  for (auto e : boost::make_iterator_range(boost::edges(b.graph())))
    if (b.link(e).kind == LinkKind::Cable) lb.push_back(&b.link(e));
  ASSERT_EQ(la.size(), lb.size());
  for (size_t i = 0; i < la.size(); ++i) {
    const Link &l = *la[i], &k = *lb[i];
    EXPECT_EQ(a.node(l.end_a).id, b.node(k.end_a).id) << i;
    EXPECT_EQ(a.node(l.end_b).id, b.node(k.end_b).id) << i;
    EXPECT_EQ(l.port_a, k.port_a) << i;
    EXPECT_EQ(l.port_b, k.port_b) << i;
    EXPECT_EQ(l.rate, k.rate) << i;
    EXPECT_EQ(l.state, k.state) << i;
    EXPECT_EQ(l.tier, k.tier) << i;
    EXPECT_EQ(l.expected, k.expected) << i;
    EXPECT_EQ(l.degraded, k.degraded) << i;
  }
  for (NodeId leaf : a.switches_at(Level::Leaf)) EXPECT_EQ(a.hosts_under(leaf), b.hosts_under(leaf));
  for (NodeId v = 0; v < a.node_count(); ++v) EXPECT_EQ(a.node(v).lid, b.node(v).lid) << a.node(v).id;
  const Routing &ra = a.routing(), &rb = b.routing();
  EXPECT_EQ(ra.kind, rb.kind);
  EXPECT_EQ(ra.engine, rb.engine);
  EXPECT_EQ(ra.emulated, rb.emulated);
  EXPECT_EQ(ra.source, rb.source);
  EXPECT_EQ(ra.lft, rb.lft);
  EXPECT_TRUE(diff(a, b).empty());
}

// Rows of any table that belong to no snapshot row: what a half-saved snapshot would leave.
int64_t orphan_rows(const std::string& path) {
  Connection c(path, milliseconds(1000));
  int64_t n = 0;
  for (const char* table : {"host", "gpu", "hca", "switch", "link", "lft"})
    n += c.query_int(
        std::string("SELECT count(*) FROM ") + table + " WHERE snapshot_id NOT IN (SELECT id FROM snapshot)",
        "counting orphans");
  return n;
}

std::string integrity(const std::string& path) {
  Connection c(path, milliseconds(1000));
  Statement s = c.prepare("PRAGMA integrity_check");
  return s.step() ? s.column_text(0) : "no answer";
}

// Runs `body` in a child process and returns its wait status. The child
// never returns into the test runner: it leaves with _exit(body's result).
template <class Body>
int in_child(Body body) {
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int code = 90;
    try {
      code = body();
    } catch (...) {
      code = 91;
    }
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

void limit_file_size(rlim_t bytes) {
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  rlimit lim{bytes, bytes};
  setrlimit(RLIMIT_FSIZE, &lim);
}

rlim_t files_size(const std::string& path) {
  rlim_t size = fs::file_size(path);
  for (const char* suffix : {"-wal", "-shm"})
    if (fs::exists(path + suffix)) size = std::max<rlim_t>(size, fs::file_size(path + suffix));
  return size;
}

// "2025-01-31T12:00:00Z"
bool is_utc_iso8601(const std::string& t) {
  const std::string shape = "dddd-dd-ddTdd:dd:ddZ";
  if (t.size() != shape.size()) return false;
  for (size_t i = 0; i < t.size(); ++i)
    if (shape[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(t[i])) : t[i] != shape[i]) return false;
  return true;
}

template <class F>
DbError expect_db_error(F f) {
  try {
    f();
  } catch (const DbError& e) {
    return e;
  }
  ADD_FAILURE() << "no DbError thrown";
  return DbError(DbErrorKind::Sqlite, "", "none");
}

TEST_F(SnapshotStoreTest, RoundTripKeepsSummaryLinksFaultsAndGpus) {
  Fabric original = with_gpus(make_synthetic(kFaulty));
  ASSERT_FALSE(original.faults().empty());
  SnapshotStore store(db());
  int64_t id = store.save(original);
  Fabric loaded = store.load(id);
  expect_same_fabric(original, loaded);
  ASSERT_EQ(loaded.node(*loaded.find_host("gpu001")).gpus.size(), 2u);
  // A fresh connection reads the same.
  SnapshotStore again(db());
  expect_same_fabric(original, again.load(id));
}

TEST_F(SnapshotStoreTest, RoundTripOfAHandBuiltFabricWithItsOwnHostNaming) {
  // "node-7.hca2": a site convention that needs the pattern to rebuild.
  FabricBuilder b(HostNaming(R"(^(node-\d+)\.(hca\d+)$)"));
  b.add_switch("S-b8cef60300aabbcc", "edge-a", 40, 0xb8cef60300aabbccULL);  // GUID with the top bit set
  b.add_switch("S-0002c90300000002", "edge-b", 40, 0x0002c90300000002ULL);
  b.add_switch("S-0002c90300000003", "top", 40, 0x0002c90300000003ULL);
  b.add_hca("H-1", "node-1.hca0", 1, 0x1001);
  b.add_hca("H-2", "node-1.hca1", 1, 0x1002);
  b.add_hca("H-3", "node-2.hca0", 1, 0x1003);
  b.add_host("node-3");  // known to Slurm, no HCA cabled
  const LinkRate eth{LinkWidth::X1, LinkSpeed::Eth400G};
  b.connect("H-1", 1, "S-b8cef60300aabbcc", 1, eth);
  b.connect("H-2", 1, "S-0002c90300000002", 1, eth);
  b.connect("H-3", 1, "S-b8cef60300aabbcc", 2, {LinkWidth::X1, LinkSpeed::Eth200G});
  b.connect("S-b8cef60300aabbcc", 30, "S-0002c90300000003", 1, eth);
  b.connect("S-0002c90300000002", 30, "S-0002c90300000003", 2, eth, PortState::Down);
  Fabric original = std::move(b).finish();
  original.set_source("lldp:/etc/topo/lldp.json");
  original.set_gpus(*original.find_host("node-2"), {{3, "cuda3", "0000:ca:00.0", 1, "hca0", 0}});
  ASSERT_FALSE(original.faults().empty());

  SnapshotStore store(db());
  Fabric loaded = store.load(store.save(original));
  expect_same_fabric(original, loaded);
  EXPECT_EQ(loaded.node(*loaded.find("S-b8cef60300aabbcc")).guid, 0xb8cef60300aabbccULL);
  EXPECT_TRUE(loaded.find_host("node-3"));
}

TEST_F(SnapshotStoreTest, RoundTripOfThreeTierAndRailOptimizedFabrics) {
  SnapshotStore store(db());
  for (const char* spec : {"clos3:pods=3,leaves_per_pod=2,hosts_per_leaf=4,degrade=spine02:5",
                           "railopt:hosts=16,rails=4,spines=2,hosts_per_leaf=8", "fattree:k=4,unplug=core01:2"}) {
    SCOPED_TRACE(spec);
    Fabric original = make_synthetic(spec);
    expect_same_fabric(original, store.load(store.save(original)));
  }
}

TEST_F(SnapshotStoreTest, SnapshotsGetGrowingIdsAndAreListedOldestFirst) {
  std::vector<std::string> specs = {"leafspine:leaves=2,hosts_per_leaf=4,spines=2", kFaulty,
                                    "clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4"};
  std::vector<int64_t> ids;
  {
    SnapshotStore store(db());
    EXPECT_FALSE(store.latest());
    EXPECT_TRUE(store.list().empty());
    for (const auto& spec : specs) ids.push_back(store.save(make_synthetic(spec)));
  }
  EXPECT_LT(ids[0], ids[1]);
  EXPECT_LT(ids[1], ids[2]);

  SnapshotStore store(db());
  auto list = store.list();
  ASSERT_EQ(list.size(), 3u);
  for (size_t i = 0; i < list.size(); ++i) {
    Fabric expected = make_synthetic(specs[i]);
    EXPECT_EQ(list[i].id, ids[i]);
    EXPECT_EQ(list[i].source, "synthetic:" + specs[i]);
    EXPECT_TRUE(is_utc_iso8601(list[i].taken_at)) << list[i].taken_at;
    EXPECT_EQ(list[i].summary.hosts, expected.summary().hosts);
    EXPECT_EQ(list[i].summary.links, expected.summary().links);
    EXPECT_EQ(list[i].summary.leaves, expected.summary().leaves);
    EXPECT_EQ(list[i].summary.pods, expected.summary().pods);
    EXPECT_EQ(list[i].switches, static_cast<int>(expected.switches().size()));
    EXPECT_EQ(list[i].faults, static_cast<int>(expected.faults().size()));
  }
  EXPECT_EQ(store.latest(), ids[2]);
  EXPECT_EQ(store.resolve("latest"), ids[2]);
  EXPECT_EQ(store.resolve("-1"), ids[2]);
  EXPECT_EQ(store.resolve("-2"), ids[1]);
  EXPECT_EQ(store.resolve("-3"), ids[0]);
  EXPECT_EQ(store.resolve(std::to_string(ids[1])), ids[1]);
  // Earlier snapshots stay as they were after later saves.
  expect_same_fabric(make_synthetic(specs[1]), store.load(ids[1]));
  int64_t next = store.save(make_synthetic(specs[0]));
  EXPECT_GT(next, ids[2]);
  EXPECT_EQ(store.list().size(), 4u);
}

TEST_F(SnapshotStoreTest, ReferencesThatNameNoSnapshotAreClearErrors) {
  SnapshotStore store(db());
  DbError none = expect_db_error([&] { store.resolve("latest"); });
  EXPECT_EQ(none.kind(), DbErrorKind::UnknownSnapshot);
  EXPECT_NE(std::string(none.what()).find("holds none"), std::string::npos) << none.what();
  store.save(make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2"));
  store.save(make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2"));
  for (const char* bad : {"0", "3", "-3", "abc", "", "1x", "+1", "latest~1"}) {
    DbError e = expect_db_error([&] { store.resolve(bad); });
    EXPECT_EQ(e.kind(), DbErrorKind::UnknownSnapshot) << bad;
    EXPECT_EQ(e.path(), db()) << bad;
  }
  DbError e = expect_db_error([&] { store.resolve("-3"); });
  EXPECT_NE(std::string(e.what()).find("holds 2 snapshots"), std::string::npos) << e.what();
}

TEST_F(SnapshotStoreTest, TheMostNegativeReferenceNamesNoSnapshot) {
  SnapshotStore store(db());
  store.save(make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2"));
  for (const char* far : {"-9223372036854775808", "-9223372036854775807", "9223372036854775807"}) {
    DbError e = expect_db_error([&] { store.resolve(far); });
    EXPECT_EQ(e.kind(), DbErrorKind::UnknownSnapshot) << far;
  }
}

TEST_F(SnapshotStoreTest, ReadOnlyNeverCreatesNorChangesTheDatabase) {
  std::string missing = (dir_.path() / "missing.db").string();
  DbError none = expect_db_error([&] { SnapshotStore store(missing, {.access = Access::ReadOnly}); });
  EXPECT_EQ(none.kind(), DbErrorKind::CantOpen);
  EXPECT_FALSE(fs::exists(missing));

  { std::ofstream(missing) << ""; }  // empty: a writer has not made the schema yet
  DbError empty = expect_db_error([&] { SnapshotStore store(missing, {.access = Access::ReadOnly}); });
  EXPECT_EQ(empty.kind(), DbErrorKind::SchemaTooOld);
  EXPECT_EQ(fs::file_size(missing), 0u);

  std::string older = (dir_.path() / "older.db").string();
  {
    Connection c(older, milliseconds(100));
    prepare_schema(c, 2);  // as an older build left it
  }
  DbError old = expect_db_error([&] { SnapshotStore store(older, {.access = Access::ReadOnly}); });
  EXPECT_EQ(old.kind(), DbErrorKind::SchemaTooOld);
  EXPECT_EQ(SnapshotStore(older).schema_version(), kSchemaVersion) << "a writer still migrates it";

  SnapshotStore(db()).save(make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2"));
  SnapshotStore reader(db(), {.access = Access::ReadOnly});
  EXPECT_EQ(reader.list().size(), 1u);
  EXPECT_EQ(reader.load(1).summary().hosts, 8);
  DbError write = expect_db_error([&] { reader.save(make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2")); });
  EXPECT_EQ(SnapshotStore(db()).list().size(), 1u) << write.what();
}

TEST_F(SnapshotStoreTest, UnknownIdNamesTheIdAndThePath) {
  SnapshotStore store(db());
  store.save(make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2"));
  for (auto call : {+[](SnapshotStore& s) { s.load(42); }, +[](SnapshotStore& s) { s.info(42); }}) {
    DbError e = expect_db_error([&] { call(store); });
    EXPECT_EQ(e.kind(), DbErrorKind::UnknownSnapshot);
    EXPECT_EQ(std::string(e.what()), db() + ": no snapshot 42 (the latest is 1)");
  }
}

TEST_F(SnapshotStoreTest, ReaderSeesThePreviousSnapshotWhileAWriterHoldsItsTransaction) {
  Fabric first = make_synthetic(kFaulty);
  {
    SnapshotStore store(db());
    store.save(first);
  }
  // The reader in another process is forked before this one opens anything
  // (SQLite connections must not cross a fork) and reads when told to.
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(go[1]);
    char byte;
    int code = 9;
    try {
      if (read(go[0], &byte, 1) != 1) _exit(8);
      SnapshotStore other(db(), {.busy_timeout = milliseconds(100)});
      if (other.list().size() != 1 || other.latest() != 1) _exit(1);
      Fabric f = other.load(1);
      code = f.summary().hosts == first.summary().hosts && diff(first, f).empty() ? 0 : 2;
    } catch (...) {
      code = 3;
    }
    _exit(code);
  }
  close(go[0]);

  // A writer in the middle of a snapshot: its row and some hosts written, not committed.
  Connection writer(db(), milliseconds(100));
  writer.exec("BEGIN IMMEDIATE", "begin");
  writer.exec(
      "INSERT INTO snapshot (taken_at, source, host_pattern, hosts, hcas, switches, leaves, spines, cores, "
      "links, pods, rails, rail_optimized, faults) VALUES ('2025-01-01T00:00:00Z', 'half', '', 99, 0, 0, 0, "
      "0, 0, 0, 0, 0, 0, 0)",
      "insert");
  writer.exec("INSERT INTO host VALUES (last_insert_rowid(), 0, 'ghost')", "insert");

  // Another process...
  (void)!write(go[1], "g", 1);
  close(go[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // ...and another connection of this one.
  SnapshotStore reader(db(), {.busy_timeout = milliseconds(100)});
  ASSERT_EQ(reader.list().size(), 1u);
  EXPECT_EQ(reader.latest(), 1);
  expect_same_fabric(first, reader.load(1));

  writer.exec("COMMIT", "commit");
  EXPECT_EQ(reader.list().size(), 2u);  // committed: a reader sees it at once
}

TEST_F(SnapshotStoreTest, ReadersInThisProcessKeepWorkingWhileAnotherProcessSaves) {
  Fabric small = make_synthetic(kFaulty);
  {
    SnapshotStore store(db());
    store.save(small);
  }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(ready[0]);
    int code = 0;
    try {
      SnapshotStore writer(db());
      Fabric big = make_synthetic(kBig);
      (void)!write(ready[1], "x", 1);
      for (int i = 0; i < 8; ++i) writer.save(big);
    } catch (...) {
      code = 1;
    }
    _exit(code);
  }
  close(ready[1]);
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  SnapshotStore reader(db(), {.busy_timeout = milliseconds(200)});
  int reads = 0;
  size_t seen = 0;
  for (;;) {
    int status = 0;
    bool done = waitpid(pid, &status, WNOHANG) == pid;
    auto list = reader.list();  // never "locked": WAL readers do not wait for writers
    ASSERT_GE(list.size(), seen);
    seen = list.size();
    Fabric latest = reader.load(list.back().id);  // always a whole snapshot
    EXPECT_EQ(latest.summary().links, list.back().summary.links);
    ++reads;
    if (done) {
      ASSERT_TRUE(WIFEXITED(status));
      EXPECT_EQ(WEXITSTATUS(status), 0);
      break;
    }
  }
  EXPECT_EQ(reader.list().size(), 9u);
  EXPECT_GT(reads, 1);
}

TEST_F(SnapshotStoreTest, SaveThatFailsHalfWayLeavesEarlierSnapshotsAndNoPartOfItself) {
  SnapshotStore store(db());
  Fabric first = with_gpus(make_synthetic(kFaulty));
  int64_t id = store.save(first);
  // Two GPUs claiming CUDA index 0 on one host: rejected by the gpu table's
  // key after the snapshot, host, HCA and switch rows are already written.
  Fabric bad = make_synthetic(kFaulty);
  bad.set_gpus(*bad.find_host("gpu005"),
               {{0, "cuda0", "0000:17:00.0", 0, "", -1}, {0, "cuda0-again", "0000:31:00.0", 0, "", -1}});
  DbError e = expect_db_error([&] { store.save(bad); });
  EXPECT_EQ(e.path(), db());
  EXPECT_NE(std::string(e.what()).find("GPU indices must be unique"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("UNIQUE constraint failed"), std::string::npos) << e.what();

  ASSERT_EQ(store.list().size(), 1u);
  EXPECT_EQ(store.latest(), id);
  EXPECT_EQ(orphan_rows(db()), 0);
  expect_same_fabric(first, store.load(id));
  // The store is usable afterwards.
  int64_t next = store.save(first);
  EXPECT_GT(next, id);
  expect_same_fabric(first, store.load(next));
}

TEST_F(SnapshotStoreTest, DiskFullHalfWayThrowsAndLeavesEarlierSnapshots) {
  Fabric first = make_synthetic(kFaulty);
  {
    SnapshotStore store(db());
    store.save(first);
  }
  // In a child: writes past the file size limit fail with EFBIG, as on a full disk.
  int status = in_child([&] {
    SnapshotStore store(db());
    Fabric big = make_synthetic(kBig);
    signal(SIGXFSZ, SIG_IGN);
    limit_file_size(files_size(db()) + 128 * 1024);
    try {
      store.save(big);
      return 1;  // the limit did not bite: the test proves nothing
    } catch (const DbError& e) {
      if (e.path() != db()) return 2;
      if (e.kind() != DbErrorKind::Io && e.kind() != DbErrorKind::Full) return 3;
    }
    return store.list().size() == 1 ? 0 : 4;  // the same connection sees no half snapshot
  });
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);

  SnapshotStore store(db());
  ASSERT_EQ(store.list().size(), 1u);
  EXPECT_EQ(integrity(db()), "ok");
  EXPECT_EQ(orphan_rows(db()), 0);
  expect_same_fabric(first, store.load(1));
  EXPECT_EQ(store.save(first), 2);
}

TEST_F(SnapshotStoreTest, ProcessKilledInsideTheTransactionLeavesTheDatabaseIntact) {
  Fabric first = with_gpus(make_synthetic(kFaulty));
  {
    SnapshotStore store(db());
    store.save(first);
  }
  // The child is SIGKILLed from inside SQLite's write of the new snapshot:
  // the first write past the size limit raises SIGXFSZ, whose handler kills.
  int status = in_child([&] {
    SnapshotStore store(db());
    Fabric big = make_synthetic(kBig);
    signal(SIGXFSZ, [](int) { kill(getpid(), SIGKILL); });
    limit_file_size(files_size(db()) + 128 * 1024);
    store.save(big);
    return 0;
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child was not killed mid-save";
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  SnapshotStore store(db());
  ASSERT_EQ(store.list().size(), 1u);
  EXPECT_EQ(integrity(db()), "ok");
  EXPECT_EQ(orphan_rows(db()), 0);
  expect_same_fabric(first, store.load(1));
  Fabric big = make_synthetic(kBig);
  EXPECT_EQ(store.save(big), 2);
  EXPECT_EQ(store.load(2).summary().hosts, big.summary().hosts);
}

TEST_F(SnapshotStoreTest, ProcessKilledAtAnyMomentNeverLeavesAHalfSnapshot) {
  {
    SnapshotStore store(db());
    store.save(make_synthetic(kFaulty));
  }
  int begun_total = 1;
  for (int delay_ms : {0, 3, 11, 29}) {
    SCOPED_TRACE(delay_ms);
    int saves[2];
    ASSERT_EQ(pipe(saves), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(saves[0]);
      SnapshotStore store(db());
      Fabric big = make_synthetic(kBig);
      for (;;) {
        (void)!write(saves[1], "s", 1);  // one byte as each save begins
        store.save(big);
      }
    }
    close(saves[1]);
    char buf[64];
    ASSERT_EQ(read(saves[0], buf, 1), 1);
    ASSERT_EQ(read(saves[0], buf, 1), 1);  // the second save has begun
    std::this_thread::sleep_for(milliseconds(delay_ms));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    int begun = 2;
    for (ssize_t n; (n = read(saves[0], buf, sizeof buf)) > 0;) begun += static_cast<int>(n);
    close(saves[0]);
    begun_total += begun;

    SnapshotStore store(db());
    auto list = store.list();
    // Every save that began either committed whole or left nothing.
    EXPECT_GE(static_cast<int>(list.size()), begun_total - 1);
    EXPECT_LE(static_cast<int>(list.size()), begun_total);
    begun_total = static_cast<int>(list.size());
    EXPECT_EQ(orphan_rows(db()), 0);
    for (const SnapshotInfo& info : list) EXPECT_EQ(store.load(info.id).summary().links, info.summary.links);
  }
  EXPECT_EQ(integrity(db()), "ok");
}

TEST_F(SnapshotStoreTest, RandomBytesAreNotADatabaseAndAreLeftAlone) {
  std::string bytes(64 * 1024, '\0');
  std::mt19937 random(7);
  for (char& c : bytes) c = static_cast<char>(random());
  std::ofstream(db(), std::ios::binary) << bytes;

  DbError e = expect_db_error([&] { SnapshotStore store(db()); });
  EXPECT_EQ(e.kind(), DbErrorKind::NotADatabase);
  EXPECT_EQ(e.path(), db());
  EXPECT_EQ(std::string(e.what()), db() + ": cannot read the database: file is not a database");
  std::stringstream after;
  after << std::ifstream(db(), std::ios::binary).rdbuf();
  EXPECT_EQ(after.str(), bytes);
}

TEST_F(SnapshotStoreTest, TruncatedDatabaseIsReportedAsDamaged) {
  {
    SnapshotStore store(db());
    for (int i = 0; i < 3; ++i) store.save(make_synthetic("clos3:pods=2,leaves_per_pod=4,hosts_per_leaf=32"));
  }
  ASSERT_FALSE(fs::exists(db() + "-wal"));  // checkpointed on close: the file holds everything
  uintmax_t size = fs::file_size(db());
  for (uintmax_t keep : {size / 2, size - 4096, uintmax_t{50}}) {
    SCOPED_TRACE(keep);
    fs::path copy = dir_.path() / ("truncated-" + std::to_string(keep) + ".db");
    fs::copy_file(db(), copy);
    fs::resize_file(copy, keep);
    DbError e = expect_db_error([&] {
      SnapshotStore store(copy.string());
      for (const SnapshotInfo& info : store.list()) store.load(info.id);
    });
    EXPECT_EQ(e.path(), copy.string());
    EXPECT_TRUE(e.kind() == DbErrorKind::Corrupt || e.kind() == DbErrorKind::NotADatabase) << e.what();
    EXPECT_NE(std::string(e.what()).find("malformed"), std::string::npos) << e.what();
  }
}

TEST_F(SnapshotStoreTest, AnotherApplicationsDatabaseIsRefusedUntouched) {
  {
    Connection other(db(), milliseconds(100));
    other.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY)", "create");
  }
  DbError e = expect_db_error([&] { SnapshotStore store(db()); });
  EXPECT_EQ(e.kind(), DbErrorKind::NotOurs);
  EXPECT_NE(std::string(e.what()).find("not a topo-aware snapshot database"), std::string::npos) << e.what();
  Connection check(db(), milliseconds(100));
  EXPECT_EQ(check.query_int("SELECT count(*) FROM sqlite_schema WHERE name = 'snapshot'", "q"), 0);

  fs::path marked = dir_.path() / "marked.db";
  {
    Connection other(marked.string(), milliseconds(100));
    other.exec("PRAGMA application_id = 42", "mark");
  }
  DbError e2 = expect_db_error([&] { SnapshotStore store(marked.string()); });
  EXPECT_EQ(e2.kind(), DbErrorKind::NotOurs);
  EXPECT_NE(std::string(e2.what()).find("application_id 0x2a"), std::string::npos) << e2.what();
}

TEST_F(SnapshotStoreTest, SchemaNewerThanThisBuildIsRefusedUntouched) {
  {
    SnapshotStore store(db());
    store.save(make_synthetic(kFaulty));
  }
  const int newer = kSchemaVersion + 1;
  {
    Connection c(db(), milliseconds(100));
    c.exec("PRAGMA user_version = " + std::to_string(newer), "bump");
  }
  DbError e = expect_db_error([&] { SnapshotStore store(db()); });
  EXPECT_EQ(e.kind(), DbErrorKind::SchemaTooNew);
  EXPECT_EQ(e.path(), db());
  EXPECT_NE(std::string(e.what()).find("schema version " + std::to_string(newer) + " is newer"), std::string::npos)
      << e.what();
  Connection c(db(), milliseconds(100));
  EXPECT_EQ(c.query_int("PRAGMA user_version", "q"), newer);
  EXPECT_EQ(c.query_int("SELECT count(*) FROM snapshot", "q"), 1);
}

TEST_F(SnapshotStoreTest, MigrationsRunOnceMarkTheFileAndSurviveTwoProcessesOpeningAtOnce) {
  // An empty file is a new database.
  std::ofstream(db()).close();
  {
    SnapshotStore store(db());
    EXPECT_EQ(store.schema_version(), kSchemaVersion);
  }
  {
    Connection c(db(), milliseconds(100));
    EXPECT_EQ(c.query_int("PRAGMA application_id", "q"), kApplicationId);
    EXPECT_EQ(c.query_int("PRAGMA user_version", "q"), kSchemaVersion);
    Statement mode = c.prepare("PRAGMA journal_mode");
    ASSERT_TRUE(mode.step());
    EXPECT_EQ(mode.column_text(0), "wal");
    int64_t tables = c.query_int("SELECT count(*) FROM sqlite_schema WHERE type = 'table'", "q");
    { SnapshotStore again(db()); }
    EXPECT_EQ(c.query_int("SELECT count(*) FROM sqlite_schema WHERE type = 'table'", "q"), tables);
  }  // closed: no connection may be open across the fork below

  // Two processes creating the same fresh database race through the migration.
  std::string fresh = (dir_.path() / "fresh.db").string();
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(go[1]);
    char byte;
    int code = read(go[0], &byte, 1) == 1 ? 0 : 3;
    try {
      SnapshotStore store(fresh);
      store.save(make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2"));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      code = 1;
    }
    _exit(code);
  }
  close(go[0]);
  (void)!write(go[1], "g", 1);
  close(go[1]);
  SnapshotStore store(fresh);
  store.save(make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2"));
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(store.list().size(), 2u);
  EXPECT_EQ(store.schema_version(), kSchemaVersion);
}

TEST_F(SnapshotStoreTest, LockedDatabaseGivesLockedAfterTheBusyTimeout) {
  Fabric f = make_synthetic(kFaulty);
  {
    SnapshotStore store(db());
    store.save(f);
  }
  Connection holder(db(), milliseconds(100));
  holder.exec("BEGIN EXCLUSIVE", "lock");

  // Opening and reading still work: WAL readers do not wait for the writer.
  SnapshotStore store(db(), {.busy_timeout = milliseconds(150)});
  EXPECT_EQ(store.list().size(), 1u);
  auto start = std::chrono::steady_clock::now();
  DbError e = expect_db_error([&] { store.save(f); });
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(e.kind(), DbErrorKind::Locked);
  EXPECT_EQ(e.path(), db());
  EXPECT_NE(std::string(e.what()).find("database is locked"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("busy timeout 150 ms"), std::string::npos) << e.what();
  EXPECT_GE(waited, milliseconds(140));
  EXPECT_LT(waited, milliseconds(5000));

  holder.exec("ROLLBACK", "unlock");
  EXPECT_EQ(store.save(f), 2);
}

TEST_F(SnapshotStoreTest, LockReleasedWithinTheBusyTimeoutLetsTheSaveThrough) {
  Fabric f = make_synthetic(kFaulty);
  SnapshotStore store(db(), {.busy_timeout = milliseconds(10000)});
  store.save(f);
  Connection holder(db(), milliseconds(100));
  holder.exec("BEGIN EXCLUSIVE", "lock");
  std::thread release([&] {
    std::this_thread::sleep_for(milliseconds(150));
    holder.exec("COMMIT", "unlock");
  });
  auto start = std::chrono::steady_clock::now();
  int64_t id = store.save(f);
  auto waited = std::chrono::steady_clock::now() - start;
  release.join();
  EXPECT_EQ(id, 2);
  EXPECT_GE(waited, milliseconds(100));
}

TEST_F(SnapshotStoreTest, UnopenablePathNamesThePath) {
  std::string path = (dir_.path() / "no-such-dir" / "fabric.db").string();
  DbError e = expect_db_error([&] { SnapshotStore store(path); });
  EXPECT_EQ(e.kind(), DbErrorKind::CantOpen);
  EXPECT_EQ(e.path(), path);
  EXPECT_EQ(std::string(e.what()).rfind(path + ": cannot open the database", 0), 0u) << e.what();
}

TEST_F(SnapshotStoreTest, ADatabaseWrittenAtSchemaVersion1StillLoads) {
  std::stringstream sql;
  sql << std::ifstream(std::string(TOPO_FIXTURES) + "/db/schema_v1.sql").rdbuf();
  ASSERT_FALSE(sql.str().empty());
  {
    Connection c(db(), milliseconds(100));
    c.exec(sql.str(), "load the fixture");
  }
  SnapshotStore store(db());
  auto list = store.list();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].taken_at, "2026-12-02T14:16:51Z");
  const std::string base = "leafspine:leaves=2,hosts_per_leaf=4,spines=2";
  Fabric first = store.load(1), second = store.load(2);
  EXPECT_TRUE(diff(make_synthetic(base + ",degrade=leaf02:5"), first).empty());
  EXPECT_TRUE(diff(make_synthetic(base + ",unplug=leaf01:6"), second).empty());
  EXPECT_EQ(first.faults().size(), 1u);
  // Saved before NVLink domains existed: none, and no findings about them.
  EXPECT_TRUE(first.domains().empty());
  EXPECT_TRUE(first.domains().reports().empty());
  const auto& gpus = first.node(*first.find_host("gpu001")).gpus;
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[1].pci_bus, "0000:31:00.0");

  auto changes = diff(first, second);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].kind, ChangeKind::LinkGone);
  EXPECT_EQ(changes[0].subject, "leaf01:6 <-> spine02:1");
  EXPECT_EQ(changes[1].kind, ChangeKind::LinkFaster);
  EXPECT_EQ(changes[1].subject, "leaf02:5 <-> spine01:3");
}

// Each host's claim and GPU records come back, and with them the same
// domains and the same findings (a GPU not completed, a host whose GPUs
// disagree), resolved against the saved generation's bounds.
TEST_F(SnapshotStoreTest, NvlinkDomainsRoundTripWithTheirFindings) {
  Fabric original = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2");
  std::vector<HostNvlink> reports(8);
  for (int h = 0; h < 6; ++h) {
    std::vector<GpuFabric> gpus;
    for (int g = 0; g < 4; ++g)
      gpus.push_back({fmt::format("00000008:0{}:00.0", g + 1), "Completed", "Success", h < 3 ? "11" : "12",
                      "2f1e0d9c-8b7a-4695-8483-726150f4e3d2"});
    reports[h] = host_nvlink(std::move(gpus));
  }
  reports[1].gpus[3].state = "In Progress";
  reports[4].gpus[0].clique_id = "13";
  reports[6].claimed = DomainKey{"", "block7"};  // from a Slurm block: no GPUs
  NvlinkSpec spec = *nvlink_spec("nvlink4");
  original.set_nvlink(reports, spec);
  ASSERT_EQ(original.faults().size(), 2u);

  SnapshotStore store(db());
  int64_t id = store.save(original);
  Fabric loaded = store.load(id);
  EXPECT_EQ(loaded.domains().reports(), original.domains().reports());
  EXPECT_EQ(loaded.domains().spec(), spec);
  ASSERT_EQ(loaded.domains().count(), 3u);
  for (int h = 0; h < 8; ++h) EXPECT_EQ(loaded.domains().domain_of(h), original.domains().domain_of(h)) << h;
  ASSERT_EQ(loaded.faults().size(), 2u);
  EXPECT_EQ(loaded.faults()[1].kind, FaultKind::NvlinkDisagreement);
  EXPECT_EQ(store.info(id).faults, 2);
  EXPECT_TRUE(diff(original, loaded).empty());

  // A fabric given no domains saves none and loads with none.
  Fabric plain = store.load(store.save(make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2")));
  EXPECT_TRUE(plain.domains().reports().empty());
}

TEST_F(SnapshotStoreTest, StaticRoutingRoundTripsWithLidsAndEveryTable) {
  Fabric original = make_synthetic(kFaulty);
  Routing routing = testing::shortest_path_routing(original, "", "opensm-dump:/var/log/opensm-lfts.dump");
  // A shorter table and a hole: both must come back as they were.
  routing.lft[0].resize(routing.lft[0].size() - 3);
  routing.lft[1][original.node(original.hcas()[0]).lid] = kNoPort;
  original.set_routing(routing);

  SnapshotStore store(db());
  int64_t id = store.save(original);
  Fabric loaded = store.load(id);
  expect_same_fabric(original, loaded);
  EXPECT_EQ(store.info(id).routing, "static");
  EXPECT_EQ(routing_name(loaded.routing()), "static");

  // The walk through the loaded tables is the walk through the saved ones.
  NodeId from = original.hcas()[0], to = original.hcas()[original.hcas().size() - 5];  // clear of the cut and the hole
  StaticRoute a = trace_static_route(original, from, to), b = trace_static_route(loaded, from, to);
  ASSERT_EQ(a.status, RouteStatus::Ok) << name(a.status) << " at " << original.node(a.stuck_at).name;
  ASSERT_EQ(a.hops.size(), b.hops.size());
  for (size_t i = 0; i < a.hops.size(); ++i) {
    EXPECT_EQ(a.hops[i].from, b.hops[i].from);
    EXPECT_EQ(a.hops[i].out_port, b.hops[i].out_port);
  }

  // An emulated engine's tables keep their name.
  Fabric emulated = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2");
  Routing ftree = testing::shortest_path_routing(emulated, "ftree", "emulated");
  ftree.emulated = true;
  emulated.set_routing(ftree);
  int64_t id2 = store.save(emulated);
  expect_same_fabric(emulated, store.load(id2));
  EXPECT_EQ(store.info(id2).routing, "static:ftree");
  EXPECT_EQ(store.list().back().routing, "static:ftree");
}

TEST_F(SnapshotStoreTest, LidsASourceGaveComeBackAsGiven) {
  FabricBuilder b;
  b.add_switch("S-1", "leaf", 8, 1);
  b.add_hca("H-1", "gpu001 mlx5_0", 1, 2);
  b.add_hca("H-2", "gpu002 mlx5_0", 1, 3);
  b.connect("H-1", 1, "S-1", 1, {LinkWidth::X4, LinkSpeed::NDR});
  b.connect("H-2", 1, "S-1", 2, {LinkWidth::X4, LinkSpeed::NDR});
  b.set_lid("S-1", 0x2a);
  b.set_lid("H-1", 7);
  b.set_lid("H-2", 0x101);
  Fabric original = std::move(b).finish();
  SnapshotStore store(db());
  Fabric loaded = store.load(store.save(original));
  expect_same_fabric(original, loaded);
  EXPECT_EQ(loaded.node_by_lid(0x101), loaded.find("H-2"));
  EXPECT_EQ(loaded.routing().kind, RoutingKind::Adaptive);
}

TEST_F(SnapshotStoreTest, ASnapshotSavedBeforeRoutingWasStoredLoadsAsAdaptive) {
  // The database as the previous build left it: its migrations only, and a
  // snapshot's rows in the columns that build wrote.
  const std::string old_db = (dir_.path() / "old.db").string();
  {
    Connection c(old_db, milliseconds(1000));
    prepare_schema(c, 2);
    ASSERT_EQ(schema_version(c), 2);
  }
  Fabric original = with_gpus(make_synthetic(kFaulty));
  {
    SnapshotStore now(db());
    Fabric routed = original;
    routed.set_routing(testing::shortest_path_routing(routed, "ftree", "emulated"));
    now.save(routed);
  }
  {
    Connection c(old_db, milliseconds(1000));
    c.exec(fmt::format("ATTACH DATABASE '{}' AS now", db()), "attach");
    c.exec(
        "INSERT INTO snapshot SELECT id, taken_at, source, host_pattern, hosts, hcas, switches, leaves, spines, "
        "cores, links, pods, rails, rail_optimized, faults FROM now.snapshot;"
        "INSERT INTO host SELECT * FROM now.host;"
        "INSERT INTO gpu SELECT * FROM now.gpu;"
        "INSERT INTO hca SELECT snapshot_id, ordinal, node_id, description, host, device, rail, guid, ports "
        "FROM now.hca;"
        "INSERT INTO switch SELECT snapshot_id, ordinal, node_id, name, guid, ports, level, pod, down_gbps, "
        "up_gbps FROM now.switch;"
        "INSERT INTO link SELECT * FROM now.link;",
        "copy the rows an older build would have written");
    c.exec("DETACH DATABASE now", "detach");
    ASSERT_EQ(c.query_int("PRAGMA user_version", "version"), 2);
  }
  SnapshotStore store(old_db);
  EXPECT_EQ(store.schema_version(), kSchemaVersion);
  EXPECT_EQ(store.info(1).routing, "adaptive");
  Fabric loaded = store.load(1);
  // Adaptive, with the LIDs numbered as a fabric without any gets them.
  expect_same_fabric(original, loaded);
  EXPECT_FALSE(loaded.routing().is_static());
  // And the migrated database takes static snapshots from now on.
  original.set_routing(testing::shortest_path_routing(original));
  expect_same_fabric(original, store.load(store.save(original)));
}

TEST_F(SnapshotStoreTest, AStaticSnapshotWithATableMissingIsReported) {
  {
    SnapshotStore store(db());
    Fabric f = make_synthetic(kFaulty);
    f.set_routing(testing::shortest_path_routing(f));
    store.save(f);
    store.save(f);
  }
  {
    Connection c(db(), milliseconds(100));
    c.exec(
        "DELETE FROM lft WHERE snapshot_id = 1 AND switch = (SELECT ordinal FROM switch WHERE snapshot_id = 1 "
        "AND name = 'spine02')",
        "tamper");
    c.exec("UPDATE snapshot SET routing = 'ecmp' WHERE id = 2", "tamper");
  }
  SnapshotStore store(db());
  DbError e = expect_db_error([&] { store.load(1); });
  EXPECT_EQ(e.kind(), DbErrorKind::Inconsistent);
  EXPECT_NE(std::string(e.what()).find("snapshot 1: static routing without a forwarding table for switch spine02"),
            std::string::npos)
      << e.what();
  DbError e2 = expect_db_error([&] { store.load(2); });
  EXPECT_NE(std::string(e2.what()).find("routing 'ecmp' is neither"), std::string::npos) << e2.what();
}

TEST_F(SnapshotStoreTest, StoredRowsThatDoNotRebuildTheSameFabricAreReported) {
  {
    SnapshotStore store(db());
    store.save(make_synthetic(kFaulty));
    store.save(make_synthetic(kFaulty));
  }
  {
    // Tampering stands in for a bug or a hand edit: load must not hide it.
    Connection c(db(), milliseconds(100));
    c.exec("UPDATE switch SET level = 'core' WHERE snapshot_id = 1 AND name = 'spine02'", "tamper");
    c.exec("DELETE FROM link WHERE snapshot_id = 2 AND ordinal = 5", "tamper");
  }
  SnapshotStore store(db());
  DbError e = expect_db_error([&] { store.load(1); });
  EXPECT_EQ(e.kind(), DbErrorKind::Inconsistent);
  EXPECT_NE(std::string(e.what()).find("snapshot 1: switch spine02 was saved as core"), std::string::npos) << e.what();
  DbError e2 = expect_db_error([&] { store.load(2); });
  EXPECT_EQ(e2.kind(), DbErrorKind::Inconsistent);
  EXPECT_NE(std::string(e2.what()).find("snapshot 2: link at position 5 is missing"), std::string::npos) << e2.what();
}

}  // namespace
}  // namespace topo
