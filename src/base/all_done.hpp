// One callback for several outcomes (every node's answer, every registration): `done` runs once,
// when the last has come, with the first failure among them, or success. Each outcome must be
// reported exactly once; none expected (count 0) is done at once.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "base/result.hpp"

namespace lattice {

inline std::function<void(Status)> all_done(size_t count, std::function<void(Status)> done) {
  if (count == 0) {
    done({});
    return [](Status) {};
  }
  struct State {
    size_t left;
    std::optional<Error> first;
    std::function<void(Status)> done;
  };
  auto state = std::make_shared<State>(State{count, std::nullopt, std::move(done)});
  return [state](const Status& outcome) {
    if (!outcome && !state->first) state->first = outcome.error();
    if (--state->left > 0) return;
    state->done(state->first ? Status(*state->first) : Status{});
  };
}

}  // namespace lattice
