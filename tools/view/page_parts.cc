#include "tools/view/page_parts.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "tools/view/fabric_scene.h"
#include "tools/view/html.h"
#include "tools/view/render.h"

namespace topo::view {

std::string count_of(long long n, std::string_view singular, std::string_view plural_form) {
  if (n == 1) return fmt::format("1 {}", singular);
  return plural_form.empty() ? fmt::format("{} {}s", n, singular) : fmt::format("{} {}", n, plural_form);
}

std::string cards_html(const std::vector<Card>& cards) {
  std::string out = "<div class=\"cards\">\n";
  for (const Card& c : cards) {
    out += fmt::format("<section class=\"card {}\" id=\"{}\"><h2>{}</h2><p class=\"figure\">{}</p>",
                       html_escape(c.state), html_escape(c.id), html_escape(c.title), html_escape(c.figure));
    if (!c.lines.empty()) {
      out += "<ul>";
      for (const std::string& line : c.lines) out += "<li>" + html_escape(line) + "</li>";
      out += "</ul>";
    }
    if (!c.link.empty())
      out += fmt::format("<p class=\"more\"><a class=\"card-link\" href=\"{}\">{}</a></p>", html_escape(c.link),
                         html_escape(c.link_text.empty() ? "details" : c.link_text));
    out += "</section>\n";
  }
  return out + "</div>\n";
}

std::string sparkline_svg(const std::vector<double>& values, std::string_view unit, int width, int height) {
  if (values.size() < 2) return "";
  double top = *std::max_element(values.begin(), values.end());
  double scale = top > 0 ? (height - 4) / top : 0;
  double step = static_cast<double>(width - 4) / static_cast<double>(values.size() - 1);
  std::string points;
  double x = 2, y = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    x = 2 + step * static_cast<double>(i);
    y = height - 2 - values[i] * scale;
    points += fmt::format("{}{:.1f},{:.1f}", i ? " " : "", x, y);
  }
  return fmt::format(
      "<svg class=\"spark\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" "
      "aria-label=\"{5}\"><title>{5}</title><polyline fill=\"none\" stroke=\"#555\" stroke-width=\"1.2\" "
      "points=\"{2}\"/><circle cx=\"{3:.1f}\" cy=\"{4:.1f}\" r=\"2\" fill=\"#b00\"/></svg>",
      width, height, points, x, y,
      html_escape(
          fmt::format("last {:.3g} {}, highest {:.3g} over {} intervals", values.back(), unit, top, values.size())));
}

std::string load_legend_html() {
  std::string out = "<p class=\"legend\" id=\"legend\">Cables: ";
  constexpr std::array<std::pair<double, const char*>, 5> kSteps = {
      {{0, "idle"}, {0.25, "25%"}, {0.5, "50%"}, {0.9, "90%"}, {1.0, "full"}}};
  for (auto [u, label] : kSteps)
    out += fmt::format("<span class=\"swatch\" style=\"background:{}\"></span>{} ", load_colour(u), label);
  out +=
      "of the running jobs' load; <span class=\"swatch line degraded\"></span>degraded (dashed orange), "
      "<span class=\"swatch line down\"></span>down (dotted red), <span class=\"swatch line ring\"></span>a job's "
      "ring (arrows in ring order).</p>";
  return out;
}

namespace {

// The value of attribute `name` in the opening tag `tag`, and where it is.
std::optional<std::pair<size_t, size_t>> attribute(std::string_view tag, std::string_view name) {
  std::string key = fmt::format(" {}=\"", name);
  size_t at = tag.find(key);
  if (at == std::string_view::npos) {
    key[0] = '\n';
    at = tag.find(key);
  }
  if (at == std::string_view::npos) return std::nullopt;
  size_t value = at + key.size(), end = tag.find('"', value);
  if (end == std::string_view::npos) return std::nullopt;
  return std::pair{at, end + 1};
}

}  // namespace

std::string fitted_svg(std::string_view svg) {
  std::string out = inline_svg(svg);
  size_t close = out.find('>');
  if (close == std::string::npos) return out;
  std::string tag = out.substr(0, close), rest = out.substr(close);
  auto width = attribute(tag, "width");
  if (!width) return out;
  std::string drawn = tag.substr(width->first, width->second - width->first);
  drawn = drawn.substr(drawn.find('"') + 1);
  drawn.pop_back();
  tag.replace(width->first, width->second - width->first,
              fmt::format(" width=\"100%\" class=\"fitted\" style=\"max-width:{}\"", drawn));
  if (auto height = attribute(tag, "height")) tag.erase(height->first, height->second - height->first);
  return tag + rest;
}

std::string sortable_head(const std::vector<Column>& columns, const SortAsk& sorted, std::string_view base) {
  std::string out = "<thead><tr>";
  for (const Column& c : columns) {
    bool here = c.key == sorted.key;
    // A second click on the sorted column turns its order around.
    bool descending = here ? !sorted.descending : c.numeric;
    out += fmt::format(
        "<th{}><a class=\"sort\" data-key=\"{}\" data-numeric=\"{}\" href=\"{}sort={}&amp;order={}\">{}</a>{}</th>",
        here ? fmt::format(" aria-sort=\"{}\"", sorted.descending ? "descending" : "ascending") : "",
        html_escape(c.key), c.numeric ? 1 : 0, html_escape(base), url_encode(c.key), descending ? "desc" : "asc",
        html_escape(c.title), here ? (sorted.descending ? " &#9660;" : " &#9650;") : "");
  }
  return out + "</tr></thead>\n";
}

std::string_view page_script() {
  // Sorts in place by the clicked column's data values; the links stay the
  // way to sort without scripting.
  return R"JS("use strict";
document.addEventListener("click", function (event) {
  var link = event.target.closest("table.sortable th a.sort");
  if (!link) return;
  event.preventDefault();
  var table = link.closest("table"), body = table.tBodies[0], key = link.dataset.key;
  var numeric = link.dataset.numeric === "1", th = link.parentNode;
  var descending = th.getAttribute("aria-sort") === "ascending" ||
      (!th.hasAttribute("aria-sort") && numeric);
  table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
  th.setAttribute("aria-sort", descending ? "descending" : "ascending");
  var rows = Array.prototype.slice.call(body.rows);
  rows.sort(function (a, b) {
    var x = a.dataset[key] || "", y = b.dataset[key] || "";
    var c = numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
    return descending ? -c : c;
  });
  rows.forEach(function (r) { body.appendChild(r); });
  history.replaceState(null, "", link.getAttribute("href"));
});
)JS";
}

}  // namespace topo::view
