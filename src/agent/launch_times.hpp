// The launch's timing constants, shared by the files that implement Launch.
#pragma once

#include <cstdint>

#include "policy/launch_policy.hpp"

namespace lattice::agent {

// The policy's timers (policy::PolicyTimes): SIGTERM -> SIGKILL on agent shutdown (failures
// kill at once); last exit -> stop waiting for pipes a daemonised grandchild holds; a rank that
// dropped PMI without finalize -> fail with that reason unless its exit status comes first.
constexpr policy::PolicyTimes kPolicyTimes{2000, 3000, 2000};
// What the launch's ranks left behind (StraySweep) gets from SIGTERM to SIGKILL, as ranks do
// when the agent stops.
constexpr uint64_t kStrayGraceMs = kPolicyTimes.grace_ms;
// Period of the watchdog that checks fence deadlines and lost-PMI ranks.
constexpr uint64_t kWatchPeriodMs = 200;
// Links to the fence neighbours are held from the first rank's wire-up, or after this.
constexpr uint64_t kNeighbourLinksAfterMs = 1000;
// A PMIx rank's abnormal end that ends the launch: once every node's libpmix has the event, the
// survivors get this long to react (log, checkpoint) before they are killed.
constexpr uint64_t kEndNoticeMs = 1000;

}  // namespace lattice::agent
