#include "agent/connect_tally.hpp"

#include <algorithm>

#include "base/strings.hpp"

namespace lattice::agent {

std::vector<ConnectTally::Answer> ConnectTally::arrive(Id id, wire::CollectiveKind kind,
                                                       std::vector<wire::CollectiveProc> procs,
                                                       const std::set<int>& nodes, int node,
                                                       std::string data, uint64_t deadline_ms,
                                                       const std::string& group) {
  std::vector<Answer> out;
  if (!nodes.count(node)) {
    out.push_back({id, make_error(cat(wire::kind_name(kind), ": node ", node,
                                      " hosts none of its participants"))});
    return out;
  }
  std::sort(procs.begin(), procs.end());
  procs.erase(std::unique(procs.begin(), procs.end()), procs.end());
  Key key{kind, std::move(procs), group};
  auto it = open_.find(key);
  if (it == open_.end()) {
    if (open_.size() >= kMaxOpenCollectives) {
      out.push_back({id, make_error(cat("this launch has ", kMaxOpenCollectives,
                                        " PMIx collectives open already"))});
      return out;
    }
    it = open_.emplace(std::move(key), Open{nodes, {}, deadline_ms}).first;
  } else if (it->second.nodes != nodes) {
    // Same procs, so the same nodes: only a launch whose layout changed could see this.
    out.push_back({id, make_error(cat(wire::kind_name(kind), ": participants' nodes differ"))});
    return out;
  }
  if (it->second.in.count(node)) {
    out.push_back(
        {id, make_error(cat(wire::kind_name(kind), ": node ", node, " entered it twice"))});
    return out;
  }
  if (bytes_ + data.size() > kMaxCollectiveBytes) {
    out = fail(it, cat("this launch's open PMIx collectives hold ", bytes_, " bytes already"));
    out.push_back({id, make_error(cat("this launch's open PMIx collectives hold ", bytes_,
                                      " bytes already"))});
    return out;
  }
  bytes_ += data.size();
  it->second.in.emplace(node, std::make_pair(id, std::move(data)));
  if (it->second.in.size() < it->second.nodes.size()) return out;
  wire::CollectiveAnswer joined;
  for (const auto& [n, entry] : it->second.in) joined.data += entry.second;
  if (kind == wire::CollectiveKind::group_construct) joined.context_id = next_context_id_++;
  for (const auto& [n, entry] : it->second.in) {
    bytes_ -= entry.second.size();
    out.push_back({entry.first, joined});
  }
  open_.erase(it);
  return out;
}

std::vector<ConnectTally::Answer> ConnectTally::fail(std::map<Key, Open>::iterator it,
                                                     const std::string& why) {
  std::vector<Answer> out;
  for (const auto& [n, entry] : it->second.in) {
    bytes_ -= entry.second.size();
    out.push_back({entry.first, make_error(why)});
  }
  open_.erase(it);
  return out;
}

std::vector<ConnectTally::Answer> ConnectTally::expire(
    uint64_t now_ms, const std::function<std::string(int)>& node_name) {
  std::vector<Answer> out;
  for (auto it = open_.begin(); it != open_.end();) {
    auto next = std::next(it);
    if (it->second.deadline_ms <= now_ms) {
      std::string missing;
      for (int n : it->second.nodes)
        if (!it->second.in.count(n)) missing += cat(missing.empty() ? "" : ", ", node_name(n));
      auto failed = fail(
          it, cat(wire::kind_name(it->first.kind), " timed out waiting for node(s) ", missing));
      out.insert(out.end(), failed.begin(), failed.end());
    }
    it = next;
  }
  return out;
}

std::optional<uint64_t> ConnectTally::next_deadline() const {
  std::optional<uint64_t> out;
  for (const auto& [key, o] : open_)
    if (!out || o.deadline_ms < *out) out = o.deadline_ms;
  return out;
}

std::vector<ConnectTally::Answer> ConnectTally::node_lost(int node, const std::string& why) {
  std::vector<Answer> out;
  for (auto it = open_.begin(); it != open_.end();) {
    auto next = std::next(it);
    if (it->second.nodes.count(node)) {
      auto failed = fail(it, why);
      out.insert(out.end(), failed.begin(), failed.end());
    }
    it = next;
  }
  return out;
}

std::vector<ConnectTally::Answer> ConnectTally::drop_all(const std::string& why) {
  std::vector<Answer> out;
  while (!open_.empty()) {
    auto failed = fail(open_.begin(), why);
    out.insert(out.end(), failed.begin(), failed.end());
  }
  return out;
}

}  // namespace lattice::agent
