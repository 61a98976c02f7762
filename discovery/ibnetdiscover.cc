#include "discovery/ibnetdiscover.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <functional>
#include <istream>
#include <iterator>
#include <optional>
#include <ostream>
#include <span>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "common/line_source.h"
#include "common/quote.h"

namespace topo {
namespace {

enum class NodeType : uint8_t { Switch, Ca, Router };

// Enabled-link bit masks of a port, as ibsim 0.10 keeps them; its defaults
// are 4x and SDR with no extended speed.
struct Masks {
  uint8_t width = 2;
  uint8_t speed = 1;
  uint8_t ext = 0;
};

struct NodeRecord {
  NodeType type;
  std::string_view id;
  std::string desc;
  int ports;
  uint64_t guid;
  int line;
  Masks defaults;    // for ports the file does not list
  uint32_t lid = 0;  // a switch's, from "lid <n>" in the header's comment
};

// One port line: the local end, the far end it names and what it says of the rate.
struct PortRecord {
  int node;
  int port;
  std::string_view remote_id;
  int remote_port;
  int line;
  std::optional<LinkRate> rate;  // the `<width>x<speed>` word of the comment
  Masks masks;
  // From the comment: this port's own LID ("lid <n> lmc <m>", CA ports) and
  // the far end's ("lid <n>" after its description); 0 when not given.
  uint32_t own_lid = 0;
  uint32_t peer_lid = 0;
};

struct LinkDraft {
  int first;        // PortRecord index of the first sighting
  int second = -1;  // and of the far end's, when the file lists it
  int remote_node;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Reads the tokens of one line left to right.
struct Cursor {
  std::string_view s;
  size_t i = 0;

