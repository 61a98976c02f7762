// Pieces of the page's HTML that are pure functions of values: counted
// nouns, the first screen's cards, a sparkline, the load legend, a picture
// fitted to the page width, and sortable tables. Every text passes through
// html_escape here; callers give plain text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace topo::view {

// "1 pod", "2 pods", "0 faults"; `plural_form` when the plural is not
// `singular` + "s" ("1 switch" / "3 switches").
std::string count_of(long long n, std::string_view singular, std::string_view plural_form = "");

// One card of the first screen: a figure, what it counts, a few lines of
// detail, and the page that says more. `state` colours it: "ok", "warn",
// "bad" or "" (neutral).
struct Card {
  std::string id;  // [a-z0-9_-]: the card's element id, "card-hosts"
  std::string title;
  std::string figure;              // the big number or word
  std::vector<std::string> lines;  // plain text, one a line
  std::string link;                // a path of this site, e.g. "/jobs?sort=slowdown"
  std::string link_text;           // "all jobs"
  std::string state;
};
std::string cards_html(const std::vector<Card>& cards);

// A small inline SVG line of `values` (oldest first), `width` x `height`
// CSS pixels, the last point marked; "" for fewer than two values. The
// title names the last value and the largest.
std::string sparkline_svg(const std::vector<double>& values, std::string_view unit, int width = 120, int height = 22);

// The colours of the fabric picture's cables as a legend: load from idle
// to past full (load_colour), degraded, down, and a job's ring.
std::string load_legend_html();

// An SVG from Graphviz made to fit the page: its width and height in
// points replaced by width="100%" with the points as max-width, so it
// shrinks to the window by its viewBox and never grows past its drawn
// size. The XML prologue and DOCTYPE are dropped (inline_svg).
std::string fitted_svg(std::string_view svg);

// A table whose header cells link to the page sorted by their column
// (?sort=KEY&order=asc|desc, so sorting works with scripting off) and
// whose rows carry data-KEY values for page.js to sort in place.
struct Column {
  std::string key;    // [a-z_]
  std::string title;  // plain text
  bool numeric = false;
};
struct SortAsk {
  std::string key;
  bool descending = false;
};
// The header row of such a table; `base` is the page's path with any other
// query ("/jobs?").
std::string sortable_head(const std::vector<Column>& columns, const SortAsk& sorted, std::string_view base);

// The script the pages load from /page.js: sorts tables of class
// "sortable" when a header link is clicked, by the rows' data-KEY values.
std::string_view page_script();

}  // namespace topo::view
