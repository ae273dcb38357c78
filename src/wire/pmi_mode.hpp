// How a launch's ranks wire up, as the launcher asks and the request carries it (schema
// PmiMode): PMI-1/PMI-2 on the agent's own server, PMIx, or not at all (an allocation's batch
// step, a command its MPI launcher runs), or as each agent finds the programs need (auto).
#pragma once

namespace lattice::wire {

enum class PmiMode { pmi, pmix, none, automatic };

}  // namespace lattice::wire
