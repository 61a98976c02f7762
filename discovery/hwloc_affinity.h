// GPU and HCA affinity inside one host, from hwloc.
//
// hwloc describes a node as a tree: machine, packages, NUMA groups, and
// below them the PCI host bridges, PCIe switches and devices, with "OS
// devices" (what the OS calls a device: "cuda0", "mlx5_0") under the PCI
// device they belong to. The input is either an XML file exported on the
// node with `lstopo --of xml` or the live machine.
//
// What counts as a GPU: a PCI device that is a 3D controller (class
// 0x0302, what data-centre GPUs report), an NVIDIA or AMD display
// controller (class 0x03xx), or any PCI device with a compute OS device
// under it (CUDA, NVML, RSMI, OpenCL, Level Zero). A display device with
// only a DRM "card0" (the BMC's VGA on every server) is not a GPU. The
// several OS devices of one GPU (cuda0, nvml0, card1, renderD129) are one
// GPU: GPUs are counted by PCI device. They are indexed in PCI bus order,
// as CUDA_DEVICE_ORDER=PCI_BUS_ID and Slurm's GRES numbering see them, and
// named by their most specific OS device (cuda, then nvml, rsmi, ze,
// opencl, then DRM), or left unnamed when hwloc saw none (Debian's hwloc is
// built without the CUDA and NVML plugins).
//
// HCAs are the OpenFabrics OS devices ("mlx5_0"). A GPU's closest HCA is
// the one whose deepest common ancestor with it is deepest in the tree: the
// same PCIe switch beats the same host bridge, which beats the same NUMA
// group or package, which beats the machine. Among equally close HCAs the
// one with fewest GPUs so far wins (then the lowest name), so two GPUs that
// see two HCAs only through their package get one each. A GPU's rail is the
// trailing number of its HCA's name, as HostNaming reads rails; its NUMA
// node is the one local to the GPU, or -1 when it is local to several.
//
// Exports are held to the XML lstopo writes, checked before hwloc sees
// them, for three reasons found in hwloc 2.9: it crashes on some damaged
// files (an object without complete_cpuset, attributes run together, a
// truncated file) and spends seconds and gigabytes on a PU without an
// os_index; it leaks what it had built on others (an unknown element or
// attribute, a page_type outside a NUMA node); and its two XML readers
// disagree, libxml2 (from libhwloc-plugins) taking comments, single quotes
// and any entity that its own minimal reader, used without the plugin,
// refuses. So: the <?xml?> and <!DOCTYPE> lines as lstopo writes them, then
// <topology version="M.N">; hwloc's elements and attributes only (2.x and
// 1.x DTDs); name="value" in double quotes; no comments or CDATA; the
// entities hwloc writes; every non-I/O object with its four cpusets and
// nodesets; os_index below 2^20; nesting below 256. CRLF line ends are
// taken. hwloc's own complaints are kept off stderr (HWLOC_HIDE_ERRORS=2,
// unless the environment already sets it); the ParseError says it instead.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fabric/fabric.h"

namespace topo {

struct NodeAffinity {
  std::string hostname;           // hwloc's HostName; empty when the XML has none
  std::vector<Gpu> gpus;          // in PCI bus order, gpus[i].index == i
  std::vector<std::string> hcas;  // OpenFabrics devices, "mlx5_0" before "mlx5_10"
};

// The live machine could not be read through hwloc.
class HwlocError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// From an `lstopo --of xml` export. Throws ParseError naming the file (and
// the line, when the XML itself is malformed) and what was expected.
NodeAffinity read_hwloc_xml(const std::string& path);
// The same from the text of an export; `filename` names it in errors.
NodeAffinity read_hwloc_xml_text(std::string_view xml, const std::string& filename);

// From the machine this runs on. PCI devices come from sysfs: hwloc's
// libpciaccess plugin, which leaks at every load, is left out. Throws
// HwlocError.
NodeAffinity read_hwloc_live();

// Attaches the GPUs of every `<host>.xml` in `dir` to that host of the
// fabric, and returns how many hosts got them. Every file is read before
// the fabric is touched, so on error nothing is attached. Throws ParseError
// naming the file for: an unreadable directory, a file whose host is not in
// the fabric, a file whose HostName names another host (a HostName of
// "<host>.<domain>" matches), and a malformed XML.
size_t attach_hwloc_dir(Fabric& fabric, const std::string& dir);

}  // namespace topo
