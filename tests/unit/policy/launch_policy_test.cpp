// The agent's failure policy, driven without a loop: the relay rules (head decides, nobody
// echoes), the kill and its escalation, the drain and grace timers apart, and every event in
// every state keeping the engine's promises.
#include "policy/launch_policy.hpp"

#include <doctest/doctest.h>

#include <csignal>
#include <functional>
#include <map>
#include <set>

#include "only.hpp"

using namespace lattice::policy;
using lattice::proc::ExitStatus;

namespace {

using Actions = std::vector<Action>;

std::set<int> abort_targets(const Actions& actions) {
  std::set<int> nodes;
  for (const auto& s : only<SendAbort>(actions)) nodes.insert(s.node);
  return nodes;
}

LaunchShape shape(int self, int head, int nodes, std::vector<int> ranks = {0, 1}) {
  return LaunchShape{"n" + std::to_string(self), self, head, nodes, std::move(ranks)};
}

// Both local ranks running, each with two pipes.
LaunchPolicy running(LaunchShape s) {
  LaunchPolicy p(std::move(s));
  for (int r : std::vector<int>{0, 1}) CHECK(p.spawned(r, 2).empty());
  CHECK(p.spawn_finished().empty());
  return p;
}

void close_pipes(LaunchPolicy& p, int rank, Actions* last = nullptr) {
  Actions a = p.pipe_closed(rank);
  Actions b = p.pipe_closed(rank);
  if (last) *last = b;
}

}  // namespace

TEST_CASE("a clean launch ends once every rank exited and every pipe closed") {
  auto p = running(shape(0, 0, 1));
  CHECK(p.exited(0, ExitStatus{0, 0}, false).empty());
  close_pipes(p, 0);
  CHECK(p.exited(1, ExitStatus{0, 0}, false).empty() == false);  // drain timer starts
  Actions last;
  close_pipes(p, 1, &last);
  auto stops = only<StopTimer>(last);
  REQUIRE(stops.size() == 1);
  CHECK(stops[0].timer.kind == TimerKind::drain);
  auto end = only<ReportEnd>(last);
  REQUIRE(end.size() == 1);
  CHECK(!end[0].failure);
  CHECK(p.ended());
}

TEST_CASE("a rank failing on a non-head node: kill, one abort to the head, nothing else") {
  auto p = running(shape(2, 0, 4));
  auto a = p.exited(1, ExitStatus{7, 0}, false);
  REQUIRE(only<FirstFailure>(a).size() == 1);
  CHECK(describe(only<FirstFailure>(a)[0].failure) == "rank 1 on n2 exited with status 7");
  CHECK(only<FirstFailure>(a)[0].failure.exit_code == 7);
  CHECK(only<FirstFailure>(a)[0].failure.node == "n2");
  CHECK(only<SendAbort>(a)[0].failure.rank == 1);  // the head hears the structured failure
  CHECK(abort_targets(a) == std::set<int>{0});
  REQUIRE(only<KillRanks>(a).size() == 1);
  CHECK(only<KillRanks>(a)[0].signum == SIGKILL);
  // The head's answer (its relay skips us, but any abort) makes no echo.
  auto b = p.abort_received(FromNode{0}, Failure{"rank 1 on n2 exited with status 7", 7, 1});
  CHECK(only<SendAbort>(b).empty());
  CHECK(only<KillRanks>(b).empty());  // killed already
}

TEST_CASE("the head relays a node's failure to every node but itself and the reporter") {
  auto p = running(shape(0, 0, 5));
  auto a =
      p.abort_received(FromNode{3}, Failure{"rank 9 on n3 exited with status 1", 1, 9, 0, "n3"});
  CHECK(abort_targets(a) == std::set<int>{1, 2, 4});
  CHECK(only<SendAbort>(a)[0].failure.node == "n3");  // relayed as it was, not as the head's
  // A second report (another node failed too) is not relayed again.
  auto b = p.abort_received(FromNode{2}, Failure{"rank 5 on n2 exited with status 1", 1, 5});
  CHECK(only<SendAbort>(b).empty());
  CHECK(p.failure()->rank == 9);
}