  void skip_space() {
    while (i < s.size() && is_space(s[i])) ++i;
  }
  bool at_end() const { return i >= s.size(); }
  char peek() const { return i < s.size() ? s[i] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++i;
    return true;
  }
  std::optional<int> integer() {
    int v = 0;
    auto [end, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
    if (ec != std::errc() || v < 0) return std::nullopt;
    i = static_cast<size_t>(end - s.data());
    return v;
  }
  std::string_view rest() const { return i < s.size() ? s.substr(i) : std::string_view(); }
};

// Words of a comment outside double quotes, and the quoted strings in it.
struct CommentWords {
  std::vector<std::string_view> words;
  std::optional<std::string_view> first_quoted;
  bool unterminated = false;
};

CommentWords split_comment(std::string_view c) {
  CommentWords out;
  size_t i = 0;
  while (i < c.size()) {
    if (is_space(c[i])) {
      ++i;
    } else if (c[i] == '"') {
      size_t close = c.find('"', i + 1);
      if (close == std::string_view::npos) {
        out.unterminated = true;
        return out;
      }
      if (!out.first_quoted) out.first_quoted = c.substr(i + 1, close - i - 1);
      i = close + 1;
    } else {
      size_t j = i;
      while (j < c.size() && !is_space(c[j]) && c[j] != '"') ++j;
      out.words.push_back(c.substr(i, j - i));
      i = j;
    }
  }
  return out;
}

bool is_number(std::string_view w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
}

uint64_t parse_u64(std::string_view text, bool* ok) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  // The whole word: "0p100000" is no GUID, nor is "4x" a width mask.
  *ok = ec == std::errc() && end != text.data() && end == text.data() + text.size();
  return v;
}

int highest_bit(unsigned mask) {
  int bit = -1;
  for (int b = 0; b < 8; ++b)
    if (mask & (1u << b)) bit = b;
  return bit;
}

// The rate ibsim gives a link from the masks of its two ends: the widest
// and fastest bit both enable, an extended speed over a base one.
std::optional<LinkRate> negotiate(const Masks& a, const Masks& b) {
  static constexpr LinkWidth kWidth[] = {LinkWidth::X1, LinkWidth::X4, LinkWidth::X8, LinkWidth::X12, LinkWidth::X2};
  static constexpr LinkSpeed kSpeed[] = {LinkSpeed::SDR, LinkSpeed::DDR, LinkSpeed::QDR};
  static constexpr LinkSpeed kExt[] = {LinkSpeed::FDR, LinkSpeed::EDR, LinkSpeed::HDR, LinkSpeed::NDR};
  unsigned w = a.width & b.width, s = a.speed & b.speed, e = a.ext & b.ext;
  // ibsim prefers 12x, 8x, 4x, 2x, 1x: bit 4 (2x) ranks between 4x and 1x.
  std::optional<LinkWidth> width;
  for (int bit : {3, 2, 1, 4, 0})
    if (w & (1u << bit)) {
      width = kWidth[bit];
      break;
    }
  if (!width) return std::nullopt;
  if (e) return LinkRate{*width, kExt[highest_bit(e)]};
  if (!s) return std::nullopt;
  return LinkRate{*width, kSpeed[highest_bit(s)]};
}

std::string describe_masks(const Masks& m) { return fmt::format("w={} s={} e={}", m.width, m.speed, m.ext); }

LinkRate slower_of(const LinkRate& a, const LinkRate& b) {
  LinkRate r;
  r.width = lanes(a.width) <= lanes(b.width) ? a.width : b.width;
  if (is_ethernet(a.speed) || is_ethernet(b.speed))
    r.speed = LinkRate{LinkWidth::X1, a.speed}.gbps() <= LinkRate{LinkWidth::X1, b.speed}.gbps() ? a.speed : b.speed;
  else
    r.speed = lane_gbps(a.speed) <= lane_gbps(b.speed) ? a.speed : b.speed;
  return r;
}

class Reader {
 public:
  Reader(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  Fabric read(const HostNaming& naming) {
    parse();
    if (nodes_.empty())
      fail(0,
           "no node in the file: expected ibnetdiscover output or an ibsim net file, with 'Switch' or 'Ca' "
           "headers");
    // Routers are skipped: a file of routers alone would build an empty
    // fabric, which no writer can put back into a file.
    if (std::all_of(nodes_.begin(), nodes_.end(), [](const NodeRecord& n) { return n.type == NodeType::Router; }))
      fail(nodes_.front().line,
           "no 'Switch' or 'Ca' in the file, only routers ('Rt', the first on this line), "
           "which the model skips");
    resolve_links();
    return build(naming);
  }

 private:
  [[noreturn]] void fail(int line, std::string what) const { throw ParseError(file_, line, std::move(what)); }

  void parse() {
    int line_no = 0;
    size_t pos = 0;
    while (pos < text_.size()) {
      size_t nl = text_.find('\n', pos);
      std::string_view raw = text_.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
      pos = nl == std::string_view::npos ? text_.size() : nl + 1;
      ++line_no;
      parse_line(trim(raw), line_no);
    }
  }

  void parse_line(std::string_view line, int no) {
    if (line.empty()) {
      current_ = -1;  // a blank line ends a node's port list
      return;
    }
    char c = line.front();
    if (c == '#') return;  // comments do not end a port list (ibsim skips them there too)
    if (c == '[') return parse_port(line, no);
    if (c == '@') fail(no, "ibsim port aliases ('@[port] \"alias\"') are not supported; name the far node instead");
    std::string_view word = line.substr(0, line.find_first_of(" \t=+\"0123456789"));
    if (word == "Switch") return parse_header(line, word, NodeType::Switch, no);
    if (word == "Ca" || word == "Hca") return parse_header(line, word, NodeType::Ca, no);
    if (word == "Rt") return parse_header(line, word, NodeType::Router, no);
    if (word == "include" || word == "do" || word == "module" || word == "pdebug")
      fail(no, fmt::format("the ibsim directive '{}' is not supported; expected a fabric with every node "
                           "written out",
                           shown(word)));
    size_t eq = line.find_first_of("=+");
    if (!word.empty() && eq == word.size()) return parse_setting(word, line.substr(eq), no);
    fail(no, fmt::format("expected a node header ('Switch <ports> \"<id>\"', 'Ca <ports> \"<id>\"'), a port "
                         "line ('[<port>] \"<id>\"[<port>]'), a key=value line, a comment or a blank line; "
                         "got '{}'",
                         line.substr(0, 60)));
  }

  // key=value lines: GUID bases and ibsim's default link masks; others
  // (vendid, devid, sysimgguid) describe nothing the model keeps.
  void parse_setting(std::string_view key, std::string_view rest, int no) {
    bool relative = rest.front() == '+';
    std::string_view value = trim(rest.substr(1));
    value = value.substr(0, value.find_first_of("( \t#"));
    auto number = [&] {
      bool ok = false;
      uint64_t v = parse_u64(value, &ok);
      if (!ok) fail(no, fmt::format("expected a number after '{}=', got '{}'", shown(key), shown(value)));
      return v;
    };
    auto guid_type = [&]() -> std::optional<NodeType> {
      if (key == "switchguid") return NodeType::Switch;
      if (key == "caguid" || key == "hcaguids") return NodeType::Ca;
      if (key == "rtguid") return NodeType::Router;
      return std::nullopt;
    }();
    if (guid_type) {
      // As ibsim: '=' sets the base, '+' offsets it; nodes count up from there.
      auto t = static_cast<size_t>(*guid_type);
      uint64_t v = number();
      if (!relative) guid_base_[t] = v;
      next_guid_[t] = relative ? guid_base_[t] + v : v;
      // GUID 0 is what the model (and the writer) take for "none".
      if (next_guid_[t] == 0 && *guid_type != NodeType::Router)
        fail(no, fmt::format("{}{}: 0 is not a GUID", shown(key), shown(rest)));
      return;
    }
    if (relative) fail(no, fmt::format("expected '{}=<value>'", shown(key)));
    if (key == "width") {
      uint64_t v = number();
      if (v < 1 || v > 31) fail(no, fmt::format("width={} is not a width mask 1-31 (1=1x 2=4x 4=8x 8=12x 16=2x)", v));
      defaults_.width = static_cast<uint8_t>(v);
    } else if (key == "speed") {
      uint64_t v = number();
      if (v < 1 || v > 7) fail(no, fmt::format("speed={} is not a speed mask 1-7 (1=SDR 2=DDR 4=QDR)", v));
      defaults_.speed = static_cast<uint8_t>(v);
    } else if (key == "extspeed") {
      uint64_t v = number();
      if (v > 15) fail(no, fmt::format("extspeed={} is not a mask 0-15 (1=FDR 2=EDR 4=HDR 8=NDR)", v));
      defaults_.ext = static_cast<uint8_t>(v);
    }
  }

  void parse_header(std::string_view line, std::string_view word, NodeType type, int no) {
    Cursor cur{line, word.size()};
    const std::string_view kind = type == NodeType::Switch ? "Switch" : type == NodeType::Ca ? "Ca" : "Rt";
    cur.skip_space();
    auto ports = cur.integer();
    if (!ports || *ports < 1 || *ports > 65535)
      fail(no, fmt::format("expected the port count (1-65535) after '{}', as in '{} 36 \"<id>\"'", word, kind));
    cur.skip_space();
    if (!cur.eat('"')) fail(no, fmt::format("expected the node id in double quotes after '{} {}'", word, *ports));
    std::string_view rest = cur.rest();
    size_t close = rest.find('"');
    if (close == std::string_view::npos) fail(no, "unterminated quote: the node id has no closing '\"'");
    std::string_view id = rest.substr(0, close);
    if (id.empty()) fail(no, "the node id is empty");
    std::string_view tail = trim(rest.substr(close + 1));

    // The description is the comment's first quoted string; ibsim also takes
    // an unquoted one, up to the lid/port words that follow it.
    std::string desc;
    if (!tail.empty()) {
      if (tail.front() != '#')
        fail(no, fmt::format("expected '# \"<description>\"' after the id, got '{}'", shown(tail)));
      std::string_view comment = trim(tail.substr(1));
      if (!comment.empty() && comment.front() == '"') {
        size_t end = comment.find('"', 1);
        if (end == std::string_view::npos) fail(no, "unterminated quote: the description has no closing '\"'");
        desc = std::string(comment.substr(1, end - 1));
      } else {
        size_t cut = comment.size();
        for (std::string_view stop : {" enhanced port ", " base port ", " lid ", " lmc "})
          cut = std::min(cut, comment.find(stop));
        desc = std::string(trim(comment.substr(0, cut)));
      }
    }
    if (desc.empty()) desc = std::string(id);
    // A NodeDescription is text; a tab or NUL in it could not be written
    // back and read as the same name (found by fuzzing).
    for (std::string_view text : {id, std::string_view(desc)})
      for (char c : text)
        if (is_control(c))
          fail(no, fmt::format("the node id or description holds the control character 0x{:02x}",
                               static_cast<unsigned char>(c)));
    uint32_t lid = tail.empty() ? 0 : header_lid(tail.substr(1), no);

    auto t = static_cast<size_t>(type);
    uint64_t guid = next_guid_[t];
    if (guid == 0 && type != NodeType::Router) fail(no, "the GUIDs counted up from the last guid= line wrap to 0");
    next_guid_[t] += type == NodeType::Switch ? 1 : static_cast<uint64_t>(*ports) + 1;  // ibsim reserves port GUIDs
    nodes_.push_back({type, id, std::move(desc), *ports, guid, no, defaults_, lid});
    current_ = static_cast<int>(nodes_.size()) - 1;
  }

  void parse_port(std::string_view line, int no) {
    if (current_ < 0)
      fail(no,
           "port line outside a node: expected a 'Switch <ports> \"<id>\"' or 'Ca <ports> \"<id>\"' header "
           "before it (a blank line ends a node)");
    const NodeRecord& node = nodes_[static_cast<size_t>(current_)];
    Cursor cur{line, 1};
    auto port = cur.integer();
    if (!port || !cur.eat(']')) fail(no, "expected '[<port number>]' at the start of the port line");
    if (*port < 1 || *port > node.ports)
      fail(no, fmt::format("port {} is outside 1-{}, the ports the header of '{}' declares", *port, node.ports,
                           shown(node.id)));
    skip_extras(cur, no);
    cur.skip_space();
    if (!cur.eat('"')) fail(no, "expected the far node's id in double quotes after the port number");
    std::string_view rest = cur.rest();
    size_t close = rest.find('"');
    if (close == std::string_view::npos) fail(no, "unterminated quote: the far node's id has no closing '\"'");
    PortRecord rec;
    rec.node = current_;
    rec.port = *port;
    rec.remote_id = rest.substr(0, close);
    rec.line = no;
    rec.masks = node.defaults;
    if (rec.remote_id.empty()) fail(no, "the far node's id is empty");
    cur.i += close + 1;
    rec.remote_port = 1;  // ibsim's default when the far port is left out
    if (cur.peek() == '[') {
      ++cur.i;
      auto rp = cur.integer();
      if (!rp || *rp < 1 || !cur.eat(']')) fail(no, "expected '[<far port number>]' after the far node's id");
      rec.remote_port = *rp;
    }
    skip_extras(cur, no);

    std::string_view tail = cur.rest();
    size_t hash = tail.find('#');
    parse_options(tail.substr(0, hash), rec.masks, no);
    if (hash != std::string_view::npos) {
      rec.rate = rate_in_comment(tail.substr(hash + 1), no);
      port_lids(tail.substr(hash + 1), rec, no);
    }
    ports_.push_back(rec);
  }

  // ibnetdiscover follows a port number with the port's external number
  // ("[3][2]") and a CA port with its GUID ("(2c90300000012)").
  void skip_extras(Cursor& cur, int no) {
    for (;;) {
      if (cur.peek() == '[') {
        size_t close = cur.s.find(']', cur.i);
        if (close == std::string_view::npos) fail(no, "expected ']' to close '['");
        cur.i = close + 1;
      } else if (cur.peek() == '(') {
        size_t close = cur.s.find(')', cur.i);
        if (close == std::string_view::npos) fail(no, "expected ')' to close the port GUID");
        cur.i = close + 1;
      } else {
        return;
      }
    }
  }

  // ibsim's per-port options before the comment: w=, s=, e= masks.
  void parse_options(std::string_view text, Masks& masks, int no) {
    Cursor cur{text};
    for (;;) {
      cur.skip_space();
      if (cur.at_end()) return;
      size_t start = cur.i;
      while (!cur.at_end() && !is_space(cur.peek())) ++cur.i;
      std::string_view opt = text.substr(start, cur.i - start);
      if (opt.size() < 3 || opt[1] != '=')
        fail(no, fmt::format("expected ibsim port options w=<mask>, s=<mask> or e=<mask> before the comment, "
                             "got '{}'",
                             shown(opt)));
      bool ok = false;
      uint64_t v = parse_u64(opt.substr(2), &ok);
      if (!ok) fail(no, fmt::format("expected a number in '{}'", shown(opt)));
      switch (opt[0]) {
        case 'w':
          if (v < 1 || v > 31)
            fail(no, fmt::format("{} is not a width mask 1-31 (1=1x 2=4x 4=8x 8=12x 16=2x)", shown(opt)));
          masks.width = static_cast<uint8_t>(v);
          break;
        case 's':
          if (v < 1 || v > 7) fail(no, fmt::format("{} is not a speed mask 1-7 (1=SDR 2=DDR 4=QDR)", shown(opt)));
          masks.speed = static_cast<uint8_t>(v);
          break;
        case 'e':
          if (v > 15)
            fail(no, fmt::format("{} is not an extended speed mask 0-15 (1=FDR 2=EDR 4=HDR 8=NDR)", shown(opt)));
          masks.ext = static_cast<uint8_t>(v);
          break;
        default:
          fail(no, fmt::format("unknown port option '{}': expected w=, s= or e=", shown(opt)));
      }
    }
  }

  uint32_t lid_value(std::string_view word, int no) const {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (ec != std::errc() || end != word.data() + word.size() || v > 0xbfff)
      fail(no, fmt::format("LID '{}' is not a unicast LID (0-49151)", shown(word)));
    return static_cast<uint32_t>(v);
  }

  // A switch header's "... enhanced port 0 lid <n> lmc <m>".
  uint32_t header_lid(std::string_view comment, int no) const {
    CommentWords cw = split_comment(comment);
    const auto& w = cw.words;
    for (size_t k = 0; k + 1 < w.size(); ++k)
      if (w[k] == "lid" && is_number(w[k + 1])) return lid_value(w[k + 1], no);
    return 0;
  }

  // A CA port line says "lid <own> lmc <m> \"<peer>\" lid <peer's>", a switch
  // port line "\"<peer>\" lid <peer's>".
  void port_lids(std::string_view comment, PortRecord& rec, int no) const {
    CommentWords cw = split_comment(comment);
    const auto& w = cw.words;
    for (size_t k = 0; k + 1 < w.size(); ++k) {
      if (w[k] != "lid" || !is_number(w[k + 1])) continue;
      uint32_t lid = lid_value(w[k + 1], no);
      if (k + 2 < w.size() && w[k + 2] == "lmc")
        rec.own_lid = lid;
      else
        rec.peer_lid = lid;
    }
  }

  // The word after the comment's last "lid <n>": "4xNDR". None when the
  // comment has no lid, or its last lid is a CA's own "lid <n> lmc <m>".
  std::optional<LinkRate> rate_in_comment(std::string_view comment, int no) {
    CommentWords cw = split_comment(comment);
    if (cw.unterminated) fail(no, "unterminated quote in the comment: expected a closing '\"'");
    const auto& w = cw.words;
    for (size_t k = w.size(); k-- > 0;) {
      if (w[k] != "lid" || k + 1 >= w.size() || !is_number(w[k + 1])) continue;
      if (k + 2 >= w.size() || w[k + 2] == "lmc") return std::nullopt;
      std::string_view word = w[k + 2];
      // A fabric has a handful of rate words; parse each once.
      if (auto known = rate_words_.find(word); known != rate_words_.end()) return known->second;
      if (auto rate = parse_rate(word)) return rate_words_.emplace(word, *rate).first->second;
      size_t x = word.find_first_of("xX");
      if (x == std::string_view::npos)
        fail(no, fmt::format("expected a link rate like 4xNDR after 'lid {}', got '{}'", shown(w[k + 1]), shown(word)));
      if (!parse_width(word.substr(0, x + 1)))
        fail(no, fmt::format("unknown link width '{}' in '{}': expected 1x, 2x, 4x, 8x or 12x",
                             shown(word.substr(0, x + 1)), shown(word)));
      fail(no, fmt::format("unknown link speed '{}' in '{}': expected SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR "
                           "or XDR",
                           shown(word.substr(x + 1)), shown(word)));
    }
    return std::nullopt;
  }

  static uint64_t key(int node, int port) { return (static_cast<uint64_t>(node) << 16) | static_cast<uint64_t>(port); }

  std::string end_name(int node, int port) const {
    return fmt::format("\"{}\"[{}]", shown(nodes_[static_cast<size_t>(node)].id), port);
  }

  // Pairs the two sightings of every cable and checks that they agree.
  void resolve_links() {
    std::unordered_map<std::string_view, int> index;
    index.reserve(nodes_.size() * 2);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      auto [it, fresh] = index.emplace(nodes_[i].id, static_cast<int>(i));
      if (!fresh)
        fail(nodes_[i].line, fmt::format("node \"{}\" is defined twice (first on line {})", shown(nodes_[i].id),
                                         nodes_[static_cast<size_t>(it->second)].line));
    }

    // (node, port) -> the draft that holds it, from either end.
    std::unordered_map<uint64_t, int> at;
    at.reserve(ports_.size() * 2);
    drafts_.reserve(ports_.size() / 2 + 1);
    for (size_t r = 0; r < ports_.size(); ++r) {
      const PortRecord& p = ports_[r];
      auto it = index.find(p.remote_id);
      if (it == index.end())
        fail(p.line, fmt::format("port {} links to \"{}\", which no 'Switch' or 'Ca' header in the file defines",
                                 p.port, shown(p.remote_id)));
      int remote = it->second;
      const NodeRecord& far = nodes_[static_cast<size_t>(remote)];
      if (nodes_[static_cast<size_t>(p.node)].type == NodeType::Router || far.type == NodeType::Router) continue;
      if (p.remote_port > far.ports)
        fail(p.line, fmt::format("port {} links to port {} of \"{}\", which has only {} ports", p.port, p.remote_port,
                                 shown(p.remote_id), far.ports));
      if (remote == p.node && p.remote_port == p.port) fail(p.line, fmt::format("port {} is cabled to itself", p.port));

      if (auto mine = at.find(key(p.node, p.port)); mine != at.end()) {
        LinkDraft& d = drafts_[static_cast<size_t>(mine->second)];
        const PortRecord& first = ports_[static_cast<size_t>(d.first)];
        if (first.node == p.node && first.port == p.port)
          fail(p.line, fmt::format("port {} of \"{}\" is listed twice (also on line {})", p.port,
                                   shown(nodes_[static_cast<size_t>(p.node)].id), first.line));
        if (d.second >= 0 || first.node != remote || first.port != p.remote_port)
          fail(p.line, fmt::format("port {} is cabled to {} here, but line {} cables {} to it", p.port,
                                   end_name(remote, p.remote_port), first.line, end_name(first.node, first.port)));
        d.second = static_cast<int>(r);
        continue;
      }
      if (auto theirs = at.find(key(remote, p.remote_port)); theirs != at.end()) {
        const LinkDraft& d = drafts_[static_cast<size_t>(theirs->second)];
        const PortRecord& other = ports_[static_cast<size_t>(d.first)];
        bool from_there = other.node == remote && other.port == p.remote_port;
        fail(p.line,
             fmt::format("port {} is cabled to {}, which line {} already cables to {}", p.port,
                         end_name(remote, p.remote_port), other.line,
                         from_there ? end_name(d.remote_node, other.remote_port) : end_name(other.node, other.port)));
      }
      int d = static_cast<int>(drafts_.size());
      drafts_.push_back({static_cast<int>(r), -1, remote});
      at.emplace(key(p.node, p.port), d);
      at.emplace(key(remote, p.remote_port), d);
    }
  }

