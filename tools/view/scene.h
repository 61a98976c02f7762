// A picture as a value: boxes, lines and groups with their looks, before
// any layout. The fabric picture and the report's charts are both built as
// a Scene and drawn by one renderer (tools/view/render.h), so there is one
// way to turn a picture into SVG or PNG.
//
// Names and labels are plain text: the renderer escapes them for Graphviz
// and Graphviz for SVG. `id` and `css_class` are written into the SVG as the
// element's id and class so that pages, scripts and tests can find a leaf,
// a degraded cable or a job's ring; they must be made of [A-Za-z0-9_] (and
// spaces between classes; Graphviz writes '-' as "&#45;"), which scene
// builders get from safe_id().
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace topo::view {

// Where a box sits, in points (1/72 inch) from the bottom left, for scenes
// laid out by their builder (charts). Trees leave it empty.
struct Point {
  double x = 0;
  double y = 0;
};

struct Box {
  std::string id;                  // unique in the scene
  std::vector<std::string> lines;  // the label, one entry a line
  std::string tooltip;
  std::string css_class;      // "switch leaf", "hosts", ...
  std::string shape = "box";  // a Graphviz shape: box, ellipse, plaintext, point, none
  std::string fill = "white";
  std::string colour = "#333333";  // outline
  std::string font_colour = "black";
  double font_size = 12;
  std::string style = "filled";        // Graphviz node style: filled, "filled,rounded", invis
  std::string group;                   // a Group's id; empty: none
  std::optional<Point> at;             // pinned
  double width_in = 0, height_in = 0;  // 0: fit the label
  int rank = -1;                       // boxes of one rank sit on one row (trees; not for boxes in a group)
  std::string anchor;                  // label side for plaintext in charts: "l", "r" or "" (centre)
  std::string link;                    // a URL the box opens when clicked (SVG); empty: none
};

struct Line {
  std::string from, to;  // box ids
  std::string id;
  std::string label;
  std::string tooltip;
  std::string css_class;
  std::string colour = "#888888";
  double width = 1;             // pen width in points
  std::string style = "solid";  // solid, dashed, dotted, bold, invis (holds the layout, not drawn)
  bool arrow = false;
  bool arrow_back = false;    // an arrowhead at `from` too: the line stands for both directions
  bool shapes_layout = true;  // false: drawn over the layout without pulling it (a ring over a tree)
  std::vector<Point> path;    // pinned scenes: the polyline drawn, in points; empty: from box to box
};

struct Group {
  std::string id;
  std::string label;
  std::string css_class;
  std::string colour = "#bbbbbb";
};

enum class Layout : unsigned char {
  Tree,    // ranked top to bottom by the lines (Graphviz dot)
  Pinned,  // every box at its `at` (Graphviz neato -n)
};

struct Scene {
  std::string title;
  Layout layout = Layout::Tree;
  std::vector<Group> groups;
  std::vector<Box> boxes;
  std::vector<Line> lines;
  std::vector<std::string> legend;  // lines of text drawn under the title
};

// `prefix` then `text` as an id or class token: characters of `text` outside
// [A-Za-z0-9] become '_' and a leading digit gets a prefix, so ("job_",
// "leaf 01/a") -> "job_leaf_01_a".
std::string safe_id(std::string_view prefix, std::string_view text);

}  // namespace topo::view