TEST_CASE("the head's own failure goes to every other node once") {
  auto p = running(shape(1, 1, 4));
  auto a = p.pmi_abort(0, 3, "bye");
  CHECK(describe(only<FirstFailure>(a)[0].failure) ==
        "rank 0 on n1 called abort with exit code 3: bye");
  CHECK(only<FirstFailure>(a)[0].failure.exit_code == 3);
  CHECK(abort_targets(a) == std::set<int>{0, 2, 3});
  CHECK(only<SendAbort>(a).size() == 3);
}

TEST_CASE("an abort from the launcher: the head tells all others, a non-head tells nobody") {
  auto head = running(shape(0, 0, 3));
  CHECK(abort_targets(head.abort_received(FromLauncher{}, Failure{"node n2 lost", 1})) ==
        std::set<int>{1, 2});
  auto other = running(shape(1, 0, 3));
  CHECK(only<SendAbort>(other.abort_received(FromLauncher{}, Failure{"x", 1})).empty());
}

TEST_CASE("a fence error from the parent is not reported back up") {
  auto p = running(shape(3, 0, 8));
  auto a = p.fence_failed_above(2, "fence 2 timed out after 1 s");
  CHECK(only<SendAbort>(a).empty());
  REQUIRE(only<SnapshotStragglers>(a).size() == 1);
  CHECK(only<SnapshotStragglers>(a)[0].epoch == 2);
  CHECK(p.failure()->fence_epoch == 2);
}

TEST_CASE("a fence timeout here is reported to the head, with its stragglers kept") {
  auto p = running(shape(3, 0, 8));
  auto a = p.fence_timed_out(1, 60000);
  CHECK(describe(*p.failure()) == "fence 1 timed out after 60 s");
  CHECK(abort_targets(a) == std::set<int>{0});
  CHECK(only<SnapshotStragglers>(a).size() == 1);
}

TEST_CASE("a lost peer: reported to the head, or by the head to all but the lost node") {
  auto other = running(shape(2, 0, 4));
  auto a = other.peer_lost(3, "n3", "heartbeat");
  CHECK(describe(only<FirstFailure>(a)[0].failure) == "node n3 lost (heartbeat)");
  CHECK(abort_targets(a) == std::set<int>{0});
  auto orphan = running(shape(2, 0, 4));
  CHECK(only<SendAbort>(orphan.peer_lost(0, "n0", "closed")).empty());  // the launcher tells
  auto head = running(shape(0, 0, 4));
  CHECK(abort_targets(head.peer_lost(2, "n2", "closed")) == std::set<int>{1, 3});
  auto single = running(shape(0, 0, 1));
  CHECK(single.peer_lost(1, "n1", "x").empty());
  auto ended = running(shape(2, 0, 4));
  auto e = ended.peer_lost(3, "n3", "connection closed (closed by the peer)", true);
  CHECK(only<FirstFailure>(e)[0].failure.peer_ended);
  CHECK(describe(only<FirstFailure>(e)[0].failure) == "node n3 closed its link with n2");
  // The head, lost, is told nothing; any other failure reaches it.
  auto lost_head = running(shape(2, 0, 4)).peer_lost(0, "n0", "x");
  CHECK(!told_head(only<FirstFailure>(lost_head)[0].failure, "n0"));
  CHECK(told_head(only<FirstFailure>(e)[0].failure, "n0"));
}

TEST_CASE("a forwarded signal reaches the running ranks and is not a failure") {
  auto p = running(shape(0, 0, 2));
  auto a = p.signal(SIGUSR1);
  REQUIRE(only<KillRanks>(a).size() == 1);
  CHECK(only<KillRanks>(a)[0].signum == SIGUSR1);
  CHECK(!p.failure());
}

