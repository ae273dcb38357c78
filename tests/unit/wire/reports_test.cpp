// Agents' reports round-trip through the one codec both ends use: every field set, read back.
#include "wire/reports.hpp"

#include <doctest/doctest.h>

#include "rpc/session.hpp"

using namespace lattice;
using namespace lattice::wire;

namespace {

template <class Decode>
auto body_of(rpc::Outgoing msg, Decode decode) {
  return decode(msg.envelope().asReader().getBody());
}

Accepted full_accepted() {
  return Accepted{"n7", {"0:1,2", "1:3"}, 1234, true, {"LD_PRELOAD"}, ""};
}

void check_same(const Accepted& got, const Accepted& want) {
  CHECK(got.node_id == want.node_id);
  CHECK(got.bindings == want.bindings);
  CHECK(got.replied_us == want.replied_us);
  CHECK(got.stdin_taken == want.stdin_taken);
  CHECK(got.env_left_out == want.env_left_out);
}

}  // namespace

TEST_CASE("LaunchAccepted reads back field for field") {
  auto got = body_of(launch_accepted(full_accepted()),
                     [](auto b) { return decode_accepted(b.getLaunchAccepted()); });
  check_same(got, full_accepted());
}

TEST_CASE("output, rank exits and stdin taken read back") {
  auto out = body_of(output("L-1", 3, true, std::string("a\0b\n", 4)),
                     [](auto b) { return decode_output(b.getOutput()); });
  CHECK(out.launch_id == "L-1");
  CHECK(out.rank == 3);
  CHECK(out.is_stderr);
  CHECK(out.data == std::string("a\0b\n", 4));
  CHECK_FALSE(body_of(output("L-1", 0, false, "x"), [](auto b) {
                return decode_output(b.getOutput());
              }).is_stderr);

  auto exit = body_of(rank_exit({"L-1", 2, 5, 4242, proc::ExitStatus{3, 9}}),
                      [](auto b) { return decode_rank_exit(b.getRankExit()); });
  CHECK(exit.launch_id == "L-1");
  CHECK(exit.node_index == 2);
  CHECK(exit.rank == 5);
  CHECK(exit.pid == 4242);
  CHECK(exit.status.code == 3);
  CHECK(exit.status.signal == 9);

  auto taken = body_of(stdin_taken({"L-1", 4, uint64_t{1} << 40}),
                       [](auto b) { return decode_stdin_taken(b.getStdinTaken()); });
  CHECK(taken.launch_id == "L-1");
  CHECK(taken.node_index == 4);
  CHECK(taken.bytes == uint64_t{1} << 40);
}

TEST_CASE("a LaunchEnded with a failure, stragglers, timings and strays reads back") {
  LaunchEnded sent{"L-2",
                   3,
                   policy::Failure{"fence 1 timed out", 1, -1, 1, "n2"},
                   {{4, "initialized", "put", 1534}, {2, "waiting", "", 0}},
                   NodeTimes{10, 20, 30, 40, 50, {{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}}},
                   2};
  auto end =
      body_of(launch_ended(sent), [](auto b) { return decode_launch_ended(b.getLaunchEnded()); });
  CHECK(end.launch_id == "L-2");
  CHECK(end.node_index == 3);
  REQUIRE(end.failure);
  CHECK(policy::describe(*end.failure) == "fence 1 timed out");
  CHECK(end.failure->rank == -1);
  CHECK(end.failure->fence_epoch == 1);
  CHECK(end.failure->node == "n2");
  CHECK(end.times.spawned_us == 10);
  CHECK(end.times.first_init_us == 20);
  CHECK(end.times.last_finalize_us == 30);
  CHECK(end.times.exited_us == 40);
  CHECK(end.times.user_known_us == 50);
  REQUIRE(end.times.fences.size() == 2);
  const FenceTimes& f = end.times.fences[1];
  CHECK((f.epoch == 6 && f.entered_us == 7 && f.reduced_us == 8 && f.store_us == 9 &&
         f.released_us == 10));
  CHECK(end.strays == 2);
  REQUIRE(end.stragglers.size() == 2);
  CHECK(end.stragglers[0].rank == 4);
  CHECK(end.stragglers[0].pmi_state == "initialized");
  CHECK(end.stragglers[0].last_command == "put");
  CHECK(end.stragglers[0].idle_ms == 1534);

  auto clean = body_of(launch_ended({"L-2", 0, std::nullopt, {}, {}, 0}),
                       [](auto b) { return decode_launch_ended(b.getLaunchEnded()); });
  CHECK_FALSE(clean.failure);
}

TEST_CASE("a hostile LaunchEnded's fence list costs what is kept, not what was sent") {
  rpc::Outgoing hostile;
  auto ended = hostile.envelope().initBody().initLaunchEnded();
  ended.setLaunchId("L-4");
  auto list = ended.initTimings().initFences(5000);
  for (unsigned i = 0; i < list.size(); ++i) list[i].setEpoch(i + 1);
  auto kept =
      body_of(std::move(hostile), [](auto b) { return decode_launch_ended(b.getLaunchEnded()); });
  REQUIRE(kept.times.fences.size() == kMaxFencesReported);
  CHECK(kept.times.fences.front().epoch == 1);
}

TEST_CASE("node answers: an acceptance, a refusal and a loss read back") {
  auto accepted = body_of(node_answer({"L-5", 6, full_accepted(), "", false}),
                          [](auto b) { return decode_node_answer(b.getNodeAnswer()); });
  CHECK(accepted.launch_id == "L-5");
  CHECK(accepted.node_index == 6);
  CHECK(accepted.error.empty());
  CHECK_FALSE(accepted.lost);
  check_same(accepted.accepted, full_accepted());

  auto lost = body_of(node_answer({"L-5", 2, {}, "unreachable", true}),
                      [](auto b) { return decode_node_answer(b.getNodeAnswer()); });
  CHECK(lost.error == "unreachable");
  CHECK(lost.lost);
  auto refused = body_of(node_answer({"L-5", 2, {}, "no such user", false}),
                         [](auto b) { return decode_node_answer(b.getNodeAnswer()); });
  CHECK(refused.error == "no such user");
  CHECK_FALSE(refused.lost);
}

TEST_CASE("a report copied for passing up is the same message") {
  auto original = rank_exit({"L-1", 2, 5, 4242, proc::ExitStatus{0, 15}});
  auto copy = copy_of(original.envelope().asReader());
  auto exit = body_of(std::move(copy), [](auto b) { return decode_rank_exit(b.getRankExit()); });
  CHECK(exit.rank == 5);
  CHECK(exit.status.signal == 15);
}
