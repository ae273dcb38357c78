// PendingCalls on its own: ids, taking by id, expiry by the time passed in, and take_all.
#include "rpc/pending_calls.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace lattice;
using namespace lattice::rpc;

namespace {

// A callback that appends `tag` and the error text (or "ok") to `log`.
ResponseCallback logging(std::vector<std::string>& log, std::string tag) {
  return [&log, tag](Result<schema::Envelope::Reader> r) {
    log.push_back(tag + ":" + (r.ok() ? std::string("ok") : r.error().message));
  };
}

}  // namespace

TEST_CASE("ids start at 1 and never repeat") {
  PendingCalls calls;
  std::vector<std::string> log;
  uint64_t a = calls.add(10, logging(log, "a"));
  uint64_t b = calls.add(10, logging(log, "b"));
  CHECK(a == 1);
  CHECK(b == 2);
  CHECK(calls.take(a).has_value());
  CHECK(calls.add(10, logging(log, "c")) == 3);
  CHECK(calls.size() == 2);
}

TEST_CASE("take returns the callback once") {
  PendingCalls calls;
  std::vector<std::string> log;
  uint64_t id = calls.add(50, logging(log, "x"));
  auto cb = calls.take(id);
  REQUIRE(cb.has_value());
  (*cb)(make_error("e"));
  CHECK(log == std::vector<std::string>{"x:e"});
  CHECK_FALSE(calls.take(id).has_value());
  CHECK_FALSE(calls.take(999).has_value());
  CHECK(calls.size() == 0);
  // A taken call no longer expires.
  CHECK(calls.take_expired(1000).empty());
}

TEST_CASE("take_expired removes exactly the calls due, earliest deadline first") {
  PendingCalls calls;
  std::vector<std::string> log;
  uint64_t late = calls.add(300, logging(log, "late"));
  uint64_t early = calls.add(100, logging(log, "early"));
  uint64_t mid = calls.add(200, logging(log, "mid"));

  CHECK(calls.take_expired(99).empty());
  auto due = calls.take_expired(200);  // a deadline equal to now has passed
  REQUIRE(due.size() == 2);
  CHECK(due[0].request_id == early);
  CHECK(due[1].request_id == mid);
  CHECK(calls.size() == 1);
  CHECK(calls.take(late).has_value());
}

TEST_CASE("take_all empties the table in request order") {
  PendingCalls calls;
  std::vector<std::string> log;
  calls.add(500, logging(log, "first"));
  calls.add(100, logging(log, "second"));
  auto all = calls.take_all();
  REQUIRE(all.size() == 2);
  CHECK(all[0].request_id == 1);
  CHECK(all[1].request_id == 2);
  for (auto& call : all) call.callback(make_error("gone"));
  CHECK(log == std::vector<std::string>{"first:gone", "second:gone"});
  CHECK(calls.size() == 0);
  CHECK(calls.take_expired(1000).empty());
}
