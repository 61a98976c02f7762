#include "discovery/lldp_placement.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

namespace topo {
namespace {

// Systems a file may still be; nullopt: not narrowed yet (any).
using Candidates = std::optional<std::set<std::string>>;

struct Placer {
  const std::vector<LldpSystemView>& views;
  std::vector<std::map<std::string, LldpPort>> tables;  // by view: local port -> far end
  std::vector<std::string> names;                       // by view; "" while unplaced
  std::map<std::string, std::vector<size_t>> placed;    // system -> views placed as it
  // (local port, far port) -> (view, far system), for every row of every view:
  // the rows that could be the other end of a row naming these two ports.
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<size_t, std::string>>> mirrors;
  std::vector<Candidates> candidates;  // by view, from the last narrowing

  explicit Placer(const std::vector<LldpSystemView>& v)
      : views(v), tables(v.size()), names(v.size()), candidates(v.size()) {
    for (size_t i = 0; i < v.size(); ++i) {
      for (const LldpSighting& s : v[i].neighbours) {
        tables[i].emplace(s.local.port, s.remote);
        mirrors[{s.local.port, s.remote.port}].emplace_back(i, s.remote.system);
      }
      if (!v[i].name.empty()) place(i, v[i].name);
    }
  }

  void place(size_t view, const std::string& name) {
    names[view] = name;
    placed[name].push_back(view);
  }

  // Whether a placed file says otherwise: the file of a system this view
  // sees lists that port reaching someone other than `x`, or a file of `x`
  // lists one of this view's ports reaching someone else.
  bool contradicted(size_t view, const std::string& x) const {
    for (const auto& [port, far] : tables[view]) {
      if (auto it = placed.find(far.system); it != placed.end())
        for (size_t g : it->second)
          if (auto row = tables[g].find(far.port); row != tables[g].end() && row->second != LldpPort{x, port})
            return true;
      if (auto it = placed.find(x); it != placed.end())
        for (size_t g : it->second)
          if (auto row = tables[g].find(port); g != view && row != tables[g].end() && row->second != far) return true;
    }
    return false;
  }

  // The systems this view may be: for each of its rows (port q reaches Y's
  // port p), every X whose row "p reaches X's q" is in a file that `may_be`
  // Y, and that no placed file contradicts.
  std::set<std::string> supported(size_t view, const std::function<bool(size_t, const std::string&)>& may_be) const {
    std::set<std::string> out;
    for (const auto& [port, far] : tables[view]) {
      auto it = mirrors.find({far.port, port});
      if (it == mirrors.end()) continue;
      for (const auto& [g, x] : it->second)
        if (g != view && !out.count(x) && may_be(g, far.system) && !contradicted(view, x)) out.insert(x);
    }
    return out;
  }

  // Places every file that placed files alone name one way. True when any was.
  bool place_from_placed() {
    bool any = false;
    for (bool again = true; again;) {
      again = false;
      for (size_t f = 0; f < views.size(); ++f) {
        if (!names[f].empty()) continue;
        std::set<std::string> xs = supported(f, [&](size_t g, const std::string& y) { return names[g] == y; });
        if (xs.size() != 1) continue;
        place(f, *xs.begin());
        again = any = true;
      }
    }
    return any;
  }

  bool may_be(size_t g, const std::string& y) const {
    if (!names[g].empty()) return names[g] == y;
    return !candidates[g] || candidates[g]->count(y);
  }

  // Narrows the unplaced files together until nothing changes.
  void narrow() {
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t f = 0; f < views.size(); ++f) {
        if (!names[f].empty()) continue;
        std::set<std::string> xs = supported(f, [&](size_t g, const std::string& y) { return may_be(g, y); });
        if (candidates[f]) std::erase_if(xs, [&](const std::string& x) { return !candidates[f]->count(x); });
        if (candidates[f] && xs.size() == candidates[f]->size()) continue;
        candidates[f] = std::move(xs);
        changed = true;
      }
    }
  }

  // Places the narrowed files left with one system no other unplaced file
  // also claims. True when any was.
  bool place_narrowed() {
    narrow();
    std::map<std::string, int> claims;
    for (size_t f = 0; f < views.size(); ++f)
      if (names[f].empty() && candidates[f] && candidates[f]->size() == 1) ++claims[*candidates[f]->begin()];
    bool any = false;
    for (size_t f = 0; f < views.size(); ++f)
      if (names[f].empty() && candidates[f] && candidates[f]->size() == 1 && claims[*candidates[f]->begin()] == 1) {
        place(f, *candidates[f]->begin());
        any = true;
      }
    return any;
  }

  std::string reason(size_t view) const {
    const Candidates& c = candidates[view];
    if (tables[view].empty()) return "the file names no local chassis and lists no neighbour: it adds nothing";
    if (c && c->size() > 1) {
      std::vector<std::string> shown(c->begin(), c->end());
      if (shown.size() > 4) shown.resize(4);
      return fmt::format(
          "the file names no local chassis and the other tables fit {} systems ({}{}): add `lldpcli -f json show "
          "chassis` to it",
          c->size(), fmt::join(shown, ", "), c->size() > shown.size() ? ", ..." : "");
    }
    if (c && c->size() == 1)
      return fmt::format(
          "the file names no local chassis and another file is placed as {} too: add `lldpcli -f json "
          "show chassis` to it",
          *c->begin());
    return "the file names no local chassis and no other table lists the far end of its ports (the tables of "
           "the switches it is cabled to are missing): collect them, or add `lldpcli -f json show chassis` to it";
  }
};

}  // namespace

std::vector<LldpFinding> place_views(std::vector<LldpSystemView>& views) {
  Placer placer(views);
  while (placer.place_from_placed() || placer.place_narrowed()) {
  }
  std::vector<LldpFinding> findings;
  std::vector<LldpSystemView> kept;
  for (size_t i = 0; i < views.size(); ++i) {
    if (placer.names[i].empty()) {
      findings.push_back({LldpFindingKind::UnplacedFile, views[i].file, placer.reason(i)});
      continue;
    }
    views[i].name = placer.names[i];
    for (LldpSighting& s : views[i].neighbours) s.local.system = views[i].name;
    kept.push_back(std::move(views[i]));
  }
  views = std::move(kept);
  return findings;
}

}  // namespace topo
