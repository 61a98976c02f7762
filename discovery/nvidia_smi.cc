#include "discovery/nvidia_smi.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "common/error.h"
#include "common/line_source.h"
#include "common/quote.h"

namespace topo {
namespace {

constexpr size_t kMaxDepth = 64;
constexpr size_t kMaxFieldBytes = 4096;
constexpr std::string_view kNa = "N/A";

GpuFabric no_fabric(std::string pci_bus) { return {std::move(pci_bus), "N/A", "N/A", "N/A", "N/A"}; }

// ---- XML --------------------------------------------------------------------

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.' || c == ':';
}
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// A scanner of the XML nvidia-smi writes: it walks elements and text,
// checks they nest, and hands the report's fields to a NvidiaSmiReport.
class XmlReader {
 public:
  XmlReader(std::string_view xml, const std::string& file) : xml_(xml), file_(file) {}

  NvidiaSmiReport read() {
    while (pos_ < xml_.size()) {
      if (xml_[pos_] == '<')
        markup();
      else
        text();
    }
    if (!root_seen_) fail("expected a <nvidia_smi_log> element; the file has none");
    if (!stack_.empty()) fail(fmt::format("<{}> is never closed", stack_.back()));
    return std::move(report_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw ParseError(file_, line_, what); }

  void advance(size_t to) {
    line_ += static_cast<int>(std::count(xml_.begin() + pos_, xml_.begin() + to, '\n'));
    pos_ = to;
  }

  // Past `end`, which must come; `what` names the construct in the error.
  void skip_past(std::string_view end, std::string_view what) {
    size_t at = xml_.find(end, pos_);
    if (at == std::string_view::npos) fail(fmt::format("{} is never closed with '{}'", what, end));
    advance(at + end.size());
  }

  void markup() {
    std::string_view rest = xml_.substr(pos_);
    if (rest.starts_with("<?")) return skip_past("?>", "a processing instruction");
    if (rest.starts_with("<!--")) return skip_past("-->", "a comment");
    if (rest.starts_with("<!")) {
      if (root_seen_) fail("a declaration after the root element");
      return skip_past(">", "a declaration");
    }
    if (rest.starts_with("</")) return close_tag();
    open_tag();
  }

  std::string_view name_at(size_t& i) {
    size_t start = i;
    while (i < xml_.size() && is_name_char(xml_[i])) ++i;
    if (i == start) fail(fmt::format("expected an element or attribute name at '{}'", shown(xml_.substr(start, 16))));
    return xml_.substr(start, i - start);
  }

  // Past blanks; advance() counts their lines when pos_ moves past them.
  void skip_blanks(size_t& i) const {
    while (i < xml_.size() && is_blank(xml_[i])) ++i;
  }

  // A failure at i, past pos_: its line counts the line breaks between.
  [[noreturn]] void fail_at(size_t i, const std::string& what) {
    advance(std::min(i, xml_.size()));
    fail(what);
  }

  // name="value" pairs up to '>' or '/>'; returns the id attribute's value.
  std::optional<std::string> attributes(size_t& i, std::string_view element, bool& empty) {
    std::optional<std::string> id;
    while (true) {
      skip_blanks(i);
      if (i >= xml_.size()) fail_at(i, fmt::format("<{}> is cut off", element));
      if (xml_[i] == '>') {
        ++i;
        empty = false;
        return id;
      }
      if (xml_.substr(i).starts_with("/>")) {
        i += 2;
        empty = true;
        return id;
      }
      std::string_view attr = name_at(i);
      skip_blanks(i);
      if (i >= xml_.size() || xml_[i] != '=')
        fail_at(i, fmt::format("attribute '{}' of <{}> has no value", attr, element));
      ++i;
      skip_blanks(i);
      if (i >= xml_.size() || (xml_[i] != '"' && xml_[i] != '\''))
        fail_at(i, fmt::format("attribute '{}' of <{}> has no quoted value", attr, element));
      char quote = xml_[i++];
      size_t end = xml_.find(quote, i);
      if (end == std::string_view::npos)
        fail_at(i, fmt::format("attribute '{}' of <{}> is never closed", attr, element));
      std::string value = decode(xml_.substr(i, end - i), attr);
      i = end + 1;
      if (attr == "id") id = std::move(value);
    }
  }

  void open_tag() {
    size_t i = pos_ + 1;
    std::string_view element = name_at(i);
    bool empty = false;
    std::optional<std::string> id = attributes(i, element, empty);
    advance(i);
    if (stack_.empty()) {
      if (root_seen_) fail(fmt::format("a second root element <{}>", element));
      if (element != "nvidia_smi_log")
        fail(fmt::format("expected the root element <nvidia_smi_log>, found <{}>", shown(element)));
      root_seen_ = true;
    }
    if (stack_.size() >= kMaxDepth) fail(fmt::format("elements nest deeper than {}", kMaxDepth));
    stack_.emplace_back(element);
    entered(id);
    if (empty) left();
  }

  void close_tag() {
    size_t i = pos_ + 2;
    std::string_view element = name_at(i);
    skip_blanks(i);
    if (i >= xml_.size() || xml_[i] != '>') fail_at(i, fmt::format("</{}> is cut off", element));
    if (stack_.empty() || stack_.back() != element)
      fail(stack_.empty() ? fmt::format("</{}> closes nothing", shown(element))
                          : fmt::format("</{}> closes <{}>", shown(element), stack_.back()));
    advance(i + 1);
    left();
  }

  void text() {
    size_t end = std::min(xml_.find('<', pos_), xml_.size());
    std::string_view raw = xml_.substr(pos_, end - pos_);
    if (stack_.empty() && raw.find_first_not_of(" \t\r\n") != std::string_view::npos)
      fail("text outside the root element");
    if (field_) {
      if (field_->size() + raw.size() > kMaxFieldBytes)
        fail(fmt::format("<{}> holds more than {} bytes", stack_.back(), kMaxFieldBytes));
      *field_ += decode(raw, stack_.back());
    }
    advance(end);
  }

  std::string decode(std::string_view raw, std::string_view where) const {
    std::string out;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '&') {
        out += raw[i];
        continue;
      }
      size_t semi = raw.find(';', i);
      if (semi == std::string_view::npos || semi - i > 10)
        fail(fmt::format("an '&' in {} that starts no entity", where));
      out += entity(raw.substr(i + 1, semi - i - 1), where);
      i = semi;
    }
    return out;
  }

