// Messages from agents for a launch this agent has not been asked to run yet: fan-out is
// concurrent, so children's fence chunks and the head's aborts can overtake the launcher's
// request. They wait here within a byte budget and an age, are handed over when the launch
// arrives, and are judged then like any other (authority.hpp). No loop: callers pass the time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/authority.hpp"
#include "agent/launch.hpp"
#include "agent/tree_fence.hpp"

namespace lattice::agent {

struct EarlyMessage {
  std::optional<wire::FenceMessage> fence;
  std::optional<Failure> abort;
  Sender sender;
};

class EarlyMessages {
 public:
  EarlyMessages(size_t max_bytes, uint64_t max_age_ms)
      : max_bytes_(max_bytes), max_age_ms_(max_age_ms) {}

  // Keeps `message` for `launch_id`; false, keeping nothing, when it would exceed the budget.
  bool hold(const std::string& launch_id, EarlyMessage message, uint64_t now_ms);
  // What waits for `launch_id`, in arrival order; forgotten here.
  std::vector<EarlyMessage> take(const std::string& launch_id);
  // Drops what waited longer than the age: (launch id, how many) per launch, for the log.
  std::vector<std::pair<std::string, size_t>> expire(uint64_t now_ms);
  size_t bytes() const { return bytes_; }  // what is held, as hold() counts it
  bool empty() const { return held_.empty(); }

 private:
  struct Held {
    EarlyMessage message;
    uint64_t arrived_ms;
    size_t bytes;
  };
  std::map<std::string, std::vector<Held>> held_;
  size_t max_bytes_;
  uint64_t max_age_ms_;
  size_t bytes_ = 0;
};

}  // namespace lattice::agent
