// The simulator's core (bench/sim): event order, the cost of one message, hand-computed fence
// and launch times on trees of two and three nodes, the hollow method against the full one,
// and which of star and tree wins when one cost dominates. Deterministic: no wall clock.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "event_queue.hpp"
#include "fence_sim.hpp"
#include "launch_sim.hpp"
#include "model.hpp"
#include "params.hpp"

using namespace lattice::sim;

namespace {

// Every cost zero; bandwidth 10 B/µs so wire times are easy to add up.
Model zero_model() {
  Model m;
  for (const auto& p : model_params()) m.*p.field = 0;
  m.bandwidth_bytes_per_us = 10;
  return m;
}

}  // namespace

TEST_CASE("sim: events run in time order, ties in the order scheduled, late ones now") {
  EventQueue q;
  std::vector<std::string> ran;
  q.at(5, [&] { ran.push_back("b@5"); });
  q.at(1, [&] {
    ran.push_back("a@1");
    q.at(0, [&] { ran.push_back("late@" + std::to_string(static_cast<int>(q.now()))); });
  });
  q.at(5, [&] { ran.push_back("c@5"); });
  q.run();
  CHECK(ran == std::vector<std::string>{"a@1", "late@1", "b@5", "c@5"});
  CHECK(q.events_run() == 4);
}

TEST_CASE("sim: one message costs send CPU, wire, latency, receive CPU; the NIC serializes") {
  Model m = zero_model();
  m.latency_us = 10;
  m.send_msg_us = 3;
  m.recv_msg_us = 4;
  m.seal_byte_us = 0.5;
  m.frame_overhead_bytes = 10;
  EventQueue q;
  Cluster c(q, m, 3);
  std::vector<double> got(3, -1);
  c.on_cpu(0, 0, [&](Cpu& cpu) {
    // 3 + 0.5 * 40 = 23 of CPU; 50 B on the wire = 5 µs; +10 latency; +4 at the receiver.
    c.send(cpu, 1, 40, [&](Cpu& r) { got[1] = r.now; });
    // CPU until 46, then the NIC (free from 28) takes 5 more: 51 + 10 + 4.
    c.send(cpu, 2, 40, [&](Cpu& r) { got[2] = r.now; });
  });
  q.run();
  CHECK(got[1] == doctest::Approx(23 + 5 + 10 + 4));
  CHECK(got[2] == doctest::Approx(46 + 5 + 10 + 4));
  CHECK(c.messages() == 2);
  CHECK(c.busy_us(0) == doctest::Approx(46));
}

TEST_CASE("sim: a 3-node fence (root and two leaves) takes the hand-computed time") {
  Model m = zero_model();
  m.latency_us = 10;
  m.send_msg_us = 3;
  m.recv_msg_us = 4;
  m.key_recv_us = 2;
  m.rank_in_us = 1;
  m.rank_out_us = 1;
  FenceSetup s;
  s.nodes = 3;
  s.fanout = 2;
  s.value_bytes = 6;  // key "f1-N" + 6 bytes = 10 B per key: 1 µs on the wire
  for (FenceMethod method : {FenceMethod::full, FenceMethod::hollow}) {
    s.method = method;
    const FenceResult r = simulate_fence(m, s);
    // Leaves: rank in 1, send 3 -> 4, wire 1 -> 5, latency -> 15 (leaf 2's waits on the
    // root's NIC until 16). Root: 15 + 4 + 2 = 21, then 21 + 6 = 27: merged (3 keys, 30 B).
    // Sends at 30 and 33, wire 3 each (33, 36), arrive 43 and 46; each leaf 4 + 3 * 2 + 1.
    CHECK(r.root_in_us == doctest::Approx(27));
    CHECK(r.time_us == doctest::Approx(46 + 4 + 6 + 1));
    CHECK(r.last_node == 2);
    CHECK(r.store_keys == 3);
    CHECK(r.down_chunks == 1);
    CHECK(r.messages == 4);
  }
}

