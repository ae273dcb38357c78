// The launcher's failure policy: aborts go to the head only, unless the head cannot pass them
// on; a failure an agent reported costs the launcher no message; every event in every state.
#include "policy/job_policy.hpp"

#include <doctest/doctest.h>

#include <csignal>
#include <functional>
#include <map>

#include "only.hpp"

using namespace lattice::policy;

namespace {

using Actions = std::vector<JobAction>;

std::vector<int> aborted(const Actions& actions) {
  std::vector<int> nodes;
  for (const auto& a : only<AbortNode>(actions)) nodes.push_back(a.node);
  return nodes;
}

JobPolicy live(int nodes, int head) {
  JobPolicy p(nodes, head);
  for (int i = 0; i < nodes; ++i) p.sent(i);
  for (int i = 0; i < nodes; ++i) CHECK(p.accepted(i).empty());
  return p;
}

}  // namespace

TEST_CASE("record_failure keeps the first failure that names a rank") {
  std::optional<Failure> f;
  record_failure(f, Failure{"node n2 lost", 1});
  record_failure(f, Failure{"rank 3 failed", 7, 3});
  record_failure(f, Failure{"rank 4 failed", 9, 4});
  CHECK(f->rank == 3);
}

TEST_CASE("record_failure prefers a node's own account to an echo of it") {
  // n2 says n1 ended their link; n1, which ended it, says why. Either may arrive first.
  Failure echo{"connection closed (closed by the peer)", 1};
  echo.kind = FailureKind::node_lost;
  echo.node = "n2";
  echo.peer = "n1";
  echo.peer_ended = true;
  Failure account{"its certificate is revoked (security.revoked)", 1};
  account.kind = FailureKind::node_lost;
  account.node = "n1";
  account.peer = "n2";
  for (bool echo_first : {true, false}) {
    std::optional<Failure> f;
    record_failure(f, echo_first ? echo : account);
    record_failure(f, echo_first ? account : echo);
    CHECK(f->node == "n1");
  }
  // An echo alone still explains the job; a rank's failure outweighs an account.
  std::optional<Failure> f;
  record_failure(f, echo);
  CHECK(f->peer_ended);
  record_failure(f, Failure{"rank 2 failed", 3, 2});
  record_failure(f, account);
  CHECK(f->rank == 2);
}

TEST_CASE("a rank's failure reported by its agent costs the launcher no message") {
  auto p = live(16, 0);
  Actions all;
  for (int i = 0; i < 16; ++i) {
    auto a = p.ended(i, Failure{"rank failed", 1, i});
    all.insert(all.end(), a.begin(), a.end());
  }
  CHECK(only<AbortNode>(all).empty());
  CHECK(only<Finish>(all).size() == 1);
  CHECK(p.failure()->rank == 0);
}

TEST_CASE("the launcher's own abort goes to the head only") {
  auto p = live(4, 2);
  auto a = p.node_out(1, Failure{"node n1 lost: no heartbeat answer for 30 s", 1});
  CHECK(only<DropNode>(a).size() == 1);
  CHECK(aborted(a) == std::vector<int>{2});
  // The others end as the head tells them; the launcher sends nothing more.
  for (int i : {0, 2, 3}) CHECK(aborted(p.ended(i, Failure{"node n1 lost", 1})).empty());
  CHECK(p.finished());
}

TEST_CASE("a lost head: the launcher tells every live node itself, once") {
  auto p = live(4, 0);
  auto a = p.node_out(0, Failure{"node n0 lost", 1});
  CHECK(aborted(a) == std::vector<int>{1, 2, 3});
  auto b = p.node_out(1, Failure{"node n1 lost", 1});
  CHECK(aborted(b).empty());
}

TEST_CASE("a head that ended cleanly before the abort reached it: the launcher tells the rest") {
  auto p = live(3, 0);
  CHECK(aborted(p.ended(2, Failure{"rank 2 on n2 exited with status 1", 1, 2})).empty());
  CHECK(aborted(p.ended(0, std::nullopt)) == std::vector<int>{1});
  // In the other order, too.
  auto q = live(3, 0);
  CHECK(aborted(q.ended(0, std::nullopt)).empty());
  CHECK(aborted(q.ended(2, Failure{"rank 2 on n2 exited with status 1", 1, 2})) ==
        std::vector<int>{1});
}

