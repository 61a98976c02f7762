// The page's pieces as values: counted nouns, cards, sparklines, fitted
// pictures, sortable heads; the overview's cards from a fabric, running
// jobs and a diff; the jobs table's leaves, ring crossings and sort; NVLink
// domains drawn as racks under their leaves.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "fabric/diff.h"
#include "fabric/synthetic.h"
#include "tools/topoctl/page_glance.h"
#include "tools/topoctl/page_jobs.h"
#include "tools/view/fabric_scene.h"
#include "tools/view/page_parts.h"

namespace topoctl {
namespace {

using topo::view::Card;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(PageParts, CountsSayOneAndMany) {
  EXPECT_EQ(topo::view::count_of(1, "pod"), "1 pod");
  EXPECT_EQ(topo::view::count_of(0, "fault"), "0 faults");
  EXPECT_EQ(topo::view::count_of(3, "leaf", "leaves"), "3 leaves");
  EXPECT_EQ(topo::view::count_of(1, "leaf", "leaves"), "1 leaf");
}

TEST(PageParts, CardsAreEscapedAndLinked) {
  std::string html =
      topo::view::cards_html({{"card-x", "a <b>", "7", {"one & two"}, "/jobs?sort=a&order=desc", "", "bad"}});
  EXPECT_TRUE(contains(html, "<section class=\"card bad\" id=\"card-x\">")) << html;
  EXPECT_TRUE(contains(html, "a &lt;b&gt;"));
  EXPECT_TRUE(contains(html, "<li>one &amp; two</li>"));
  EXPECT_TRUE(contains(html, "href=\"/jobs?sort=a&amp;order=desc\">details</a>"));
}

TEST(PageParts, SparklineNeedsTwoValuesAndMarksTheLast) {
  EXPECT_EQ(topo::view::sparkline_svg({5}, "errors/h"), "");
  std::string svg = topo::view::sparkline_svg({0, 10, 20}, "errors/h", 100, 20);
  EXPECT_TRUE(contains(svg, "points=\"2.0,18.0 50.0,10.0 98.0,2.0\"")) << svg;
  EXPECT_TRUE(contains(svg, "last 20 errors/h, highest 20 over 3 intervals"));
}

TEST(PageParts, FittedSvgShrinksByItsViewBox) {
  std::string svg =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n<svg width=\"800pt\" height=\"300pt\"\n viewBox=\"0.00 0.00 800.00 "
      "300.00\" xmlns=\"http://www.w3.org/2000/svg\"><g/></svg>";
  std::string fitted = topo::view::fitted_svg(svg);
  EXPECT_EQ(fitted.rfind("<svg width=\"100%\" class=\"fitted\" style=\"max-width:800pt\"", 0), 0u) << fitted;
  EXPECT_FALSE(contains(fitted, "height=\"300pt\""));
  EXPECT_TRUE(contains(fitted, "viewBox=\"0.00 0.00 800.00 300.00\""));
}

TEST(PageParts, SortableHeadTurnsTheSortedColumnAround) {
  std::string head =
      topo::view::sortable_head({{"job", "job", true}, {"held", "held", false}}, {"job", true}, "/jobs?");
  EXPECT_TRUE(contains(head, "aria-sort=\"descending\"")) << head;
  EXPECT_TRUE(contains(head, "href=\"/jobs?sort=job&amp;order=asc\""));
  EXPECT_TRUE(contains(head, "href=\"/jobs?sort=held&amp;order=asc\""));
}

topo::PlacementRecord job(uint32_t id, std::vector<std::string> ring, double slowdown) {
  topo::PlacementRecord r;
  r.job_id = id;
  r.hosts = ring;
  r.ring_order = ring;
  r.ideal_s = 1;
  r.estimate_s = slowdown;
  return r;
}

const Card& card(const std::vector<Card>& cards, const std::string& id) {
  auto it = std::find_if(cards.begin(), cards.end(), [&](const Card& c) { return c.id == id; });
  EXPECT_NE(it, cards.end()) << id;
  return *it;
}

TEST(PageGlanceCards, CountRunningSlowJobsAndChanges) {
  topo::Fabric before = topo::make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2");
  topo::Fabric f = topo::make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,degrade=leaf02:9");
  Glance g;
  g.fabric = &f;
  g.info.id = 2;
  g.info.taken_at = "2026-01-01T00:00:00Z";
  g.info.routing = "adaptive";
  g.now_s = 1767225600 + 3 * 3600;  // three hours later
  g.previous = 1;
  g.changes = topo::diff(before, f);
  g.running = {job(1, {"gpu001", "gpu009"}, 1.3), job(2, {"gpu002", "gpu003"}, 1.0)};
  std::vector<Card> cards = glance_cards(g);
  EXPECT_EQ(card(cards, "card-hosts").lines.front(), "28 free, 4 busy, 0 sick");
  EXPECT_EQ(card(cards, "card-jobs").figure, "2 jobs");
  EXPECT_EQ(card(cards, "card-jobs").lines.front(), "1 estimated slower than 1.10x their ideal");
  EXPECT_EQ(card(cards, "card-faults").figure, "1 fault");
  const Card& snapshot = card(cards, "card-snapshot");
  EXPECT_EQ(snapshot.lines[0], "taken 3 h ago (2026-01-01T00:00:00Z)");
  EXPECT_EQ(snapshot.lines[1], "1 change since snapshot 1");
  EXPECT_EQ(snapshot.link, "/diff?from=1&to=2");
  EXPECT_EQ(card(cards, "card-fabric").lines[1], "1 pod, 64 cables");
  EXPECT_EQ(card(cards, "card-health").figure, "no rates");
  EXPECT_EQ(std::count_if(cards.begin(), cards.end(), [](const Card& c) { return c.id == "card-domains"; }), 0);
}

TEST(PageJobs, LeavesCrossingsAndSort) {
  topo::Fabric f = topo::make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2");
  // gpu001 -> gpu009 -> gpu002 -> gpu010 -> back: every step crosses.
  JobRow a = job_row(job(7, {"gpu001", "gpu009", "gpu002", "gpu010"}, 1.2), &f, true);
  EXPECT_EQ(a.leaves, 2);
  EXPECT_EQ(a.crossings, 4);
  JobRow b = job_row(job(8, {"gpu001", "gpu002", "gpu009", "gpu010"}, 1.05), &f, false);
  EXPECT_EQ(b.crossings, 2);
  JobRow c = job_row(job(9, {"gpu003"}, 1.0), nullptr, false);
  EXPECT_FALSE(c.leaves);
  std::vector<JobRow> rows = {b, c, a};
  sort_jobs(rows, job_sort("slowdown", "desc"));
  EXPECT_EQ(rows[0].record.job_id, 7u);
  EXPECT_EQ(rows[2].record.job_id, 9u);
  sort_jobs(rows, job_sort("crossings", "asc"));
  EXPECT_EQ(rows[2].record.job_id, 7u);
  EXPECT_EQ(job_sort("nonsense", "desc").key, "placed");
}

// Why a job was held back, as its record stores it, in the jobs column
// and the table; a fallback says cons_tres's reason first.
TEST(PageJobs, TheDeferralReasonIsShown) {
  topo::PlacementRecord deferred = job(11, {"gpu001", "gpu002"}, 1.3);
  deferred.deferred_why = "deferred: its best placement now is estimated at 1.30x its ideal";
  JobRow a = job_row(deferred, nullptr, true);
  EXPECT_EQ(a.held, deferred.deferred_why);
  EXPECT_NE(jobs_html({a}, job_sort("job", "asc")).find("<td>deferred: its best placement now is estimated at 1.30x"),
            std::string::npos);
  deferred.fallback = true;
  deferred.fallback_why = "no candidate fit";
  EXPECT_EQ(job_row(deferred, nullptr, true).held, "cons_tres: no candidate fit; " + deferred.deferred_why);
  EXPECT_EQ(job_row(job(12, {"gpu003"}, 1.0), nullptr, true).held, "");
}

TEST(FabricSceneDomains, RacksAreBoxesUnderTheirLeaves) {
  topo::Fabric f = topo::make_synthetic("nvl72:racks=4");
  topo::view::Scene s = topo::view::fabric_scene(f, {});
  size_t racks =
      std::count_if(s.boxes.begin(), s.boxes.end(), [](const topo::view::Box& b) { return b.css_class == "domain"; });
  EXPECT_EQ(racks, 4u);
  // Each rack hangs under the 4 rail leaves its 18 hosts are cabled to.
  size_t to_racks = std::count_if(s.lines.begin(), s.lines.end(),
                                  [](const topo::view::Line& l) { return l.to.rfind("domain_", 0) == 0; });
  EXPECT_EQ(to_racks, 16u);
  // A leaf's zoom names its hosts one by one, their domain in the tooltip.
  topo::view::FabricPicture zoom;
  zoom.leaf = f.switches_at(topo::Level::Leaf).front();
  topo::view::Scene leaf = topo::view::fabric_scene(f, zoom);
  EXPECT_TRUE(std::any_of(leaf.boxes.begin(), leaf.boxes.end(), [](const topo::view::Box& b) {
    return b.tooltip.find("NVLink domain") != std::string::npos;
  }));
}

TEST(FabricSceneFaults, ADegradedCableKeepsItsColourUnderLoad) {
  topo::Fabric f = topo::make_synthetic("leafspine:leaves=4,hosts_per_leaf=8,spines=2,degrade=leaf01:9");
  topo::view::FabricPicture p;
  p.cable_gbps.assign(f.cables().size(), 50.0);
  topo::view::Scene s = topo::view::fabric_scene(f, p);
  size_t degraded = 0;
  for (const topo::view::Line& l : s.lines) {
    if (l.css_class.find("degraded") == std::string::npos) continue;
    ++degraded;
    EXPECT_EQ(l.colour, "#ff7f0e") << l.id;
    EXPECT_EQ(l.style, "dashed");
    EXPECT_NE(l.css_class.find("loaded"), std::string::npos);
  }
  EXPECT_EQ(degraded, 1u);
}

}  // namespace
}  // namespace topoctl
