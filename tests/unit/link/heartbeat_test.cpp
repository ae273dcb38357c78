// One heartbeat for every link: a peer that answers is never lost; one that stops answering is
// lost after `misses` periods, with the reason; an answer, or any other message, resets the
// count.
#include "link/heartbeat.hpp"

#include <doctest/doctest.h>

#include "rpc_test_support.hpp"

using namespace lattice;
using rpc::Session;
using rpc::test::Wire;

namespace {

// Two sessions joined by wires; the far one answers heartbeats while `answering`.
struct Pair {
  Wire to_far, to_near;
  bool answering = true;
  Session near{to_far, {}};
  Session far{to_near, Session::Handlers{[this](uint64_t id, schema::Envelope::Reader) {
                                           if (answering) far.respond(id, rpc::Outgoing());
                                         },
                                         {}}};
  Pair() {
    to_far.peer = &far;
    to_near.peer = &near;
  }
  void deliver() {
    while (to_far.flush(1 << 20) || to_near.flush(1 << 20)) {
    }
  }
};

// From `t` on, the far side stays silent: `misses` (3) ticks pass, the next one loses it.
void check_lost_after_silence(Pair& p, link::Heartbeat& beat, uint64_t t) {
  for (int i = 0; i < 3; ++i, t += 1000) {
    p.near.expire(t);
    CHECK(!beat.tick(p.near, t));
    p.deliver();
  }
  p.near.expire(t);
  auto lost = beat.tick(p.near, t);
  REQUIRE(lost);
  CHECK(*lost == "no heartbeat answer for 3 s");
}

}  // namespace

TEST_CASE("a peer that answers is never lost") {
  Pair p;
  link::Heartbeat beat({1000, 3});
  for (uint64_t t = 0; t < 20000; t += 1000) {
    p.near.expire(t);
    CHECK(!beat.tick(p.near, t));
    p.deliver();
  }
}

TEST_CASE("a silent peer is lost after `misses` periods; one answer resets the count") {
  Pair p;
  p.answering = false;
  link::Heartbeat beat({1000, 3});
  check_lost_after_silence(p, beat, 0);

  Pair q;
  link::Heartbeat again({1000, 3});
  q.answering = false;
  CHECK(!again.tick(q.near, 0));
  CHECK(!again.tick(q.near, 1000));
  q.answering = true;
  q.deliver();  // the two beats reach the far side only now, and are answered
  CHECK(!again.tick(q.near, 2000));
  q.deliver();
  CHECK(!again.tick(q.near, 3000));  // three beats sent, but the answers reset the count
  q.deliver();
  CHECK(!again.tick(q.near, 4000));
}

TEST_CASE("a peer that sends other messages while its answers wait is not lost") {
  // A fence root sealing megabytes for its children answers their beats late, but its chunks
  // arrive: they prove its loop runs. Silence then loses it, counted from the last message.
  Pair p;
  p.answering = false;
  link::Heartbeat beat({1000, 3});
  uint64_t t = 0;
  for (; t < 10000; t += 1000) {
    p.near.expire(t);
    CHECK(!beat.tick(p.near, t));
    p.far.notify(rpc::Outgoing());  // some other message from the far side
    p.deliver();
  }
  check_lost_after_silence(p, beat, t);
}
