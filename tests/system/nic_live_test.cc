// topoctl health --ethtool-local on real NICs: a veth pair between two
// network namespaces, the one end named eth0 as gpu01's first NIC of the
// LLDP fixture fabric. Real `ethtool -S` runs on it (veth prints per-queue
// XDP counters, none of them kept) and the kernel's
// /sys/class/net/eth0/statistics give the bytes; pings between two
// collections must show as traffic on gpu01 eth0's cable. Root only; the
// namespaces are removed whatever happens.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/topoctl_run.h"

namespace topo {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

int sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

// topoctl under `prefix` (ip netns exec NS): exit code and stdout.
testing::Ran run_in(const std::string& prefix, const std::string& args) {
  testing::Ran r;
  FILE* p = popen((prefix + TOPOCTL_PATH + " " + args + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class NicLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root for ip netns and veth pairs";
    if (sh("command -v ethtool") != 0) GTEST_SKIP() << "ethtool is not installed (apt-get install ethtool)";
    a_ = fmt::format("topo-nic-a-{}", getpid());
    b_ = fmt::format("topo-nic-b-{}", getpid());
    dir_ = fs::path(::testing::TempDir()) / ("nic_live_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "topo.db").string();
    ASSERT_EQ(sh(fmt::format("ip netns add {} && ip netns add {}", a_, b_)), 0);
    up_ = true;
    ASSERT_EQ(sh(fmt::format("ip link add eth0 netns {} type veth peer name eth0 netns {}", a_, b_)), 0);
    ASSERT_EQ(sh(fmt::format("ip -n {0} addr add 10.77.0.1/24 dev eth0 && ip -n {0} link set eth0 up && "
                             "ip -n {1} addr add 10.77.0.2/24 dev eth0 && ip -n {1} link set eth0 up",
                             a_, b_)),
              0);
  }
  void TearDown() override {
    if (up_) sh(fmt::format("ip netns del {}; ip netns del {}", a_, b_));
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // topoctl inside namespace a, where eth0 is this host's NIC.
  testing::Ran in_a(const std::string& args) {
    return run_in(fmt::format("ip netns exec {} ", a_), args + " --db " + db_);
  }

  std::string a_, b_;
  fs::path dir_;
  std::string db_;
  bool up_ = false;
};

TEST_F(NicLive, TrafficBetweenTwoLocalCollections) {
  testing::Ran d = testing::run_topoctl("discover --lldp " +
                                        (fs::path(TOPO_FIXTURES) / "lldp" / "twotier-json").string() + " --db " + db_);
  ASSERT_EQ(d.code, 0) << d.err;
  testing::Ran first = in_a("health --ethtool-local --iface eth0 --host gpu01");
  ASSERT_EQ(first.code, 0) << first.out;
  EXPECT_NE(first.out.find("1 NIC, 0 unread"), std::string::npos) << first.out;
  // About 1 MB of UDP out (bash's /dev/udp: no ping needed), ARP both ways.
  // Nothing listens on port 9 in b, whose ICMP port unreachable now and then
  // fails a later write with ECONNREFUSED (about 1 in 100 here): most
  // writes, not every one, must go out.
  ASSERT_EQ(sh(fmt::format("ip netns exec {} bash -c 'sent=0; for i in $(seq 200); do head -c 5000 /dev/zero > "
                           "/dev/udp/10.77.0.2/9 && sent=$((sent + 1)); done; [ $sent -ge 150 ]'",
                           a_)),
            0);
  testing::Ran second = in_a("health --ethtool-local --iface eth0 --host gpu01");
  ASSERT_EQ(second.code, 0) << second.out << second.err;

  testing::Ran h = testing::run_topoctl("health --json --all --db " + db_);
  ASSERT_EQ(h.code, 0) << h.out << h.err;
  const json parsed = json::parse(h.out);
  const json& nics = parsed.at("nic_health").at("nics");
  ASSERT_EQ(nics.size(), 1u) << h.out;
  const json& eth0 = nics[0];
  EXPECT_EQ(eth0.at("link"), "gpu01 eth0:1 <-> leaf01:1");
  EXPECT_GT(eth0.at("tx_gbps").get<double>(), 0);
  EXPECT_GT(eth0.at("rx_gbps").get<double>(), 0);
  EXPECT_EQ(eth0.at("rx_pauses_per_second"), 0);
  EXPECT_TRUE(eth0.at("ecn_marks_per_second").is_null());  // veth has no RDMA device

  // A NIC that does not exist is listed, not fatal; exit 1.
  testing::Ran missing = in_a("health --ethtool-local --iface eth0 --iface eth9 --host gpu01");
  EXPECT_EQ(missing.code, 1) << missing.out << missing.err;
  EXPECT_NE(missing.out.find("not read: gpu01 eth9: no such netdev"), std::string::npos) << missing.out;
}

}  // namespace
}  // namespace topo
