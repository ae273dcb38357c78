// A launch's PMIx collectives over some procs (PMIx_Connect, PMIx_Disconnect, a fence over part
// of the job) at its head: each node hosting a participant asks once (libpmix calls its host once
// per node, when all of the node's participants have called); when every such node has asked,
// all are answered together with every node's data joined. Pure and bounded; a collective that
// cannot complete (a node lost, its deadline passed, the launch ends) answers every waiter with
// an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "base/result.hpp"
#include "wire/connect_codec.hpp"

namespace lattice::agent {

// Collectives open at once in one launch, and the data they hold (fence blobs) in all.
inline constexpr size_t kMaxOpenCollectives = 256;
inline constexpr size_t kMaxCollectiveBytes = 64 * 1024 * 1024;

class ConnectTally {
 public:
  using Id = uint64_t;
  struct Answer {
    Id id;
    // Every node's data joined (and a group's new context id), or why the collective failed.
    Result<wire::CollectiveAnswer> result;
  };

  // Node `node` (the asking link's) enters the collective of `kind` over `procs`, whose
  // participants live on `nodes`; a collective first entered now ends at `deadline_ms`. The
  // answers now due: none while others are awaited. Collectives of a group (`group`, its name)
  // are its own; a group's construction gets a context id unique in the launch.
  std::vector<Answer> arrive(Id id, wire::CollectiveKind kind,
                             std::vector<wire::CollectiveProc> procs, const std::set<int>& nodes,
                             int node, std::string data, uint64_t deadline_ms,
                             const std::string& group = {});
  // Collectives past their deadline fail, naming the nodes that never entered (`node_name`).
  std::vector<Answer> expire(uint64_t now_ms, const std::function<std::string(int)>& node_name);
  std::optional<uint64_t> next_deadline() const;
  // Every open collective `node` takes part in fails (the node is gone).
  std::vector<Answer> node_lost(int node, const std::string& why);
  std::vector<Answer> drop_all(const std::string& why);
  size_t open() const { return open_.size(); }

 private:
  struct Key {
    wire::CollectiveKind kind;
    std::vector<wire::CollectiveProc> procs;  // sorted, without duplicates
    std::string group;
    bool operator<(const Key& o) const {
      return std::tie(kind, procs, group) < std::tie(o.kind, o.procs, o.group);
    }
  };
  struct Open {
    std::set<int> nodes;                           // expected
    std::map<int, std::pair<Id, std::string>> in;  // arrived: node -> its request and data
    uint64_t deadline_ms = 0;
  };
  std::vector<Answer> fail(std::map<Key, Open>::iterator it, const std::string& why);

  std::map<Key, Open> open_;
  size_t bytes_ = 0;
  uint64_t next_context_id_ = 1;
};

}  // namespace lattice::agent