TEST_CASE("after a forwarded SIGINT, a rank's exit gives the others the grace, not SIGKILL") {
  // Both ranks trap SIGINT and exit 9: the first exit must not SIGKILL the second mid-handler.
  auto p = running(shape(0, 0, 1));
  p.signal(SIGINT);
  auto a = p.exited(0, ExitStatus{9, 0}, false);
  CHECK(only<KillRanks>(a).empty());
  REQUIRE(only<StartTimer>(a).size() == 1);
  CHECK(only<StartTimer>(a)[0].timer.kind == TimerKind::grace);
  auto b = p.exited(1, ExitStatus{9, 0}, false);
  CHECK(only<StopTimer>(b)[0].timer.kind == TimerKind::grace);
  // Had it ignored the signal, the grace would end in SIGKILL.
  auto q = running(shape(0, 0, 1));
  q.signal(SIGTERM);
  q.exited(0, ExitStatus{0, SIGTERM}, false);
  CHECK(only<KillRanks>(q.timer_fired(TimerId{TimerKind::grace}))[0].signum == SIGKILL);
  // An abort (the user's second Ctrl-C, a failure elsewhere) still kills at once.
  auto u = running(shape(1, 0, 2));
  u.signal(SIGINT);
  CHECK(only<KillRanks>(u.abort_received(FromNode{0}, Failure{"interrupted", 130}))[0].signum ==
        SIGKILL);
  // A signal that does not ask to stop changes nothing.
  auto r = running(shape(0, 0, 1));
  r.signal(SIGUSR1);
  CHECK(only<KillRanks>(r.exited(0, ExitStatus{1, 0}, false))[0].signum == SIGKILL);
}

TEST_CASE("a SIGINT before the ranks started keeps them from starting: the launch is interrupted") {
  // A head of two nodes whose ranks wait (for their user's lookup, say) when Ctrl-C comes.
  LaunchPolicy p(shape(0, 0, 2));
  auto a = p.signal(SIGINT);
  CHECK(only<KillRanks>(a).empty());  // nothing runs yet
  REQUIRE(only<FirstFailure>(a).size() == 1);
  CHECK(abort_targets(a) == std::set<int>{1});  // the other node ends too
  REQUIRE(p.failure());
  CHECK(p.failure()->kind == FailureKind::interrupted);
  CHECK(p.failure()->exit_code == 128 + SIGINT);
  CHECK(describe(*p.failure()) == "interrupted by signal 2 before the ranks on n0 started");
  // Spawning then starts none, and the launch ends with that reason.
  CHECK(p.not_spawned(0, "").empty());
  p.not_spawned(1, "");
  auto end = only<ReportEnd>(p.spawn_finished());
  REQUIRE(end.size() == 1);
  CHECK(end[0].failure->kind == FailureKind::interrupted);
  // The other node's ranks got the same signal: its abort gives them the grace, no SIGKILL.
  auto other = running(shape(1, 0, 2));
  other.signal(SIGINT);
  auto b = other.abort_received(FromNode{0}, *p.failure());
  CHECK(only<KillRanks>(b).empty());
  REQUIRE(only<StartTimer>(b).size() == 1);
  CHECK(only<StartTimer>(b)[0].timer.kind == TimerKind::grace);
  // A signal that does not ask to stop keeps nothing from starting.
  LaunchPolicy q(shape(0, 0, 1));
  CHECK(q.signal(SIGUSR1).empty());
  CHECK(!q.failure());
}

TEST_CASE("the drain time counts only while output is read") {
  auto p = running(shape(0, 0, 1));
  CHECK(p.output_paused().empty());  // no drain timer yet: nothing to stop
  CHECK(p.exited(0, ExitStatus{0, 0}, false).empty());
  // Every rank exited with pipes open, but the agent is not reading them: no drain timer.
  CHECK(only<StartTimer>(p.exited(1, ExitStatus{0, 0}, false)).empty());
  auto resumed = only<StartTimer>(p.output_resumed());
  REQUIRE(resumed.size() == 1);
  CHECK(resumed[0].timer.kind == TimerKind::drain);
  // Paused again mid-drain: the timer stops, and starts afresh when reading resumes.
  auto stopped = only<StopTimer>(p.output_paused());
  REQUIRE(stopped.size() == 1);
  CHECK(stopped[0].timer.kind == TimerKind::drain);
  CHECK(only<StartTimer>(p.output_resumed()).size() == 1);
  close_pipes(p, 0);
  Actions last;
  close_pipes(p, 1, &last);
  CHECK(only<ReportEnd>(last).size() == 1);
}

