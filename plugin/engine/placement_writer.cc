#include "plugin/engine/placement_writer.h"

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <vector>

#include "db/error.h"

namespace topo {

PlacementWriter::PlacementWriter(std::string db_path, std::string journal_path, Replayed* replayed)
    : db_path_(std::move(db_path)), journal_(std::move(journal_path)) {
  PlacementJournal::Contents left = journal_.read();
  Replayed r;
  r.unreadable_lines = left.unreadable_lines;
  if (!left.records.empty()) {
    PlacementStore store(db_path_);  // full sync: a replay is rare
    r.added = store.record_all(left.records, true);
    r.already_there = left.records.size() - r.added;
  }
  journal_.clear(0);
  journal_.clear(1);
  if (replayed) *replayed = r;
  thread_ = std::thread([this] { run(); });
}

PlacementWriter::~PlacementWriter() {
  {
    std::lock_guard guard(lock_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PlacementWriter::submit(PlacementRecord record) {
  bool first;
  {
    std::lock_guard guard(lock_);
    if (record.placed_at.empty()) record.placed_at = placement_time_now();
    journal_.append(record);
    first = queue_.empty();
    queue_.push_back(std::move(record));
  }
  // Only the first record of a batch wakes the thread: with records queued
  // it is gathering or storing and takes this one with them, and a wake
  // (a futex call in the scheduling thread) would only put it back to
  // sleep.
  if (first) wake_.notify_one();
}

void PlacementWriter::submit_later(PlacementRecord record, Completion complete) {
  bool first;
  {
    std::lock_guard guard(lock_);
    if (record.placed_at.empty()) record.placed_at = placement_time_now();
    first = queue_.empty() && later_.empty();
    later_.emplace_back(std::move(record), std::move(complete));
  }
  if (first) wake_.notify_one();
}

namespace {

// A test hook: while the file $TOPO_AWARE_HOLD_RECORDS names exists,
// submit_later's records stay in memory, so tests/slurm/crash.sh can kill
// slurmctld between a job's start and its record's journaling, the window
// the shims' recovery closes. Unset (as in production): never held.
bool records_held() {
  static const char* path = std::getenv("TOPO_AWARE_HOLD_RECORDS");
  struct stat st {};
  return path && *path && ::stat(path, &st) == 0;
}

}  // namespace

void PlacementWriter::journal_later(std::unique_lock<std::mutex>& guard) {
  while (!later_.empty() && !records_held()) {
    std::deque<std::pair<PlacementRecord, Completion>> taken;
    taken.swap(later_);
    in_flight_ += taken.size();
    guard.unlock();
    for (auto& [record, complete] : taken)
      if (complete) complete(record);
    guard.lock();
    in_flight_ -= taken.size();
    for (auto& [record, complete] : taken) {
      try {
        journal_.append(record);
      } catch (const std::exception& e) {
        error_ = e.what();  // kept in memory: the database may still take it
      }
      queue_.push_back(std::move(record));
    }
  }
}

std::optional<std::string> PlacementWriter::flush() {
  std::unique_lock guard(lock_);
  uint64_t seen = attempts_;
  ++flush_waiters_;
  wake_.notify_one();
  auto drained = [&] { return queue_.empty() && later_.empty() && in_flight_ == 0; };
  drained_.wait(guard, [&] { return drained() || (attempts_ > seen && error_); });
  --flush_waiters_;
  if (drained()) return std::nullopt;
  return error_;
}

std::optional<std::string> PlacementWriter::last_error() const {
  std::lock_guard guard(lock_);
  return error_;
}

void PlacementWriter::run() {
  // Its own connection: the engine's is used by the scheduling thread.
  // Each transaction is synced before the journal side is emptied, so a
  // machine crash finds every record in one or the other.
  std::unique_ptr<PlacementStore> store;
  // A database replaced under its name (restored, moved into place) is
  // reopened, or the records would go to the file that was unlinked.
  struct stat opened {};
  auto same_file = [&] {
    struct stat now {};
    return ::stat(db_path_.c_str(), &now) == 0 && now.st_dev == opened.st_dev && now.st_ino == opened.st_ino;
  };
  std::unique_lock guard(lock_);
  for (;;) {
    // Held records (records_held) are looked at again every second.
    auto ready = [&] { return stopping_ || !queue_.empty() || (!later_.empty() && !records_held()); };
    while (!ready())
      if (later_.empty())
        wake_.wait(guard);
      else
        wake_.wait_for(guard, std::chrono::seconds(1));
    // Into the journal first, before any wait: until then a crash loses them.
    journal_later(guard);
    if (queue_.empty()) return;  // stopping, nothing left
    // A scheduling pass places several jobs at once: gather them into one
    // sync and one transaction (they are safe in the journal meanwhile).
    wake_.wait_for(guard, kGather, [&] { return stopping_ || flush_waiters_ > 0; });
    journal_later(guard);
    std::vector<PlacementRecord> batch(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
    queue_.clear();
    in_flight_ = batch.size();
    // Every line of the sealed side is in this batch (or stored before).
    int sealed = journal_.seal();
    guard.unlock();

    std::optional<std::string> failed;
    try {
      journal_.sync(sealed);
      if (store && !same_file()) store.reset();
      if (!store) {
        store = std::make_unique<PlacementStore>(db_path_);
        ::stat(db_path_.c_str(), &opened);
      }
      store->record_all(batch, false);
    } catch (const std::exception& e) {
      failed = e.what();
      store.reset();  // the file may be replaced meanwhile: reopen
    }
    // Stored: empty the sealed side. Outside the lock (a truncate may wait
    // for the disk): appends go to the other side until this thread seals
    // again.
    std::optional<std::string> clear_failed;
    if (!failed) try {
        journal_.clear(sealed);
      } catch (const std::exception& e) {
        clear_failed = e.what();  // harmless: a replay skips stored records
      }

    guard.lock();
    in_flight_ = 0;
    ++attempts_;
    journal_later(guard);  // those that came while it stored
    if (failed) {
      // Back to the front, in order; stopping gives up (they stay in the
      // journal for the next start).
      queue_.insert(queue_.begin(), std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
      error_ = failed;
      drained_.notify_all();
      if (stopping_) {
        journal_later(guard);  // in the journal for the next start
        return;
      }
      wake_.wait_for(guard, std::chrono::seconds(1), [&] { return stopping_; });
      if (stopping_ && queue_.empty() && later_.empty()) return;
      continue;
    }
    error_ = clear_failed;
    drained_.notify_all();
  }
}

}  // namespace topo
