// What PMIx events and job control mean for a launch's nodes (agent/pmix_events.hpp), and their
// messages between agents (agent/pmix_messages.hpp).
#include "agent/pmix_events.hpp"

#include <doctest/doctest.h>

#include <csignal>

#include "agent/pmix_messages.hpp"
#include "rpc/outgoing.hpp"

namespace lattice::agent {
namespace {

const std::string kNs = "lattice.job";
// 6 ranks: 0-1 on node 0, 2-3 on node 1, 4-5 on node 2.
const std::vector<int> kRankNodes = {0, 0, 1, 1, 2, 2};

pmix::EventNotice notice(pmix::EventRange range, std::vector<pmix::InfoValue> info = {}) {
  pmix::EventNotice n;
  n.code = -3017;
  n.source_rank = 0;
  n.range = static_cast<uint8_t>(range);
  n.info = std::move(info);
  return n;
}

pmix::InfoValue procs(std::string key, std::vector<pmix::ProcId> list) {
  pmix::InfoValue v;
  v.key = std::move(key);
  v.kind = pmix::InfoValue::Kind::procs;
  v.pmix_type = pmix::kTypeDataArray;
  v.procs = std::move(list);
  return v;
}

pmix::InfoValue flag(std::string key, bool on = true) {
  pmix::InfoValue v;
  v.key = std::move(key);
  v.kind = pmix::InfoValue::Kind::flag;
  v.number = on;
  return v;
}

pmix::InfoValue integer(std::string key, int64_t n) {
  pmix::InfoValue v;
  v.key = std::move(key);
  v.kind = pmix::InfoValue::Kind::integer;
  v.pmix_type = pmix::kTypeInt;
  v.number = n;
  return v;
}

}  // namespace

TEST_CASE("an event's range names the other nodes it must reach") {
  using R = pmix::EventRange;
  CHECK(event_nodes(notice(R::local), kNs, kRankNodes, 1).value().empty());
  for (R r : {R::nspace, R::session, R::global, R::undefined})
    CHECK(event_nodes(notice(r), kNs, kRankNodes, 1).value() == std::vector<int>{0, 2});
  // A custom range: the target ranks' nodes, without this one.
  auto custom = notice(R::custom, {procs("pmix.evrange", {{kNs, 3}, {kNs, 5}, {kNs, 2}})});
  CHECK(event_nodes(custom, kNs, kRankNodes, 0).value() == std::vector<int>{1, 2});
  CHECK(event_nodes(custom, kNs, kRankNodes, 1).value() == std::vector<int>{2});
  auto wild = notice(R::custom, {procs("pmix.evrange", {{kNs, pmix::kRankWildcard}})});
  CHECK(event_nodes(wild, kNs, kRankNodes, 2).value() == std::vector<int>{0, 1});
}

TEST_CASE("ranges Lattice does not carry are refused, saying why") {
  using R = pmix::EventRange;
  auto elsewhere = event_nodes(notice(R::custom, {procs("pmix.evrange", {{"other.ns", 0}})}), kNs,
                               kRankNodes, 0);
  REQUIRE_FALSE(elsewhere);
  CHECK(elsewhere.error().message.find("other.ns") != std::string::npos);
  CHECK_FALSE(
      event_nodes(notice(R::custom, {procs("pmix.evrange", {{kNs, 6}})}), kNs, kRankNodes, 0));
  CHECK_FALSE(event_nodes(notice(R::custom), kNs, kRankNodes, 0));
  CHECK_FALSE(event_nodes(notice(R::rm), kNs, kRankNodes, 0));
  CHECK_FALSE(event_nodes(notice(R::proc_local), kNs, kRankNodes, 0));
  auto odd = notice(R::local);
  odd.range = 200;
  CHECK_FALSE(event_nodes(odd, kNs, kRankNodes, 0));
}

TEST_CASE("an event is handed to libpmix for the launch's own ranks only") {
  using R = pmix::EventRange;
  for (R r : {R::nspace, R::session, R::global, R::undefined}) {
    auto scoped = launch_scoped(notice(r, {flag("f"), procs("pmix.evrange", {{"x", 1}})}), kNs);
    CHECK(scoped.range == static_cast<uint8_t>(R::custom));
    REQUIRE(scoped.info.size() == 2);  // a range given with another range is replaced
    CHECK(scoped.info[0].key == "f");
    CHECK(scoped.info[1].key == "pmix.evrange");
    CHECK(scoped.info[1].pmix_type == pmix::kTypeDataArray);
    REQUIRE(scoped.info[1].procs.size() == 1);
    CHECK(scoped.info[1].procs[0].nspace == kNs);
    CHECK(scoped.info[1].procs[0].rank == pmix::kRankWildcard);
  }
  auto custom = notice(R::custom, {procs("pmix.evrange", {{kNs, 3}})});
  CHECK(launch_scoped(custom, kNs).info[0].procs[0].rank == 3);
}

TEST_CASE("job-control directives: kill, terminate and a signal, on the named ranks by node") {
  auto kill =
      plan_control({{kNs, 3}, {kNs, 4}, {kNs, 5}}, {flag("pmix.jctrl.kill")}, kNs, kRankNodes);
  REQUIRE(kill.answer == pmix::Answer::success);
  CHECK(kill.action == PmixControlMessage::Action::kill);
  CHECK(kill.signum == SIGKILL);
  CHECK(kill.ranks == std::map<int, std::vector<int>>{{1, {3}}, {2, {4, 5}}});

  auto term = plan_control({{kNs, pmix::kRankWildcard}},
                           {flag("pmix.jctrl.term"), integer("pmix.jctrl.id", 7)}, kNs, kRankNodes);
  REQUIRE(term.answer == pmix::Answer::success);
  CHECK(term.signum == SIGTERM);
  CHECK(term.ranks.size() == 3);
  CHECK(term.ranks[0] == std::vector<int>{0, 1});

  auto sig = plan_control({}, {integer("pmix.jctrl.sig", SIGUSR1)}, kNs, kRankNodes);
  REQUIRE(sig.answer == pmix::Answer::success);
  CHECK(sig.signum == SIGUSR1);
  CHECK(sig.ranks.size() == 3);  // no targets: the whole namespace

  // A "false" kill asks nothing; a qualifier of another family is left alone.
  auto quiet = plan_control(
      {{kNs, 0}},
      {flag("pmix.jctrl.kill", false), flag("pmix.other"), integer("pmix.jctrl.sig", SIGHUP)}, kNs,
      kRankNodes);
  CHECK(quiet.answer == pmix::Answer::success);
  CHECK(quiet.signum == SIGHUP);
}

TEST_CASE("job control refuses what it does not carry out, and other launches' processes") {
  auto pause = plan_control({{kNs, 1}}, {flag("pmix.jctrl.pause")}, kNs, kRankNodes);
  CHECK(pause.answer == pmix::Answer::not_supported);
  CHECK(pause.why.find("pmix.jctrl.pause") != std::string::npos);
  CHECK(pause.ranks.empty());
  CHECK(plan_control({{"lattice.other", 0}}, {flag("pmix.jctrl.kill")}, kNs, kRankNodes).answer ==
        pmix::Answer::bad_param);
  CHECK(plan_control({{kNs, 6}}, {flag("pmix.jctrl.kill")}, kNs, kRankNodes).answer ==
        pmix::Answer::not_found);
  CHECK(plan_control({{kNs, 0}}, {}, kNs, kRankNodes).answer == pmix::Answer::bad_param);
  CHECK(
      plan_control({{kNs, 0}}, {flag("pmix.jctrl.kill"), flag("pmix.jctrl.term")}, kNs, kRankNodes)
          .answer == pmix::Answer::bad_param);
  CHECK(plan_control({{kNs, 0}}, {integer("pmix.jctrl.sig", 0)}, kNs, kRankNodes).answer ==
        pmix::Answer::bad_param);
  CHECK(plan_control({{kNs, 0}}, {integer("pmix.jctrl.sig", 99)}, kNs, kRankNodes).answer ==
        pmix::Answer::bad_param);
}

TEST_CASE("PmixEvent and PmixControl round-trip, and oversized events are refused") {
  PmixEventMessage event{"job-1",
                         notice(pmix::EventRange::custom,
                                {procs("pmix.evrange", {{kNs, 4}}), flag("f"), integer("n", -5)})};
  event.notice.info.push_back(pmix::InfoValue{"s", 3, pmix::InfoValue::Kind::text, 0, "hi", {}});
  rpc::Outgoing out = pmix_event_message(event);
  auto back = decode_pmix_event(out.envelope().asReader().getBody().getPmixEvent());
  REQUIRE(back);
  CHECK(back->launch_id == "job-1");
  CHECK(back->notice.code == -3017);
  CHECK(back->notice.range == static_cast<uint8_t>(pmix::EventRange::custom));
  REQUIRE(back->notice.info.size() == 4);
  CHECK(back->notice.info[0].procs[0].rank == 4);
  CHECK(back->notice.info[0].pmix_type == pmix::kTypeDataArray);
  CHECK(back->notice.info[1].number == 1);
  CHECK(back->notice.info[2].number == -5);
  CHECK(back->notice.info[3].text == "hi");

  PmixEventMessage big{"job-1", notice(pmix::EventRange::global)};
  big.notice.info.assign(pmix::kMaxEventInfos + 1, flag("f"));
  rpc::Outgoing too_many = pmix_event_message(big);
  CHECK_FALSE(decode_pmix_event(too_many.envelope().asReader().getBody().getPmixEvent()));
  big.notice.info = {pmix::InfoValue{
      "s", 3, pmix::InfoValue::Kind::text, 0, std::string(pmix::kMaxEventText + 1, 'x'), {}}};
  rpc::Outgoing too_long = pmix_event_message(big);
  CHECK_FALSE(decode_pmix_event(too_long.envelope().asReader().getBody().getPmixEvent()));

  PmixControlMessage control{"job-1", PmixControlMessage::Action::signal, SIGUSR2, {2, 3}};
  rpc::Outgoing c = pmix_control_message(control);
  auto cback = decode_pmix_control(c.envelope().asReader().getBody().getPmixControl());
  REQUIRE(cback);
  CHECK(cback->action == PmixControlMessage::Action::signal);
  CHECK(cback->signum == SIGUSR2);
  CHECK(cback->ranks == std::vector<int>{2, 3});
  control.signum = 0;
  rpc::Outgoing bad = pmix_control_message(control);
  CHECK_FALSE(decode_pmix_control(bad.envelope().asReader().getBody().getPmixControl()));
}

}  // namespace lattice::agent
