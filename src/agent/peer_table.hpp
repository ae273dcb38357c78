// The nodes of a launch (node id, host, port of each), kept as the request's host lists. Every
// agent is told all M nodes and talks to a few, so a node is built when it is asked for and
// found by walking the lists' ranges: an agent's share of a launch no longer grows with M.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/hostlist.hpp"
#include "base/result.hpp"

namespace lattice::agent {

struct Peer {
  std::string node_id;
  std::string host;
  int port = 0;
};

class PeerTable {
 public:
  PeerTable() = default;
  explicit PeerTable(const std::vector<Peer>& peers);
  // From host lists of node ids and hosts, and one port for all or one per node.
  static Result<PeerTable> compact(std::string_view node_ids, std::string_view hosts,
                                   std::vector<uint16_t> ports, size_t max_nodes);

  size_t size() const { return ids_.size(); }
  bool empty() const { return size() == 0; }
  Peer operator[](size_t node) const;
  // Index of the node `node_id`; -1 when it is not one of them.
  int find(std::string_view node_id) const;
  // A node id listed twice, if any (a launch refuses it: ids are how links find their node).
  std::optional<std::string> duplicate() const { return ids_.duplicate(); }
  std::string joined() const { return ids_.joined(','); }  // node ids, comma-separated
  // fn(node, node_id) for every node in order.
  template <class Fn>
  void for_each_id(Fn fn) const {
    ids_.for_each(fn);
  }

 private:
  PeerTable(HostList ids, HostList hosts, std::vector<uint16_t> ports);

  HostList ids_, hosts_;
  std::vector<uint16_t> ports_;  // one for every node, or one per node
  // Ids of lists with many ranges (names that are not numbered) are hashed on first use: a
  // fence root hears from every node each fence, and a walk per message would cost O(M^2).
  mutable std::unordered_map<std::string, int> index_;
};

}  // namespace lattice::agent
