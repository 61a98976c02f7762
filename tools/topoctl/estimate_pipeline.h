// topoctl estimate --collective pipeline: a pipeline-parallel job's stage
// boundaries on an allocation (comm_model/pipeline_stages.h), as the report
// and the JSON show them.
#pragma once

#include <span>

#include <nlohmann/json.hpp>

#include "comm_model/neighbours.h"
#include "comm_model/pipeline_stages.h"

namespace topoctl {

// The --concurrent jobs as load on the cables, in Gb/s: each job's ring
// demand (comm_model/ring_demand.h), estimated with its own options or
// `options`. On a fabric with NVLink domains a job all inside one domain
// loads no cable.
topo::BackgroundLoad running_load(const topo::PathIndex& index, std::span<const topo::NeighbourJob> jobs,
                                  const topo::ModelOptions& options);

// Every field of the estimate, each boundary with its hosts' names.
nlohmann::json pipeline_json(const topo::PipelineEstimate& p);

// The report: one line a boundary, then the total.
void print_pipeline(const topo::PipelineEstimate& p);

}  // namespace topoctl
