// NameRegistry: what the head agent answers for a launch's published names.
#include "agent/name_registry.hpp"

#include <doctest/doctest.h>

#include <string>

namespace lattice::agent {

TEST_CASE("publish, lookup, unpublish; unknown names and second publishes fail at once") {
  NameRegistry names;
  CHECK_FALSE(names.apply(pmi::NameOp::lookup, "svc", ""));
  CHECK(names.apply(pmi::NameOp::publish, "svc", "port-1"));
  auto found = names.apply(pmi::NameOp::lookup, "svc", "");
  REQUIRE(found);
  CHECK(*found == "port-1");
  auto again = names.apply(pmi::NameOp::publish, "svc", "port-2");
  REQUIRE_FALSE(again);
  CHECK(again.error().message.find("already published") != std::string::npos);
  CHECK(names.apply(pmi::NameOp::unpublish, "svc", ""));
  CHECK_FALSE(names.apply(pmi::NameOp::unpublish, "svc", ""));
  CHECK_FALSE(names.apply(pmi::NameOp::lookup, "svc", ""));
}

TEST_CASE("a peer's oversized or empty request, and too many names, are refused") {
  NameRegistry names;
  CHECK_FALSE(names.apply(pmi::NameOp::publish, "", "p"));
  CHECK_FALSE(
      names.apply(pmi::NameOp::publish, std::string(pmi::kMaxServiceNameBytes + 1, 'n'), "p"));
  CHECK_FALSE(names.apply(pmi::NameOp::publish, "n", std::string(pmi::kMaxValueBytes + 1, 'p')));
  for (size_t i = 0; i < kMaxPublishedNames; ++i)
    REQUIRE(names.apply(pmi::NameOp::publish, "n" + std::to_string(i), "p"));
  auto full = names.apply(pmi::NameOp::publish, "one-more", "p");
  REQUIRE_FALSE(full);
  CHECK(full.error().message.find("published") != std::string::npos);
}

}  // namespace lattice::agent