  std::string entity(std::string_view e, std::string_view where) const {
    if (e == "lt") return "<";
    if (e == "gt") return ">";
    if (e == "amp") return "&";
    if (e == "quot") return "\"";
    if (e == "apos") return "'";
    if (e.size() > 1 && e[0] == '#') {
      unsigned long code = 0;
      bool hex = e[1] == 'x';
      std::string_view digits = e.substr(hex ? 2 : 1);
      for (char c : digits) {
        int v = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                : hex && std::isxdigit(static_cast<unsigned char>(c))
                    ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                    : -1;
        if (v < 0) fail(fmt::format("'&{};' in {} is not a character reference", shown(e), where));
        code = code * (hex ? 16 : 10) + static_cast<unsigned>(v);
        if (code > 0x10ffff) fail(fmt::format("'&{};' in {} is past Unicode", shown(e), where));
      }
      if (digits.empty() || code == 0) fail(fmt::format("'&{};' in {} is not a character reference", shown(e), where));
      // Only ASCII is meaningful in the fields read; others stand as '?'.
      return std::string(1, code < 0x80 ? static_cast<char>(code) : '?');
    }
    fail(fmt::format("unknown entity '&{};' in {}", shown(e), where));
  }

  // The report's structure: nvidia_smi_log > gpu > fabric > field.
  void entered(const std::optional<std::string>& id) {
    const std::string& e = stack_.back();
    if (stack_.size() == 2 && e == "gpu") {
      if (!id || id->empty()) fail("<gpu> has no id attribute (its PCI bus id)");
      report_.gpus.push_back(no_fabric(*id));
      in_fabric_ = false;
    } else if (stack_.size() == 2 && e == "driver_version") {
      field_ = &report_.driver_version;
    } else if (stack_.size() == 3 && e == "fabric" && stack_[1] == "gpu") {
      if (in_fabric_) fail(fmt::format("GPU {} has a second <fabric>", report_.gpus.back().pci_bus));
      in_fabric_ = true;
      GpuFabric& g = report_.gpus.back();
      g.state = g.status = g.clique_id = g.cluster_uuid = "";
    } else if (stack_.size() == 4 && stack_[2] == "fabric" && stack_[1] == "gpu") {
      GpuFabric& g = report_.gpus.back();
      std::string* f = e == "state"         ? &g.state
                       : e == "status"      ? &g.status
                       : e == "cliqueId"    ? &g.clique_id
                       : e == "clusterUuid" ? &g.cluster_uuid
                                            : nullptr;
      if (f && !f->empty()) fail(fmt::format("GPU {} has a second <fabric><{}>", g.pci_bus, e));
      field_ = f;
    }
  }

