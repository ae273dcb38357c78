// What a launch's head owes the requests its pure engines hold (the name registry, the
// collectives' tally): each request's answer by id, given on a later loop turn, never from inside
// the request, so the engine that asked is never re-entered; and a timer at the engine's earliest
// deadline; and answers that other objects give (the head's over a link, a parent launch's)
// dropped once the owner is gone. LaunchNames and LaunchConnects each own one.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "net/loop.hpp"
#include "net/timer.hpp"

namespace lattice::agent {

template <typename Value>
class HeadWaiters {
 public:
  using Answer = std::function<void(Value)>;
  explicit HeadWaiters(net::Loop& loop) : loop_(loop), timer_(loop), deadline_(loop) {}

  // Request `id` waits for the engine's answer.
  void wait(uint64_t id, Answer answer) { waiting_.emplace(id, std::move(answer)); }
  // `value` to `answer`, on a later turn.
  void later(Answer answer, Value value) {
    ready_.emplace_back(std::move(answer), std::move(value));
    if (timer_.active()) return;
    timer_.start(0, 0, [this] {
      auto ready = std::move(ready_);
      ready_.clear();
      for (auto& [done, result] : ready) done(std::move(result));
    });
  }
  // The engine's answers (each with `id` and `result`) to their waiters, on a later turn.
  template <typename EngineAnswer>
  void deliver(std::vector<EngineAnswer> answers) {
    for (auto& answer : answers) {
      auto it = waiting_.find(answer.id);
      if (it == waiting_.end()) continue;
      later(std::move(it->second), std::move(answer.result));
      waiting_.erase(it);
    }
  }
  // The same at once: the owner is going away, and later turns would not reach it.
  template <typename EngineAnswer>
  void deliver_now(std::vector<EngineAnswer> answers) {
    for (auto& answer : answers)
      if (auto it = waiting_.find(answer.id); it != waiting_.end()) it->second(answer.result);
  }
  // `answer`, unless the owner is gone by the time it comes.
  Answer guarded(Answer answer) const {
    return [alive = std::weak_ptr<int>(alive_), answer = std::move(answer)](Value value) {
      if (!alive.expired()) answer(std::move(value));
    };
  }
  // `expire` at the engine's earliest deadline `next` (none: no timer).
  void arm(std::optional<uint64_t> next, std::function<void()> expire) {
    if (!next) return deadline_.stop();
    uint64_t now = loop_.now_ms();
    deadline_.start(*next > now ? *next - now : 0, 0, std::move(expire));
  }

 private:
  net::Loop& loop_;
  std::map<uint64_t, Answer> waiting_;
  std::vector<std::pair<Answer, Value>> ready_;
  net::Timer timer_;
  net::Timer deadline_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace lattice::agent