TEST_CASE("shutdown: SIGTERM and a grace, then SIGKILL; a second signal kills at once") {
  auto p = running(shape(1, 0, 2));
  auto a = p.shutdown(SIGTERM, false);
  CHECK(only<KillRanks>(a)[0].signum == SIGTERM);
  REQUIRE(only<StartTimer>(a).size() == 1);
  CHECK(only<StartTimer>(a)[0].timer.kind == TimerKind::grace);
  auto b = p.timer_fired(TimerId{TimerKind::grace});
  CHECK(only<KillRanks>(b)[0].signum == SIGKILL);

  auto q = running(shape(1, 0, 2));
  q.shutdown(SIGTERM, false);
  auto c = q.shutdown(SIGTERM, true);
  CHECK(only<KillRanks>(c)[0].signum == SIGKILL);
  CHECK(only<StopTimer>(c).size() == 1);  // the grace is moot
  CHECK(only<SendAbort>(c).empty());      // reported once, with the first failure
}

TEST_CASE("the drain/grace race: shutdown during the drain leaves the drain running") {
  // Both ranks exited, a grandchild holds a pipe: the drain runs. A SIGTERM to the agent now
  // must not replace the drain, or the launch (and the agent's shutdown) never ends.
  auto p = running(shape(0, 0, 1));
  p.exited(0, ExitStatus{0, 0}, false);
  auto a = p.exited(1, ExitStatus{0, 0}, false);
  REQUIRE(only<StartTimer>(a).size() == 1);
  CHECK(only<StartTimer>(a)[0].timer.kind == TimerKind::drain);
  auto b = p.shutdown(SIGTERM, false);
  CHECK(only<KillRanks>(b).empty());   // nothing runs
  CHECK(only<StartTimer>(b).empty());  // no grace to wait for
  CHECK(only<StopTimer>(b).empty());   // and the drain stays
  auto c = p.timer_fired(TimerId{TimerKind::drain});
  CHECK(only<CloseOutputs>(c).size() == 1);
  REQUIRE(only<ReportEnd>(c).size() == 1);
  CHECK(describe(*only<ReportEnd>(c)[0].failure) == "agent on n0 is shutting down (signal 15)");
}

TEST_CASE("the grace ends when the last rank exits; the drain then runs on its own timer") {
  auto p = running(shape(0, 0, 1));
  p.shutdown(SIGTERM, false);
  p.exited(0, ExitStatus{0, SIGTERM}, false);
  auto a = p.exited(1, ExitStatus{0, SIGTERM}, false);
  CHECK(only<StopTimer>(a).size() == 1);
  CHECK(only<StopTimer>(a)[0].timer.kind == TimerKind::grace);
  CHECK(only<StartTimer>(a)[0].timer.kind == TimerKind::drain);
  CHECK(p.timer_fired(TimerId{TimerKind::grace}).empty());  // a stale expiry does nothing
}

TEST_CASE("a lost PMI connection: the exit decides if it comes in time, else the timer") {
  auto p = running(shape(0, 0, 1));
  auto a = p.pmi_lost(0, "PMI connection closed before finalize");
  REQUIRE(only<StartTimer>(a).size() == 1);
  CHECK(only<StartTimer>(a)[0].timer == TimerId{TimerKind::lost_pmi, 0});
  auto b = p.exited(0, ExitStatus{3, 0}, false);
  CHECK(only<StopTimer>(b)[0].timer == TimerId{TimerKind::lost_pmi, 0});
  CHECK(describe(*p.failure()) == "rank 0 on n0 exited with status 3");

  auto q = running(shape(0, 0, 1));
  q.pmi_lost(1, "PMI connection closed before finalize");
  auto c = q.timer_fired(TimerId{TimerKind::lost_pmi, 1});
  CHECK(describe(only<FirstFailure>(c)[0].failure) ==
        "rank 1 on n0: PMI connection closed before finalize");
}

