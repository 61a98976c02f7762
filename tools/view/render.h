// Draws a Scene through Graphviz (cgraph to build the graph, gvc to lay it
// out and render it): a Tree scene with dot, a Pinned scene with neato's
// "positions given" mode. Graphviz keeps global state and is not
// thread-safe; render() serialises every call behind one lock.
//
//   std::string svg = render(scene, Format::Svg);
//
// Throws RenderError with Graphviz's own words when it refuses the graph
// or the format cannot be rendered (PNG needs Graphviz's cairo plugin).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "tools/view/scene.h"

namespace topo::view {

enum class Format : unsigned char { Svg, Png };

// Svg for "x.svg", Png for "x.png"; nullopt-like failure as an exception:
// throws std::invalid_argument naming the path for other endings.
Format format_of_path(std::string_view path);

class RenderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string render(const Scene& scene, Format format);

// The SVG without its XML prologue and DOCTYPE, to sit inside an HTML page.
std::string inline_svg(std::string_view svg);

}  // namespace topo::view
