#include "tools/topoctl/page_layout.h"

#include <fmt/format.h>

#include "tools/view/html.h"

namespace topoctl {
namespace {

// Cards flow into as many columns as the window holds; pictures shrink to
// the window (page_parts.h fitted_svg); wide tables scroll inside their
// own box, never the page.
constexpr std::string_view kStyle =
    "body{font-family:sans-serif;margin:1em 2em;color:#222}nav a{margin-right:1em}"
    "h1{font-size:22px;margin:.4em 0}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;font-size:13px}"
    "th a.sort{color:inherit}.wide{overflow-x:auto;max-width:100%}"
    ".picture{border:1px solid #ddd;overflow-x:hidden}.picture svg.fitted{display:block;height:auto}"
    ".bad{color:#b00}.muted{color:#666}"
    ".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(14em,1fr));gap:.7em;margin-bottom:1em}"
    ".card{border:1px solid #ccc;border-left:6px solid #bbb;border-radius:5px;padding:.4em .8em}"
    ".card.ok{border-left-color:#2ca02c}.card.warn{border-left-color:#ff7f0e}.card.bad{border-left-color:#d62728}"
    ".card h2{font-size:13px;margin:0;color:#555;font-weight:normal;text-transform:uppercase}"
    ".card .figure{font-size:26px;margin:.1em 0}.card ul{margin:0;padding-left:1.1em;font-size:13px}"
    ".card .more{margin:.3em 0 0;font-size:13px}"
    ".legend{font-size:13px}.swatch{display:inline-block;width:1.6em;height:.7em;margin:0 .3em;"
    "vertical-align:middle}.swatch.line{height:0;background:none}"
    ".swatch.degraded{border-top:3px dashed #ff7f0e}.swatch.down{border-top:3px dotted #d62728}"
    ".swatch.ring{border-top:3px solid #1f77b4}"
    "tr.sick td{background:#fdecea}svg.spark{vertical-align:middle}";

}  // namespace

std::string page_layout(std::string_view title, std::string_view body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>{0} - topo-aware</title>\n<style>{2}</style>\n<script src=\"/page.js\" defer></script>\n"
      "</head><body>\n<nav><a href=\"/\">overview</a><a href=\"/fabric\">fabric</a><a href=\"/jobs\">jobs</a>"
      "<a href=\"/health\">health</a><a href=\"/lint\">lint</a><a href=\"/snapshots\">snapshots</a>"
      "<a href=\"/reports\">reports</a><a href=\"/metrics\">metrics</a></nav>\n<h1>{0}</h1>\n{1}\n</body></html>\n",
      topo::view::html_escape(title), body, kStyle);
}

}  // namespace topoctl
