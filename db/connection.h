// One SQLite connection, its prepared statements and its transactions.
//
// A thin RAII layer over the sqlite3 C API that turns every failure into a
// DbError naming the database path, what was being done and SQLite's own
// words. Statements are prepared once and reused with reset(), which is what
// makes bulk inserts fast. A Transaction rolls back unless committed, so an
// exception anywhere between begin and commit leaves the database as it was.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace topo {

class Statement;

// ReadWrite opens (creating when missing) and may migrate; ReadOnly opens
// an existing file with SQLITE_OPEN_READONLY: it never creates one, never
// changes the schema, and every write fails (the page, `topoctl serve`).
enum class Access { ReadWrite, ReadOnly };

class Connection {
 public:
  // Opens the database at `path` as `access` says. Waits up to
  // `busy_timeout` for a lock held by another connection before giving up
  // with DbError(Locked). A missing file opened ReadOnly is DbError(CantOpen).
  Connection(std::string path, std::chrono::milliseconds busy_timeout, Access access = Access::ReadWrite);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const std::string& path() const { return path_; }
  std::chrono::milliseconds busy_timeout() const { return busy_timeout_; }
  Access access() const { return access_; }

  // Runs one or more statements that return no rows.
  void exec(std::string_view sql, std::string_view doing);
  // `doing` words a failure ("cannot list the snapshots"); by default the SQL.
  Statement prepare(std::string_view sql, std::string doing = {}) const;
  // The single integer a query such as "PRAGMA user_version" returns.
  int64_t query_int(std::string_view sql, std::string_view doing) const;
  int64_t last_insert_rowid() const;

  // Throws the DbError for SQLite result `rc` met while `doing` something.
  [[noreturn]] void fail(int rc, std::string_view doing) const;

  sqlite3* handle() const { return db_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
  std::chrono::milliseconds busy_timeout_;
  Access access_;
};

class Statement {
 public:
  Statement(const Connection& connection, std::string_view sql, std::string doing = {});
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;

  // Parameters are 1-based, as in SQL's ?1, ?2.
  Statement& bind(int i, int64_t value);
  Statement& bind(int i, int value) { return bind(i, static_cast<int64_t>(value)); }
  Statement& bind(int i, double value);
  Statement& bind(int i, std::string_view text);
  Statement& bind(int i, const char* text) { return bind(i, std::string_view(text)); }
  Statement& bind_blob(int i, std::span<const uint8_t> bytes);

  // Advances to the next row: true when there is one, false when done.
  bool step();
  // Runs a statement that returns no rows, then resets it for reuse.
  void run();
  void reset();

  // Columns are 0-based. column_text of NULL is "".
  int64_t column_int(int i) const;
  double column_double(int i) const;
  std::string column_text(int i) const;
  // The bytes of a BLOB (or of text); empty for NULL.
  std::vector<uint8_t> column_blob(int i) const;
  bool column_is_null(int i) const;

 private:
  const Connection* connection_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string doing_;
};

class Transaction {
 public:
  // BEGIN IMMEDIATE: takes the write lock now (waiting up to the busy
  // timeout) rather than on the first write, so that a writer never fails
  // half-way because another writer got in first. `what` names the work for
  // errors: "cannot start writing <what>", "cannot commit <what>".
  Transaction(Connection& connection, std::string_view what);
  ~Transaction();  // rolls back unless committed
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void commit();

 private:
  Connection& connection_;
  std::string what_;
  bool open_ = true;
};

}  // namespace topo
