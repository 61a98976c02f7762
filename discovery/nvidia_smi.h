// Each GPU's NVLink fabric record from nvidia-smi, per host: which NVLink
// domain (ClusterUUID, CliqueId) the GPU belongs to and whether its
// registration with the fabric completed (fabric/nvlink_domain.h).
//
// Two forms of the same report are read, as nvidia-smi writes them on the
// node:
// - `nvidia-smi -q -x`: <nvidia_smi_log> with one <gpu id="BUS"> per GPU,
//   each with a <fabric> element holding <state>, <status>, <cliqueId>,
//   <clusterUuid> (and <health>, not read);
// - `nvidia-smi -q`: the "==============NVSMI LOG==============" text, a
//   "GPU <bus>" heading per GPU and under it an indented "Fabric" section of
//   "State", "Status", "CliqueId", "ClusterUUID" (and "Health", not read).
// A GPU without a fabric section (a driver before the field existed) reads
// as state "N/A": no NVLink fabric, no domain. A field absent from a
// section reads as "N/A".
//
// The XML is held to what nvidia-smi writes: the <?xml?> and <!DOCTYPE>
// prologue, elements with quoted attributes, text with the five named
// entities and character references, comments; every element closed in
// order, at most 64 deep, one <nvidia_smi_log> root. Files are at most 64
// MiB. Anything else is a ParseError naming the file, the line and the
// element or field.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/fabric.h"
#include "fabric/nvlink_domain.h"

namespace topo {

inline constexpr uint64_t kMaxNvidiaSmiBytes = uint64_t{64} << 20;

struct NvidiaSmiReport {
  std::string driver_version;   // "570.133.20"; empty when the file has none
  std::vector<GpuFabric> gpus;  // in the file's order
};

// From the text of `nvidia-smi -q -x`; `filename` names it in errors.
NvidiaSmiReport read_nvidia_smi_xml(std::string_view xml, const std::string& filename);
// From the text of `nvidia-smi -q`.
NvidiaSmiReport read_nvidia_smi_text(std::string_view text, const std::string& filename);
// From a file: XML when it starts with '<' (after blanks), text otherwise.
NvidiaSmiReport read_nvidia_smi_file(const std::string& path);

// Gives the fabric its NVLink domains from every `<host>.xml` or
// `<host>.txt` in `dir` (nvidia-smi -q -x or -q run on that host), checked
// against `spec`; hosts without a file report nothing. Every file is read
// before the fabric is touched. Returns how many files were read. Throws
// ParseError naming the file for an unreadable directory, a file whose
// host is not in the fabric, two files for one host, and a malformed one.
size_t attach_nvidia_smi_dir(Fabric& fabric, const std::string& dir, const NvlinkSpec& spec);

}  // namespace topo
