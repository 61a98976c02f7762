// Typed errors of the topology readers and the fabric model.
//
// Libraries never print: a reader that meets bad input throws ParseError,
// which names the file, the line and what was expected there, so that the
// tool can show it to the admin verbatim.
#pragma once

#include <stdexcept>
#include <string>

namespace topo {

class ParseError : public std::runtime_error {
 public:
  // `line` is 1-based; 0 when the error is not tied to one line.
  ParseError(std::string file, int line, std::string what);

  const std::string& file() const { return file_; }
  int line() const { return line_; }

 private:
  std::string file_;
  int line_;
};

// A fabric that cannot be built: a link to an unknown node, a port used
// twice with different peers, a synthetic spec out of range.
class FabricError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace topo