namespace lattice::agent {
namespace {

NameAsk pmix_ask(pmi::NameOp op, const std::string& name, int rank, int node,
                 const std::string& value = "") {
  NameAsk ask;
  ask.op = op;
  ask.name = name;
  ask.value = value;
  ask.pmix = true;
  ask.nspace = "lattice.L";
  ask.rank = rank;
  ask.node = node;
  return ask;
}

}  // namespace

TEST_CASE("a waiting lookup is answered by the publish that satisfies it, not before") {
  NameRegistry names;
  auto lookup = pmix_ask(pmi::NameOp::lookup, "svc", 0, 0);
  lookup.deadline_ms = 5000;
  CHECK(names.ask(1, lookup, 100).empty());  // parked
  CHECK(names.waiters() == 1);
  CHECK(names.next_deadline() == 5000u);
  auto other = names.ask(2, pmix_ask(pmi::NameOp::publish, "other", 3, 1, "x"), 200);
  REQUIRE(other.size() == 1);  // the publish's own answer only
  auto answers = names.ask(3, pmix_ask(pmi::NameOp::publish, "svc", 3, 1, "port"), 300);
  REQUIRE(answers.size() == 2);
  CHECK(answers[0].id == 3);
  CHECK(answers[0].result.ok());
  CHECK(answers[1].id == 1);
  REQUIRE(answers[1].result.ok());
  CHECK(answers[1].result.value() == "port");
  CHECK(names.waiters() == 0);
  CHECK_FALSE(names.next_deadline());
}

TEST_CASE("a waiting lookup fails at its deadline; one without a deadline fails at once") {
  NameRegistry names;
  auto lookup = pmix_ask(pmi::NameOp::lookup, "never", 0, 0);
  CHECK_FALSE(names.ask(1, lookup, 100).front().result.ok());  // no wait
  lookup.deadline_ms = 1000;
  CHECK(names.ask(2, lookup, 100).empty());
  CHECK(names.expire(999).empty());
  auto expired = names.expire(1000);
  REQUIRE(expired.size() == 1);
  CHECK(expired[0].id == 2);
  REQUIRE_FALSE(expired[0].result.ok());
  CHECK(expired[0].result.error().message.find("not published within") != std::string::npos);
  CHECK(names.waiters() == 0);
}

TEST_CASE("a first-read name goes to one reader only, the earliest waiter first") {
  NameRegistry names;
  auto lookup = pmix_ask(pmi::NameOp::lookup, "once", 0, 0);
  lookup.deadline_ms = 9000;
  CHECK(names.ask(1, lookup, 0).empty());
  CHECK(names.ask(2, lookup, 0).empty());
  auto publish = pmix_ask(pmi::NameOp::publish, "once", 2, 1, "v");
  publish.first_read = true;
  auto answers = names.ask(3, publish, 0);
  REQUIRE(answers.size() == 2);
  CHECK(answers[1].id == 1);  // the earliest waiter; the second still waits
  CHECK(names.waiters() == 1);
  // A second first-read publish reaches the second waiter; a plain lookup then finds nothing.
  answers = names.ask(4, publish, 0);
  REQUIRE(answers.size() == 2);
  CHECK(answers[1].id == 2);
  CHECK_FALSE(names.ask(5, pmix_ask(pmi::NameOp::lookup, "once", 0, 0), 0).front().result.ok());
  // Without waiters, the first lookup reads it and takes it away.
  names.ask(6, publish, 0);
  CHECK(names.ask(7, pmix_ask(pmi::NameOp::lookup, "once", 1, 0), 0).front().result.ok());
  CHECK_FALSE(names.ask(8, pmix_ask(pmi::NameOp::lookup, "once", 1, 0), 0).front().result.ok());
}

TEST_CASE("PMIx scopes: a node-scoped name is seen on its node only; unpublish is the owner's") {
  NameRegistry names;
  auto publish = pmix_ask(pmi::NameOp::publish, "local", 0, 0, "v");
  publish.scope = NameScope::node;
  REQUIRE(names.ask(1, publish, 0).front().result.ok());
  CHECK_FALSE(names.ask(2, pmix_ask(pmi::NameOp::lookup, "local", 3, 1), 0).front().result.ok());
  CHECK(names.ask(3, pmix_ask(pmi::NameOp::lookup, "local", 1, 0), 0).front().result.ok());
  // Another rank may not take it back; the owner may, and "" takes all of the owner's.
  CHECK_FALSE(names.ask(4, pmix_ask(pmi::NameOp::unpublish, "local", 1, 0), 0).front().result.ok());
  REQUIRE(names.ask(5, pmix_ask(pmi::NameOp::publish, "second", 0, 0, "w"), 0).front().result.ok());
  CHECK(names.ask(6, pmix_ask(pmi::NameOp::unpublish, "", 0, 0), 0).front().result.ok());
  CHECK_FALSE(names.ask(7, pmix_ask(pmi::NameOp::lookup, "second", 1, 0), 0).front().result.ok());
}

TEST_CASE("waiters are bounded, and dropped with an answer when the launch ends") {
  NameRegistry names;
  auto lookup = pmix_ask(pmi::NameOp::lookup, "svc", 0, 0);
  lookup.deadline_ms = 100;
  for (NameRegistry::Id id = 1; id <= kMaxNameWaiters; ++id)
    REQUIRE(names.ask(id, lookup, 0).empty());
  auto refused = names.ask(kMaxNameWaiters + 1, lookup, 0);
  REQUIRE(refused.size() == 1);
  CHECK_FALSE(refused[0].result.ok());
  auto dropped = names.drop_waiters("launch ended");
  CHECK(dropped.size() == kMaxNameWaiters);
  CHECK(names.waiters() == 0);
  // PMIx values may be larger than PMI's, within their own bound.
  CHECK(names
            .ask(1,
                 pmix_ask(pmi::NameOp::publish, "big", 0, 0,
                          std::string(kMaxPmixNameValueBytes, 'v')),
                 0)
            .front()
            .result.ok());
  CHECK_FALSE(names
                  .ask(2,
                       pmix_ask(pmi::NameOp::publish, "bigger", 0, 0,
                                std::string(kMaxPmixNameValueBytes + 1, 'v')),
                       0)
                  .front()
                  .result.ok());
}

}  // namespace lattice::agent
