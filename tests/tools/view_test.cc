// Pictures (tools/view): the fabric scene (switches, host boxes per leaf,
// bundled cables with health and load, a job's ring, zoom), its rendering
// through Graphviz with every name escaped, the jobs' load from placement
// records, and the metrics' exposition text.
#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "db/placement_store.h"
#include "fabric/synthetic.h"
#include "tools/topoctl/metrics.h"
#include "tools/view/fabric_scene.h"
#include "tools/view/html.h"
#include "tools/view/jobs.h"
#include "tools/view/render.h"

namespace topo::view {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

size_t lines_with(const Scene& s, const std::string& css) {
  return static_cast<size_t>(std::count_if(s.lines.begin(), s.lines.end(), [&](const Line& l) {
    return contains(" " + l.css_class + " ", " " + css + " ");
  }));
}

size_t boxes_with(const Scene& s, const std::string& css) {
  return static_cast<size_t>(std::count_if(s.boxes.begin(), s.boxes.end(), [&](const Box& b) {
    return contains(" " + b.css_class + " ", " " + css + " ");
  }));
}

PlacementRecord record(uint32_t id, std::vector<std::string> ring) {
  PlacementRecord r;
  r.job_id = id;
  r.hosts = ring;
  r.ring_order = std::move(ring);
  r.profile = "allreduce";
  return r;
}

TEST(FabricScene, SmallFabricDrawsEveryHostAndMarksTheDegradedUplink) {
  // leaf02's port 5 is its first uplink (4 hosts a leaf).
  Fabric f = make_synthetic("leafspine:leaves=4,hosts_per_leaf=4,spines=2,degrade=leaf02:5");
  FabricPicture p;
  Scene s = fabric_scene(f, p);
  EXPECT_EQ(boxes_with(s, "leaf"), 4u);
  EXPECT_EQ(boxes_with(s, "spine"), 2u);
  EXPECT_EQ(boxes_with(s, "host"), 16u);
  EXPECT_EQ(lines_with(s, "degraded"), 1u);
  EXPECT_EQ(lines_with(s, "down"), 0u);
  // One line per leaf-spine pair and per host cable.
  EXPECT_EQ(lines_with(s, "cable"), 4u * 2 + 16);

  std::string svg = render(s, Format::Svg);
  EXPECT_TRUE(contains(svg, "class=\"node switch leaf\""));
  EXPECT_TRUE(contains(svg, ">leaf02<"));
  EXPECT_EQ(count(svg, "class=\"edge cable degraded\""), 1u);
  EXPECT_TRUE(contains(svg, "1xNDR"));
}

TEST(FabricScene, MidSizeFabricCollapsesHostsPerLeafWithCounts) {
  Fabric f = make_synthetic("leafspine:leaves=32,hosts_per_leaf=16,spines=8,degrade=leaf03:2");
  FabricPicture p;
  p.jobs.push_back({"7", {f.hosts()[0], f.hosts()[1], f.hosts()[20]}});
  Scene s = fabric_scene(f, p);
  EXPECT_EQ(boxes_with(s, "host"), 0u);
  EXPECT_EQ(boxes_with(s, "hosts"), 32u);
  EXPECT_EQ(boxes_with(s, "leaf") + boxes_with(s, "spine"), 40u);
  auto first = std::find_if(s.boxes.begin(), s.boxes.end(), [](const Box& b) { return b.css_class == "hosts"; });
  ASSERT_NE(first, s.boxes.end());
  EXPECT_EQ(first->lines, (std::vector<std::string>{"16 hosts", "2 busy, 14 free"}));
  EXPECT_TRUE(contains(first->tooltip, "gpu[001-016]")) << first->tooltip;
  // gpu034's cable (leaf03 port 2) is degraded: that host is sick.
  auto third =
      std::find_if(s.boxes.begin(), s.boxes.end(), [](const Box& b) { return contains(b.tooltip, "under leaf03"); });
  ASSERT_NE(third, s.boxes.end());
  EXPECT_EQ(third->css_class, "hosts sick");
  EXPECT_EQ(third->lines.back(), "1 sick");
  // Host cables bundled per leaf: 32 of them, plus 32 x 8 uplinks.
  EXPECT_EQ(s.lines.size(), 32u + 32 * 8);
}

// The SVG's size in points, from its root element.
std::pair<double, double> svg_size(const std::string& svg) {
  auto number = [&](const std::string& key) {
    size_t at = svg.find(key + "=\"");
    return at == std::string::npos ? 0.0 : std::stod(svg.substr(at + key.size() + 2));
  };
  return {number("width"), number("height")};
}

// What a person sees at 4,096 hosts: a picture about as tall as wide,
// whose 12-point text is still at least 8 pixels high when the whole
// picture fits a 3,840-pixel-wide screen, with every leaf or pod in it.
void expect_readable(const std::string& svg, const std::string& what) {
  auto [width, height] = svg_size(svg);
  ASSERT_GT(width, 0) << what;
  ASSERT_GT(height, 0) << what;
  EXPECT_LE(width / height, 3.0) << what << ": " << width << " x " << height << " pt";
  EXPECT_GE(width / height, 1 / 3.0) << what << ": " << width << " x " << height << " pt";
  EXPECT_LE(width * 96 / 72, 2 * 3840) << what << ": " << width << " pt wide";
}

TEST(FabricScene, FourThousandHostsOnAFlatFabricWrapLeavesIntoRows) {
  Fabric f = make_synthetic("leafspine:leaves=256,hosts_per_leaf=16,spines=16,degrade=leaf007:17");
  ASSERT_EQ(f.hosts().size(), 4096u);
  FabricPicture p;
  p.jobs.push_back({"9", {f.hosts()[0], f.hosts()[20], f.hosts()[40], f.hosts()[1]}});
  p.rings = {"9"};
  Scene s = fabric_scene(f, p);
  EXPECT_EQ(boxes_with(s, "hosts"), 0u);
  EXPECT_EQ(boxes_with(s, "with_hosts"), 256u);
  auto first = std::find_if(s.boxes.begin(), s.boxes.end(), [](const Box& b) { return contains(b.css_class, "leaf"); });
  ASSERT_NE(first, s.boxes.end());
  EXPECT_EQ(first->lines, (std::vector<std::string>{"leaf001", "16 hosts", "2 busy, 14 free"}));
  // Only the degraded uplink is drawn of 4,096 leaf-spine bundles.
  EXPECT_EQ(lines_with(s, "cable"), 1u);
  EXPECT_EQ(lines_with(s, "degraded"), 1u);
  EXPECT_EQ(lines_with(s, "layout"), 256u);
  EXPECT_TRUE(contains(s.legend.at(1), "4095 healthy idle leaf uplink bundles not drawn")) << s.legend.at(1);

  std::string svg = render(s, Format::Svg);
  expect_readable(svg, "256 leaves");
  for (NodeId leaf : f.switches_at(Level::Leaf))
    EXPECT_TRUE(contains(svg, ">" + f.node(leaf).name + "<")) << f.node(leaf).name;
  EXPECT_EQ(count(svg, "class=\"edge ring job_9\""), 3u);
}

TEST(FabricScene, FourThousandHostsInPodsShowOneBoxPerPodAndZoomIn) {
  Fabric f = make_synthetic("clos3:pods=8,leaves_per_pod=16,hosts_per_leaf=32,spines_per_pod=8,cores=8");
  ASSERT_EQ(f.hosts().size(), 4096u);
  FabricPicture p;
  p.zoom_link = "/fabric?snapshot=1&";
  Scene s = fabric_scene(f, p);
  EXPECT_EQ(boxes_with(s, "pod_box"), 8u);
  EXPECT_EQ(boxes_with(s, "tier"), 1u);
  EXPECT_EQ(lines_with(s, "cable"), 8u);
  auto pod3 = std::find_if(s.boxes.begin(), s.boxes.end(), [](const Box& b) { return b.id == "pod_3"; });
  ASSERT_NE(pod3, s.boxes.end());
  EXPECT_EQ(pod3->link, "/fabric?snapshot=1&pod=3");
  EXPECT_EQ(pod3->lines.at(2), "512 hosts");
  std::string svg = render(s, Format::Svg);
  expect_readable(svg, "8 pods");
  for (int pod = 0; pod < 8; ++pod) EXPECT_TRUE(contains(svg, fmt::format(">pod {}<", pod))) << pod;
  EXPECT_TRUE(contains(svg, "xlink:href=\"/fabric?snapshot=1&amp;pod=3\""))
      << svg.substr(svg.find("id=\"pod_3\""), 600);

  // A pod: its 16 leaves and their hosts, each leaf linked to its own picture.
  p.pod = 3;
  Scene pod = fabric_scene(f, p);
  EXPECT_EQ(boxes_with(pod, "leaf"), 16u);
  EXPECT_EQ(boxes_with(pod, "hosts"), 16u);
  std::string pod_svg = render(pod, Format::Svg);
  for (NodeId leaf : f.switches_at(Level::Leaf)) {
    if (f.node(leaf).pod == 3) EXPECT_TRUE(contains(pod_svg, ">" + f.node(leaf).name + "<")) << f.node(leaf).name;
  }
}

TEST(FabricScene, ZoomKeepsOneLeafWithItsHostsOrOnePod) {
  Fabric f = make_synthetic("clos3:pods=2,leaves_per_pod=2,hosts_per_leaf=4");
  FabricPicture leaf;
  leaf.leaf = *f.find_host("gpu005") ? f.leaves_of(*f.find_host("gpu005")).front() : NodeId{};
  Scene one = fabric_scene(f, leaf);
  EXPECT_EQ(boxes_with(one, "leaf"), 1u);
  EXPECT_EQ(boxes_with(one, "host"), 4u);
  EXPECT_GT(boxes_with(one, "spine"), 0u);

  FabricPicture pod;
  pod.pod = 1;
  Scene half = fabric_scene(f, pod);
  EXPECT_EQ(boxes_with(half, "leaf"), 2u);
  EXPECT_EQ(boxes_with(half, "host"), 8u);
  pod.pod = 9;
  EXPECT_THROW(fabric_scene(f, pod), std::invalid_argument);
}

TEST(FabricScene, RingAndLoadFromPlacementRecords) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2");
  std::vector<PlacementRecord> records = {record(42, {"gpu001", "gpu005", "gpu002", "gpu006"}),
                                          record(43, {"gpu003", "gpu999"})};
  JobsOnFabric jobs = jobs_on_fabric(f, records, true);
  ASSERT_EQ(jobs.jobs.size(), 1u);
  ASSERT_EQ(jobs.skipped.size(), 1u);
  EXPECT_TRUE(contains(jobs.skipped[0], "gpu999"));
  ASSERT_EQ(jobs.cable_gbps.size(), f.cables().size());
  double uplink_load = 0;
  for (LinkId e : f.cables())
    if (f.link(e).tier == Tier::LeafSpine) uplink_load += jobs.cable_gbps[f.link(e).id];
  EXPECT_GT(uplink_load, 0) << "a ring across two leaves loads the uplinks";

