// The names a launch's ranks published (MPI_Publish_name / PMIx_Publish), held by the launch's
// head agent for all its nodes. Pure and bounded: the head takes requests from every node of the
// launch. PMIx lookups may wait for a name to be published: each such waiter is state here,
// answered by the publish that satisfies it or by expire() at its deadline, never left hanging.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "pmi/server.hpp"

namespace lattice::agent {

// Names one launch may hold: far beyond what MPI programs publish, small next to memory.
inline constexpr size_t kMaxPublishedNames = 4096;
// A PMIx value: Open MPI's connect/accept publishes its list of participants (~20 bytes each).
inline constexpr size_t kMaxPmixNameValueBytes = 64 * 1024;
inline constexpr size_t kMaxPublishedBytes = 8 * 1024 * 1024;
// Lookups parked at once per launch (Open MPI parks one per MPI_Comm_accept/connect root).
inline constexpr size_t kMaxNameWaiters = 1024;

// Who may see a published name (PMIx's range, as the PMIx tier maps it), or where a lookup
// looks: the launch (PMIx's session, global, namespace of the launch's one job, ...), the
// publisher's node, its namespace, or the publisher alone.
enum class NameScope : uint8_t { launch = 0, node = 1, nspace = 2, proc = 3 };

struct NameAsk {
  pmi::NameOp op = pmi::NameOp::lookup;
  std::string name;   // PMIx unpublish: "" = every name the asker published
  std::string value;  // publish
  bool pmix = false;  // PMI-1/PMI-2: any rank may unpublish; values are PMI-sized
  std::string nspace;
  int rank = -1;
  int node = -1;  // the asker's node (its link's, at the head)
  NameScope scope = NameScope::launch;
  bool first_read = false;   // publish: gone once a lookup has read it (PMIX_PERSIST_FIRST_READ)
  uint64_t deadline_ms = 0;  // lookup: wait until then for the name; 0 = answer at once
};

class NameRegistry {
 public:
  using Id = uint64_t;
  struct Answer {
    Id id;
    Result<std::string> result;  // the value found, "" for a publish or an unpublish, or why not
  };

  // PMI-1/PMI-2: publish: "" or an error (taken, too many, too long); unpublish: "" or "not
  // published"; lookup: the port, or "not published" at once (as Hydra answers: no waiting).
  Result<std::string> apply(pmi::NameOp op, const std::string& name, const std::string& port);

  // Request `id`: the answers now due, its own (unless it waits) and those of waiters a publish
  // satisfied, in the order they are to be given.
  std::vector<Answer> ask(Id id, const NameAsk& ask, uint64_t now_ms);
  // The waiters whose deadline has come, answered with an error.
  std::vector<Answer> expire(uint64_t now_ms);
  std::optional<uint64_t> next_deadline() const;
  // Every waiter, answered with `why` (the launch ends).
  std::vector<Answer> drop_waiters(const std::string& why);
  size_t waiters() const { return waiters_.size(); }

 private:
  struct Entry {
    std::string value;
    std::string nspace;
    int rank = -1;
    int node = -1;
    NameScope scope = NameScope::launch;
    bool first_read = false;
  };
  struct Waiter {
    Id id;
    NameAsk ask;
  };
  Result<std::string> publish(const NameAsk& ask);
  Result<std::string> unpublish(const NameAsk& ask);
  // The entry's value if `ask` may see it (the entry read once if it is first-read only).
  std::optional<std::string> read(const NameAsk& ask);

  std::map<std::string, Entry> names_;
  size_t bytes_ = 0;
  std::deque<Waiter> waiters_;  // oldest first: a first-read name goes to the earliest
};

}  // namespace lattice::agent
