#include "discovery/hwloc_affinity.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <hwloc.h>

#include "common/error.h"
#include "common/hostlist.h"
#include "common/line_source.h"
#include "common/quote.h"

namespace topo {
namespace {

// --- the shape of the XML, checked before hwloc sees it ----------------------
//
// Accepted is XML as hwloc writes it, which both of hwloc's readers take:
// libxml2 (libhwloc-plugins) and hwloc's own minimal reader, used when the
// plugin is absent. The minimal reader wants the <?xml?> and <!DOCTYPE>
// lines first, then <topology version="M.N"> at the start of a line;
// name="value" attributes in double quotes; no comments, CDATA or other
// declarations; and only the entities hwloc writes. Anything else would
// load on one machine and not on another.

struct XmlProblem {
  int line;
  std::string what;
};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }
bool is_tag_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }
bool is_attribute_char(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

// An hwloc bitmap as hwloc writes it: "0x0000000f", "0x00000001,0xffffffff",
// optionally led by "0xf...f," for an infinite set.
bool is_bitmap(std::string_view v) {
  if (v.starts_with("0xf...f")) {
    v.remove_prefix(7);
    if (v.empty()) return true;
    if (v.front() != ',') return false;
    v.remove_prefix(1);
  }
  while (true) {
    if (!v.starts_with("0x")) return false;
    v.remove_prefix(2);
    size_t n = 0;
    while (n < v.size() && std::isxdigit(static_cast<unsigned char>(v[n]))) ++n;
    if (n == 0 || n > 8) return false;
    v.remove_prefix(n);
    if (v.empty()) return true;
    if (v.front() != ',') return false;
    v.remove_prefix(1);
  }
}

// Above any machine's PU or NUMA node count (Linux allows 8192 CPUs).
constexpr unsigned long kMaxOsIndex = 1 << 20;
// hwloc reads nested objects recursively; real exports nest < 20 deep.
constexpr size_t kMaxNesting = 256;
constexpr size_t kMaxHeaderBytes = 1024;

// Object types without a cpuset: I/O and Misc. Every other object (machine,
// package, core, PU, cache, NUMA node, group, die) needs all four sets.
bool is_io_or_misc(std::string_view type) {
  return type == "Bridge" || type == "PCIDev" || type == "OSDev" || type == "Misc";
}

// hwloc's DTDs (hwloc2.dtd, and hwloc.dtd for 1.x exports): which element
// may sit where, with which attributes, and which it cannot do without.
// hwloc 2.9 fails on anything else and leaks what it had built so far.
struct Rule {
  std::vector<std::string_view> parents;
  std::vector<std::string_view> required;
  std::vector<std::string_view> optional;
  bool text = false;  // may hold character data
};

const std::map<std::string_view, Rule>& rules() {
  static const std::map<std::string_view, Rule> table{
      {"topology", {{}, {}, {"version"}}},
      {"object",
       {{"topology", "object"},
        {"type"},
        {"subtype",
         "os_index",
         "id",
         "gp_index",
         "name",
         "local_memory",
         "cache_size",
         "cache_linesize",
         "cache_associativity",
         "cache_type",
         "cpuset",
         "complete_cpuset",
         "allowed_cpuset",
         "online_cpuset",
         "nodeset",
         "complete_nodeset",
         "allowed_nodeset",
         "depth",
         "kind",
         "subkind",
         "dont_merge",
         "bridge_type",
         "bridge_pci",
         "pci_busid",
         "pci_type",
         "pci_link_speed",
         "osdev_type",
         "os_level",
         "huge_page_size_kB",
         "huge_page_free"}}},
      {"info", {{"topology", "object", "cpukind"}, {"name", "value"}, {}}},
      {"page_type", {{"object"}, {"size", "count"}, {}}},
      {"userdata", {{"object"}, {}, {"name", "length", "encoding"}, true}},
      {"distances", {{"object"}, {"nbobjs", "relative_depth", "latency_base"}, {}}},  // 1.x
      {"latency", {{"distances"}, {"value"}, {}}},                                    // 1.x
      {"distances2", {{"topology"}, {"type", "nbobjs", "indexing", "kind"}, {"name"}}},
      {"distances2hetero", {{"topology"}, {"nbobjs", "kind"}, {"name"}}},
      {"indexes", {{"distances2", "distances2hetero"}, {"length"}, {}, true}},
      {"u64values", {{"distances2", "distances2hetero"}, {"length"}, {}, true}},
      {"support", {{"topology"}, {"name"}, {"value"}}},
      {"memattr", {{"topology"}, {"name", "flags"}, {}}},
      {"memattr_value",
       {{"memattr"},
        {"target_obj_type", "value"},
        {"target_obj_gp_index", "initiator_cpuset", "initiator_obj_gp_index", "initiator_obj_type"}}},
      {"cpukind", {{"topology"}, {}, {"cpuset", "forced_efficiency"}}},
  };
  return table;
}

const std::set<std::string_view>& object_types() {
  static const std::set<std::string_view> types{
      "Machine", "Misc",    "Group",   "NUMANode", "MemCache", "Package",  "Die",  "L1Cache", "L2Cache",
      "L3Cache", "L4Cache", "L5Cache", "L1iCache", "L2iCache", "L3iCache", "Core", "PU",      "Bridge",
      "PCIDev",  "OSDev",   "System",  "Socket",   "Cache",    "Node"};  // the last four from hwloc 1.x exports
  return types;
}

class XmlShape {
 public:
  explicit XmlShape(std::string_view text) : s_(text) {}

  std::optional<XmlProblem> check() {
    try {
      run();
      return std::nullopt;
    } catch (const XmlProblem& p) {
      return p;
    }
  }

 private:
  struct Open {
    std::string name;
    int line;
    std::string type;  // of an <object>
  };
  using Attributes = std::map<std::string, std::string>;

  [[noreturn]] void fail(const std::string& what) const { throw XmlProblem{line_, what}; }
  [[noreturn]] void fail_at(int line, const std::string& what) const { throw XmlProblem{line, what}; }

  void advance(size_t n) {
    for (size_t i = 0; i < n && pos_ < s_.size(); ++i, ++pos_)
      if (s_[pos_] == '\n') ++line_;
  }
  bool at(std::string_view token) const { return s_.substr(pos_).starts_with(token); }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_blanks() {
    while (pos_ < s_.size() && is_blank(s_[pos_])) advance(1);
  }

  // The entities hwloc writes, the only ones its minimal reader knows.
  void check_entities(std::string_view text) const {
    for (size_t i = text.find('&'); i != std::string_view::npos; i = text.find('&', i + 1)) {
      std::string_view rest = text.substr(i);
      bool ok = false;
      for (std::string_view e : {"&#10;", "&#13;", "&#9;", "&quot;", "&lt;", "&gt;", "&amp;"})
        ok |= rest.starts_with(e);
      if (!ok)
        fail(fmt::format(
            "expected one of the entities hwloc writes (&lt; &gt; &amp; &quot; &#9; &#10; &#13;), found '{}'",
            shown(rest.substr(0, std::min(rest.size(), rest.find(';') + 1)))));
    }
  }

  // The header lines, then <topology version="M.N"> or, from 1.x, <topology>.
  // hwloc's minimal reader skips the header lines unread and libxml2 parses
  // them, so they are held to what lstopo writes.
  void prolog() {
    static const std::regex xml_declaration(
        R"re(<\?xml version="1\.[0-9]"( encoding="[A-Za-z0-9._-]+")?( standalone="(yes|no)")? ?\?>)re");
    static const std::regex doctype(R"re(<!DOCTYPE topology SYSTEM "[^"<>&\[\]]*">)re");
    while (at("<?xml ") || at("<!DOCTYPE ")) {
      size_t end = s_.find('\n', pos_);
      if (end == std::string_view::npos) fail("expected the root element on the line after the header");
      // lstopo's header lines are under a hundred bytes; the bound keeps
      // libstdc++'s matcher, which recurses once per character of a repeat,
      // off a line of megabytes.
      if (end - pos_ > kMaxHeaderBytes)
        fail(
            fmt::format("a header line longer than {} bytes; expected the <?xml ...?> and <!DOCTYPE ...> lines "
                        "lstopo writes",
                        kMaxHeaderBytes));
      std::string header(s_.substr(pos_, end - pos_));
      if (header.starts_with("<?xml ")) {
        if (!std::regex_match(header, xml_declaration))
          fail("expected <?xml version=\"1.0\" encoding=\"UTF-8\"?>, as lstopo writes it");
        check_encoding(header);
      } else if (!std::regex_match(header, doctype)) {
        fail("expected <!DOCTYPE topology SYSTEM \"hwloc2.dtd\">, as lstopo writes it");
      }
      advance(end + 1 - pos_);
    }
    size_t end = s_.find('>', pos_);
    std::string_view root = s_.substr(pos_, end == std::string_view::npos ? 0 : end + 1 - pos_);
    unsigned major = 0, minor = 0;
    char tail = 0;
    bool versioned =
        std::sscanf(std::string(root).c_str(), "<topology version=\"%u.%u\"%c", &major, &minor, &tail) == 3 &&
        tail == '>';
    if (!versioned && root != "<topology>")
      fail(
          "expected <topology version=\"2.0\"> at the start of this line, right after the <?xml ...?> and "
          "<!DOCTYPE ...> lines, as lstopo writes it");
    stack_.push_back({"topology", line_, ""});
    advance(root.size());
  }

  // hwloc writes UTF-8. Another encoding would make libxml2 load an ICU
  // converter, which outlives the hwloc plugin that loaded it.
  void check_encoding(std::string_view decl) const {
    size_t at = decl.find("encoding=\"");
    if (at == std::string_view::npos) return;
    size_t close = decl.find('"', at + 10);
    std::string encoding(decl.substr(at + 10, close == std::string_view::npos ? 0 : close - at - 10));
    for (char& c : encoding) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (encoding != "UTF-8" && encoding != "US-ASCII")
      fail(fmt::format("expected encoding=\"UTF-8\", as hwloc writes it, found '{}'", shown(encoding)));
  }

  void start_tag() {
    int line = line_;
    advance(1);  // '<'
    size_t start = pos_;
    while (pos_ < s_.size() && is_tag_char(s_[pos_])) ++pos_;
    std::string element(s_.substr(start, pos_ - start));
    if (element.empty()) fail("expected an element name of lowercase letters, digits and '_' after '<'");
    if (peek() != ' ' && peek() != '>' && !at("/>"))
      fail(fmt::format("expected a space, '>' or '/>' after <{}", shown(element)));
    Attributes attributes;
    bool closed = false;
    while (true) {
      bool blank = is_blank(peek());
      skip_blanks();
      if (pos_ >= s_.size()) fail_at(line, fmt::format("<{}> is never finished; expected '>'", shown(element)));
      if (at("/>") || at(">")) {
        closed = at("/>");
        advance(closed ? 2 : 1);
        break;
      }
      if (!blank)
        fail(fmt::format("expected a blank, '>' or '/>' after the previous attribute of <{}>", shown(element)));
      size_t name_start = pos_;
      while (pos_ < s_.size() && is_attribute_char(s_[pos_])) ++pos_;
      std::string attribute(s_.substr(name_start, pos_ - name_start));
      if (attribute.empty() || !at("=\""))
        fail(fmt::format("expected name=\"value\" in <{}>, found '{}'", shown(element),
                         shown(s_.substr(name_start, 20), 20)));
      advance(2);
      size_t end = s_.find('"', pos_);
      if (end == std::string_view::npos)
        fail(fmt::format("expected a closing \" for attribute '{}' of <{}>", shown(attribute), shown(element)));
      std::string_view value = s_.substr(pos_, end - pos_);
      // hwloc's minimal reader ends a tag at the first '>'; hwloc writes &lt; and &gt;.
      if (value.find_first_of("<>") != std::string_view::npos)
        fail(fmt::format("attribute '{}' of <{}> holds a '<' or '>'; expected &lt; or &gt;, or its closing quote",
                         shown(attribute), shown(element)));
      check_entities(value);
      if (!attributes.emplace(attribute, std::string(value)).second)
        fail(fmt::format("attribute '{}' appears twice in <{}>", shown(attribute), shown(element)));
      advance(end + 1 - pos_);
    }
    if (stack_.empty()) fail_at(line, fmt::format("expected nothing after </topology>, found <{}>", shown(element)));
    check_vocabulary(line, element, attributes);
    if (element == "object") check_object(line, attributes);
    if (closed) return;
    if (stack_.size() >= kMaxNesting)
      fail_at(line, fmt::format("elements nest deeper than {}; expected a machine's topology", kMaxNesting));
    stack_.push_back({element, line, element == "object" ? attributes.at("type") : ""});
  }

  void check_vocabulary(int line, const std::string& element, const Attributes& attributes) const {
    auto rule = rules().find(element);
    if (rule == rules().end()) fail_at(line, fmt::format("<{}> is not an element of hwloc's XML", shown(element)));
    const Rule& r = rule->second;
    const std::string& parent = stack_.back().name;
    if (std::find(r.parents.begin(), r.parents.end(), parent) == r.parents.end())
      fail_at(line, fmt::format("<{}> cannot sit inside <{}> in hwloc's XML", element, parent));
    for (std::string_view name : r.required)
      if (!attributes.contains(std::string(name)))
        fail_at(line, fmt::format("<{}> has no {} attribute; expected {}=\"...\"", element, name, name));
    for (const auto& [name, value] : attributes)
      if (std::find(r.required.begin(), r.required.end(), name) == r.required.end() &&
          std::find(r.optional.begin(), r.optional.end(), name) == r.optional.end())
        fail_at(line, fmt::format("<{}> has no attribute '{}' in hwloc's XML", element, shown(name)));
    // Memory pages belong to a NUMA node (or, in 1.x exports, the machine).
    static const std::set<std::string_view> with_memory{"NUMANode", "Machine", "Node", "System"};
    if (element == "page_type" && !with_memory.contains(stack_.back().type))
      fail_at(line,
              fmt::format("<page_type> inside <object type=\"{}\">; expected it in a NUMANode", stack_.back().type));
  }

  void check_object(int line, const Attributes& attributes) const {
    const std::string& type = attributes.at("type");
    if (!object_types().contains(type))
      fail_at(line, fmt::format("<object type=\"{}\"> is not an hwloc object type", shown(type)));
    // hwloc sizes bitmaps by os_index: a PU or NUMA node without one (taken
    // as 2^32-1) or with a huge one costs it seconds and gigabytes.
    auto index = attributes.find("os_index");
    if (index != attributes.end()) {
      const std::string& v = index->second;
      if (v.empty() || v.size() > 7 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
          std::stoul(v) >= kMaxOsIndex)
        fail_at(line, fmt::format("os_index=\"{}\" of <object type=\"{}\"> is not a whole number below {}", shown(v),
                                  type, kMaxOsIndex));
    } else if (type == "PU" || type == "NUMANode") {
      fail_at(line, fmt::format("<object type=\"{}\"> has no os_index; expected its physical index", type));
    }
    // hwloc stores any number it reads as the device's type, which C++
    // may not load as the enum; lstopo writes 0 to HWLOC_OBJ_OSDEV_COPROC.
    auto osdev = attributes.find("osdev_type");
    if (osdev != attributes.end() &&
        (osdev->second.size() != 1 || osdev->second[0] < '0' || osdev->second[0] > '0' + HWLOC_OBJ_OSDEV_COPROC))
      fail_at(line, fmt::format("osdev_type=\"{}\" of <object type=\"{}\"> is not an hwloc OS device type; "
                                "expected 0 to {}",
                                shown(osdev->second), type, static_cast<int>(HWLOC_OBJ_OSDEV_COPROC)));
    // hwloc 2.9 asserts (an abort) on a set it cannot read, on any object.
    for (const char* set : {"cpuset", "complete_cpuset", "allowed_cpuset", "online_cpuset", "nodeset",
                            "complete_nodeset", "allowed_nodeset"}) {
      auto it = attributes.find(set);
      if (it != attributes.end() && !is_bitmap(it->second))
        fail_at(line, fmt::format("{}=\"{}\" of <object type=\"{}\"> is not an hwloc bitmap like 0x0000000f", set,
                                  shown(it->second), type));
    }
    if (is_io_or_misc(type)) return;
    // hwloc 2.9 crashes on an object without its complete sets.
    for (const char* set : {"cpuset", "complete_cpuset", "nodeset", "complete_nodeset"})
      if (!attributes.contains(set))
        fail_at(line, fmt::format("<object type=\"{}\"> has no {}; expected cpuset, complete_cpuset, nodeset and "
                                  "complete_nodeset on every object but I/O and Misc, as lstopo writes them",
                                  type, set));
  }

  void end_tag() {
    advance(2);  // "</"
    size_t start = pos_;
    while (pos_ < s_.size() && is_tag_char(s_[pos_])) ++pos_;
    std::string element(s_.substr(start, pos_ - start));
    if (!at(">")) fail(fmt::format("expected '>' right after </{}", shown(element)));
    advance(1);
    if (stack_.empty()) fail(fmt::format("found </{}> after </topology>", shown(element)));
    if (stack_.back().name != element)
      fail(fmt::format("expected </{}> to close <{}> of line {}, found </{}>", stack_.back().name, stack_.back().name,
                       stack_.back().line, shown(element)));
    stack_.pop_back();
  }

  void run() {
    prolog();
    while (pos_ < s_.size()) {
      if (s_[pos_] != '<') {
        size_t next = std::min(s_.find('<', pos_), s_.size());
        std::string_view text = s_.substr(pos_, next - pos_);
        if (!std::all_of(text.begin(), text.end(), is_blank) &&
            (stack_.empty() || !rules().at(stack_.back().name).text)) {
          advance(std::find_if_not(text.begin(), text.end(), is_blank) - text.begin());
          fail(stack_.empty() ? std::string("expected only blanks after </topology>")
                              : fmt::format("<{}> holds text; expected only elements in it", stack_.back().name));
        }
        check_entities(text);
        advance(next - pos_);
      } else if (at("<!--")) {
        fail("a comment; hwloc's own XML reader (used without libhwloc-plugins) refuses them, and lstopo writes none");
      } else if (at("<!") || at("<?")) {
        fail("expected <?xml ...?> and <!DOCTYPE ...> only on the first lines, and no CDATA");
      } else if (at("</")) {
        end_tag();
      } else {
        start_tag();
      }
    }
    if (!stack_.empty())
      fail_at(stack_.back().line, fmt::format("<{}> opened here is never closed; the file ends at line {}",
                                              stack_.back().name, s_.ends_with('\n') ? line_ - 1 : line_));
  }

  std::string_view s_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Open> stack_;
};

// --- the hwloc tree -----------------------------------------------------------

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using Topology = std::unique_ptr<hwloc_topology, TopologyDeleter>;

int trailing_number(std::string_view name) {
  size_t start = name.size();
  while (start > 0 && std::isdigit(static_cast<unsigned char>(name[start - 1]))) --start;
  if (start == name.size() || name.size() - start > 6) return -1;
  return std::stoi(std::string(name.substr(start)));
}

std::vector<hwloc_obj_t> chain_from_root(hwloc_obj_t obj) {
  std::vector<hwloc_obj_t> chain;
  for (; obj; obj = obj->parent) chain.push_back(obj);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

// How deep the deepest common ancestor of two objects sits: the larger, the
// closer they are on the PCIe tree.
size_t shared_depth(const std::vector<hwloc_obj_t>& a, const std::vector<hwloc_obj_t>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

bool starts_with(const char* name, std::string_view prefix) {
  return name && std::string_view(name).starts_with(prefix);
}

// Compute OS devices make a PCI device a GPU; DRM ones do not on their own.
bool is_compute_osdev(hwloc_obj_t os) {
  if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC) return true;
  return os->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU &&
         (starts_with(os->name, "nvml") || starts_with(os->name, "rsmi"));
}

bool is_gpu(hwloc_obj_t pci) {
  const auto& p = pci->attr->pcidev;
  if (p.class_id == 0x0302) return true;
  if ((p.class_id >> 8) == 0x03 && (p.vendor_id == 0x10de || p.vendor_id == 0x1002)) return true;
  for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
    if (c->type == HWLOC_OBJ_OS_DEVICE && is_compute_osdev(c)) return true;
  return false;
}

// The name a GPU goes by: its most specific OS device.
std::string gpu_name(hwloc_obj_t pci) {
  static const std::vector<std::string_view> preference{"cuda", "nvml", "rsmi", "ze", "opencl", "card", "renderD"};
  std::string best;
  size_t best_rank = preference.size() + 1;
  for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
    if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name) continue;
    if (c->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU && c->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC) continue;
    size_t rank = preference.size();
    for (size_t i = 0; i < preference.size(); ++i)
      if (starts_with(c->name, preference[i])) {
        rank = i;
        break;
      }
    if (rank < best_rank || (rank == best_rank && natural_less(c->name, best))) {
      best = c->name;
      best_rank = rank;
    }
  }
  return best;
}

int numa_of(hwloc_topology_t topology, hwloc_obj_t io) {
  hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(topology, io);
  if (!local || !local->nodeset || hwloc_bitmap_weight(local->nodeset) != 1) return -1;
  return hwloc_bitmap_first(local->nodeset);
}

NodeAffinity affinity_of(hwloc_topology_t topology) {
  NodeAffinity out;
  hwloc_obj_t root = hwloc_get_root_obj(topology);
  if (const char* host = hwloc_obj_get_info_by_name(root, "HostName")) out.hostname = host;

  struct Hca {
    std::string name;
    std::vector<hwloc_obj_t> chain;
    int gpus = 0;
  };
  std::vector<Hca> hcas;
  for (hwloc_obj_t os = nullptr; (os = hwloc_get_next_osdev(topology, os));)
    if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && os->name)
      hcas.push_back({os->name, chain_from_root(os->parent ? os->parent : os), 0});
  std::sort(hcas.begin(), hcas.end(), [](const Hca& a, const Hca& b) { return natural_less(a.name, b.name); });
  for (const Hca& h : hcas) out.hcas.push_back(h.name);

  std::vector<hwloc_obj_t> gpus;
  for (hwloc_obj_t pci = nullptr; (pci = hwloc_get_next_pcidev(topology, pci));)
    if (is_gpu(pci)) gpus.push_back(pci);
  auto bus_key = [](hwloc_obj_t o) {
    const auto& p = o->attr->pcidev;
    return std::make_tuple(p.domain, p.bus, p.dev, p.func);
  };
  std::sort(gpus.begin(), gpus.end(), [&](hwloc_obj_t a, hwloc_obj_t b) { return bus_key(a) < bus_key(b); });

  for (hwloc_obj_t pci : gpus) {
    Gpu gpu;
    gpu.index = static_cast<int>(out.gpus.size());
    gpu.name = gpu_name(pci);
    const auto& p = pci->attr->pcidev;
    gpu.pci_bus = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", p.domain, p.bus, p.dev, p.func);
    gpu.numa = numa_of(topology, pci);
    std::vector<hwloc_obj_t> chain = chain_from_root(pci);
    Hca* best = nullptr;
    size_t best_depth = 0;
    for (Hca& h : hcas) {
      size_t depth = shared_depth(chain, h.chain);
      if (!best || depth > best_depth || (depth == best_depth && h.gpus < best->gpus)) {
        best = &h;
        best_depth = depth;
      }
    }
    if (best) {
      ++best->gpus;
      gpu.closest_hca = best->name;
      gpu.rail = trailing_number(best->name);
    }
    out.gpus.push_back(std::move(gpu));
  }
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, fmt::format("cannot read: {}", std::strerror(errno)));
  // lstopo's export of a large node is under a megabyte.
  return read_all(in, path, 64 << 20);
}

