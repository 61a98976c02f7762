#include "tools/topoctl/nic_input.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"

namespace topoctl {
namespace {

namespace fs = std::filesystem;

// Runs `argv` without a shell; its stdout, or why it failed.
bool run_capture(const std::vector<std::string>& argv, std::string& out, std::string& why) {
  int fds[2];
  if (pipe(fds) != 0) {
    why = std::strerror(errno);
    return false;
  }
  pid_t pid = fork();
  if (pid < 0) {
    why = std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  char buf[8192];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  why = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? "ethtool not found"
                                                        : fmt::format("ethtool -S exited with {}", status);
  return false;
}

std::optional<uint64_t> read_number(const fs::path& p) {
  std::ifstream in(p);
  uint64_t v = 0;
  if (in >> v) return v;
  return std::nullopt;
}

void add_sysfs(topo::NicSample& nic) {
  const fs::path net = fs::path("/sys/class/net") / nic.iface;
  if (!nic.counters.count("rx_bytes_phy"))
    for (const char* name : {"rx_bytes", "tx_bytes", "rx_dropped", "tx_dropped"})
      if (auto v = read_number(net / "statistics" / name)) nic.counters.emplace(name, *v);
  std::error_code ec;
  for (fs::directory_iterator dev(net / "device" / "infiniband", ec), end; !ec && dev != end; dev.increment(ec)) {
    std::vector<fs::path> ports;
    for (fs::directory_iterator p(dev->path() / "ports", ec), e2; !ec && p != e2; p.increment(ec))
      ports.push_back(p->path());
    if (ports.size() != 1) continue;
    for (const char* name : {"np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled", "rp_cnp_ignored"})
      if (auto v = read_number(ports[0] / "hw_counters" / name)) nic.counters.emplace(name, *v);
  }
}

std::vector<std::string> rdma_netdevs() {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it("/sys/class/net", ec), end; !ec && it != end; it.increment(ec))
    if (fs::exists(it->path() / "device" / "infiniband", ec)) out.push_back(it->path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

nlohmann::json optional_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::string cell(const std::optional<double>& v, double scale, const char* suffix) {
  return v ? fmt::format("{:.4g}{}", *v * scale, suffix) : "-";
}

}  // namespace

std::string local_host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) throw std::runtime_error("cannot read this host's name");
  std::string host(name);
  return host.substr(0, host.find('.'));
}

LocalNics read_local_nics(const std::string& host, const std::vector<std::string>& wanted) {
  std::vector<std::string> ifaces = wanted.empty() ? rdma_netdevs() : wanted;
  if (ifaces.empty())
    throw std::runtime_error("no netdev with an RDMA device under /sys/class/net; name the NICs with --iface");
  LocalNics out;
  for (const std::string& iface : ifaces) {
    if (!fs::exists(fs::path("/sys/class/net") / iface) || iface.find('/') != std::string::npos) {
      out.unread.push_back(fmt::format("{} {}: no such netdev", host, iface));
      continue;
    }
    std::string text, why;
    topo::NicSample nic{host, iface, {}};
    // A NIC whose driver has no statistics (ethtool exits non-zero) still
    // has the kernel's generic counters.
    if (run_capture({"ethtool", "-S", iface}, text, why)) nic = topo::parse_ethtool_output(text, host, iface);
    add_sysfs(nic);
    if (nic.counters.empty()) {
      out.unread.push_back(fmt::format("{} {}: {}", host, iface, why.empty() ? "no counter kept" : why));
      continue;
    }
    out.nics.push_back(std::move(nic));
  }
  return out;
}

nlohmann::json nic_rates_json(const topo::NicRates& r) {
  nlohmann::json j = {{"host", r.host},
                      {"nic", r.iface},
                      {"link", r.subject},
                      {"tier", topo::name(r.tier)},
                      {"seconds", r.seconds},
                      {"rx_pauses_per_second", r.rx_pauses_per_second},
                      {"tx_pauses_per_second", r.tx_pauses_per_second},
                      {"rx_paused_share", optional_json(r.rx_paused_share)},
                      {"tx_paused_share", optional_json(r.tx_paused_share)},
                      {"ecn_marks_per_second", optional_json(r.ecn_marks_per_second)},
                      {"cnps_sent_per_second", optional_json(r.cnps_sent_per_second)},
                      {"cnps_handled_per_second", optional_json(r.cnps_handled_per_second)},
                      {"discards_per_second", r.discards_per_second},
                      {"rx_gbps", optional_json(r.rx_gbps)},
                      {"tx_gbps", optional_json(r.tx_gbps)},
                      {"reset", r.reset}};
  j["cable"] = r.cable >= 0 ? nlohmann::json(r.cable) : nlohmann::json();
  return j;
}

nlohmann::json nic_finding_json(const topo::NicFinding& x) {
  nlohmann::json j = {{"kind", topo::name(x.kind)}, {"host", x.host},   {"nic", x.iface},           {"link", x.subject},
                      {"counter", x.counter},       {"value", x.value}, {"threshold", x.threshold}, {"detail", x.why}};
  j["cable"] = x.cable >= 0 ? nlohmann::json(x.cable) : nlohmann::json();
  return j;
}

void print_nic_rates(const std::vector<topo::NicRates>& rates, bool all) {
  size_t shown = 0;
  for (const topo::NicRates& r : rates) {
    bool noisy = r.rx_pauses_per_second > 0 || r.tx_pauses_per_second > 0 || r.ecn_marks_per_second.value_or(0) > 0 ||
                 r.discards_per_second > 0;
    if (!all && !noisy) continue;
    if (shown++ == 0)
      fmt::print("{:<16} {:<12} {:>11} {:>11} {:>8} {:>8} {:>10} {:>10} {:>10} {:>10}\n", "host", "nic", "rx pause/s",
                 "tx pause/s", "rx paused", "tx paused", "ecn/s", "cnp sent/s", "cnp hdl/s", "discards/s");
    fmt::print("{:<16} {:<12} {:>11.4g} {:>11.4g} {:>8} {:>8} {:>10} {:>10} {:>10} {:>10.4g}\n", r.host, r.iface,
               r.rx_pauses_per_second, r.tx_pauses_per_second, cell(r.rx_paused_share, 100, "%"),
               cell(r.tx_paused_share, 100, "%"), cell(r.ecn_marks_per_second, 1, ""),
               cell(r.cnps_sent_per_second, 1, ""), cell(r.cnps_handled_per_second, 1, ""), r.discards_per_second);
  }
  if (shown == 0) fmt::print("no pause, ECN mark or discard on any of {} NICs\n", rates.size());
}

}  // namespace topoctl
