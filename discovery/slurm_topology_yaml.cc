#include "discovery/slurm_topology_yaml.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/hostlist.h"
#include "common/line_source.h"
#include "common/quote.h"
#include "discovery/slurm_conf.h"

namespace topo {
namespace {

constexpr int kMaxYamlDepth = 32;

// ---- a block-style YAML subset ----------------------------------------------

struct YEntry;

struct YNode {
  enum Kind { Null, Scalar, Seq, Map } kind = Null;
  std::string scalar;
  std::vector<YNode> items;
  std::vector<YEntry> entries;  // a vector may hold a type completed later; a pair may not
  int line = 0;
};

struct YEntry {
  std::string key;
  YNode value;
};

struct YLine {
  int indent;
  std::string text;
  int number;
};

std::string_view trim(std::string_view s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t\r");
  return a == std::string_view::npos ? std::string_view() : s.substr(a, b - a + 1);
}

class YamlParser {
 public:
  YamlParser(std::string_view text, const std::string& file) : file_(file) { split(text); }

  YNode parse() {
    if (lines_.empty()) throw ParseError(file_, 0, "the file is empty; expected a list of topologies");
    YNode root = node(lines_.front().indent, 0);
    if (pos_ < lines_.size()) fail(lines_[pos_].number, "text past the end of the top-level list");
    return root;
  }

 private:
  [[noreturn]] void fail(int line, const std::string& what) const { throw ParseError(file_, line, what); }

  // Drops comments and blank lines; refuses what the subset leaves out.
  void split(std::string_view text) {
    int number = 0;
    while (!text.empty()) {
      size_t nl = text.find('\n');
      std::string_view raw = text.substr(0, nl);
      text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
      ++number;
      if (raw.find('\t') != std::string_view::npos && raw.find_first_not_of(" \t") > raw.find('\t'))
        fail(number, "a tab in the indentation; YAML indents with spaces");
      std::string content(trim(strip_comment(raw, number)));
      if (content.empty() || (lines_.empty() && content == "---")) continue;
      if (content == "..." || content == "---") fail(number, "a second YAML document; expected one");
      if (content[0] == '&' || content[0] == '*' || content[0] == '!' || content[0] == '|' || content[0] == '>')
        fail(number, fmt::format("'{}' (anchors, aliases, tags, block scalars) is not taken", content[0]));
      lines_.push_back({static_cast<int>(raw.find_first_not_of(' ')), std::move(content), number});
    }
  }

  std::string_view strip_comment(std::string_view s, int number) const {
    char quote = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '#' && (i == 0 || s[i - 1] == ' ')) {
        return s.substr(0, i);
      }
    }
    if (quote) fail(number, "a quoted scalar is never closed");
    return s;
  }

  YNode node(int indent, int depth) {
    if (depth > kMaxYamlDepth) fail(lines_[pos_].number, fmt::format("nested deeper than {}", kMaxYamlDepth));
    const YLine& l = lines_[pos_];
    if (l.indent != indent) fail(l.number, fmt::format("indented {} where {} was expected", l.indent, indent));
    return is_item(l.text) ? sequence(indent, depth) : mapping(indent, depth);
  }

  static bool is_item(std::string_view t) { return t == "-" || t.starts_with("- "); }

  YNode sequence(int indent, int depth) {
    YNode seq{YNode::Seq, {}, {}, {}, lines_[pos_].number};
    while (pos_ < lines_.size() && lines_[pos_].indent == indent && is_item(lines_[pos_].text)) {
      YLine& l = lines_[pos_];
      std::string_view rest = trim(std::string_view(l.text).substr(1));
      if (rest.empty()) {
        ++pos_;
        if (pos_ >= lines_.size() || lines_[pos_].indent <= indent) fail(l.number, "an empty list item");
        seq.items.push_back(node(lines_[pos_].indent, depth + 1));
      } else if (is_item(rest) || key_of(rest)) {
        // "- key: value": a mapping (or list) starting on the dash's line.
        l.indent += static_cast<int>(l.text.size() - rest.size());
        l.text = std::string(rest);
        seq.items.push_back(node(l.indent, depth + 1));
      } else {
        seq.items.push_back(scalar(rest, l.number));
        ++pos_;
      }
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent)
      fail(lines_[pos_].number, "indented deeper than the list around it");
    return seq;
  }

  // The key of "key: value" or "key:", outside quotes; nullopt otherwise.
  static std::optional<std::string> key_of(std::string_view t) {
    if (t.empty() || t[0] == '"' || t[0] == '\'' || t[0] == '[' || t[0] == '{') return std::nullopt;
    size_t colon = t.find(':');
    while (colon != std::string_view::npos && colon + 1 < t.size() && t[colon + 1] != ' ')
      colon = t.find(':', colon + 1);
    if (colon == std::string_view::npos) return std::nullopt;
    return std::string(trim(t.substr(0, colon)));
  }