  LinkRate link_rate(const LinkDraft& d) const {
    const PortRecord& a = ports_[static_cast<size_t>(d.first)];
    const PortRecord* b = d.second >= 0 ? &ports_[static_cast<size_t>(d.second)] : nullptr;
    if (a.rate && b && b->rate) return slower_of(*a.rate, *b->rate);
    if (a.rate) return *a.rate;
    if (b && b->rate) return *b->rate;
    Masks far = b ? b->masks : nodes_[static_cast<size_t>(d.remote_node)].defaults;
    auto rate = negotiate(a.masks, far);
    if (!rate)
      fail(b ? b->line : a.line,
           fmt::format("the two ends of {} <-> {} enable no common width or speed ({} against {}); ibsim "
                       "refuses such a link",
                       end_name(a.node, a.port), end_name(d.remote_node, a.remote_port), describe_masks(a.masks),
                       describe_masks(far)));
    return *rate;
  }

  // An HCA vertex stands for one cabled port (fabric.h): a CA with several
  // cabled ports becomes one vertex per port, "<id>:<port>".
  void split_multiport_cas() {
    cabled_.assign(nodes_.size(), {});
    for (const LinkDraft& d : drafts_) {
      const PortRecord& a = ports_[static_cast<size_t>(d.first)];
      cabled_[static_cast<size_t>(a.node)].push_back(a.port);
      cabled_[static_cast<size_t>(d.remote_node)].push_back(a.remote_port);
    }
    for (auto& ports : cabled_) std::sort(ports.begin(), ports.end());
  }

