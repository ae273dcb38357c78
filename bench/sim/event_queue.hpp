// The simulator's clock: events in time order, ties broken by insertion order so that a run is
// deterministic (the same inputs give the same times, bit for bit). Times are microseconds.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace lattice::sim {

class EventQueue {
 public:
  using Action = std::function<void()>;

  // Runs `action` at time `at` (never before now(): a late event runs at now()).
  void at(double at, Action action);
  // Runs every event, in order, until none is left; events may schedule more.
  void run();
  double now() const { return now_; }
  uint64_t events_run() const { return ran_; }

 private:
  struct Event {
    double time;
    uint64_t seq;
    Action action;
  };
  struct Later {  // the priority queue's order: earliest time first, then first scheduled
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };

  std::priority_queue<Event, std::vector<Event>, Later> queue_;
  double now_ = 0;
  uint64_t seq_ = 0;
  uint64_t ran_ = 0;
};

}  // namespace lattice::sim