  YNode mapping(int indent, int depth) {
    YNode map{YNode::Map, {}, {}, {}, lines_[pos_].number};
    while (pos_ < lines_.size() && lines_[pos_].indent == indent && !is_item(lines_[pos_].text)) {
      const YLine& l = lines_[pos_];
      auto key = key_of(l.text);
      if (!key || key->empty()) fail(l.number, fmt::format("expected 'key: value', found '{}'", shown(l.text)));
      for (const auto& [k, v] : map.entries)
        if (k == *key) fail(l.number, fmt::format("key '{}' given twice", shown(*key)));
      std::string_view rest = trim(std::string_view(l.text).substr(l.text.find(':') + 1));
      int number = l.number;
      ++pos_;
      if (!rest.empty()) {
        map.entries.push_back({*key, scalar(rest, number)});
      } else if (pos_ < lines_.size() &&
                 (lines_[pos_].indent > indent || (lines_[pos_].indent == indent && is_item(lines_[pos_].text)))) {
        map.entries.push_back({*key, node(lines_[pos_].indent, depth + 1)});
      } else {
        map.entries.push_back({*key, YNode{YNode::Null, {}, {}, {}, number}});
      }
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent)
      fail(lines_[pos_].number, "indented deeper than the mapping around it");
    return map;
  }

  YNode scalar(std::string_view t, int line) const {
    if (t.front() == '{') fail(line, "a flow mapping ({...}) is not taken");
    if (t.front() == '[') {
      if (t.back() != ']') fail(line, "a flow list ([...]) is never closed");
      YNode seq{YNode::Seq, {}, {}, {}, line};
      std::string_view inner = trim(t.substr(1, t.size() - 2));
      while (!inner.empty()) {
        size_t comma = inner.find(',');
        std::string_view item = trim(inner.substr(0, comma));
        if (item.empty()) fail(line, "an empty item in a flow list");
        seq.items.push_back(scalar(item, line));
        inner = comma == std::string_view::npos ? std::string_view() : inner.substr(comma + 1);
      }
      return seq;
    }
    if (t.front() == '"' || t.front() == '\'') {
      if (t.size() < 2 || t.back() != t.front()) fail(line, "a quoted scalar is never closed");
      std::string_view inner = t.substr(1, t.size() - 2);
      if (t.front() == '"' && inner.find('\\') != std::string_view::npos)
        fail(line, "escapes in a double-quoted scalar are not taken");
      return {YNode::Scalar, std::string(inner), {}, {}, line};
    }
    if (t == "~" || t == "null") return {YNode::Null, {}, {}, {}, line};
    return {YNode::Scalar, std::string(t), {}, {}, line};
  }

  const std::string& file_;
  std::vector<YLine> lines_;
  size_t pos_ = 0;
};

// ---- Slurm's keys -------------------------------------------------------------

class TopologyReader {
 public:
  TopologyReader(const std::string& file, uint64_t max_names)
      : file_(file), max_names_(max_names), budget_(max_names) {}

  SlurmTopologyYaml read(const YNode& root) {
    if (root.kind != YNode::Seq) fail(root, "expected a list of topologies ('- topology: NAME')");
    SlurmTopologyYaml out;
    bool chosen_default = false;
    for (const YNode& t : root.items) {
      if (t.kind != YNode::Map) fail(t, "expected a topology: a mapping with 'topology: NAME'");
      Topology topo = topology(t);
      out.topologies.push_back(topo.name);
      if (!topo.blocks) continue;
      if (out.block_topology.empty() || (topo.cluster_default && !chosen_default)) {
        out.block_topology = topo.name;
        out.blocks = std::move(*topo.blocks);
        chosen_default = topo.cluster_default;
      }
    }
    if (out.block_topology.empty()) throw ParseError(file_, 0, "no block topology ('block:') in the file");
    check_unique_blocks(out.blocks);
    return out;
  }

 private:
  struct Topology {
    std::string name;
    bool cluster_default = false;
    std::optional<SlurmBlocks> blocks;
  };

  [[noreturn]] void fail(const YNode& n, const std::string& what) const { throw ParseError(file_, n.line, what); }

  std::string text(const YNode& n, std::string_view key) const {
    if (n.kind != YNode::Scalar || n.scalar.empty()) fail(n, fmt::format("{}: expected a value", key));
    return n.scalar;
  }