  void left() {
    // Only a GPU's own <fabric>: one elsewhere (under an element of
    // another name) belongs to no GPU and may come before any.
    if (stack_.size() == 3 && stack_.back() == "fabric" && stack_[1] == "gpu") fill_missing(report_.gpus.back());
    if (stack_.size() == 4 || (stack_.size() == 2 && stack_.back() == "driver_version")) {
      if (field_) *field_ = trim(*field_);
      field_ = nullptr;
    }
    stack_.pop_back();
  }

  static std::string trim(std::string_view s) {
    size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
    return a == std::string_view::npos ? std::string() : std::string(s.substr(a, b - a + 1));
  }

  static void fill_missing(GpuFabric& g) {
    for (std::string* f : {&g.state, &g.status, &g.clique_id, &g.cluster_uuid})
      if (f->empty()) *f = kNa;
  }

  std::string_view xml_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_ = 1;
  bool root_seen_ = false;
  bool in_fabric_ = false;
  std::vector<std::string> stack_;
  std::string* field_ = nullptr;
  NvidiaSmiReport report_;
};

// ---- text -------------------------------------------------------------------

size_t indent_of(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && (line[n] == ' ' || line[n] == '\t')) ++n;
  return n;
}

std::string_view trimmed(std::string_view s) {
  size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string_view::npos ? std::string_view() : s.substr(a, b - a + 1);
}

class TextReader {
 public:
  TextReader(const std::string& file) : file_(file) {}

  void line(std::string_view raw, int number) {
    line_ = number;
    std::string_view text = trimmed(raw);
    if (text.empty()) return;
    size_t indent = indent_of(raw);
    if (!header_seen_) {
      if (text.find("NVSMI LOG") == std::string_view::npos)
        fail("expected nvidia-smi -q output, starting with its '=====NVSMI LOG=====' line");
      header_seen_ = true;
      return;
    }
    if (indent == 0 && (text == "GPU" || text.starts_with("GPU "))) return gpu(text.substr(3));
    if (fabric_indent_ && indent <= *fabric_indent_) close_fabric();
    if (fabric_indent_) return fabric_line(text, indent);
    size_t colon = text.find(':');
    std::string_view key = trimmed(text.substr(0, colon));
    if (indent == 0 && colon != std::string_view::npos && key == "Driver Version")
      report_.driver_version = std::string(trimmed(text.substr(colon + 1)));
    if (!report_.gpus.empty() && colon == std::string_view::npos && text == "Fabric") {
      if (fabric_done_) fail(fmt::format("GPU {} has a second Fabric section", report_.gpus.back().pci_bus));
      fabric_indent_ = indent;
      GpuFabric& g = report_.gpus.back();
      g.state = g.status = g.clique_id = g.cluster_uuid = "";
    }
  }

