#include "agent/peer_table.hpp"

#include "base/strings.hpp"

namespace lattice::agent {
namespace {

// Beyond this many ranges, a walk per lookup costs more than hashing the ids once.
constexpr size_t kWalkedRanges = 16;

std::vector<std::string> member(const std::vector<Peer>& peers, std::string Peer::*field) {
  std::vector<std::string> out;
  out.reserve(peers.size());
  for (const auto& peer : peers) out.push_back(peer.*field);
  return out;
}

std::vector<uint16_t> ports_of(const std::vector<Peer>& peers) {
  std::vector<uint16_t> out;
  out.reserve(peers.size());
  for (const auto& peer : peers) out.push_back(static_cast<uint16_t>(peer.port));
  return out;
}

}  // namespace

PeerTable::PeerTable(const std::vector<Peer>& peers)
    : PeerTable(HostList::of(member(peers, &Peer::node_id)),
                HostList::of(member(peers, &Peer::host)), ports_of(peers)) {}

PeerTable::PeerTable(HostList ids, HostList hosts, std::vector<uint16_t> ports)
    : ids_(std::move(ids)), hosts_(std::move(hosts)), ports_(std::move(ports)) {}

Result<PeerTable> PeerTable::compact(std::string_view node_ids, std::string_view hosts,
                                     std::vector<uint16_t> ports, size_t max_nodes) {
  auto ids = HostList::parse(node_ids, max_nodes);
  if (!ids) return make_error(cat("peerList.nodeIds: ", ids.error().message));
  auto host_list = HostList::parse(hosts, ids->size());
  if (!host_list) return make_error(cat("peerList.hosts: ", host_list.error().message));
  if (host_list->size() != ids->size() || (ports.size() != 1 && ports.size() != ids->size()))
    return make_error(cat("peerList: ", ids->size(), " node ids, ", host_list->size(),
                          " hosts and ", ports.size(), " ports"));
  return PeerTable(std::move(ids.value()), std::move(host_list.value()), std::move(ports));
}

Peer PeerTable::operator[](size_t node) const {
  return Peer{ids_.name(node), hosts_.name(node), ports_[ports_.size() == 1 ? 0 : node]};
}

int PeerTable::find(std::string_view node_id) const {
  if (ids_.ranges() <= kWalkedRanges) {
    auto at = ids_.find(node_id);
    return at ? static_cast<int>(*at) : -1;
  }
  if (index_.empty()) {
    auto names = ids_.names();
    index_.reserve(names.size());
    for (size_t i = 0; i < names.size(); ++i)
      index_.emplace(std::move(names[i]), static_cast<int>(i));  // the first of a name wins
  }
  auto it = index_.find(std::string(node_id));
  return it == index_.end() ? -1 : it->second;
}

}  // namespace lattice::agent
