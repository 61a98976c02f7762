// RouteJobs=yes: forwarding tables for the running topo-aware jobs' rings,
// planned (routing/job_routes.h) and handed to OpenSM's `file` engine
// (routing/opensm_handoff.h) by a thread of its own, never on the
// scheduler's path.
//
// The engine tells it, under its own lock and cheaply, each time the
// running set changes (a job recorded, ended, suspended or resumed, the
// running set given at start-up) and each time its snapshot watcher loads
// a fabric (a newer snapshot, new cable health): the snapshot's fabric,
// whose static tables are the base, and the running jobs' rings. The thread plans from
// the newest of those, at most once per RouteInterval: a change that comes
// sooner waits until the interval has passed since the last apply, and is
// then applied with whatever else changed meanwhile, so the last state is
// always applied in the end (a job's end gives its LIDs their base entries
// back). A plan equal to the tables last applied writes nothing.
//
// Any failure (tables that fail the up/down check, a file that cannot be
// written, a RouteCommand that exits non-zero or runs past RouteCommandTimeout) leaves the
// file as it was, and is said in one line; the same reason again is not
// said again. A failed apply is tried again after the interval.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fabric/fabric.h"
#include "plugin/engine/engine_config.h"
#include "routing/job_routes.h"

namespace topo::engine {

// When the route thread may apply: a pure value, so that the rate limit is
// tested with a clock the test sets.
class RoutePacing {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RoutePacing(std::chrono::seconds interval) : interval_(interval) {}
  // The running set changed.
  void changed() { pending_ = true; }
  // When what changed may be applied: `now` once the interval since the
  // last apply has passed, else when it will have; nullopt: nothing changed.
  std::optional<Clock::time_point> due(Clock::time_point now) const;
  // The thread takes every change so far to plan from.
  void take() { pending_ = false; }
  // What came of it: written (the interval counts from `now`), failed (the
  // change is pending again, tried after the interval but never sooner
  // than kRetry: a RouteInterval of 0 must not run a failing command in a
  // loop) or unchanged (nothing written; nothing to do).
  void applied(Clock::time_point now) {
    last_ = now;
    last_failed_ = false;
  }
  void failed(Clock::time_point now) {
    last_ = now;
    last_failed_ = true;
    pending_ = true;
  }
  bool pending() const { return pending_; }
  static constexpr std::chrono::seconds kRetry{10};

 private:
  std::chrono::seconds interval_;
  std::optional<Clock::time_point> last_;
  bool pending_ = false, last_failed_ = false;
};

// What a plan is made from.
struct RouteInputs {
  std::shared_ptr<const Fabric> fabric;  // the snapshot's; its static tables are the base
  int64_t snapshot_id = -1;
  std::vector<RingJob> jobs;  // the running jobs on two or more fabric hosts, ring order
};

class RouteWriter {
 public:
  // Who hears each apply and each new reason for not applying
  // (`failed`); called on the thread, no lock held.
  using Notice = std::function<void(const std::string& line, bool failed)>;

  explicit RouteWriter(RouteSettings settings);
  // Waits for an apply under way (its command at most RouteCommandTimeout), then stops.
  ~RouteWriter();
  RouteWriter(const RouteWriter&) = delete;
  RouteWriter& operator=(const RouteWriter&) = delete;

  void set_notice(Notice notice);
  // The running set changed: plan from `inputs` when the interval allows.
  void update(RouteInputs inputs);

  struct Status {
    int applies = 0, failures = 0, unchanged = 0;
    std::string last_line;  // of the last apply or failure
    bool waiting = false;   // a change waits for the interval to pass
  };
  Status status() const;
  // Waits until every change so far has been planned from (or waits for
  // the interval); false when `timeout` passed first. For tests.
  bool wait_settled(std::chrono::milliseconds timeout);

 private:
  enum class Outcome { Applied, Failed, Unchanged };
  void run();
  Outcome apply(const RouteInputs& in, std::string& line);

  const RouteSettings settings_;
  mutable std::mutex lock_;
  std::condition_variable wake_, settled_;
  RoutePacing pacing_;
  RouteInputs inputs_;
  bool busy_ = false, stopping_ = false;
  Status status_;
  std::string last_failure_;  // said once; "" after a success
  Notice notice_;
  // The tables last written, to write nothing when a plan equals them.
  // Only the thread touches these.
  int64_t applied_snapshot_ = -1;
  std::vector<std::vector<uint8_t>> applied_lft_;
  bool applied_any_ = false;
  std::thread thread_;
};

}  // namespace topo::engine
