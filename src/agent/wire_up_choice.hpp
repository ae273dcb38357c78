// --pmi auto on one node: which wire-ups its ranks get, from what each app's program links
// (proc/program_mpi.hpp). Pure; the agent reads the files (AutoWireUp).
#pragma once

#include <string>
#include <vector>

#include "base/result.hpp"
#include "proc/program_mpi.hpp"

namespace lattice::agent {

// One app of the launch as this node sees its program.
struct AppProgram {
  std::string name;      // as the launch names it (its entrypoint)
  bool local = false;    // it has ranks on this node
  bool found = false;    // its program was found here (apps without local ranks may not be)
  proc::ProgramMpi mpi;  // what it links, when found
};

struct WireUpChoice {
  // Per app (by index): what its ranks here get; `unknown` gets both.
  std::vector<proc::MpiWireUp> apps;
  bool pmi = false;   // the PMI-1/PMI-2 server is needed here
  bool pmix = false;  // a libpmix namespace is needed here
  // Some local app needs PMIx (Open MPI): without it the launch cannot run. Its words, else "".
  std::string pmix_required_by;
};

// An MPMD launch that mixes a PMIx program with a PMI one is refused, naming both: their
// ranks could share neither a fence nor a rank numbering that both libraries accept.
Result<WireUpChoice> choose_wire_up(const std::vector<AppProgram>& apps);

// "PMIx", "PMI-1/PMI-2", "PMI-1/PMI-2 and PMIx"
const char* wire_up_name(proc::MpiWireUp need);

}  // namespace lattice::agent