  FabricPicture p;
  p.jobs = jobs.jobs;
  p.cable_gbps = jobs.cable_gbps;
  p.rings = {"42"};
  Scene s = fabric_scene(f, p);
  // Every step crosses between the same two leaves: one line, both ways.
  ASSERT_EQ(lines_with(s, "job_42"), 1u);
  auto ring =
      std::find_if(s.lines.begin(), s.lines.end(), [](const Line& l) { return contains(l.css_class, "job_42"); });
  EXPECT_EQ(ring->label, "2 steps > / 2 steps <");
  EXPECT_TRUE(ring->arrow_back);
  EXPECT_GT(lines_with(s, "loaded"), 0u);
  EXPECT_EQ(boxes_with(s, "busy"), 4u);
  std::string svg = render(s, Format::Svg);
  EXPECT_EQ(count(svg, "class=\"edge ring job_42\""), 1u);
}

TEST(FabricScene, RingStepsBetweenTwoBoxesShareOneLineWithBothDirections) {
  Fabric f = make_synthetic("leafspine:leaves=3,hosts_per_leaf=4,spines=2");
  FabricPicture p;
  p.expand_hosts = 0;  // one box per leaf: steps gpu001 -> gpu005 and back meet on one pair
  auto h = [&](const char* name) { return *f.find_host(name); };
  p.jobs.push_back({"5", {h("gpu001"), h("gpu005"), h("gpu002"), h("gpu006"), h("gpu009"), h("gpu010")}});
  p.rings = {"5"};
  Scene s = fabric_scene(f, p);
  std::vector<Line> ring;
  for (const Line& l : s.lines)
    if (contains(l.css_class, "job_5")) ring.push_back(l);
  // leaf01 <-> leaf02 both ways (steps 1, 3 and 2), leaf02 -> leaf03 (4), leaf03 -> leaf01 (6).
  ASSERT_EQ(ring.size(), 3u);
  EXPECT_TRUE(ring[0].arrow && ring[0].arrow_back);
  EXPECT_EQ(ring[0].label, "2 steps > / step 2 <");
  EXPECT_TRUE(contains(ring[0].tooltip, "1: gpu001 -> gpu005; 3: gpu002 -> gpu006; 2: gpu005 -> gpu002"))
      << ring[0].tooltip;
  EXPECT_FALSE(ring[1].arrow_back);
  EXPECT_EQ(ring[1].label, "step 4");
  EXPECT_TRUE(contains(s.legend.back(), "1 steps inside a box")) << s.legend.back();
  std::string svg = render(s, Format::Svg);
  EXPECT_EQ(count(svg, "class=\"edge ring job_5\""), 3u);
}

