#include "plugin/engine/route_writer.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "routing/opensm_handoff.h"

namespace topo::engine {

std::optional<RoutePacing::Clock::time_point> RoutePacing::due(Clock::time_point now) const {
  if (!pending_) return std::nullopt;
  if (!last_) return now;
  return std::max(now, *last_ + (last_failed_ ? std::max(interval_, kRetry) : interval_));
}

RouteWriter::RouteWriter(RouteSettings settings)
    : settings_(std::move(settings)), pacing_(std::chrono::seconds(settings_.interval_s)) {
  thread_ = std::thread([this] { run(); });
}

RouteWriter::~RouteWriter() {
  {
    std::lock_guard guard(lock_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RouteWriter::set_notice(Notice notice) {
  std::lock_guard guard(lock_);
  notice_ = std::move(notice);
}

void RouteWriter::update(RouteInputs inputs) {
  {
    std::lock_guard guard(lock_);
    inputs_ = std::move(inputs);
    pacing_.changed();
  }
  wake_.notify_one();
}

RouteWriter::Status RouteWriter::status() const {
  std::lock_guard guard(lock_);
  Status s = status_;
  s.waiting = pacing_.pending() && !busy_;
  return s;
}

bool RouteWriter::wait_settled(std::chrono::milliseconds timeout) {
  std::unique_lock guard(lock_);
  return settled_.wait_for(guard, timeout, [&] {
    if (busy_) return false;
    auto due = pacing_.due(RoutePacing::Clock::now());
    return !due || *due > RoutePacing::Clock::now();
  });
}

void RouteWriter::run() {
  std::unique_lock guard(lock_);
  for (;;) {
    settled_.notify_all();
    if (stopping_) return;
    const auto now = RoutePacing::Clock::now();
    std::optional<RoutePacing::Clock::time_point> due = pacing_.due(now);
    if (!due) {
      wake_.wait(guard);
      continue;
    }
    if (*due > now) {
      wake_.wait_until(guard, *due);
      continue;
    }
    RouteInputs in = inputs_;  // a pointer and the rings: cheap
    pacing_.take();
    busy_ = true;
    guard.unlock();
    std::string line;
    const Outcome outcome = apply(in, line);
    guard.lock();
    busy_ = false;
    const auto done = RoutePacing::Clock::now();
    bool say = false;
    switch (outcome) {
      case Outcome::Applied:
        pacing_.applied(done);
        ++status_.applies;
        last_failure_.clear();
        say = true;
        break;
      case Outcome::Failed:
        pacing_.failed(done);
        ++status_.failures;
        say = line != last_failure_;
        last_failure_ = line;
        break;
      case Outcome::Unchanged:
        ++status_.unchanged;
        break;
    }
    if (outcome != Outcome::Unchanged) status_.last_line = line;
    if (say && notice_) {
      Notice notice = notice_;
      guard.unlock();
      notice(line, outcome == Outcome::Failed);
      guard.lock();
    }
  }
}

RouteWriter::Outcome RouteWriter::apply(const RouteInputs& in, std::string& line) {
  try {
    if (!in.fabric) throw std::runtime_error("no fabric snapshot is loaded");
    const Fabric& f = *in.fabric;
    if (!f.routing().is_static())
      throw std::runtime_error(fmt::format(
          "fabric snapshot {} routes {}, not static tables: store the subnet's own (topoctl discover --lfts)",
          in.snapshot_id, routing_name(f.routing())));
    RoutePlanOptions options;
    options.max_changes = settings_.max_changes;
    RoutePlan plan = plan_job_routes(f, f.routing(), in.jobs, options);
    if (applied_any_ && applied_snapshot_ == in.snapshot_id && applied_lft_ == plan.routing.lft)
      return Outcome::Unchanged;
    hand_to_opensm(f, plan.routing,
                   OpensmHandoff{settings_.file, settings_.command, std::chrono::seconds(settings_.command_timeout_s)});
    applied_any_ = true;
    applied_snapshot_ = in.snapshot_id;
    applied_lft_ = plan.routing.lft;
    line = fmt::format(
        "routes applied: {} running jobs, {} LIDs of multi-leaf jobs planned, {} entries changed from fabric "
        "snapshot {}'s tables (most flows on a cable {:.2f} -> {:.2f}); wrote {}{}",
        in.jobs.size(), plan.lids.size(), plan.changes.size(), in.snapshot_id, plan.before.most, plan.after.most,
        settings_.file, settings_.command.empty() ? "" : "; ran " + settings_.command);
    return Outcome::Applied;
  } catch (const std::exception& e) {
    line = fmt::format("routes not applied, the tables stay as they were: {}", e.what());
    return Outcome::Failed;
  }
}

}  // namespace topo::engine