  bool split(int node) const {
    return nodes_[static_cast<size_t>(node)].type == NodeType::Ca && cabled_[static_cast<size_t>(node)].size() > 1;
  }

  std::string vertex_id(int node, int port) const {
    std::string_view id = nodes_[static_cast<size_t>(node)].id;
    return split(node) ? fmt::format("{}:{}", id, port) : std::string(id);
  }

  // A CA port's LID: its own line's "lid <n> lmc <m>", else what the
  // switch's line says of it.
  void set_port_lids(FabricBuilder& builder, const LinkDraft& d) const {
    const PortRecord& a = ports_[static_cast<size_t>(d.first)];
    const PortRecord* b = d.second >= 0 ? &ports_[static_cast<size_t>(d.second)] : nullptr;
    auto set = [&](int node, int port, uint32_t own, uint32_t seen_from_peer, int line) {
      if (nodes_[static_cast<size_t>(node)].type != NodeType::Ca) return;
      uint32_t lid = own ? own : seen_from_peer;
      if (own && seen_from_peer && own != seen_from_peer)
        fail(line, fmt::format("{} has LID {} on its own line but LID {} on its peer's", end_name(node, port), own,
                               seen_from_peer));
      if (lid) set_lid(builder, vertex_id(node, port), lid, line);
    };
    set(a.node, a.port, a.own_lid, b ? b->peer_lid : 0, a.line);
    set(d.remote_node, a.remote_port, b ? b->own_lid : 0, a.peer_lid, b ? b->line : a.line);
  }

