// Link width, signalling speed and the data rate they give.
//
// An InfiniBand link is a number of lanes (its width) each running at one
// speed generation; its data rate is lanes x per-lane data rate after line
// encoding. RoCE ports are modelled as a single lane at an Ethernet rate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace topo {

enum class LinkWidth : uint8_t { X1 = 1, X2 = 2, X4 = 4, X8 = 8, X12 = 12 };

enum class LinkSpeed : uint8_t {
  SDR,
  DDR,
  QDR,
  FDR10,
  FDR,
  EDR,
  HDR,
  NDR,
  XDR,
  // Ethernet (RoCE) port rates, one lane each. 1GbE comes last so that the
  // values stored before it keep their meaning; it is what a management
  // port or a link that fell back to 1000BASE-T negotiates.
  Eth10G,
  Eth25G,
  Eth40G,
  Eth50G,
  Eth100G,
  Eth200G,
  Eth400G,
  Eth800G,
  Eth1G,
};

// Port state as the subnet manager reports it (IBTA PortInfo:PortState).
enum class PortState : uint8_t { Down = 1, Init = 2, Armed = 3, Active = 4 };

struct LinkRate {
  LinkWidth width = LinkWidth::X4;
  LinkSpeed speed = LinkSpeed::NDR;

  // Usable data rate in Gb/s after line encoding (4xNDR = 400, 4xHDR = 200).
  double gbps() const;
  // "4xNDR", or "100GbE" for Ethernet.
  std::string str() const;

  friend bool operator==(const LinkRate&, const LinkRate&) = default;
};

int lanes(LinkWidth w);
// Per-lane data rate in Gb/s: SDR 2, DDR 4, QDR 8, FDR10 10, FDR 13.64,
// EDR 25, HDR 50, NDR 100, XDR 200 (IBTA spec, after 8b/10b or 64b/66b).
double lane_gbps(LinkSpeed s);
bool is_ethernet(LinkSpeed s);

std::string_view name(LinkWidth w);  // "4x"
std::string_view name(LinkSpeed s);  // "NDR", "100GbE"
std::string_view name(PortState s);  // "Active"

// Parsers accept the spellings ibnetdiscover, Slurm and admins use:
// "4x"/"4"/"w=4", "NDR"/"ndr", "100GbE"/"100G". nullopt when unknown.
std::optional<LinkWidth> parse_width(std::string_view text);
std::optional<LinkSpeed> parse_speed(std::string_view text);
// "4xNDR", "4XNDR", "100GbE".
std::optional<LinkRate> parse_rate(std::string_view text);

}  // namespace topo