// hwloc prints its verdict on a bad export ("out-of-order XML topology
// load", "Topology does not contain any NUMA node") to stderr; the error
// we throw says it instead. hwloc reads HWLOC_HIDE_ERRORS once, on first
// use, and an admin who sets it keeps their choice.
void quiet_hwloc_xml_errors() {
  static const bool once = [] {
    setenv("HWLOC_HIDE_ERRORS", "2", /*overwrite=*/0);
    return true;
  }();
  (void)once;
}

}  // namespace

NodeAffinity read_hwloc_xml_text(std::string_view xml, const std::string& filename) {
  if (xml.find('\0') != std::string_view::npos) throw ParseError(filename, 0, "holds a NUL byte; expected text");
  // Windows line ends, which hwloc's minimal reader does not take as blanks.
  std::string buffer;
  buffer.reserve(xml.size());
  for (size_t i = 0; i < xml.size(); ++i)
    if (xml[i] != '\r' || i + 1 >= xml.size() || xml[i + 1] != '\n') buffer += xml[i];
  if (std::optional<XmlProblem> problem = XmlShape(buffer).check())
    throw ParseError(filename, problem->line, problem->what);
  quiet_hwloc_xml_errors();
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw ParseError(filename, 0, "hwloc could not start a topology");
  Topology topology(raw);
  // hwloc wants the terminating NUL counted in the size.
  if (hwloc_topology_set_xmlbuffer(raw, buffer.c_str(), static_cast<int>(buffer.size() + 1)) != 0)
    throw ParseError(filename, 0, fmt::format("hwloc refused it as XML input: {}", std::strerror(errno)));
  // Keep every I/O object the export holds.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (hwloc_topology_load(raw) != 0)
    throw ParseError(filename, 0,
                     fmt::format("hwloc could not load it as a topology ({}); expected an `lstopo --of xml` export",
                                 std::strerror(errno)));
  return affinity_of(raw);
}

