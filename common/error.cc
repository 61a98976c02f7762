#include "common/error.h"

#include <fmt/format.h>

namespace topo {

ParseError::ParseError(std::string file, int line, std::string what)
    : std::runtime_error(line > 0 ? fmt::format("{}:{}: {}", file, line, what) : fmt::format("{}: {}", file, what)),
      file_(std::move(file)),
      line_(line) {}

}  // namespace topo
