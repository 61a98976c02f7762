// Handing complete forwarding tables to OpenSM's `file` routing engine
// (`opensm -R file -U FILE`), as docs/routing.md ("Handing the tables to
// OpenSM") says OpenSM reads them: the file is parsed whole at every
// routing pass, and a routing pass runs in a heavy sweep, which SIGHUP or
// the console's `resweep heavy` forces. So the file is replaced at once
// (written beside it, renamed over it: OpenSM never reads half of it), and
// a command of the admin's makes OpenSM sweep.
//
// Whole or not at all: tables that are not deadlock-free and complete are
// never written, and when the sweep command fails the file that was there
// is put back (or the new one removed when there was none), so the next
// heavy sweep, whoever causes it, loads what OpenSM loaded before.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

#include "fabric/fabric.h"

namespace topo {

struct OpensmHandoff {
  std::string file;                          // what OpenSM's -U (lfts_file) names
  std::string sweep_command;                 // run by /bin/sh after the write; "" runs nothing
  std::chrono::milliseconds timeout{60000};  // for the sweep command
};

// Why a handoff failed; the file is as it was before.
struct HandoffError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Writes `routing` (static tables of `fabric`) to `h.file` in OpenSM's
// dump format, then runs the sweep command. Throws HandoffError saying why
// when the tables fail check_up_down, the file cannot be written, or the
// command does not exit 0 (its last line of output quoted).
void hand_to_opensm(const Fabric& fabric, const Routing& routing, const OpensmHandoff& h);

}  // namespace topo
