// A RoCE fabric from LLDP: lldpd's neighbour tables, and plain link tables.
//
// Ethernet has no subnet manager to ask. Every host and switch that runs
// lldpd knows, per port, the system and port cabled to it; put together,
// those tables are the fabric. Two inputs are read:
//
// - lldpcli's JSON, one file per system (host or switch running lldpd, as
//   SONiC and Cumulus do). A file holds one or more of the documents that
//   `lldpcli -f json|json0 show chassis`, `show interfaces` and
//   `show neighbors details` print, concatenated:
//       { lldpcli -f json show chassis; lldpcli -f json show interfaces;
//         lldpcli -f json show neighbors details; } > DIR/<anything>.json
//   The system's name comes from the file when it holds the local chassis
//   (`show chassis` or `show interfaces`). A file of neighbours alone (what
//   `lldpcli -f json show neighbors details` prints, the one command docs
//   tell admins to run) is placed from the other files: the rows that see
//   its ports name it (lldp_placement.h); a file that cannot be placed comes
//   back as an UnplacedFile finding and the rest is still built. Files may
//   have any name. Both of lldpcli's shapes are read:
//   `-f json` collapses one-element lists into objects and keys interfaces
//   and chassis by name; `-f json0` never collapses.
// - CSV, `switch,port,peer,peer_port,speed`, one cable a line as an admin
//   exports it from another switch OS (header line, blank lines and '#'
//   comments allowed; speed may be empty).
//
// What becomes what: a system named in a CSV's switch column is a switch; a
// system whose chassis advertises neither Bridge nor Router (a station) is a
// host, and every system cabled to such a host is a switch. Otherwise Bridge
// or Router enabled makes a switch, except Router with ports advertised by
// MAC: that is lldpd on a Linux host that forwards IP (Docker's bridge and
// IP forwarding advertise Bridge and Router), as switch OSes name their
// ports (ifname or local) and plain lldpd bridges do not route. Systems with
// no capabilities advertised are hosts. Each cabled port of a host is an HCA
// (its description "<host> <port>", so the default HostNaming takes the
// port's trailing number as its rail: eth1 and ens1f1np1 are rail 1). A
// switch port's number is the trailing number of its name when every port of
// that switch has a distinct non-zero one (swp5 is port 5), else its place in
// the names' natural order. Levels, pods, rails and degraded cables come from
// the shape, as for every other source (classify.h).
//
// Management networks are left out: when the switches fall apart into
// groups not cabled to each other, a group is out of band when every host it
// reaches has more bandwidth into another group (a host's 1G or single
// management NIC on an out-of-band switch, beside its RoCE NICs).
//
// A cable's speed, first found wins: LldpOptions::port_speeds (ethtool's
// figure, by either end), the CSV's speed, the MAU type lldpd advertises
// (auto-negotiation "current", e.g. "100GbaseCR4"), a speed in the port
// description ("100G"), LldpOptions::default_rate.
//
// Bad input (JSON that does not parse, a document of another shape, a CSV
// line without five fields, an unknown speed, JSON nested past 64 levels, a
// line past 1 MiB or a file past 64 MiB) throws ParseError naming the file,
// the line and the field. What only a whole view can tell (a NIC with
// no neighbour, a cable seen from one end only, two systems claiming one
// port, a file no other table names) comes back as findings beside the
// fabric, never as an exception.
#pragma once

#include <filesystem>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/fabric.h"

namespace topo {

// A port by system and port name, as LLDP names them: {"leaf01", "swp5"}.
struct LldpPort {
  std::string system;
  std::string port;
  friend auto operator<=>(const LldpPort&, const LldpPort&) = default;
};

// One row of a neighbour table: `local` sees `remote` on its port.
struct LldpSighting {
  LldpPort local;
  LldpPort remote;
  std::optional<LinkRate> rate;     // from the MAU type, the port description or the CSV
  std::string where;                // "file:line", for findings
  bool remote_port_by_mac = false;  // the far port advertised its MAC as its id
};

// The capabilities a chassis advertises as enabled.
struct LldpCapabilities {
  bool bridge = false;
  bool router = false;
  friend bool operator==(const LldpCapabilities&, const LldpCapabilities&) = default;
};

// What one file (or several files naming the same system) says.
struct LldpSystemView {
  std::string name;                      // empty when the file names no local chassis
  std::optional<LldpCapabilities> caps;  // when the local chassis advertises any
  std::vector<std::string> ports;        // local interfaces (`show interfaces`), cabled or not
  std::vector<LldpSighting> neighbours;
  // Capabilities the neighbours' chassis advertise, by system.
  std::map<std::string, LldpCapabilities> peer_caps;
  std::string file;
};

enum class LldpFindingKind : uint8_t {
  NicWithoutNeighbour,  // a host port lldpd runs on that sees no one
  OneSidedCable,        // seen from one end; the other end's table does not list it
  PortClaimedTwice,     // two systems say they are cabled to the same port
  UnplacedFile,         // a file of neighbours alone that no other table names
};

struct LldpFinding {
  LldpFindingKind kind;
  std::string subject;  // "gpu06:eth1", "leaf01:swp3", or the file
  std::string detail;   // a sentence for the admin
};

std::string_view name(LldpFindingKind kind);

struct LldpOptions {
  HostNaming naming;
  // Speeds measured on a port (ethtool), "system:port" -> rate; they win over
  // what LLDP says for the cable on that port.
  std::map<std::string, LinkRate> port_speeds;
  // For cables whose speed no source gives.
  LinkRate default_rate{LinkWidth::X1, LinkSpeed::Eth100G};
};

struct LldpFabric {
  Fabric fabric;
  std::vector<LldpFinding> findings;
  std::vector<std::string> out_of_band;  // switches of a management network, left out
};

// One lldpcli JSON file's text. Throws ParseError.
LldpSystemView parse_lldpcli_json(std::string_view text, const std::string& file);
// A CSV link table. Throws ParseError.
std::vector<LldpSighting> parse_lldp_csv(std::istream& in, const std::string& file);
// The speed an LLDP MAU type names ("10GbaseT", "100GbaseCR4 - ...",
// "1000BaseTFD"); nullopt when it names none this model knows.
std::optional<LinkRate> parse_mau_rate(std::string_view mau);

// The fabric the views and the CSV rows describe; views without a name are
// placed first (UnplacedFile findings for those that cannot be). Throws
// FabricError (naming the ports) when the views cannot form a fabric.
LldpFabric build_lldp_fabric(std::vector<LldpSystemView> views, const std::vector<LldpSighting>& csv,
                             const LldpOptions& options = {});

// Every *.json (lldpcli) and *.csv file of `dir`, in name order; other files
// are ignored. Throws ParseError, FabricError, or std::runtime_error for a
// directory that cannot be read or holds no such file. The fabric's source
// is "lldp:<dir>".
LldpFabric read_lldp_dir(const std::filesystem::path& dir, const LldpOptions& options = {});

}  // namespace topo
