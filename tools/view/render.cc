#include "tools/view/render.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <cctype>
#include <map>
#include <mutex>

#include <fmt/format.h>

namespace topo::view {

std::string safe_id(std::string_view prefix, std::string_view text) {
  std::string out(prefix);
  // Graphviz writes '-' in SVG attributes as "&#45;": ids and classes keep to '_'.
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out.insert(0, "x");
  return out;
}

Format format_of_path(std::string_view path) {
  auto ends = [&](std::string_view tail) {
    return path.size() > tail.size() && path.substr(path.size() - tail.size()) == tail;
  };
  if (ends(".svg")) return Format::Svg;
  if (ends(".png")) return Format::Png;
  throw std::invalid_argument(fmt::format("{}: expected a file ending in .svg or .png", path));
}

namespace {

std::mutex graphviz_lock;
std::string graphviz_errors;  // guarded by graphviz_lock

int collect_error(char* message) {
  graphviz_errors += message;
  return 0;
}

// Graphviz reads backslash sequences in labels, tooltips and ids (\N is the
// node's name, \n a line break): a name's own backslashes are doubled.
std::string esc(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string label_of(const std::vector<std::string>& lines, std::string_view anchor) {
  // \l and \r end a line flush left or right; \n centred.
  std::string end = anchor == "l" ? "\\l" : anchor == "r" ? "\\r" : "\\n";
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out += esc(lines[i]);
    if (i + 1 < lines.size() || !anchor.empty()) out += end;
  }
  return out;
}

// Graphviz writes a URL into the SVG as given: its XML characters are
// escaped here (a bare '&' between query parameters is not XML).
std::string xml_attribute(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

void set(void* obj, const char* key, const std::string& value) {
  agsafeset(obj, const_cast<char*>(key), const_cast<char*>(value.c_str()), const_cast<char*>(""));
}

std::string number(double v) { return fmt::format("{:.3f}", v); }

// A polyline as Graphviz's edge spline (cubic Bezier pieces, 3n+1
// points): each straight piece from p to q is p, p, q, q.
std::string spline_of(const std::vector<Point>& path) {
  std::string out = fmt::format("{:.2f},{:.2f}", path.front().x, path.front().y);
  for (size_t i = 1; i < path.size(); ++i)
    out += fmt::format(" {0:.2f},{1:.2f} {2:.2f},{3:.2f} {2:.2f},{3:.2f}", path[i - 1].x, path[i - 1].y, path[i].x,
                       path[i].y);
  return out;
}

struct Graph {
  Agraph_t* g = nullptr;
  explicit Graph(Agraph_t* graph) : g(graph) {}
  ~Graph() {
    if (g) agclose(g);
  }
};

void set_graph_attributes(Agraph_t* g, const Scene& scene) {
  std::string title = esc(scene.title);
  for (const std::string& line : scene.legend) title += "\\l" + esc(line);
  if (!scene.legend.empty()) title += "\\l";
  set(g, "label", title);
  set(g, "labelloc", "t");
  set(g, "labeljust", "l");
  set(g, "fontname", "Helvetica");
  set(g, "fontsize", "14");
  set(g, "bgcolor", "white");
  if (scene.layout == Layout::Tree) {
    set(g, "rankdir", "TB");
    set(g, "nodesep", "0.15");
    set(g, "ranksep", "0.9");
    set(g, "splines", "line");
    set(g, "outputorder", "edgesfirst");
    // Large fabrics: a bounded crossing search keeps layout time linear-ish.
    set(g, "mclimit", "0.3");
    set(g, "remincross", "false");
  } else {
    set(g, "splines", "false");
    set(g, "outputorder", "edgesfirst");
  }
}

// A cluster subgraph per group, by group id.
std::map<std::string, Agraph_t*> add_groups(Agraph_t* g, const Scene& scene) {
  std::map<std::string, Agraph_t*> groups;
  for (const Group& gr : scene.groups) {
    Agraph_t* sub = agsubg(g, const_cast<char*>(("cluster_" + gr.id).c_str()), 1);
    set(sub, "label", esc(gr.label));
    set(sub, "id", gr.id);
    if (!gr.css_class.empty()) set(sub, "class", gr.css_class);
    set(sub, "color", gr.colour);
    set(sub, "style", "rounded");
    set(sub, "fontsize", "12");
    groups[gr.id] = sub;
  }
  return groups;
}

void set_box_attributes(Agnode_t* n, const Box& b) {
  set(n, "id", b.id);
  set(n, "label", label_of(b.lines, b.anchor));
  if (!b.tooltip.empty()) set(n, "tooltip", esc(b.tooltip));
  if (!b.css_class.empty()) set(n, "class", b.css_class);
  set(n, "shape", b.shape);
  set(n, "style", b.style);
  set(n, "fillcolor", b.fill);
  set(n, "color", b.colour);
  set(n, "fontcolor", b.font_colour);
  set(n, "fontname", "Helvetica");
  set(n, "fontsize", number(b.font_size));
  set(n, "margin", "0.06,0.03");
  if (b.width_in > 0 || b.height_in > 0) {
    set(n, "fixedsize", "true");
    set(n, "width", number(b.width_in));
    set(n, "height", number(b.height_in));
  }
  if (!b.link.empty()) set(n, "href", xml_attribute(b.link));
  if (b.at) set(n, "pos", fmt::format("{:.2f},{:.2f}!", b.at->x, b.at->y));
}

// A node per box, in its group or its rank; the nodes by box id.
std::map<std::string, Agnode_t*> add_boxes(Agraph_t* g, const Scene& scene,
                                           const std::map<std::string, Agraph_t*>& groups) {
  std::map<int, Agraph_t*> ranks;
  std::map<std::string, Agnode_t*> nodes;
  for (const Box& b : scene.boxes) {
    Agnode_t* n = agnode(g, const_cast<char*>(b.id.c_str()), 1);
    if (!nodes.emplace(b.id, n).second) throw RenderError(fmt::format("the scene has box '{}' twice", b.id));
    set_box_attributes(n, b);
    if (!b.group.empty()) {
      auto it = groups.find(b.group);
      if (it == groups.end()) throw RenderError(fmt::format("box '{}' names an unknown group '{}'", b.id, b.group));
      agsubnode(it->second, n, 1);
    }
    // dot asserts on a node both in a cluster and in a root-level rank=same
    // subgraph: boxes in a group take their rank from their lines alone.
    if (b.rank >= 0 && b.group.empty()) {
      Agraph_t*& r = ranks[b.rank];
      if (!r) {
        r = agsubg(g, const_cast<char*>(fmt::format("rank{}", b.rank).c_str()), 1);
        set(r, "rank", "same");
      }
      agsubnode(r, n, 1);
    }
  }
  return nodes;
}

void set_line_attributes(Agedge_t* e, const Line& l) {
  if (!l.id.empty()) set(e, "id", l.id);
  // dot crashes on labelled flat edges that do not shape the layout (a
  // ring between hosts of one row): their label is placed afterwards.
  if (!l.label.empty()) set(e, l.shapes_layout ? "label" : "xlabel", esc(l.label));
  if (!l.tooltip.empty()) {
    set(e, "tooltip", esc(l.tooltip));
    set(e, "labeltooltip", esc(l.tooltip));
  }
  if (!l.css_class.empty()) set(e, "class", l.css_class);
  set(e, "color", l.colour);
  set(e, "fontcolor", l.colour);
  set(e, "fontname", "Helvetica");
  set(e, "fontsize", "10");
  set(e, "penwidth", number(l.width));
  set(e, "style", l.style);
  set(e, "arrowhead", l.arrow ? "normal" : "none");
  if (l.arrow_back) {
    set(e, "dir", "both");
    set(e, "arrowtail", "normal");
  }
  if (!l.shapes_layout) set(e, "constraint", "false");
  if (!l.path.empty()) set(e, "pos", spline_of(l.path));
}

void add_lines(Agraph_t* g, const Scene& scene, const std::map<std::string, Agnode_t*>& nodes) {
  for (const Line& l : scene.lines) {
    auto from = nodes.find(l.from), to = nodes.find(l.to);
    if (from == nodes.end() || to == nodes.end())
      throw RenderError(fmt::format("line '{}' joins an unknown box ('{}' to '{}')", l.id, l.from, l.to));
    set_line_attributes(agedge(g, from->second, to->second, nullptr, 1), l);
  }
}

void build(Agraph_t* g, const Scene& scene) {
  set_graph_attributes(g, scene);
  const std::map<std::string, Agraph_t*> groups = add_groups(g, scene);
  const std::map<std::string, Agnode_t*> nodes = add_boxes(g, scene, groups);
  add_lines(g, scene, nodes);
}

}  // namespace

std::string render(const Scene& scene, Format format) {
  std::lock_guard hold(graphviz_lock);
  static GVC_t* gvc = gvContext();
  graphviz_errors.clear();
  agseterrf(collect_error);
  agseterr(AGERR);

  Graph graph(agopen(const_cast<char*>("scene"), Agdirected, nullptr));
  build(graph.g, scene);
  // nop2: neato -n2, node positions and edge splines as given.
  const char* engine = scene.layout == Layout::Tree ? "dot" : "nop2";
  if (gvLayout(gvc, graph.g, engine) != 0)
    throw RenderError(fmt::format("Graphviz could not lay the picture out ({}): {}", engine, graphviz_errors));
  char* data = nullptr;
  unsigned int size = 0;
  const char* as = format == Format::Svg ? "svg" : "png:cairo";
  int rc = gvRenderData(gvc, graph.g, as, &data, &size);
  std::string out = rc == 0 && data ? std::string(data, size) : std::string();
  if (data) gvFreeRenderData(data);
  gvFreeLayout(gvc, graph.g);
  if (rc != 0 || out.empty())
    throw RenderError(fmt::format("Graphviz could not render {}: {}", as,
                                  graphviz_errors.empty() ? "no renderer for it" : graphviz_errors));
  return out;
}

std::string inline_svg(std::string_view svg) {
  size_t start = svg.find("<svg");
  return std::string(start == std::string_view::npos ? svg : svg.substr(start));
}

}  // namespace topo::view
