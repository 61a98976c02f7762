// The placement records not yet in the database, in an append-only file.
//
// The Slurm plugin decides placements inside slurmctld's scheduling pass,
// where a database transaction costs more than the decision. So a record is
// first one line appended to this journal (one write(2) to an O_APPEND file:
// once append() returns, the record outlives the process, whatever kills
// it), and moved into the database later, in batches, by a writer that
// sync()s the journal first and clear()s it once everything in it is stored.
//
//   PlacementJournal journal("/var/lib/topo-aware/topo.db.journal");
//   journal.append(record);            // in the hot path
//   journal.sync();                    // the writer, before its transaction
//   store.record_all(batch, ...);
//   journal.clear();                   // when nothing new came meanwhile
//
// After a crash, read() gives the records a journal holds, oldest first,
// and how many of its lines could not be read (a line torn by a machine
// crash while it was written): those are skipped, never guessed at.
//
// One JSON object a line, the fields of PlacementRecord (id not kept).
// Every failure is a DbError(Io or CantOpen) naming the journal's path.
// One thread at a time per journal.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/placement_store.h"

namespace topo {

class PlacementJournal {
 public:
  // Opens (creating when missing, mode 0600) the journal at `path`.
  explicit PlacementJournal(std::string path);
  ~PlacementJournal();
  PlacementJournal(const PlacementJournal&) = delete;
  PlacementJournal& operator=(const PlacementJournal&) = delete;

  const std::string& path() const { return path_; }

  // Appends one record as one line in one write. Fills placed_at when empty
  // (the time of the decision, not of the database write).
  void append(PlacementRecord record);
  // Forces what was appended onto the disk (fdatasync).
  void sync();
  // Empties the journal (its records are all in the database).
  void clear();

  struct Contents {
    std::vector<PlacementRecord> records;
    int unreadable_lines = 0;
  };
  Contents read() const;

 private:
  std::string path_;
  int fd_ = -1;
};

// A record as one journal line (no newline) and back; the parser returns
// nullopt for a line that is not a whole record.
std::string journal_line(const PlacementRecord& record);
std::optional<PlacementRecord> parse_journal_line(std::string_view line);

}  // namespace topo
