#include "fabric/link_rate.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace topo {
namespace {

struct SpeedEntry {
  LinkSpeed speed;
  std::string_view name;
  double lane_gbps;
};

// Per-lane data rates after encoding; Ethernet entries are whole-port rates.
constexpr std::array<SpeedEntry, 18> kSpeeds{{
    {LinkSpeed::SDR, "SDR", 2.0},
    {LinkSpeed::DDR, "DDR", 4.0},
    {LinkSpeed::QDR, "QDR", 8.0},
    {LinkSpeed::FDR10, "FDR10", 10.0},
    {LinkSpeed::FDR, "FDR", 13.64},
    {LinkSpeed::EDR, "EDR", 25.0},
    {LinkSpeed::HDR, "HDR", 50.0},
    {LinkSpeed::NDR, "NDR", 100.0},
    {LinkSpeed::XDR, "XDR", 200.0},
    {LinkSpeed::Eth10G, "10GbE", 10.0},
    {LinkSpeed::Eth25G, "25GbE", 25.0},
    {LinkSpeed::Eth40G, "40GbE", 40.0},
    {LinkSpeed::Eth50G, "50GbE", 50.0},
    {LinkSpeed::Eth100G, "100GbE", 100.0},
    {LinkSpeed::Eth200G, "200GbE", 200.0},
    {LinkSpeed::Eth400G, "400GbE", 400.0},
    {LinkSpeed::Eth800G, "800GbE", 800.0},
    {LinkSpeed::Eth1G, "1GbE", 1.0},
}};

std::string upper(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

const SpeedEntry& entry(LinkSpeed s) { return kSpeeds[static_cast<size_t>(s)]; }

}  // namespace

int lanes(LinkWidth w) { return static_cast<int>(w); }

double lane_gbps(LinkSpeed s) { return entry(s).lane_gbps; }

bool is_ethernet(LinkSpeed s) { return s >= LinkSpeed::Eth10G; }

double LinkRate::gbps() const { return is_ethernet(speed) ? lane_gbps(speed) : lanes(width) * lane_gbps(speed); }

std::string LinkRate::str() const {
  if (is_ethernet(speed)) return std::string(name(speed));
  return std::string(name(width)) + std::string(name(speed));
}

std::string_view name(LinkWidth w) {
  switch (w) {
    case LinkWidth::X1:
      return "1x";
    case LinkWidth::X2:
      return "2x";
    case LinkWidth::X4:
      return "4x";
    case LinkWidth::X8:
      return "8x";
    case LinkWidth::X12:
      return "12x";
  }
  return "?x";
}

std::string_view name(LinkSpeed s) { return entry(s).name; }

std::string_view name(PortState s) {
  switch (s) {
    case PortState::Down:
      return "Down";
    case PortState::Init:
      return "Init";
    case PortState::Armed:
      return "Armed";
    case PortState::Active:
      return "Active";
  }
  return "Unknown";
}

std::optional<LinkWidth> parse_width(std::string_view text) {
  std::string t = upper(text);
  if (t.starts_with("W=")) t.erase(0, 2);
  if (!t.empty() && t.back() == 'X') t.pop_back();
  if (t == "1") return LinkWidth::X1;
  if (t == "2") return LinkWidth::X2;
  if (t == "4") return LinkWidth::X4;
  if (t == "8") return LinkWidth::X8;
  if (t == "12") return LinkWidth::X12;
  return std::nullopt;
}

std::optional<LinkSpeed> parse_speed(std::string_view text) {
  std::string t = upper(text);
  if (t.ends_with("GBE")) t.erase(t.size() - 2);  // "100GbE" -> "100G"
  if (t.ends_with("G")) t += "BE";
  for (const SpeedEntry& e : kSpeeds)
    if (upper(e.name) == t) return e.speed;
  return std::nullopt;
}

std::optional<LinkRate> parse_rate(std::string_view text) {
  if (auto eth = parse_speed(text); eth && is_ethernet(*eth)) return LinkRate{LinkWidth::X1, *eth};
  std::string t = upper(text);
  size_t x = t.find('X');
  if (x == std::string::npos) return std::nullopt;
  auto w = parse_width(std::string_view(t).substr(0, x + 1));
  auto s = parse_speed(std::string_view(t).substr(x + 1));
  if (!w || !s) return std::nullopt;
  return LinkRate{*w, *s};
}

}  // namespace topo