TEST_CASE("aborting before every node was asked: the unasked are dropped, the head waited for") {
  JobPolicy p(4, 0);
  p.sent(0);
  p.sent(1);
  auto a = p.node_out(3, Failure{"cannot authenticate agent n3", 1});
  CHECK(only<DropNode>(a).size() == 2);   // n3 itself and n2, never asked
  CHECK(aborted(a).empty());              // the head has not answered yet
  CHECK(aborted(p.accepted(1)).empty());  // the head will tell n1
  CHECK(aborted(p.accepted(0)) == std::vector<int>{0});
  // Had the head refused instead, the launcher would tell n1 itself.
  JobPolicy q(3, 0);
  q.sent(0);
  q.sent(1);
  q.accepted(1);
  q.node_out(2, Failure{"cannot reach agent n2", 1});
  CHECK(aborted(q.node_out(0, Failure{"agent n0 refused the launch", 1})) == std::vector<int>{1});
}

TEST_CASE("-K0: a node reporting only a bad exit aborts nothing; its exit is the job's status") {
  JobPolicy p(3, 0, false);
  for (int i = 0; i < 3; ++i) p.sent(i), p.accepted(i);
  Failure bad;
  bad.kind = FailureKind::exited;
  bad.exit_code = 3;
  bad.rank = 4;
  CHECK(only<AbortNode>(p.ended(1, bad)).empty());
  CHECK(!p.aborting());
  CHECK(p.failure()->exit_code == 3);
  Failure abort;
  abort.kind = FailureKind::abort_called;
  abort.rank = 0;
  CHECK(only<AbortNode>(p.ended(2, abort)).empty());  // the head heard it from n2 already
  CHECK(p.aborting());
}

TEST_CASE("signals: forwarded to live nodes; a second SIGINT aborts with 130") {
  auto p = live(3, 1);
  auto a = p.signal(SIGINT);
  CHECK(only<SignalNode>(a).size() == 3);
  CHECK(!p.aborting());
  auto b = p.signal(SIGINT);
  CHECK(aborted(b) == std::vector<int>{1});
  CHECK(p.failure()->exit_code == 130);
  CHECK(only<SignalNode>(p.signal(SIGTERM)).size() == 3);  // live until they end
}

TEST_CASE("a node that lost its link to a head the launcher still reaches: the head is told") {
  Failure lost{"refused this side's identity", 1};
  lost.kind = FailureKind::node_lost;
  lost.peer = "n0";
  auto p = live(3, 0);
  CHECK(aborted(p.ended(1, lost, false)) == std::vector<int>{0});
  // It told the head: the launcher sends nothing.
  auto q = live(3, 0);
  CHECK(aborted(q.ended(1, lost, true)).empty());
}

TEST_CASE("signals: a node still being asked gets the signal when it accepts") {
  JobPolicy p(3, 0);
  for (int i = 0; i < 3; ++i) p.sent(i);
  p.accepted(0);
  auto a = p.signal(SIGINT);
  REQUIRE(only<SignalNode>(a).size() == 1);
  CHECK(only<SignalNode>(a)[0].node == 0);
  p.signal(SIGTERM);
  auto b = only<SignalNode>(p.accepted(1));
  REQUIRE(b.size() == 2);
  CHECK((b[0].node == 1 && b[0].signum == SIGINT && b[1].signum == SIGTERM));
  // Once the launch is aborting, a late node gets the abort instead.
  p.signal(SIGINT);
  REQUIRE(p.aborting());
  CHECK(only<SignalNode>(p.accepted(2)).empty());
}

