// Placing files of neighbour tables alone: which system wrote each one.
//
// `lldpcli show neighbors details` lists, per local port, the system and the
// port at the far end, but never the local system's own name. That name is
// in the other files: when this file says its port q reaches Y's port p, Y's
// own table says its port p reaches X's port q, and X is this file's system.
// Every row of every file is such a port pair, with the system names (or
// chassis ids, when a system advertises no name) and port names (or port
// MACs) on both sides.
//
// A file is placed as X when the files already placed say so and nothing
// they say contradicts it: no placed file of a system this file sees lists
// that port reaching someone other than X, and no placed file of X lists one
// of this file's ports reaching someone else. Files with a chassis (`show
// chassis`, `show interfaces`) start placed. When no file can be placed from
// placed ones alone, the unplaced ones are narrowed together: each keeps the
// systems some other still-possible file supports, until nothing changes;
// a file left with one system that no other unplaced file also claims is
// placed, and the placing from placed files starts again. This is a fixed
// point: a file is placed only on evidence, never by elimination, so a file
// whose neighbours' tables are all missing stays unplaced and is reported.
#pragma once

#include <vector>

#include "discovery/lldp.h"

namespace topo {

// Names every view that has no name (and its sightings' local system) from
// the other views. Views that cannot be named are removed and each comes back
// as an UnplacedFile finding naming its file and the reason.
std::vector<LldpFinding> place_views(std::vector<LldpSystemView>& views);

}  // namespace topo
