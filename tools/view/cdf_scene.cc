#include "tools/view/cdf_scene.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

namespace topo::view {
namespace {

constexpr std::array<std::string_view, 8> kColours = {"#2ca02c", "#d62728", "#1f77b4", "#ff7f0e",
                                                      "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

// The x axis from 1 to `top`: linear while the slowdowns stay below 3,
// where most of them sit just above 1; logarithmic beyond, so a few jobs
// slowed 10x do not squash the rest against the left edge.
struct Axis {
  bool log = false;
  double top = 1;
  double left = 0, width = 1;  // in points

  double x(double v) const {
    v = std::clamp(v, 1.0, top);
    double f = log ? std::log(v) / std::log(top) : (v - 1) / (top - 1);
    return left + width * f;
  }

  // 1-2-5 ticks (1.1, 1.2, 1.5 near 1 on a log axis) at least 44 points apart.
  std::vector<double> ticks() const {
    std::vector<double> all;
    if (log) {
      all = {1, 1.1, 1.2, 1.5};
      for (double decade = 1; decade <= 1e9; decade *= 10)
        for (double m : {2.0, 5.0, 10.0}) all.push_back(m * decade);
    } else {
      double span = top - 1, step = 0;
      for (double decade = 1e-6; decade <= 1e9 && step == 0; decade *= 10)
        for (double m : {1.0, 2.0, 2.5, 5.0})
          if (span / (m * decade) <= 6) {
            step = m * decade;
            break;
          }
      if (step == 0) step = span;
      for (int i = 0; 1 + i * step <= top * (1 + 1e-12); ++i) all.push_back(1 + i * step);
    }
    std::vector<double> kept;
    for (double t : all)
      if (t <= top * (1 + 1e-12) && (kept.empty() || x(t) - x(kept.back()) >= 44)) kept.push_back(t);
    return kept;
  }
};

std::string shorten(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  return std::string(text.substr(0, limit - 3)) + "...";
}

// Builds one scene's boxes and lines with unique ids.
struct Pen {
  Scene& scene;
  int next = 0;

  std::string anchor(Point at) {
    Box b;
    b.id = fmt::format("p{}", ++next);
    b.shape = "point";
    b.style = "invis";
    b.width_in = b.height_in = 0.01;
    b.at = at;
    scene.boxes.push_back(b);
    return b.id;
  }
  // A polyline through `points` (at least two).
  Line& line(std::vector<Point> points, std::string colour, double width) {
    Line l;
    l.from = anchor(points.front());
    l.to = anchor(points.back());
    l.id = fmt::format("l{}", ++next);
    l.colour = std::move(colour);
    l.width = width;
    l.path = std::move(points);
    scene.lines.push_back(std::move(l));
    return scene.lines.back();
  }
  // Text centred at `at`, or starting there when `from_left` (its width
  // estimated from the font size: Graphviz centres plaintext on its point).
  Box& text(Point at, std::string words, double size = 12, std::string colour = "black", bool from_left = false) {
    Box b;
    b.id = fmt::format("t{}", ++next);
    b.shape = "plaintext";
    b.style = "solid";
    b.font_size = size;
    b.font_colour = std::move(colour);
    if (from_left) at.x += 0.27 * size * static_cast<double>(words.size());
    b.at = at;
    b.lines = {std::move(words)};
    b.css_class = "text";
    scene.boxes.push_back(std::move(b));
    return scene.boxes.back();
  }
};

}  // namespace

std::string policy_colour(std::string_view policy, size_t index) {
  if (policy == "topo-aware") return std::string(kColours[0]);
  if (policy == "tree") return std::string(kColours[1]);
  if (policy == "linear") return std::string(kColours[2]);
  return std::string(kColours[3 + index % (kColours.size() - 3)]);
}

namespace {

// The picture's geometry: panels one above the other, each a plot with
// room for its titles above, its axis labels below and the legend right.
constexpr double kWidth = 800, kPanel = 440;
constexpr double kLeft = 70, kRight = 230, kTop = 62, kBottom = 56;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kPanel - kTop - kBottom;

// Where one panel sits: Graphviz's y grows upwards.
struct PanelFrame {
  double y0 = 0;      // the panel's lower edge
  double bottom = 0;  // the plot's lower edge (fraction 0)
  double top_y = 0;   // its upper edge (fraction 1)
  double y_of(double fraction) const { return bottom + kPlotH * fraction; }
};

// The x axis from 1 to some room past the largest value, so the last step
// shows; logarithmic past 3.
Axis panel_axis(const CdfPanel& panel) {
  double top = 1;
  for (const CdfLine& l : panel.lines)
    if (!l.finite.empty()) top = std::max(top, l.finite.back());
  Axis axis;
  axis.top = std::max(1.05, 1 + (top - 1) * 1.05);
  axis.log = axis.top > 3;
  axis.left = kLeft;
  axis.width = kPlotW;
  return axis;
}

// Titles, frame, grid, ticks and axis labels.
void draw_frame(Pen& pen, const CdfPanel& panel, const PanelFrame& f, const Axis& axis) {
  pen.text({kLeft, f.y0 + kPanel - 14}, panel.title, 15, "black", true).css_class = "text title";
  pen.text({kLeft, f.y0 + kPanel - 29}, shorten("fabric " + panel.fabric, 115), 11, "#555555", true);
  pen.text({kLeft, f.y0 + kPanel - 41}, shorten("trace " + panel.trace, 115), 11, "#555555", true);
  for (double y : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    pen.line({{kLeft, f.y_of(y)}, {kLeft + kPlotW, f.y_of(y)}}, y == 0 || y == 1 ? "#333333" : "#dddddd", 1);
    pen.text({kLeft - 16, f.y_of(y)}, fmt::format("{:g}", y), 11);
  }
  pen.line({{kLeft, f.bottom}, {kLeft, f.top_y}}, "#333333", 1);
  pen.line({{kLeft + kPlotW, f.bottom}, {kLeft + kPlotW, f.top_y}}, "#333333", 1);
  for (double t : axis.ticks()) {
    double x = axis.x(t);
    if (x > kLeft + 1 && x < kLeft + kPlotW - 1) pen.line({{x, f.bottom}, {x, f.top_y}}, "#dddddd", 1);
    pen.text({x, f.bottom - 14}, fmt::format("{:g}", t), 11);
  }
  pen.text({kLeft + kPlotW / 2, f.y0 + 14},
           axis.log ? "AllReduce time over the ideal (log scale), multi-host jobs"
                    : "AllReduce time over the ideal, multi-host jobs",
           12);
  pen.text({kLeft, f.top_y + 4}, "fraction of jobs at or below", 11, "black", true);
}

// A policy's step line: up by each group of equal values, flat between.
std::vector<Point> cdf_steps(const CdfLine& c, const PanelFrame& f, const Axis& axis) {
  double n = static_cast<double>(std::max<size_t>(c.count(), 1));
  std::vector<Point> points = {{axis.x(1), f.y_of(0)}};
  size_t below = 0;
  for (size_t k = 0; k < c.finite.size();) {
    size_t same = k;
    while (same < c.finite.size() && c.finite[same] == c.finite[k]) ++same;
    double x = axis.x(c.finite[k]);
    points.push_back({x, f.y_of(static_cast<double>(below) / n)});
    points.push_back({x, f.y_of(static_cast<double>(same) / n)});
    below = same;
    k = same;
  }
  points.push_back({axis.x(axis.top), f.y_of(static_cast<double>(below) / n)});
  return points;
}

// The `index`th policy's line and its legend entry.
void draw_policy(Pen& pen, const CdfLine& c, size_t index, const PanelFrame& f, const Axis& axis) {
  std::string colour = policy_colour(c.policy, index);
  Line& curve = pen.line(cdf_steps(c, f, axis), colour, 2);
  curve.css_class = safe_id("cdf policy_", c.policy);
  curve.tooltip = c.policy;

  double ly = f.top_y - 10 - 34 * static_cast<double>(index), lx = kLeft + kPlotW + 16;
  pen.line({{lx, ly}, {lx + 24, ly}}, colour, 3);
  pen.text({lx + 30, ly}, c.policy, 12, "black", true).css_class = "text legend";
  std::string note = c.count() == 0 ? "no multi-host jobs" : fmt::format("{} jobs", c.count());
  if (c.infinite > 0) note += fmt::format(", {} infinite", c.infinite);
  pen.text({lx + 30, ly - 14}, note, 11, "#555555", true);
}

}  // namespace

Scene slowdown_cdf_scene(std::span<const CdfPanel> panels) {
  Scene scene;
  scene.layout = Layout::Pinned;
  Pen pen{scene};
  size_t runs = std::max<size_t>(panels.size(), 1);
  // The picture's corners, so that its size does not depend on the lines.
  pen.anchor({0, 0});
  pen.anchor({kWidth, kPanel * static_cast<double>(runs)});
  if (panels.empty()) pen.text({kWidth / 2, kPanel / 2}, "no runs to show");
  for (size_t r = 0; r < panels.size(); ++r) {
    const CdfPanel& panel = panels[r];
    // The first run on top.
    PanelFrame frame;
    frame.y0 = kPanel * static_cast<double>(runs - 1 - r);
    frame.bottom = frame.y0 + kBottom;
    frame.top_y = frame.y0 + kPanel - kTop;
    const Axis axis = panel_axis(panel);
    draw_frame(pen, panel, frame, axis);
    for (size_t i = 0; i < panel.lines.size(); ++i) draw_policy(pen, panel.lines[i], i, frame, axis);
  }
  return scene;
}

}  // namespace topo::view