TEST(Render, NamesAreEscapedAndPngIsDrawn) {
  Scene s;
  s.title = "a & b <c>";
  Box a, b;
  a.id = "a";
  a.lines = {"<script>alert(1)</script>", "back\\slash"};
  a.tooltip = "\"quoted\" & <tip>";
  b.id = "b";
  b.lines = {"b"};
  s.boxes = {a, b};
  Line ab;
  ab.from = "a";
  ab.to = "b";
  ab.id = "ab";
  ab.label = "<x>";
  s.lines.push_back(ab);
  std::string svg = render(s, Format::Svg);
  EXPECT_FALSE(contains(svg, "<script>"));
  EXPECT_TRUE(contains(svg, "&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_TRUE(contains(svg, "back\\slash"));
  EXPECT_FALSE(contains(svg, "<tip>"));
  std::string png = render(s, Format::Png);
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(1, 3), "PNG");

  ab.to = "nowhere";
  s.lines.push_back(ab);
  EXPECT_THROW(render(s, Format::Svg), RenderError);
  EXPECT_THROW(format_of_path("x.gif"), std::invalid_argument);
  EXPECT_EQ(html_escape("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
  EXPECT_EQ(url_encode("leaf 01&x"), "leaf%2001%26x");
}

TEST(Metrics, ExpositionEscapesLabelsAndHelp) {
  topoctl::Exposition out;
  out.family("topo_x", "gauge", "help with \\ and\nnewline");
  out.sample("topo_x", {{"name", "a\"b\\c\nd"}}, 1.5);
  out.sample("topo_x", 3);
  EXPECT_EQ(out.text(),
            "# HELP topo_x help with \\\\ and\\nnewline\n# TYPE topo_x gauge\n"
            "topo_x{name=\"a\\\"b\\\\c\\nd\"} 1.5\ntopo_x 3\n");
  EXPECT_EQ(topoctl::epoch_seconds("1970-01-02T00:00:00Z"), 86400.0);
  EXPECT_FALSE(topoctl::epoch_seconds("yesterday"));

  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=2,degrade=leaf01:5,unplug=leaf02:6");
  topoctl::Exposition fab;
  SnapshotInfo info;
  info.id = 3;
  info.taken_at = "2026-01-01T00:00:00Z";
  topoctl::snapshot_metrics(fab, {{info}, &f});
  EXPECT_TRUE(contains(fab.text(), "topo_aware_fabric_hosts 8\n"));
  EXPECT_TRUE(contains(fab.text(), "topo_aware_fabric_degraded_cables{tier=\"leaf-spine\"} 1\n")) << fab.text();
  EXPECT_TRUE(contains(fab.text(), "topo_aware_snapshot_latest_id 3\n"));
}

}  // namespace
}  // namespace topo::view
