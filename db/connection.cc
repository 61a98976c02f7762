#include "db/connection.h"

#include <sqlite3.h>

#include <fmt/format.h>

namespace topo {
namespace {

DbErrorKind kind_of(int rc) {
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
      return DbErrorKind::NotADatabase;
    case SQLITE_CORRUPT:
      return DbErrorKind::Corrupt;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return DbErrorKind::Locked;
    case SQLITE_CANTOPEN:
      return DbErrorKind::CantOpen;
    case SQLITE_FULL:
      return DbErrorKind::Full;
    case SQLITE_IOERR:
      return DbErrorKind::Io;
    default:
      return DbErrorKind::Sqlite;
  }
}

}  // namespace

Connection::Connection(std::string path, std::chrono::milliseconds busy_timeout, Access access)
    : path_(std::move(path)), busy_timeout_(busy_timeout), access_(access) {
  int flags = access == Access::ReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw DbError(kind_of(rc), path_, fmt::format("cannot open the database: {}", why));
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, static_cast<int>(busy_timeout_.count()));
}

Connection::~Connection() { sqlite3_close_v2(db_); }

void Connection::fail(int rc, std::string_view doing) const {
  std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  // errmsg may describe an older call when the failing one did not set it.
  if (db_ && (sqlite3_extended_errcode(db_) & 0xff) != (rc & 0xff)) why = sqlite3_errstr(rc);
  DbErrorKind kind = kind_of(rc);
  if (kind == DbErrorKind::Locked)
    why += fmt::format(" (another connection holds it; busy timeout {} ms)", busy_timeout_.count());
  throw DbError(kind, path_, fmt::format("{}: {}", doing, why));
}

void Connection::exec(std::string_view sql, std::string_view doing) {
  char* message = nullptr;
  int rc = sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);  // the same text sqlite3_errmsg gives
  if (rc != SQLITE_OK) fail(rc, doing);
}

Statement Connection::prepare(std::string_view sql, std::string doing) const {
  return Statement(*this, sql, std::move(doing));
}

int64_t Connection::query_int(std::string_view sql, std::string_view doing) const {
  Statement s(*this, sql, std::string(doing));
  if (!s.step()) throw DbError(DbErrorKind::Sqlite, path_, fmt::format("{}: no result", doing));
  return s.column_int(0);
}

int64_t Connection::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

Statement::Statement(const Connection& connection, std::string_view sql, std::string doing)
    : connection_(&connection), doing_(doing.empty() ? fmt::format("cannot run '{}'", sql) : std::move(doing)) {
  int rc = sqlite3_prepare_v3(connection.handle(), sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                              &stmt_, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    connection.fail(rc, doing_);
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& other) noexcept
    : connection_(other.connection_), stmt_(other.stmt_), doing_(std::move(other.doing_)) {
  other.stmt_ = nullptr;
}

Statement& Statement::bind(int i, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, i, value);
  if (rc != SQLITE_OK) connection_->fail(rc, fmt::format("{} (parameter {})", doing_, i));
  return *this;
}

Statement& Statement::bind(int i, double value) {
  int rc = sqlite3_bind_double(stmt_, i, value);
  if (rc != SQLITE_OK) connection_->fail(rc, fmt::format("{} (parameter {})", doing_, i));
  return *this;
}

Statement& Statement::bind(int i, std::string_view text) {
  // SQLITE_TRANSIENT: SQLite copies, so callers may pass temporaries.
  int rc = sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) connection_->fail(rc, fmt::format("{} (parameter {})", doing_, i));
  return *this;
}

Statement& Statement::bind_blob(int i, std::span<const uint8_t> bytes) {
  // A zero-length BLOB is still a BLOB, not NULL: pass a non-null pointer.
  static const uint8_t none = 0;
  int rc = sqlite3_bind_blob(stmt_, i, bytes.empty() ? &none : bytes.data(), static_cast<int>(bytes.size()),
                             SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) connection_->fail(rc, fmt::format("{} (parameter {})", doing_, i));
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(stmt_);
  connection_->fail(rc, doing_);
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::column_int(int i) const { return sqlite3_column_int64(stmt_, i); }
double Statement::column_double(int i) const { return sqlite3_column_double(stmt_, i); }
bool Statement::column_is_null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }

std::string Statement::column_text(int i) const {
  const unsigned char* text = sqlite3_column_text(stmt_, i);
  if (!text) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(stmt_, i)));
}

std::vector<uint8_t> Statement::column_blob(int i) const {
  const auto* bytes = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_, i));
  if (!bytes) return {};
  return std::vector<uint8_t>(bytes, bytes + sqlite3_column_bytes(stmt_, i));
}

Transaction::Transaction(Connection& connection, std::string_view what) : connection_(connection), what_(what) {
  connection_.exec("BEGIN IMMEDIATE", fmt::format("cannot start writing {}", what_));
}

Transaction::~Transaction() {
  // SQLite may already have rolled back by itself (disk full, I/O error).
  if (open_ && !sqlite3_get_autocommit(connection_.handle()))
    sqlite3_exec(connection_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  connection_.exec("COMMIT", fmt::format("cannot commit {}", what_));
  open_ = false;
}

}  // namespace topo
