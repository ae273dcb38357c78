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
