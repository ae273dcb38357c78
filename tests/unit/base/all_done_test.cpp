#include "base/all_done.hpp"

#include <doctest/doctest.h>

#include <string>

namespace lattice {
namespace {

TEST_CASE("all_done waits for every outcome and says the first failure") {
  int calls = 0;
  std::string said;
  auto one = all_done(3, [&](Status s) {
    ++calls;
    said = s ? "ok" : s.error().message;
  });
  one({});
  one(make_error("node 2 refused"));
  CHECK(calls == 0);
  one(make_error("node 3 refused"));
  CHECK(calls == 1);
  CHECK(said == "node 2 refused");
}

TEST_CASE("all_done: every success is success; nothing expected is done at once") {
  bool ok = false;
  auto one = all_done(2, [&](Status s) { ok = s.ok(); });
  one({});
  CHECK_FALSE(ok);
  one({});
  CHECK(ok);
  int calls = 0;
  all_done(0, [&](Status) { ++calls; });
  CHECK(calls == 1);
}

}  // namespace
}  // namespace lattice