  // Two nodes with one LID are an error at the line of the second, not
  // only once the whole fabric is built.
  void set_lid(FabricBuilder& builder, std::string id, uint32_t lid, int line) const {
    auto [it, fresh] = lid_owners_.try_emplace(lid, id, line);
    if (!fresh && it->second.first != id)
      fail(line, fmt::format("LID {} of '{}' is already given to '{}' on line {}", lid, shown(id),
                             shown(it->second.first), it->second.second));
    builder.set_lid(id, lid);
  }

  Fabric build(const HostNaming& naming) {
    split_multiport_cas();
    FabricBuilder builder(naming);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const NodeRecord& n = nodes_[i];
      try {
        if (n.type == NodeType::Switch) {
          builder.add_switch(std::string(n.id), n.desc, n.ports, n.guid);
          if (n.lid) set_lid(builder, std::string(n.id), n.lid, n.line);
        } else if (n.type == NodeType::Ca && split(static_cast<int>(i))) {
          for (int port : cabled_[i]) builder.add_hca(vertex_id(static_cast<int>(i), port), n.desc, n.ports, n.guid);
        } else if (n.type == NodeType::Ca) {
          builder.add_hca(std::string(n.id), n.desc, n.ports, n.guid);
          // No port line carries the LID of a CA with no cable: its header does.
          if (n.lid && cabled_[i].empty()) set_lid(builder, std::string(n.id), n.lid, n.line);
        }
      } catch (const FabricError& e) {
        fail(n.line, e.what());
      }
    }
    for (const LinkDraft& d : drafts_) {
      const PortRecord& a = ports_[static_cast<size_t>(d.first)];
      LinkRate rate = link_rate(d);
      try {
        builder.connect(vertex_id(a.node, a.port), a.port, vertex_id(d.remote_node, a.remote_port), a.remote_port,
                        rate);
      } catch (const FabricError& e) {
        fail(a.line, e.what());
      }
      set_port_lids(builder, d);
    }
    try {
      Fabric fabric = std::move(builder).finish();
      fabric.set_source("ibnetdiscover:" + file_);
      return fabric;
    } catch (const FabricError& e) {
      fail(0, e.what());
    }
  }

