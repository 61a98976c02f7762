// Moves placement records out of slurmctld's scheduling pass: the caller's
// thread appends each record to the journal (one write, see
// db/placement_journal.h) and goes on, or hands it over unwritten with
// what is left to fill in (submit_later), and the thread appends it; a
// thread of its own seals the
// journal's side those records are in, syncs it, stores the records in the
// database in one transaction and empties that side, while appends go to
// the other side. It waits a moment (kGather) after a record so that the
// jobs of one scheduling pass share one sync and one transaction.
//
// A database that cannot be written (locked past the busy timeout, full,
// damaged) keeps the records in the journal and in memory; the thread
// tries again a second later and last_error() says why meanwhile.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "db/placement_journal.h"
#include "db/placement_store.h"

namespace topo {

class PlacementWriter {
 public:
  // Replays what `journal_path` holds (a crash left it) into `db_path`,
  // skipping records already there, then starts the thread. Throws
  // DbError when the journal or the database cannot be opened or written.
  struct Replayed {
    size_t added = 0, already_there = 0;
    int unreadable_lines = 0;
  };
  PlacementWriter(std::string db_path, std::string journal_path, Replayed* replayed = nullptr);
  // Stores what it can (as flush), then stops the thread.
  ~PlacementWriter();
  PlacementWriter(const PlacementWriter&) = delete;
  PlacementWriter& operator=(const PlacementWriter&) = delete;

  // Appends to the journal and queues for the thread; throws DbError when
  // the append fails (the record is then not kept anywhere).
  void submit(PlacementRecord record);
  // Queues the record for the thread, which fills in the rest with
  // `complete` (what costs most, such as a placement's reasons in words:
  // it must read only what the record and the lambda own), then journals
  // and stores it; the caller does no I/O at all. The record is not in the
  // journal when this returns: a process killed in between loses it, so a
  // caller uses this only where it can rebuild the record after a restart
  // (topo_engine_recover). placed_at is the time of this call. A failed
  // append is last_error(); the record is still stored.
  using Completion = std::function<void(PlacementRecord&)>;
  void submit_later(PlacementRecord record, Completion complete);
  // Waits until every record submitted so far is stored, or an attempt
  // to store them failed (then returns its error).
  std::optional<std::string> flush();
  // Why the last attempt to store failed, while records wait for it.
  std::optional<std::string> last_error() const;

 private:
  void run();
  // The records submit_later queued, completed and journaled, onto queue_;
  // called and returns with the lock held.
  void journal_later(std::unique_lock<std::mutex>& guard);

  std::string db_path_;
  PlacementJournal journal_;
  mutable std::mutex lock_;
  std::condition_variable wake_, drained_;
  std::deque<PlacementRecord> queue_;  // appended, not yet stored
  // submit_later's, not yet completed nor appended.
  std::deque<std::pair<PlacementRecord, Completion>> later_;
  size_t in_flight_ = 0;   // taken by the thread, not yet stored
  uint64_t attempts_ = 0;  // store attempts finished (flush waits for one)
  std::optional<std::string> error_;
  bool stopping_ = false;
  int flush_waiters_ = 0;
  // How long the thread waits after a record for more to store with it.
  static constexpr std::chrono::milliseconds kGather{20};
  std::thread thread_;
};

}  // namespace topo
