// Why a launch failed, as the agents and the launcher pass it around: what happened, to which
// rank on which node, as fields; describe() renders it as text only where a person reads it (a
// log line, the launcher's report). The first failure is the launch's reason and, through
// exit_code, the job's exit status.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lattice::policy {

enum class FailureKind {
  other,             // `detail` says it all (the launcher's own reasons, a fence error from above)
  exited,            // the rank exited non-zero (exit_code) or was killed (signal)
  no_finalize,       // the rank exited 0 after PMI init, without finalize
  abort_called,      // the rank called PMI abort (detail: its message)
  pmi_error,         // the rank broke the PMI protocol (detail: how)
  pmi_lost,          // the rank dropped its PMI connection and lived on (detail: how)
  spawn_failed,      // the rank could not be started (detail: why)
  fence_timeout,     // fence `fence_epoch` did not complete within timeout_ms
  node_lost,         // node `peer` was lost (detail: how)
  launcher_lost,     // the launcher's link was lost (detail: how)
  agent_stopping,    // the agent on `node` got `signal`
  agent_killed,      // the agent got a second signal
  time_limit,        // the launch reached its time limit (timeout_ms)
  interrupted,       // the user's `signal` came before the ranks on `node` started
  allocation_ended,  // the allocation it ran in ended (detail: which, and why)
  out_of_memory,     // the out-of-memory killer killed the rank (signal), whose launch's memory
                     // limit on `node` was memory_limit (0: none of its own)
  // Adding a kind: name it in kind_name(), and move kind_names()'s bound if it comes last.
};

struct Failure {
  std::string detail;        // for `other` the whole reason; else what the kind leaves out
  int exit_code = 1;         // the job status it implies
  int rank = -1;             // -1: not one rank's doing (lost node, timeout, refusal)
  uint64_t fence_epoch = 0;  // non-zero: a failure of this fence (report its stragglers)
  std::string node = {};     // node id where it happened ("" = the launcher, or unknown)
  FailureKind kind = FailureKind::other;
  int signal = 0;  // exited: the signal that killed the rank; agent_stopping, interrupted
  bool exit_code_given = false;  // abort_called: the rank named its exit code (PMI-1 does)
  uint64_t timeout_ms = 0;       // fence_timeout, time_limit
  std::string peer = {};         // node_lost: the node id lost
  uint64_t memory_limit = 0;     // out_of_memory
  // node_lost: `peer` ended the link itself, cleanly. It does so only for a reason of its own
  // (a revoked certificate, missed heartbeats, its shutdown), which its own report gives: this
  // failure only echoes that one.
  bool peer_ended = false;
};

// The kind's name as in the enum ("exited", "fence_timeout"): a metrics label.
const char* kind_name(FailureKind kind);
// Every kind's name, in the enum's order.
std::vector<std::string> kind_names();

// "rank 3 on n1 exited with status 7", "fence 2 timed out after 60 s", ...
std::string describe(const Failure& failure);

}  // namespace lattice::policy
