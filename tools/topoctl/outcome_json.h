// Replay outcomes as JSON: what `topoctl simulate --json` and the real
// cluster's replay scripts write, and what `topoctl report` reads.
//
// A results document is one Comparison:
//   {"title": ..., "fabric": ..., "trace": ...,
//    "policies": {"tree": {outcome}, "topo-aware": {outcome}, ...}}
// An outcome has the summary keys policy, multi_host_jobs,
// mean_allreduce_slowdown, p95_allreduce_slowdown, mean_alltoall_slowdown,
// spine_ring_edges, pod_ring_edges, mean_leaves, makespan_s,
// gpu_utilization, mean_wait_s, rejected [ids], scheduler {name: number}
// (and routing, mean_slowdown, profiles {name: {jobs, mean_slowdown,
// p95_slowdown}}, mean_jct_s, p95_jct_s) and jobs [{id, profile, gpus, hosts, wait_s, leaves, pods, spines,
// spine_ring_edges, pod_ring_edges, allreduce_slowdown,
// allreduce_alone_slowdown, alltoall_slowdown}] (and run_s, jct_s, and
// free_hosts_at_start when the schedule knows it).
// A slowdown is +infinity when a cable the job needs is full; JSON has no
// infinity, so it is written as null and null is read back as infinity.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "simulation/report.h"

namespace topoctl {

nlohmann::json to_json(const topo::PolicyOutcome& outcome);

// Throws topo::ParseError naming `file` and the key (e.g.
// "policies.tree.jobs[3].wait_s") that is missing or of the wrong type.
// rejected, scheduler and jobs may be absent (empty).
topo::PolicyOutcome outcome_from_json(const nlohmann::json& j, const std::string& file);

nlohmann::json to_json(const topo::Comparison& comparison);

// Policies come back as linear, tree, topo-aware, then any others in key
// order; an outcome's own "policy" key, when present, must match its name.
topo::Comparison comparison_from_json(const nlohmann::json& j, const std::string& file);

// Every job of a million-job replay under three policies is a few hundred
// megabytes.
inline constexpr uint64_t kMaxResultsBytes = uint64_t{1} << 30;

// Reads and parses a results file; ParseError for unreadable files, bad
// JSON (with the line nlohmann reports), JSON nested past 64 levels and a
// file past `max_bytes`.
topo::Comparison read_comparison_file(const std::string& path, uint64_t max_bytes = kMaxResultsBytes);

}  // namespace topoctl
