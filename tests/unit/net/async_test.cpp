// Async: a send from another thread runs the callback on the loop's thread; sends coalesce but
// are never lost; a destroyed Async's late send does nothing.
#include "net/async.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "net/loop.hpp"
#include "net_test_support.hpp"

namespace lattice::net {

TEST_CASE("sends from another thread reach the loop's thread") {
  Loop loop;
  std::atomic<int> sent{0};
  int seen = 0;  // read only on the loop's thread
  std::thread::id ran_on;
  Async async(loop, [&] {
    seen = sent.load();
    ran_on = std::this_thread::get_id();
  });
  std::thread sender([&] {
    for (int i = 0; i < 1000; ++i) {
      sent.fetch_add(1);
      async.send();
    }
  });
  sender.join();
  CHECK(test::run_until(loop, [&] { return seen == 1000; }));
  CHECK((ran_on == std::this_thread::get_id()));
}

TEST_CASE("an Async does not keep the loop alive, and closes with its owner") {
  Loop loop;
  int before = test::live_handles(loop);
  {
    Async async(loop, [] {});
    CHECK(test::live_handles(loop) == before + 1);
  }
  CHECK(test::live_handles(loop) == before);  // closing at once, freed by the loop later
}

}  // namespace lattice::net
