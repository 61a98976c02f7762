// Moves placement records out of slurmctld's scheduling pass: the caller's
// thread appends each record to the journal (one write, see
// db/placement_journal.h) and goes on; a thread of its own seals the
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
  // Waits until every record submitted so far is stored, or an attempt
  // to store them failed (then returns its error).
  std::optional<std::string> flush();
  // Why the last attempt to store failed, while records wait for it.
  std::optional<std::string> last_error() const;

 private:
  void run();

  std::string db_path_;
  PlacementJournal journal_;
  mutable std::mutex lock_;
  std::condition_variable wake_, drained_;
  std::deque<PlacementRecord> queue_;  // appended, not yet stored
  size_t in_flight_ = 0;               // taken by the thread, not yet stored
  uint64_t attempts_ = 0;              // store attempts finished (flush waits for one)
  std::optional<std::string> error_;
  bool stopping_ = false;
  int flush_waiters_ = 0;
  // How long the thread waits after a record for more to store with it.
  static constexpr std::chrono::milliseconds kGather{20};
  std::thread thread_;
};

}  // namespace topo
