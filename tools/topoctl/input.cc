#include "tools/topoctl/input.h"

#include <cstdlib>

#include <stdexcept>

#include <fmt/format.h>

#include "db/health_store.h"
#include "db/snapshot_store.h"
#include "fabric/synthetic.h"
#include "plugin/engine/engine_config.h"
#include "routing/routing_engine.h"

namespace topoctl {

std::string default_db_path() {
  const char* env = std::getenv("TOPO_DB");
  return env && *env ? env : "/var/lib/topo-aware/topo.db";
}

void add_db_option(CLI::App& cmd, std::string& db_path) {
  cmd.add_option("--db", db_path, "snapshot database (sqlite3)")->capture_default_str();
}

void add_conf_option(CLI::App& cmd, std::string& conf) {
  cmd.add_option("--conf", conf,
                 fmt::format("topo_aware.conf whose HealthErrorsPerHour and HealthXmitWaitShare say which cables' "
                             "port counters make them degraded (default: {} when it exists)",
                             kDefaultConf))
      ->check(CLI::ExistingFile);
}

topo::EngineConfig site_config(const std::string& conf) {
  auto config = topo::read_engine_config(conf.empty() ? kDefaultConf : conf);
  return config ? *config : topo::EngineConfig{};
}

void add_input_options(CLI::App& cmd, FabricInput& input) {
  add_db_option(cmd, input.db_path);
  add_conf_option(cmd, input.conf);
  auto* snap = cmd.add_option("--snapshot", input.snapshot, "snapshot id, or 'latest'")->capture_default_str();
  cmd.add_option("--synthetic", input.synthetic,
                 "use a synthetic fabric instead of a snapshot, e.g. "
                 "leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2")
      ->excludes(snap);
}

LoadedFabric load(const FabricInput& input) {
  if (!input.synthetic.empty()) return {topo::make_synthetic(input.synthetic), std::nullopt, {}};
  topo::SnapshotStore store(input.db_path);
  int64_t id = store.resolve(input.snapshot);
  topo::SnapshotInfo info = store.info(id);
  topo::Fabric fabric = store.load(id);
  // Cables whose port counters pass topo_aware.conf's thresholds count as degraded.
  topo::HealthStore health(input.db_path);
  const topo::EngineConfig site = site_config(input.conf);
  topo::apply_health(fabric, topo::check_health(topo::latest_cable_health(health, fabric, id), site.health));
  // NICs in a pause storm or marking ECN far above their tier, likewise (nic_health.h).
  topo::apply_nic_health(fabric, topo::check_nic_health(topo::latest_nic_rates(health, fabric, id), site.nic));
  return {std::move(fabric), id, info.taken_at};
}

CLI::Option* add_routing_option(CLI::App& cmd, std::string& routing) {
  std::string help =
      "how the fabric routes: adaptive (every flow spread evenly over the shortest up/down paths), static (the "
      "snapshot's forwarding tables), static:ENGINE (ftree, minhop, updn, dfsssp: the snapshot's tables when they "
      "are that engine's, else emulated) or ecmp:QPS (RoCE: QPS queue pairs per connection, each hashed onto one "
      "equal-cost path)";
  if (routing.empty()) return cmd.add_option("--routing", routing, help + "; default: the snapshot's own");
  return cmd.add_option("--routing", routing, help)->capture_default_str();
}

CLI::Option* add_profile_option(CLI::App& cmd, std::string& profile) {
  const std::string help = "how the job communicates: allreduce, fsdp, alltoall, pipeline, mixed or none";
  CLI::Option* option = cmd.add_option("--profile", profile, help);
  if (!profile.empty()) option->capture_default_str();
  return option;
}

topo::Profile profile_option(const std::string& text) {
  std::optional<topo::Profile> profile = topo::parse_profile(text);
  if (!profile)
    throw std::invalid_argument(
        fmt::format("--profile {}: expected allreduce, fsdp, alltoall, pipeline, mixed or none", text));
  return *profile;
}

void apply_routing(topo::Fabric& fabric, const std::string& spec, std::string_view where) {
  auto wanted = topo::parse_routing_spec(spec);
  if (!wanted)
    throw std::invalid_argument(
        fmt::format("--routing {}: not a routing; use adaptive, static, static:ENGINE (ftree, minhop, updn, dfsssp) or "
                    "ecmp:QPS (QPs per connection, 1..{})",
                    spec, topo::kMaxQps));
  const topo::Routing& own = fabric.routing();
  if (wanted->kind == topo::RoutingKind::Adaptive) {
    fabric.set_routing(topo::Routing{});
  } else if (wanted->kind == topo::RoutingKind::Ecmp) {
    fabric.set_routing(topo::ecmp_routing(wanted->qps));
  } else if (wanted->engine.empty()) {
    if (!own.is_static())
      throw std::invalid_argument(fmt::format(
          "--routing static: {} routes adaptively and carries no forwarding tables; ask for static:ENGINE to "
          "emulate an engine's",
          where));
  } else if (topo::routing_name(own) != spec) {
    fabric.set_routing(topo::emulate_routing(fabric, wanted->engine));
  }
}

}  // namespace topoctl
