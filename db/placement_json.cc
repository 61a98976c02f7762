#include "db/placement_json.h"

namespace topo {

nlohmann::json placement_record_fields(const PlacementRecord& r) {
  return {{"job_id", r.job_id},
          {"placed_at", r.placed_at},
          {"hosts", r.hosts},
          {"ring_order", r.ring_order},
          {"profile", r.profile},
          {"estimate_s", r.estimate_s},
          {"ideal_s", r.ideal_s},
          {"reasons", r.reasons},
          {"fallback", r.fallback},
          {"fallback_why", r.fallback_why},
          {"deferred_why", r.deferred_why}};
}

nlohmann::json snapshot_id_json(const PlacementRecord& r) {
  return r.snapshot_id ? nlohmann::json(*r.snapshot_id) : nlohmann::json(nullptr);
}

}  // namespace topo
