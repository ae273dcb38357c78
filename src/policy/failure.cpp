#include "policy/failure.hpp"

#include <cstdio>

#include "base/strings.hpp"
#include "proc/exit_status.hpp"

namespace lattice::policy {
namespace {

// As srun shows limits: [D-]HH:MM:SS.
std::string format_limit(uint64_t ms) {
  uint64_t s = ms / 1000;
  char text[48];
  if (s >= 86400)
    std::snprintf(
        text, sizeof text, "%llu-%02llu:%02llu:%02llu", static_cast<unsigned long long>(s / 86400),
        static_cast<unsigned long long>(s / 3600 % 24),
        static_cast<unsigned long long>(s / 60 % 60), static_cast<unsigned long long>(s % 60));
  else
    std::snprintf(
        text, sizeof text, "%02llu:%02llu:%02llu", static_cast<unsigned long long>(s / 3600),
        static_cast<unsigned long long>(s / 60 % 60), static_cast<unsigned long long>(s % 60));
  return text;
}

}  // namespace

std::string describe(const Failure& f) {
  std::string rank = cat("rank ", f.rank, " on ", f.node);
  std::string more = f.detail.empty() ? "" : cat(": ", f.detail);
  switch (f.kind) {
    case FailureKind::other:
      return f.detail;
    case FailureKind::exited:
      return cat(rank, ' ',
                 proc::describe(f.signal ? proc::ExitStatus{0, f.signal}
                                         : proc::ExitStatus{f.exit_code, 0}));
    case FailureKind::no_finalize:
      return cat(rank, " exited without calling PMI finalize");
    case FailureKind::abort_called:
      return cat(rank, " called abort",
                 f.exit_code_given ? cat(" with exit code ", f.exit_code) : "", more);
    case FailureKind::pmi_error:
      return cat(rank, ": PMI protocol error", more);
    case FailureKind::pmi_lost:
      return cat(rank, more);
    case FailureKind::spawn_failed:
      return cat("cannot spawn ", rank, more);
    case FailureKind::fence_timeout:
      return cat("fence ", f.fence_epoch, " timed out after ", f.timeout_ms / 1000.0, " s");
    case FailureKind::node_lost:
      if (f.peer_ended)  // the detail only says the link closed cleanly
        return cat("node ", f.peer, " closed its link",
                   f.node.empty() ? "" : cat(" with ", f.node));
      return cat("node ", f.peer, " lost (", f.detail, ")");
    case FailureKind::launcher_lost:
      return cat("the launcher's connection was lost (", f.detail, ")");
    case FailureKind::agent_stopping:
      return cat("agent on ", f.node, " is shutting down (signal ", f.signal, ")");
    case FailureKind::agent_killed:
      return "agent killed";
    case FailureKind::time_limit:
      return cat("time limit reached (", format_limit(f.timeout_ms), ")");
    case FailureKind::interrupted:
      return cat("interrupted by signal ", f.signal, " before the ranks on ", f.node, " started");
    case FailureKind::allocation_ended:
      return f.detail;
    case FailureKind::out_of_memory:
      return cat(rank, " was killed by the out-of-memory killer",
                 f.memory_limit ? cat(": the launch's memory limit ", size_text(f.memory_limit),
                                      " on that node")
                                : "");
  }
  return f.detail;
}

const char* kind_name(FailureKind kind) {
  switch (kind) {
    case FailureKind::other:
      return "other";
    case FailureKind::exited:
      return "exited";
    case FailureKind::no_finalize:
      return "no_finalize";
    case FailureKind::abort_called:
      return "abort_called";
    case FailureKind::pmi_error:
      return "pmi_error";
    case FailureKind::pmi_lost:
      return "pmi_lost";
    case FailureKind::spawn_failed:
      return "spawn_failed";
    case FailureKind::fence_timeout:
      return "fence_timeout";
    case FailureKind::node_lost:
      return "node_lost";
    case FailureKind::launcher_lost:
      return "launcher_lost";
    case FailureKind::agent_stopping:
      return "agent_stopping";
    case FailureKind::agent_killed:
      return "agent_killed";
    case FailureKind::time_limit:
      return "time_limit";
    case FailureKind::interrupted:
      return "interrupted";
    case FailureKind::allocation_ended:
      return "allocation_ended";
    case FailureKind::out_of_memory:
      return "out_of_memory";
  }
  return "other";
}

std::vector<std::string> kind_names() {
  std::vector<std::string> names;
  for (int k = 0; k <= static_cast<int>(FailureKind::out_of_memory); ++k)
    names.emplace_back(kind_name(static_cast<FailureKind>(k)));
  return names;
}

}  // namespace lattice::policy