  std::string_view text_;
  const std::string& file_;
  std::vector<NodeRecord> nodes_;
  std::vector<PortRecord> ports_;
  std::vector<LinkDraft> drafts_;
  std::vector<std::vector<int>> cabled_;                                          // per node, its cabled ports
  mutable std::unordered_map<uint32_t, std::pair<std::string, int>> lid_owners_;  // LID -> vertex id, line
  std::unordered_map<std::string_view, LinkRate> rate_words_;
  int current_ = -1;
  Masks defaults_;
  // ibsim's GUID counters per node type: switches from 0x200000, CAs from 0x100000.
  uint64_t guid_base_[3] = {0x200000, 0x100000, 0};
  uint64_t next_guid_[3] = {0x200000, 0x100000, 0};
};

// The readers split a CA with several cabled ports into a vertex per port,
// "<id>:<port>" (same GUID); written back, they are one CA again. A CA whose
// own id merely ends in ":<number>" has no such sibling and keeps its id.
class WrittenIds {
 public:
  explicit WrittenIds(const Fabric& fabric) : fabric_(fabric) {
    std::unordered_map<std::pair<std::string_view, uint64_t>, int, PartHash> parts;
    for (NodeId v : fabric.hcas())
      if (auto base = split_base(v)) ++parts[{*base, fabric.node(v).guid}];
    for (const auto& [key, count] : parts)
      if (count > 1) split_.insert(key);
  }

