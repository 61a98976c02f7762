#include "db/error.h"

#include <fmt/format.h>

namespace topo {

std::string_view name(DbErrorKind k) {
  switch (k) {
    case DbErrorKind::CantOpen:
      return "cant_open";
    case DbErrorKind::NotADatabase:
      return "not_a_database";
    case DbErrorKind::Corrupt:
      return "corrupt";
    case DbErrorKind::NotOurs:
      return "not_ours";
    case DbErrorKind::SchemaTooNew:
      return "schema_too_new";
    case DbErrorKind::SchemaTooOld:
      return "schema_too_old";
    case DbErrorKind::Locked:
      return "locked";
    case DbErrorKind::Full:
      return "full";
    case DbErrorKind::Io:
      return "io";
    case DbErrorKind::UnknownSnapshot:
      return "unknown_snapshot";
    case DbErrorKind::Inconsistent:
      return "inconsistent";
    case DbErrorKind::Sqlite:
      return "sqlite";
  }
  return "?";
}

DbError::DbError(DbErrorKind kind, std::string path, std::string what)
    : std::runtime_error(fmt::format("{}: {}", path, what)),
      kind_(kind),
      path_(std::move(path)),
      detail_(std::move(what)) {}

}  // namespace topo
