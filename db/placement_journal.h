// The placement records not yet in the database, in append-only files.
//
// The Slurm plugin decides placements inside slurmctld's scheduling pass,
// where a database transaction costs more than the decision. So a record is
// first one line appended to this journal (one write(2) to an O_APPEND file:
// once append() returns, the record outlives the process, whatever kills
// it), and moved into the database later, in batches, by a writer.
//
// The journal is two files, `<path>-0` and `<path>-1`: appends go to one
// while the writer syncs the other, whose records it is storing. Syncing a
// file blocks writes to it (the kernel holds the file's lock meanwhile), so
// with one file every append in the hot path could wait for a disk flush.
//
//   PlacementJournal journal("/var/lib/topo-aware/topo.db.journal");
//   journal.append(record);            // in the hot path
//   int side = journal.seal();         // the writer: appends go to the other file now
//   journal.sync(side);                // ... its records are on the disk
//   store.record_all(batch, ...);
//   journal.clear(side);               // ... and in the database
//
// After a crash, read() gives the records both files hold in the order
// they were appended, and how many lines could not be read (a line torn by
// a machine crash while it was written): those are skipped, never guessed
// at. A record may be both in the journal and already in the database (the
// writer died between its commit and clear); PlacementStore::record_all's
// skip_recorded tells.
//
// One JSON object a line: the fields of PlacementRecord (id not kept) and
// the line's sequence number. Every failure is a DbError (Io, Full or
// CantOpen) naming the file. One thread at a time per journal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/placement_store.h"

namespace topo {

class PlacementJournal {
 public:
  // Opens (creating when missing, mode 0600) both files of `path`; appends
  // go to file 0 first.
  explicit PlacementJournal(std::string path);
  ~PlacementJournal();
  PlacementJournal(const PlacementJournal&) = delete;
  PlacementJournal& operator=(const PlacementJournal&) = delete;

  const std::string& path() const { return path_; }
  std::string file(int side) const { return path_ + "-" + std::to_string(side); }

  // Appends one record as one line in one write. Fills placed_at when empty
  // (the time of the decision, not of the database write).
  void append(PlacementRecord record);
  // Sends later appends to the other file; returns the side appended to
  // until now.
  int seal();
  // Forces a side's lines onto the disk (fdatasync).
  void sync(int side);
  // Empties a side (its records are all in the database).
  void clear(int side);

  struct Contents {
    std::vector<PlacementRecord> records;  // in the order appended
    int unreadable_lines = 0;
  };
  Contents read() const;

 private:
  std::string path_;
  int fd_[2] = {-1, -1};
  int side_ = 0;      // where appends go
  uint64_t seq_ = 0;  // the last line's sequence number
};

// A record as one journal line (no newline) and back; the parser returns
// nullopt for a line that is not a whole record.
std::string journal_line(const PlacementRecord& record, uint64_t seq);
struct JournalLine {
  PlacementRecord record;
  uint64_t seq = 0;
};
std::optional<JournalLine> parse_journal_line(std::string_view line);

}  // namespace topo
