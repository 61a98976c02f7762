// NIC counters of a RoCE fabric, as `ethtool -S IFACE` prints them.
//
// On Ethernet the faults that hurt RDMA are flow control and congestion,
// not link width: a port that keeps sending PFC pause frames stalls every
// flow of its priority upstream (a pause storm), and a path whose switches
// mark ECN far more than its peers' is congested. The Mellanox/NVIDIA mlx5
// driver counts both per port; this reader keeps those counters and leaves
// the rest (a ConnectX prints hundreds of per-queue counters).
//
// The file format. One file per host, the collections of its NICs one after
// another, each after a `# iface NAME` line:
//
//   # host gpu01                  (optional; else the file name's stem)
//   # time 1764759600.25          (optional: when it was read, Unix seconds)
//   # iface eth1
//   NIC statistics:
//        rx_pause_ctrl_phy: 0
//        tx_prio3_pause: 1523
//        ...
//   # iface eth2
//   NIC statistics:
//        ...
//
// which is what this loop on the host writes:
//   { echo "# host $(hostname -s)"; echo "# time $(date +%s.%N)";
//     for i in eth1 eth2; do echo "# iface $i"; ethtool -S $i;
//       for f in /sys/class/net/$i/device/infiniband/*/ports/1/hw_counters/{np,rp}_*;
//       do echo "     ${f##*/}: $(cat $f)"; done; done; } > DIR/$(hostname -s).txt
// The host name comes from the `# host` line when there is one, else from
// the file's name without its extension (gpu01.txt is gpu01). The `# time`
// line (`date +%s.%N`) dates the file's NICs, so that hosts read a few
// seconds apart by pdsh get exact rates; without it they take the
// collection's time. Both lines come before the first `# iface`. Other `#`
// lines, blank lines and the `NIC statistics:` header are skipped.
//
// Counters kept (names as the kernel's mlx5 counters documentation,
// Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst,
// lists them; a driver that prints none of them yields a NIC with no
// counters, which is not an error):
//   rx_pause_ctrl_phy, tx_pause_ctrl_phy        link-level pause frames
//   rx_prio0_pause .. rx_prio7_pause, tx_...    PFC frames per priority
//   rx_prioN_pause_duration, tx_..., rx_global_pause_duration, tx_...
//                                               time paused, microseconds
//   tx_pause_storm_warning_events, tx_pause_storm_error_events
//                                               the NIC's own storm watchdog
//   np_ecn_marked_roce_packets, np_cnp_sent, rp_cnp_handled, rp_cnp_ignored
//                                               ECN marks received and the
//                                               CNPs of DCQCN; mlx5 exposes
//                                               these as RDMA hw_counters
//                                               (/sys/class/infiniband/DEV/
//                                               ports/N/hw_counters/), not
//                                               through ethtool: append them
//                                               to the same section
//   rx_discards_phy, tx_discards_phy, rx_out_of_buffer   drops
//   rx_bytes_phy, tx_bytes_phy                  bytes on the wire
//   rx_bytes, tx_bytes, rx_dropped, tx_dropped  the kernel's generic
//                                               /sys/class/net/IFACE/statistics,
//                                               for NICs that have no _phy ones
// Every other `name: value` line is read (it must have that shape) and
// dropped: its value is not checked, since drivers print what they like.
//
// Bad input (a counter before any `# iface`, a line that is not
// `name: value`, a kept counter whose value is not an unsigned 64-bit
// number, a counter or NIC twice) throws ParseError naming the file, the
// line and the field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <istream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace topo {

// One NIC's kept counters at one moment.
struct NicSample {
  std::string host;
  std::string iface;  // the netdev: "eth1", "ens1f0np0"
  std::map<std::string, uint64_t, std::less<>> counters;
  int64_t taken_ms = 0;  // Unix milliseconds; 0: the collection's time
  bool operator==(const NicSample&) const = default;
};

// Whether the reader keeps counter `name` (the list above).
bool is_kept_nic_counter(std::string_view name);

// One file's NICs, in file order. `default_host` names them when the file
// has no `# host` line. Throws ParseError.
std::vector<NicSample> parse_ethtool_stats(std::istream& in, const std::string& file, const std::string& default_host);

// The counters of one bare `ethtool -S` output (no `#` lines), for a NIC
// read live. Throws ParseError.
NicSample parse_ethtool_output(std::string_view text, const std::string& host, const std::string& iface);

// Every *.txt file of `dir`, in name order; other files are ignored. Throws
// ParseError (also for a host and NIC given by two files, naming the second)
// or std::runtime_error for a directory that cannot be read or holds no
// such file.
std::vector<NicSample> read_ethtool_dir(const std::filesystem::path& dir);

}  // namespace topo