  std::string_view operator()(NodeId v) const {
    const Node& n = fabric_.node(v);
    auto base = split_base(v);
    if (!base || !split_.contains({*base, n.guid})) return n.id;
    int port = 0;
    std::from_chars(n.id.data() + base->size() + 1, n.id.data() + n.id.size(), port);
    return fabric_.cable_at(v, port) ? *base : std::string_view(n.id);
  }

 private:
  struct PartHash {
    size_t operator()(const std::pair<std::string_view, uint64_t>& p) const {
      return std::hash<std::string_view>()(p.first) ^ std::hash<uint64_t>()(p.second);
    }
  };

  // "<base>" of an HCA id "<base>:<number>".
  std::optional<std::string_view> split_base(NodeId v) const {
    const Node& n = fabric_.node(v);
    std::string_view id = n.id;
    size_t colon = id.rfind(':');
    if (n.kind != NodeKind::Hca || colon == std::string_view::npos || !is_number(id.substr(colon + 1)))
      return std::nullopt;
    return id.substr(0, colon);
  }

  const Fabric& fabric_;
  std::unordered_set<std::pair<std::string_view, uint64_t>, PartHash> split_;
};

// What the reader refuses, refused before it is written: text that ends
// the quoted field early, and control characters (the reader's check).
void check_writable(const Node& n) {
  auto bad = [](std::string_view s, std::string_view chars) {
    return s.find_first_of(chars) != std::string_view::npos || std::any_of(s.begin(), s.end(), is_control);
  };
  if (bad(n.id, "\"#@"))
    throw FabricError(
        fmt::format("node id '{}' cannot be written as ibnetdiscover text: it holds '\"', '#', '@' "
                    "or a control character",
                    shown(n.id)));
  if (n.id.size() > 64)
    throw FabricError(fmt::format("node id '{}' is longer than the 64 characters ibsim takes", n.id));
  if (bad(n.name, "\""))
    throw FabricError(fmt::format("the description of node '{}' holds '\"' or a control character", n.id));
}

}  // namespace

Fabric read_ibnetdiscover(std::istream& in, const std::string& filename, const HostNaming& naming) {
  // A 16k-host, 8-rail fabric's ibnetdiscover output is about 50 MB.
  std::string text = read_all(in, filename, 256 << 20);
  return Reader(text, filename).read(naming);
}

Fabric read_ibnetdiscover_file(const std::string& path, const HostNaming& naming) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, fmt::format("cannot open: {}", std::strerror(errno)));
  return read_ibnetdiscover(in, path, naming);
}

namespace {

// Writes nodes as ibnetdiscover text through a buffer, a node at a time.
class TextWriter {
 public:
  TextWriter(const Fabric& fabric, std::ostream& out)
      : fabric_(fabric), g_(fabric.graph()), written_id_(fabric), out_(out) {
    buf_.reserve(kFlushAt);
  }

  void header() {
    fmt::format_to(std::back_inserter(buf_), "#\n# Topology file: written by topo-aware{}{}\n#\n",
                   fabric_.source().empty() ? "" : " from ", fabric_.source());
  }

