// The page's jobs table: the newest placement of recent jobs with their
// hosts, the leaves they span, how many ring steps cross between leaves,
// the estimate over ideal and why they did not get topo-aware's choice;
// sortable by any column on the server (links: works without scripting)
// and in place by /page.js.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db/placement_store.h"
#include "fabric/fabric.h"
#include "tools/view/page_parts.h"

namespace topoctl {

struct JobRow {
  topo::PlacementRecord record;
  bool running = false;
  std::optional<int> leaves;       // distinct leaves of its hosts; nullopt: its fabric is unknown
  std::optional<int> crossings;    // ring steps between hosts of different leaves
  std::optional<double> slowdown;  // estimate over ideal
  std::string held;                // why not topo-aware's own choice, or not at once: cons_tres's reason, a deferral
};

// `fabric`: the snapshot the job was placed on, or null.
JobRow job_row(const topo::PlacementRecord& record, const topo::Fabric* fabric, bool running);

// The columns, and a sort asked by ?sort=&order= (an unknown key: newest first).
const std::vector<topo::view::Column>& job_columns();
topo::view::SortAsk job_sort(const std::string& key, const std::string& order);
void sort_jobs(std::vector<JobRow>& rows, const topo::view::SortAsk& sort);

std::string jobs_html(const std::vector<JobRow>& rows, const topo::view::SortAsk& sort);

}  // namespace topoctl