  NvidiaSmiReport finish() {
    if (!header_seen_) fail("the file is empty; expected nvidia-smi -q output");
    if (fabric_indent_) close_fabric();
    if (report_.gpus.empty()) fail("no 'GPU <bus id>' section: nvidia-smi saw no GPU");
    return std::move(report_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw ParseError(file_, line_, what); }

  void gpu(std::string_view bus) {
    if (fabric_indent_) close_fabric();
    bus = trimmed(bus);
    if (bus.empty() || bus.find(' ') != std::string_view::npos)
      fail(fmt::format("'GPU {}' does not name a PCI bus id", shown(bus)));
    report_.gpus.push_back(no_fabric(std::string(bus)));
    fabric_done_ = false;
    child_indent_.reset();
  }

  // A line inside the Fabric section: its own fields, or a subsection's.
  void fabric_line(std::string_view text, size_t indent) {
    if (!child_indent_) child_indent_ = indent;
    if (indent != *child_indent_) return;  // inside Health
    size_t colon = text.find(':');
    if (colon == std::string_view::npos) return;  // a subsection's heading
    std::string_view key = trimmed(text.substr(0, colon)), value = trimmed(text.substr(colon + 1));
    GpuFabric& g = report_.gpus.back();
    std::string* f = key == "State"         ? &g.state
                     : key == "Status"      ? &g.status
                     : key == "CliqueId"    ? &g.clique_id
                     : key == "ClusterUUID" ? &g.cluster_uuid
                                            : nullptr;
    if (!f) return;
    if (!f->empty()) fail(fmt::format("GPU {}: Fabric field {} given twice", g.pci_bus, key));
    if (value.empty()) fail(fmt::format("GPU {}: Fabric field {} has no value", g.pci_bus, key));
    *f = std::string(value.substr(0, kMaxFieldBytes));
  }

  void close_fabric() {
    GpuFabric& g = report_.gpus.back();
    for (std::string* f : {&g.state, &g.status, &g.clique_id, &g.cluster_uuid})
      if (f->empty()) *f = kNa;
    fabric_indent_.reset();
    child_indent_.reset();
    fabric_done_ = true;
  }

  const std::string& file_;
  int line_ = 0;
  bool header_seen_ = false;
  bool fabric_done_ = false;
  std::optional<size_t> fabric_indent_, child_indent_;
  NvidiaSmiReport report_;
};

bool looks_like_xml(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '<';
}

}  // namespace

NvidiaSmiReport read_nvidia_smi_xml(std::string_view xml, const std::string& filename) {
  NvidiaSmiReport r = XmlReader(xml, filename).read();
  if (r.gpus.empty()) throw ParseError(filename, 0, "no <gpu> element: nvidia-smi saw no GPU");
  return r;
}

NvidiaSmiReport read_nvidia_smi_text(std::string_view text, const std::string& filename) {
  TextReader reader(filename);
  int number = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    reader.line(text.substr(0, nl), ++number);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return reader.finish();
}

NvidiaSmiReport read_nvidia_smi_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, "cannot open the file");
  std::string text = read_all(in, path, kMaxNvidiaSmiBytes);
  return looks_like_xml(text) ? read_nvidia_smi_xml(text, path) : read_nvidia_smi_text(text, path);
}

size_t attach_nvidia_smi_dir(Fabric& fabric, const std::string& dir, const NvlinkSpec& spec) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto ext = it->path().extension();
    if ((ext == ".xml" || ext == ".txt") && it->is_regular_file()) files.push_back(it->path());
  }
  if (ec) throw ParseError(dir, 0, fmt::format("cannot read the directory: {}", ec.message()));
  std::sort(files.begin(), files.end());
  std::vector<HostNvlink> reports(fabric.hosts().size());
  std::map<int, std::string> read_from;
  for (const auto& file : files) {
    std::string host = file.stem().string();
    std::optional<NodeId> v = fabric.find_host(host);
    if (!v)
      throw ParseError(file.string(), 0,
                       fmt::format("no host '{}' in the fabric; expected files named <host>.xml or <host>.txt after "
                                   "its hosts",
                                   shown(host)));
    int h = fabric.index().host_id(*v);
    if (auto [it, fresh] = read_from.emplace(h, file.string()); !fresh)
      throw ParseError(file.string(), 0, fmt::format("a second report for host '{}', after {}", host, it->second));
    reports[h] = host_nvlink(read_nvidia_smi_file(file.string()).gpus);
  }
  fabric.set_nvlink(std::move(reports), spec);
  return files.size();
}

}  // namespace topo