  Topology topology(const YNode& t) {
    Topology out;
    int types = 0;
    for (const auto& [key, v] : t.entries) {
      if (key == "topology") {
        out.name = text(v, key);
      } else if (key == "cluster_default") {
        std::string b = text(v, key);
        if (b != "true" && b != "false" && b != "yes" && b != "no")
          fail(v, fmt::format("cluster_default: expected true or false, found '{}'", shown(b)));
        out.cluster_default = b == "true" || b == "yes";
      } else if (key == "block") {
        ++types;
        out.blocks = block(v);
      } else if (key == "tree" || key == "flat" || key == "ring" || key == "torus3d") {
        ++types;
      } else {
        fail(v, fmt::format("unknown key '{}' in a topology; expected topology, cluster_default, block, tree, "
                            "flat, ring or torus3d",
                            shown(key)));
      }
    }
    if (out.name.empty()) fail(t, "a topology without 'topology: NAME'");
    if (types != 1) fail(t, fmt::format("topology '{}' has {} types; expected exactly one", out.name, types));
    return out;
  }

  SlurmBlocks block(const YNode& b) {
    if (b.kind != YNode::Map) fail(b, "block: expected a mapping with block_sizes and blocks");
    SlurmBlocks out;
    for (const auto& [key, v] : b.entries) {
      if (key == "block_sizes") {
        out.block_sizes = sizes(v);
      } else if (key == "blocks") {
        if (v.kind != YNode::Seq) fail(v, "blocks: expected a list of '- block: NAME' entries");
        for (const YNode& item : v.items) out.blocks.push_back(one_block(item));
      } else {
        fail(v, fmt::format("unknown key '{}' in block; expected block_sizes or blocks", shown(key)));
      }
    }
    if (out.blocks.empty()) fail(b, "block: no blocks");
    return out;
  }

  std::vector<int> sizes(const YNode& v) {
    std::vector<YNode> items = v.kind == YNode::Seq ? v.items : std::vector<YNode>{v};
    std::vector<int> out;
    for (const YNode& n : items) {
      std::string s = text(n, "block_sizes");
      int x = 0;
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
      if (ec != std::errc() || end != s.data() + s.size() || x <= 0)
        fail(n, fmt::format("block_sizes: '{}' is not a positive whole number of nodes", shown(s)));
      out.push_back(x);
    }
    if (out.empty()) fail(v, "block_sizes: no size");
    check_block_sizes(out, file_, v.line);
    return out;
  }

  SlurmBlock one_block(const YNode& item) {
    if (item.kind != YNode::Map) fail(item, "expected '- block: NAME' with 'nodes: HOSTLIST'");
    SlurmBlock b{{}, {}, file_, item.line};
    bool has_nodes = false;
    for (const auto& [key, v] : item.entries) {
      if (key == "block") {
        b.name = text(v, key);
        if (!is_slurm_name(b.name)) fail(v, fmt::format("block '{}' is not a name Slurm takes", shown(b.name)));
      } else if (key == "nodes") {
        has_nodes = true;
        SlurmConfLine where{file_, v.line, {}};
        b.hosts = expand_slurm_names(where, "nodes", text(v, key), budget_, max_names_);
      } else {
        fail(v, fmt::format("unknown key '{}' in a block; expected block or nodes", shown(key)));
      }
    }
    if (b.name.empty()) fail(item, "a block without 'block: NAME'");
    if (!has_nodes) fail(item, fmt::format("block '{}' has no nodes", b.name));
    return b;
  }

  const std::string& file_;
  uint64_t max_names_;
  uint64_t budget_;
};

}  // namespace

SlurmTopologyYaml read_slurm_topology_yaml(std::istream& in, const std::string& filename, uint64_t max_names) {
  std::string text = read_all(in, filename, kMaxSlurmTopologyYamlBytes);
  YNode root = YamlParser(text, filename).parse();
  return TopologyReader(filename, max_names).read(root);
}

void write_slurm_topology_yaml(const Fabric& fabric, std::ostream& out) {
  BlockPlan plan = plan_slurm_blocks(fabric);
  std::stringstream tree;
  write_slurm_topology(fabric, tree);
  out << "# topology.yaml generated by topoctl from " << shown(fabric.source(), std::string::npos) << "\n"
      << "# nvlink: one block per NVLink domain; fabric: the switch tree.\n";
  out << "- topology: nvlink\n  cluster_default: true\n  block:\n";
  out << "    block_sizes: [" << fmt::format("{}", fmt::join(plan.block_sizes, ", ")) << "]\n    blocks:\n";
  for (const SlurmBlock& b : plan.blocks)
    out << "      - block: " << b.name << "\n        nodes: " << compress_hostlist(b.hosts) << "\n";
  out << "- topology: fabric\n  cluster_default: false\n  tree:\n    switches:\n";
  for (const SlurmConfLine& line : read_slurm_conf(tree, "topology.conf")) {
    out << "      - switch: " << line.pairs.front().second << "\n";
    for (size_t i = 1; i < line.pairs.size(); ++i)
      out << "        " << (line.pairs[i].first == "Nodes" ? "nodes" : "children") << ": " << line.pairs[i].second
          << "\n";
  }
}

}  // namespace topo
