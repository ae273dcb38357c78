// The event loop of the simulator (see event_queue.hpp).
#include "event_queue.hpp"

#include <algorithm>
#include <utility>

namespace lattice::sim {

void EventQueue::at(double at, Action action) {
  queue_.push(Event{std::max(at, now_), seq_++, std::move(action)});
}

void EventQueue::run() {
  while (!queue_.empty()) {
    // top() is const: move the action out through a cast before pop() destroys it.
    Event& top = const_cast<Event&>(queue_.top());
    now_ = top.time;
    Action action = std::move(top.action);
    queue_.pop();
    ++ran_;
    action();
  }
}

}  // namespace lattice::sim