TEST_CASE("sim: the hollow method gives the full method's times, chunked and pipelined") {
  Model m;  // the defaults: every cost in play
  for (int nodes : {7, 64}) {
    for (int fanout : {2, 3, 8, nodes - 1}) {
      FenceSetup s;
      s.nodes = nodes;
      s.fanout = fanout;
      s.ranks_per_node = 3;
      s.chunk_bytes = 512;  // several chunks up and down
      s.method = FenceMethod::full;
      const FenceResult full = simulate_fence(m, s);
      s.method = FenceMethod::hollow;
      const FenceResult hollow = simulate_fence(m, s);
      CAPTURE(nodes);
      CAPTURE(fanout);
      CHECK(full.down_chunks > 1);
      CHECK(hollow.time_us == full.time_us);
      CHECK(hollow.root_in_us == full.root_in_us);
      CHECK(hollow.messages == full.messages);
      CHECK(hollow.store_keys == static_cast<size_t>(nodes * 3));
    }
  }
}

TEST_CASE("sim: per-message cost favours the tree, latency favours the star") {
  FenceSetup s;
  s.nodes = 64;
  Model m = zero_model();
  m.send_msg_us = 100;
  s.fanout = 2;
  const double tree = simulate_fence(m, s).time_us;
  s.fanout = 63;
  const double star = simulate_fence(m, s).time_us;
  CHECK(tree < star);

  m = zero_model();
  m.latency_us = 1000;
  m.bandwidth_bytes_per_us = 1e9;
  s.fanout = 2;
  const double deep = simulate_fence(m, s).time_us;
  s.fanout = 63;
  const double flat = simulate_fence(m, s).time_us;
  CHECK(flat == doctest::Approx(2000).epsilon(0.001));  // up one hop, down one hop
  CHECK(flat < deep);
}

TEST_CASE("sim: launch over a chain and over one fresh link takes the hand-computed time") {
  Model m = zero_model();
  m.latency_us = 10;
  m.send_msg_us = 3;
  m.recv_msg_us = 4;
  m.spawn_us = 100;
  LaunchSetup s;
  s.request_bytes = 0;
  s.encode_us = 7;
  s.decode_us = 5;

  // launcher -> agent 1 (the head) -> agent 2, relayed, warm: 7 + 3 + 10, +4 +5, then agent 1
  // copies the request for its child +7 +3 +10 (and spawns: 139), +4 +5 and agent 2 spawns:
  // 58 + 100.
  s.agents = 2;
  s.fanout = 1;
  s.warm_links = true;
  LaunchResult r = simulate_launch(m, s);
  CHECK(r.time_us == doctest::Approx(158));
  CHECK(r.last_agent == 2);
  CHECK(r.depth == 2);

  // One agent, fresh link: connect 10 + round trip 20; hello (10 + 3) arrives 53; the agent's
  // reply (4 + 15 + 3) arrives 85; the launcher's last message (4 + 10 + 3) arrives 112 and the
  // request (7 + 3) 122; the agent ends the handshake (112 + 4 + 15 = 131), decodes the
  // request (+ 4 + 5) and spawns (+ 100).
  m.connect_us = 10;
  m.handshake_initiator_us = 20;
  m.handshake_responder_us = 30;
  s.agents = 1;
  s.fanout = 0;
  s.warm_links = false;
  r = simulate_launch(m, s);
  CHECK(r.time_us == doctest::Approx(240));
  CHECK(r.launcher_cpu_us == doctest::Approx(10 + 10 + 3 + 4 + 10 + 3 + 7 + 3));
}

TEST_CASE("sim: a launcher that pays per agent loses to a tree as the agents grow") {
  Model m = zero_model();
  m.latency_us = 15;
  m.send_msg_us = 50;
  m.recv_msg_us = 5;
  m.spawn_us = 1000;
  LaunchSetup s;
  s.agents = 512;
  s.request_bytes = 1000;
  s.warm_links = true;
  s.fanout = 0;
  const double star = simulate_launch(m, s).time_us;
  s.fanout = 8;
  const LaunchResult relayed = simulate_launch(m, s);
  CHECK(relayed.time_us < star);
  CHECK(star >= 512 * 50);  // the launcher's CPU alone
  // Relayed, the launcher sends one request: the head's.
  CHECK(relayed.launcher_cpu_us == doctest::Approx(s.encode_us + m.send_msg_us));
  CHECK(relayed.depth == 4);  // launcher -> head -> 3 levels of fanout 8 below it (512 agents)
}
