#include "agent/early_messages.hpp"

namespace lattice::agent {
namespace {

// What one entry or string costs beyond its bytes (containers, string headers).
constexpr size_t kOverheadBytes = 64;

size_t bytes_of(const std::string& launch_id, const EarlyMessage& m) {
  size_t bytes = sizeof(EarlyMessage) + launch_id.size() + kOverheadBytes;
  if (m.fence) {
    bytes += m.fence->launch_id.size() + m.fence->error.size();
    bytes += m.fence->chunk.entries->size() + kOverheadBytes;  // one packed string
  }
  if (m.abort) bytes += m.abort->detail.size() + m.abort->node.size() + m.abort->peer.size();
  return bytes;
}

}  // namespace

bool EarlyMessages::hold(const std::string& launch_id, EarlyMessage message, uint64_t now_ms) {
  size_t bytes = bytes_of(launch_id, message);
  if (bytes > max_bytes_ - std::min(bytes_, max_bytes_)) return false;
  bytes_ += bytes;
  held_[launch_id].push_back(Held{std::move(message), now_ms, bytes});
  return true;
}

std::vector<EarlyMessage> EarlyMessages::take(const std::string& launch_id) {
  std::vector<EarlyMessage> out;
  auto it = held_.find(launch_id);
  if (it == held_.end()) return out;
  for (auto& h : it->second) {
    bytes_ -= h.bytes;
    out.push_back(std::move(h.message));
  }
  held_.erase(it);
  return out;
}

std::vector<std::pair<std::string, size_t>> EarlyMessages::expire(uint64_t now_ms) {
  std::vector<std::pair<std::string, size_t>> dropped;
  for (auto it = held_.begin(); it != held_.end();) {
    if (now_ms - it->second.front().arrived_ms < max_age_ms_) {
      ++it;
      continue;
    }
    for (const auto& h : it->second) bytes_ -= h.bytes;
    dropped.emplace_back(it->first, it->second.size());
    it = held_.erase(it);
  }
  return dropped;
}

}  // namespace lattice::agent
