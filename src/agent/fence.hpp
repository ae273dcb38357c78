// The seam between a launch's PMI server and whatever completes its fences. On one node the
// local fence completes at once; the multi-node issue plugs the agent tree in here. Completion
// is always delivered asynchronously (never from inside enter()), so the PMI engine is never
// re-entered from one of its own hooks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "pmi/server.hpp"

namespace lattice::agent {

class Fence {
 public:
  virtual ~Fence() = default;
  // All local ranks entered `epoch`; `puts` are theirs since the previous fence.
  virtual void enter(uint64_t epoch, pmi::KvList puts) = 0;
};

struct FenceCallbacks {
  std::function<void(uint64_t epoch, const pmi::KvList& merged)> complete;
  std::function<void(uint64_t epoch, const std::string& message)> failed;
};

}  // namespace lattice::agent