TEST_CASE("the launcher's own failure before any node was asked: every node dropped, done") {
  JobPolicy p(3, 1);
  Actions actions = p.failed(Failure{"fabric manager refused", 1});
  CHECK(only<DropNode>(actions).size() == 3);
  CHECK(only<AbortNode>(actions).empty());
  CHECK(only<Finish>(actions).size() == 1);
  REQUIRE(p.failure());
  CHECK(p.failure()->detail == "fabric manager refused");
  CHECK(p.failed(Failure{"again", 1}).empty());
}

TEST_CASE("the record: a node is settled once it ended, refused, or was never asked") {
  JobPolicy p(5, 0);
  for (int i = 0; i < 4; ++i) p.sent(i);
  for (int i = 0; i < 4; ++i) CHECK(p.asked(i));
  CHECK(!p.asked(4));
  CHECK(p.settled(4));  // nothing runs where the request never went
  p.accepted(0);
  p.ended(0, std::nullopt);
  CHECK(p.has_ended(0));
  CHECK(p.settled(0));
  p.node_out(1, Failure{"agent n1 refused the launch", 1}, JobPolicy::Out::refused);
  CHECK(p.settled(1));
  p.node_out(2, Failure{"node n2 was not asked", 1}, JobPolicy::Out::not_asked);
  CHECK(!p.asked(2));
  CHECK(p.settled(2));
  p.node_out(3, Failure{"node n3 lost", 1});
  CHECK(!p.settled(3));  // its ranks may run, unreported
  // Its end may still come up by another way, and settles it.
  CHECK(p.ended(3, std::nullopt).empty());
  CHECK(p.has_ended(3));
  CHECK(p.settled(3));
}

TEST_CASE("every event in every state: each node gets at most one abort, Finish comes once") {
  struct Event {
    std::string name;
    std::function<Actions(JobPolicy&)> step;
  };
  std::vector<Event> events;
  for (int n = 0; n < 3; ++n) {
    events.push_back({"sent " + std::to_string(n), [n](JobPolicy& p) { return p.sent(n); }});
    events.push_back(
        {"accepted " + std::to_string(n), [n](JobPolicy& p) { return p.accepted(n); }});
    events.push_back(
        {"ended ok " + std::to_string(n), [n](JobPolicy& p) { return p.ended(n, std::nullopt); }});
    events.push_back({"ended failed " + std::to_string(n), [n](JobPolicy& p) {
                        return p.ended(n, Failure{"f", 1, n});
                      }});
    events.push_back({"out " + std::to_string(n), [n](JobPolicy& p) {
                        return p.node_out(n, Failure{"o", 1});
                      }});
  }
  events.push_back({"SIGINT", [](JobPolicy& p) { return p.signal(SIGINT); }});
  events.push_back({"failed", [](JobPolicy& p) { return p.failed(Failure{"fabric", 1}); }});
  // Every sequence of four events over 3 nodes with node 1 as head, from two starting points.
  for (bool started : {false, true}) {
    for (const auto& e1 : events)
      for (const auto& e2 : events)
        for (const auto& e3 : events)
          for (const auto& e4 : events) {
            CAPTURE(started);
            CAPTURE(e1.name);
            CAPTURE(e2.name);
            CAPTURE(e3.name);
            CAPTURE(e4.name);
            JobPolicy p = started ? live(3, 1) : JobPolicy(3, 1);
            std::map<int, int> aborts, drops;
            int finishes = 0;
            for (const Event* e : {&e1, &e2, &e3, &e4}) {
              bool was_finished = p.finished();
              Actions actions = e->step(p);
              if (was_finished) CHECK(only<AbortNode>(actions).empty());
              for (int node : aborted(actions)) ++aborts[node];
              for (const auto& d : only<DropNode>(actions)) ++drops[d.node];
              finishes += static_cast<int>(only<Finish>(actions).size());
              if (!p.aborting()) CHECK(only<AbortNode>(actions).empty());
            }
            for (const auto& [node, count] : aborts) CHECK(count == 1);
            for (const auto& [node, count] : drops) CHECK(count == 1);
            CHECK(finishes == (p.finished() ? 1 : 0));
          }
  }
}