TEST_CASE("exit 0 without finalize after init is a failure; a spawn failure too") {
  auto p = running(shape(0, 0, 1));
  auto a = p.exited(0, ExitStatus{0, 0}, true);
  CHECK(describe(only<FirstFailure>(a)[0].failure) ==
        "rank 0 on n0 exited without calling PMI finalize");

  LaunchPolicy q(shape(1, 0, 2));
  q.spawned(0, 2);
  auto b = q.not_spawned(1, "no such file");
  CHECK(describe(only<FirstFailure>(b)[0].failure) == "cannot spawn rank 1 on n1: no such file");
  CHECK(abort_targets(b) == std::set<int>{0});
  CHECK(only<KillRanks>(b).size() == 1);
}

TEST_CASE("a node with no ranks, or whose ranks were never started, ends at once") {
  LaunchPolicy empty(shape(1, 0, 2, {}));
  CHECK(only<ReportEnd>(empty.spawn_finished()).size() == 1);
  LaunchPolicy aborted(shape(1, 0, 2));
  aborted.abort_received(FromNode{0}, Failure{"x", 1});
  aborted.not_spawned(0, "");
  aborted.not_spawned(1, "");
  auto a = aborted.spawn_finished();
  REQUIRE(only<ReportEnd>(a).size() == 1);
  CHECK(describe(*only<ReportEnd>(a)[0].failure) == "x");
}

TEST_CASE("a time limit: started with the ranks, then SIGTERM, a grace and SIGKILL, exit 124") {
  LaunchShape s = shape(1, 0, 3);
  s.time_limit_ms = 5000;
  LaunchPolicy p(s);
  p.spawned(0, 2);
  p.spawned(1, 2);
  auto a = p.spawn_finished();
  REQUIRE(only<StartTimer>(a).size() == 1);
  CHECK(only<StartTimer>(a)[0].timer.kind == TimerKind::time_limit);
  CHECK(only<StartTimer>(a)[0].ms == 5000);
  auto b = p.timer_fired(TimerId{TimerKind::time_limit});
  CHECK(describe(only<FirstFailure>(b)[0].failure) == "time limit reached (00:00:05)");
  CHECK(only<FirstFailure>(b)[0].failure.exit_code == kTimeLimitExitCode);
  CHECK(only<KillRanks>(b)[0].signum == SIGTERM);
  CHECK(abort_targets(b) == std::set<int>{0});
  CHECK(only<StartTimer>(b)[0].timer.kind == TimerKind::grace);
  // The others hear it from the head and stop the same gentle way.
  auto q = running(shape(2, 0, 3));
  Failure limit = only<FirstFailure>(b)[0].failure;
  CHECK(only<KillRanks>(q.abort_received(FromNode{0}, limit))[0].signum == SIGTERM);
  // Ending before the limit stops its timer.
  LaunchPolicy r(s);
  r.spawned(0, 0);
  r.spawned(1, 0);
  r.spawn_finished();
  r.exited(0, ExitStatus{0, 0}, false);
  auto c = r.exited(1, ExitStatus{0, 0}, false);
  CHECK(only<StopTimer>(c)[0].timer.kind == TimerKind::time_limit);
  CHECK(!only<ReportEnd>(c)[0].failure);
}

TEST_CASE(
    "--signal: the signal that long before the limit, once; at once when the limit is shorter") {
  LaunchShape s = shape(1, 0, 2);
  s.time_limit_ms = 90000;
  s.warn_signal = SIGUSR1;
  s.warn_before_ms = 60000;
  LaunchPolicy p(s);
  p.spawned(0, 0);
  p.spawned(1, 0);
  auto a = p.spawn_finished();
  REQUIRE(only<StartTimer>(a).size() == 2);
  CHECK(only<StartTimer>(a)[1].timer.kind == TimerKind::warn_signal);
  CHECK(only<StartTimer>(a)[1].ms == 30000);
  auto b = p.timer_fired(TimerId{TimerKind::warn_signal});
  REQUIRE(only<KillRanks>(b).size() == 1);
  CHECK(only<KillRanks>(b)[0].signum == SIGUSR1);
  CHECK(only<FirstFailure>(b).empty());  // a warning, not a failure
  CHECK(p.timer_fired(TimerId{TimerKind::warn_signal}).empty());
  // The ranks end: both timers go.
  p.exited(0, ExitStatus{0, 0}, false);
  auto c = p.exited(1, ExitStatus{0, 0}, false);
  CHECK(only<StopTimer>(c).size() == 1);  // the time limit's; the warning's has fired
  CHECK(!only<ReportEnd>(c)[0].failure);
  s.warn_before_ms = 120000;
  LaunchPolicy q(s);
  q.spawned(0, 0);
  q.spawned(1, 0);
  CHECK(only<StartTimer>(q.spawn_finished())[1].ms == 0);
}

