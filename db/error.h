// Typed errors of the snapshot database.
//
// Libraries never print: anything that goes wrong with the database file is
// thrown as DbError, whose message names the file and what went wrong there
// ("/var/lib/topo/fabric.db: cannot read the schema version: file is not a
// database"), so that the tool can show it to the admin verbatim. The kind
// lets callers react without parsing the message (e.g. retry when Locked).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace topo {

enum class DbErrorKind : uint8_t {
  CantOpen,         // the file or its directory cannot be opened or created
  NotADatabase,     // not an SQLite file at all (or its header is destroyed)
  Corrupt,          // an SQLite file whose pages are damaged or missing (truncated)
  NotOurs,          // an SQLite database of another application
  SchemaTooNew,     // written by a newer build that knows migrations this one does not
  SchemaTooOld,     // opened read-only below this build's schema (or empty): a writer must migrate it first
  Locked,           // another connection kept the write lock beyond the busy timeout
  Full,             // the disk is full
  Io,               // the operating system failed a read or write (EIO, file size limit, ...)
  UnknownSnapshot,  // no snapshot with that id, or a reference that names none
  Inconsistent,     // a stored snapshot that does not rebuild into the same fabric
  Sqlite,           // any other SQLite failure
};

std::string_view name(DbErrorKind k);

class DbError : public std::runtime_error {
 public:
  // The message reads "<path>: <what>".
  DbError(DbErrorKind kind, std::string path, std::string what);

  DbErrorKind kind() const { return kind_; }
  const std::string& path() const { return path_; }
  // The message without the path, for readers who must not learn it (the page).
  const std::string& detail() const { return detail_; }

 private:
  DbErrorKind kind_;
  std::string path_;
  std::string detail_;
};

}  // namespace topo