  // Every switch, then every CA: the port vertices of one CA (same written
  // id) as one node.
  void nodes() {
    for (NodeId v : fabric_.switches()) node(std::span<const NodeId>(&v, 1));
    auto hcas = fabric_.hcas();
    for (size_t i = 0; i < hcas.size();) {
      size_t j = i + 1;
      while (j < hcas.size() && written_id_(hcas[j]) == written_id_(hcas[i])) ++j;
      node(hcas.subspan(i, j - i));
      i = j;
    }
  }

  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  static constexpr size_t kFlushAt = 1 << 16;

  struct Cabled {
    int port;
    NodeId peer;
    int peer_port;
    LinkRate rate;
  };

  // Port GUIDs follow ibsim and ConnectX: node GUID + port number; switch ports share the node's.
  static std::string port_guid(const Node& node, int port) {
    if (node.guid == 0 || node.kind == NodeKind::Switch) return {};
    return fmt::format("({:x})", node.guid + static_cast<uint64_t>(port));
  }

  // The cables of the group's vertices that are not down, by port.
  void collect(std::span<const NodeId> group) {
    cabled_.clear();
    for (NodeId v : group)
      for (auto e : boost::make_iterator_range(boost::out_edges(v, g_))) {
        const Link& l = g_[e];
        if (l.kind != LinkKind::Cable || l.state == PortState::Down) continue;
        NodeId peer = fabric_.peer(e, v);
        cabled_.push_back({fabric_.local_port(e, v), peer, fabric_.local_port(e, peer), l.rate});
      }
    std::sort(cabled_.begin(), cabled_.end(), [](const Cabled& a, const Cabled& b) { return a.port < b.port; });
  }

  // `group`: the vertices of one node (one, or a CA's port vertices).
  void node(std::span<const NodeId> group) {
    const Node& n = g_[group.front()];
    collect(group);
    int ports = n.ports;
    for (const Cabled& c : cabled_) ports = std::max(ports, c.port);
    node_lines(n, written_id_(group.front()), std::max(ports, 1), group.size());
    for (const Cabled& c : cabled_) cable_line(n, group, c);
    if (buf_.size() > kFlushAt - 1024) flush();
  }

  void node_lines(const Node& n, std::string_view id, int ports, size_t vertices) {
    const bool is_switch = n.kind == NodeKind::Switch;
    buf_ += '\n';
    if (n.guid != 0) {
      if (is_switch)
        fmt::format_to(std::back_inserter(buf_), "switchguid=0x{:x}({:x})\n", n.guid, n.guid);
      else
        fmt::format_to(std::back_inserter(buf_), "caguid=0x{:x}\n", n.guid);
    }
    if (is_switch)
      fmt::format_to(std::back_inserter(buf_), "Switch\t{} \"{}\"\t\t# \"{}\" enhanced port 0 lid {} lmc 0\n", ports,
                     id, n.name, n.lid);
    else if (cabled_.empty() && vertices == 1 && n.lid != 0)
      fmt::format_to(std::back_inserter(buf_), "Ca\t{} \"{}\"\t\t# \"{}\" lid {}\n", ports, id, n.name, n.lid);
    else
      fmt::format_to(std::back_inserter(buf_), "Ca\t{} \"{}\"\t\t# \"{}\"\n", ports, id, n.name);
  }

  void cable_line(const Node& n, std::span<const NodeId> group, const Cabled& c) {
    const Node& p = g_[c.peer];
    std::string_view peer_id = written_id_(c.peer);
    std::string rate = c.rate.str();
    if (n.kind == NodeKind::Switch) {
      fmt::format_to(std::back_inserter(buf_), "[{}]\t\"{}\"[{}]{}\t\t# \"{}\" lid {} {}\n", c.port, peer_id,
                     c.peer_port, port_guid(p, c.peer_port), p.name, p.lid, rate);
      return;
    }
    NodeId self = group.front();  // the port vertex cabled on c.port: its LID is the port's
    for (NodeId v : group)
      if (fabric_.cable_at(v, c.port)) self = v;
    fmt::format_to(std::back_inserter(buf_), "[{}]{}\t\"{}\"[{}]{}\t\t# lid {} lmc 0 \"{}\" lid {} {}\n", c.port,
                   port_guid(n, c.port), peer_id, c.peer_port, port_guid(p, c.peer_port), g_[self].lid, p.name, p.lid,
                   rate);
  }

  const Fabric& fabric_;
  const FabricGraph& g_;
  const WrittenIds written_id_;
  std::ostream& out_;
  std::string buf_;
  std::vector<Cabled> cabled_;
};

}  // namespace

void write_ibnetdiscover(const Fabric& fabric, std::ostream& out) {
  for (NodeId v : fabric.switches()) check_writable(fabric.node(v));
  for (NodeId v : fabric.hcas()) check_writable(fabric.node(v));
  TextWriter writer(fabric, out);
  writer.header();
  writer.nodes();
  writer.flush();
}

}  // namespace topo