TEST_CASE("-K0: a bad exit ends only its rank, is reported at the end; an abort still ends all") {
  LaunchShape s = shape(1, 0, 2);
  s.kill_on_bad_exit = false;
  LaunchPolicy p(s);
  p.spawned(0, 0);
  p.spawned(1, 0);
  p.spawn_finished();
  auto a = p.exited(0, ExitStatus{3, 0}, false);
  CHECK(a.empty());  // no kill, no abort, nothing to tell
  CHECK(!p.failure());
  CHECK(p.running(1));
  auto b = p.exited(1, ExitStatus{0, 0}, false);
  REQUIRE(only<ReportEnd>(b).size() == 1);
  CHECK(describe(*only<ReportEnd>(b)[0].failure) == "rank 0 on n1 exited with status 3");
  CHECK(only<ReportEnd>(b)[0].failure->exit_code == 3);

  LaunchPolicy q(s);
  q.spawned(0, 0);
  q.spawned(1, 0);
  q.spawn_finished();
  q.exited(0, ExitStatus{3, 0}, false);
  auto c = q.pmi_abort(1, 5, "");
  CHECK(only<KillRanks>(c).size() == 1);
  CHECK(abort_targets(c) == std::set<int>{0});
}

// Every event in every state: the promises that hold whatever happens.
TEST_CASE("every event in every state keeps the engine's promises") {
  struct Event {
    const char* name;
    std::function<Actions(LaunchPolicy&)> step;
    std::optional<TimerId> fires = std::nullopt;
  };
  const TimerId grace{TimerKind::grace}, drain{TimerKind::drain}, lost{TimerKind::lost_pmi, 0},
      limit{TimerKind::time_limit};
  const std::vector<Event> events = {
      {"exit 0",
       [](LaunchPolicy& p) {
         return p.exited(0, ExitStatus{0, 0}, false);
       }},
      {"exit 1",
       [](LaunchPolicy& p) {
         return p.exited(1, ExitStatus{1, 0}, false);
       }},
      {"signalled",
       [](LaunchPolicy& p) {
         return p.exited(0, ExitStatus{0, 9}, false);
       }},
      {"pipe", [](LaunchPolicy& p) { return p.pipe_closed(0); }},
      {"output paused", [](LaunchPolicy& p) { return p.output_paused(); }},
      {"output resumed", [](LaunchPolicy& p) { return p.output_resumed(); }},
      {"pmi abort", [](LaunchPolicy& p) { return p.pmi_abort(1, std::nullopt, ""); }},
      {"pmi error", [](LaunchPolicy& p) { return p.pmi_error(0, "bad"); }},
      {"pmi lost", [](LaunchPolicy& p) { return p.pmi_lost(0, "lost"); }},
      {"fence timeout", [](LaunchPolicy& p) { return p.fence_timed_out(1, 1000); }},
      {"fence above", [](LaunchPolicy& p) { return p.fence_failed_above(1, "t"); }},
      {"abort launcher",
       [](LaunchPolicy& p) {
         return p.abort_received(FromLauncher{}, Failure{"l", 1});
       }},
      {"abort node 2",
       [](LaunchPolicy& p) {
         return p.abort_received(FromNode{2}, Failure{"n", 1});
       }},
      {"abort head",
       [](LaunchPolicy& p) {
         return p.abort_received(FromNode{0}, Failure{"h", 1});
       }},
      {"peer lost 2", [](LaunchPolicy& p) { return p.peer_lost(2, "n2", "x"); }},
      {"peer lost head", [](LaunchPolicy& p) { return p.peer_lost(0, "n0", "x"); }},
      {"launcher lost", [](LaunchPolicy& p) { return p.launcher_lost("x"); }},
      {"signal", [](LaunchPolicy& p) { return p.signal(SIGINT); }},
      {"shutdown", [](LaunchPolicy& p) { return p.shutdown(SIGTERM, false); }},
      {"kill now", [](LaunchPolicy& p) { return p.shutdown(SIGTERM, true); }},
      {"grace fires", [=](LaunchPolicy& p) { return p.timer_fired(grace); }, grace},
      {"drain fires", [=](LaunchPolicy& p) { return p.timer_fired(drain); }, drain},
      {"lost pmi fires", [=](LaunchPolicy& p) { return p.timer_fired(lost); }, lost},
      {"time limit fires", [=](LaunchPolicy& p) { return p.timer_fired(limit); }, limit},
  };
  // Every sequence of three events, for a head of 4 nodes, a non-head of 4, and a single node.
  for (int self : {0, 1}) {
    for (int nodes : {1, 4}) {
      if (nodes == 1 && self != 0) continue;
      for (const auto& e1 : events) {
        for (const auto& e2 : events) {
          for (const auto& e3 : events) {
            CAPTURE(self);
            CAPTURE(nodes);
            CAPTURE(e1.name);
            CAPTURE(e2.name);
            CAPTURE(e3.name);
            // A time limit, so its timer is among those running; -K0 on the single node.
            LaunchShape s = shape(self, 0, nodes);
            s.time_limit_ms = 60000;
            s.kill_on_bad_exit = nodes > 1;
            LaunchPolicy p(s);
            p.spawned(0, 2);
            p.spawned(1, 2);
            std::set<TimerId> timers;  // what the engine has running, by its own actions
            for (const auto& start : only<StartTimer>(p.spawn_finished()))
              timers.insert(start.timer);
            CHECK(timers.count(limit) == 1);
            std::map<int, int> aborts_to;
            int ends = 0, first_failures = 0;
            for (const Event* e : {&e1, &e2, &e3}) {
              bool was_ended = p.ended();
              bool was_running = e->fires && timers.erase(*e->fires);
              Actions actions = e->step(p);
              if (was_ended || (e->fires && !was_running)) CHECK(actions.empty());
              for (const auto& a : actions) {
                if (auto* send = std::get_if<SendAbort>(&a)) {
                  CHECK(send->node != self);
                  CHECK(nodes > 1);
                  if (self != 0) CHECK(send->node == 0);  // a non-head only ever tells the head
                  ++aborts_to[send->node];
                } else if (auto* t = std::get_if<StartTimer>(&a)) {
                  CHECK(timers.insert(t->timer).second);  // never started twice
                } else if (auto* stop = std::get_if<StopTimer>(&a)) {
                  CHECK(timers.erase(stop->timer) == 1);  // only what runs is stopped
                } else if (std::holds_alternative<ReportEnd>(a)) {
                  ++ends;
                  CHECK(&a == &actions.back());
                  CHECK(timers.empty());  // nothing left ticking after the end
                } else if (std::holds_alternative<FirstFailure>(a)) {
                  ++first_failures;
                }
              }
              CHECK(first_failures == (p.failure() ? 1 : 0));
            }
            CHECK(ends == (p.ended() ? 1 : 0));
            for (const auto& [node, count] : aborts_to) CHECK(count == 1);  // nobody twice
          }
        }
      }
    }
  }
}

TEST_CASE("an allocation's end stops its launches gently: SIGTERM, SIGKILL after the grace") {
  auto p = running(shape(1, 0, 2));
  Failure ended{"allocation A1 ended: its batch step ended", 1};
  ended.kind = FailureKind::allocation_ended;
  auto a = p.abort_received(FromLauncher{}, ended);
  REQUIRE(only<KillRanks>(a).size() == 1);
  CHECK(only<KillRanks>(a)[0].signum == SIGTERM);
  CHECK(describe(*p.failure()) == "allocation A1 ended: its batch step ended");
  // Any other abort kills at once.
  auto q = running(shape(1, 0, 2));
  auto b = q.abort_received(FromLauncher{}, Failure{"node n2 lost", 1});
  CHECK(only<KillRanks>(b)[0].signum == SIGKILL);
}