NodeAffinity read_hwloc_xml(const std::string& path) { return read_hwloc_xml_text(read_text(path), path); }

NodeAffinity read_hwloc_live() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw HwlocError("hwloc could not start a topology");
  Topology topology(raw);
  // I/O objects are off by default; keep the ones lstopo shows.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  // The "pci" plugin (libpciaccess) leaks at every load; without it the
  // Linux backend reads the same PCI tree from sysfs.
  hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
  if (hwloc_topology_load(raw) != 0)
    throw HwlocError(fmt::format("hwloc could not read this machine: {}", std::strerror(errno)));
  return affinity_of(raw);
}

size_t attach_hwloc_dir(Fabric& fabric, const std::string& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".xml" && it->is_regular_file()) files.push_back(it->path());
  if (ec) throw ParseError(dir, 0, fmt::format("cannot read the directory: {}", ec.message()));
  std::sort(files.begin(), files.end());

  // hwloc loads its plugins with the first live topology and unloads them
  // with the last; one kept for the whole loop loads them once, not per file.
  hwloc_topology_t keeper = nullptr;
  if (hwloc_topology_init(&keeper) != 0) throw ParseError(dir, 0, "hwloc could not start a topology");
  Topology keep_plugins(keeper);

  std::vector<std::pair<NodeId, NodeAffinity>> found;
  for (const auto& file : files) {
    std::string host = file.stem().string();
    std::optional<NodeId> v = fabric.find_host(host);
    if (!v)
      throw ParseError(
          file.string(), 0,
          fmt::format("no host '{}' in the fabric; expected files named <host>.xml after its hosts", host));
    NodeAffinity affinity = read_hwloc_xml(file.string());
    const std::string& named = affinity.hostname;
    if (!named.empty() && named != host && !named.starts_with(host + "."))
      throw ParseError(
          file.string(), 0,
          fmt::format("holds the topology of host '{}' (its HostName), not of '{}'", shown(named), shown(host)));
    found.emplace_back(*v, std::move(affinity));
  }
  for (auto& [host, affinity] : found) fabric.set_gpus(host, std::move(affinity.gpus));
  return found.size();
}

}  // namespace topo
