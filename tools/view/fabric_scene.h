// The fabric as a picture: a tree of cores, spines, leaves and the hosts
// under each leaf, grouped by pod, with the cables between them bundled per
// pair of switches. Cables are coloured by the running jobs' traffic (when
// a load is given) or by health: degraded cables dashed orange, down cables
// dotted red. Jobs' rings are drawn over the tree as arrows in ring order.
//
// Stays readable at thousands of hosts, by how many leaves are shown:
//   - at most `expand_hosts` hosts: every host is a box;
//   - at most 32 leaves: the hosts of a leaf are one box under it, with
//     their host list, count, busy, free and sick (a degraded or down
//     cable) counts and rail;
//   - more leaves in a three-tier fabric's overview: one box per pod (its
//     spines, leaves and hosts counted), linked to the pod's own picture;
//   - more leaves otherwise (a flat fabric, or one pod): the counts go into
//     the leaf's box and the leaves wrap into rows of 16; a spine tier of
//     more than 24 switches is one box, and only the uplink bundles with a
//     fault or load are drawn (the legend counts the others).
// NVLink domains (a snapshot that has them): the hosts of each domain are
// one box under the leaves its hosts are cabled to (a rack of an NVL72
// under its rail leaves), with its count, busy, free and sick hosts; hosts
// in no domain are drawn as above. Not in a three-tier overview (pods
// collapsed) nor in a leaf's zoom, whose hosts are named one by one with
// their domain in the tooltip.
// Zooming into a pod keeps its leaves and the switches above them;
// zooming into a leaf keeps it, its hosts (always drawn one by one) and
// its uplinks' switches.
//
//   FabricPicture p;
//   p.jobs = jobs.jobs; p.cable_gbps = jobs.cable_gbps; p.rings = {"4242"};
//   std::string svg = render(fabric_scene(fabric, p), Format::Svg);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabric/fabric.h"
#include "tools/view/scene.h"

namespace topo::view {

// A job on the fabric: its id and its hosts in ring order.
struct JobOnFabric {
  std::string id;
  std::vector<NodeId> ring;
};

struct FabricPicture {
  std::string title;
  std::optional<int> pod;      // zoom into one pod
  std::optional<NodeId> leaf;  // zoom into one leaf (wins over pod)
  int expand_hosts = 48;       // draw hosts one by one when at most this many are shown
  // Past this many leaves, leaves are wrapped into rows of 16 (or pods
  // collapsed). The page, fitted to the window's width, asks for 16.
  size_t leaves_in_one_row = 32;
  std::vector<double> cable_gbps;  // the running jobs' Gb/s per cable id (busier direction); empty: no load
  std::vector<JobOnFabric> jobs;   // running jobs: their hosts are shown busy
  std::vector<std::string> rings;  // ids of the jobs whose ring is drawn
  bool health_labels = false;      // name each degraded or down cable's rate on its line
  // Links from pod and leaf boxes to their zoomed pictures: this prefix
  // then "pod=N" or "leaf=NAME" (e.g. "/fabric?snapshot=3&"); empty: none.
  std::string zoom_link;
};

// Throws std::invalid_argument for a pod or leaf the fabric does not have.
Scene fabric_scene(const Fabric& fabric, const FabricPicture& picture);

// Hosts with a degraded or down cable, by NodeId: drawn (and counted) sick.
std::vector<bool> sick_hosts(const Fabric& fabric);

// The colour a cable's utilisation (load over capacity) is drawn in: grey
// when idle, green to yellow to red as it fills, dark red past full.
std::string load_colour(double utilisation);

}  // namespace topo::view
