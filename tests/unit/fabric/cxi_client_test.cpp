// The client's flows over a scripted transport: what it asks, how it retries (connection
// failures, timeouts, 5xx, with doubling waits), what it refuses at once (4xx, bad JSON), and
// that a service whose key cannot be had is given back.
#include "fabric/cxi_client.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <vector>

using namespace lattice;
using namespace lattice::fabric;

namespace {

using T = HttpOutcome::Transport;

struct FakeTransport : HttpTransport {
  struct Sent {
    std::string method, url, body, authorization;
  };
  std::vector<Sent> sent;
  std::deque<HttpOutcome> answers;  // in order; the default when empty: connect_failed
  std::deque<std::function<void()>> pending;
  void send(HttpRequest r, std::function<void(HttpOutcome)> done) override {
    sent.push_back({r.method, r.url, r.body, r.authorization ? r.authorization : ""});
    HttpOutcome outcome{T::connect_failed, "Connection refused", 0, {}};
    if (!answers.empty()) {
      outcome = answers.front();
      answers.pop_front();
    }
    pending.push_back([done, outcome] { done(outcome); });  // later, never from send()
  }
};

struct FakeWaiter : Waiter {
  std::vector<uint64_t> waits;
  std::deque<std::function<void()>> pending;
  void after(uint64_t ms, std::function<void()> fn) override {
    waits.push_back(ms);
    pending.push_back(std::move(fn));
  }
};

secure::Secret token(const char* text) {
  secure::Secret s(std::strlen(text) + 1);
  std::memcpy(s.data(), text, std::strlen(text));
  return s;
}

HttpOutcome answer(long status, std::string body) { return {T::ok, "", status, std::move(body)}; }

struct Rig {
  FakeTransport transport;
  FakeWaiter waiter;
  CxiClient client{transport, waiter, {"http://fm:8000/", 3, 100}, token("tok-1")};
  // Runs everything queued until nothing is left.
  void drain() {
    while (!transport.pending.empty() || !waiter.pending.empty()) {
      auto& queue = !transport.pending.empty() ? transport.pending : waiter.pending;
      auto fn = std::move(queue.front());
      queue.pop_front();
      fn();
    }
  }
};

}  // namespace

TEST_CASE("provision: POST the service, GET its key, with the bearer token") {
  Rig rig;
  rig.transport.answers = {answer(201, R"({"id":"svc-1","svc_id":7})"),
                           answer(200, R"({"auth_key":"a1b2"})")};
  std::optional<Result<CxiCredentials>> got;
  rig.client.provision({42, "alloc", {"n1", "n2"}},
                       [&](Result<CxiCredentials> r) { got = std::move(r); });
  CHECK_FALSE(got);  // nothing answers from inside the call
  rig.drain();
  REQUIRE(got);
  REQUIRE(*got);
  CHECK((*got)->service_id == "svc-1");
  CHECK((*got)->svc_id == 7);
  CHECK((*got)->vni == 42);
  REQUIRE((*got)->auth_key.size() == 2);
  CHECK((*got)->auth_key.data()[0] == 0xa1);
  REQUIRE(rig.transport.sent.size() == 2);
  CHECK(rig.transport.sent[0].method == "POST");
  CHECK(rig.transport.sent[0].url == "http://fm:8000/fabric/cxi/services");
  CHECK(rig.transport.sent[0].body == R"({"allocation_id":"alloc","nodes":["n1","n2"],"vni":42})");
  CHECK(rig.transport.sent[0].authorization == "Authorization: Bearer tok-1");
  CHECK(rig.transport.sent[1].method == "GET");
  CHECK(rig.transport.sent[1].url == "http://fm:8000/fabric/cxi/services/svc-1/auth");
  CHECK(rig.transport.sent[1].authorization == "Authorization: Bearer tok-1");
}

TEST_CASE("connection failures, timeouts and 5xx are retried with doubling waits, then reported") {
  Rig rig;
  rig.transport.answers = {HttpOutcome{T::connect_failed, "Connection refused", 0, {}},
                           HttpOutcome{T::timed_out, "Operation timed out", 0, {}},
                           answer(503, R"({"error":"busy"})")};
  std::optional<Status> got;
  rig.client.release("svc-9", [&](Status s) { got = s; });
  rig.drain();
  REQUIRE(got);
  REQUIRE_FALSE(*got);
  CHECK(rig.transport.sent.size() == 3);
  CHECK(rig.waiter.waits == std::vector<uint64_t>{100, 200});
  CHECK(got->error().message ==
        "fabric manager http://fm:8000: DELETE /fabric/cxi/services/svc-9: HTTP 503: busy (3 "
        "attempts)");

  Rig recovers;
  recovers.transport.answers = {answer(502, ""), answer(204, "")};
  std::optional<Status> ok;
  recovers.client.release("svc-9", [&](Status s) { ok = s; });
  recovers.drain();
  REQUIRE(ok);
  CHECK(*ok);
  CHECK(recovers.transport.sent.size() == 2);
}

TEST_CASE("a 4xx fails at once with the server's words; so does a bad answer") {
  Rig rig;
  rig.transport.answers = {answer(401, R"({"error":"invalid bearer token"})")};
  std::optional<Result<CxiCredentials>> got;
  rig.client.provision({1, "a", {"n1"}}, [&](Result<CxiCredentials> r) { got = std::move(r); });
  rig.drain();
  REQUIRE(got);
  REQUIRE_FALSE(*got);
  CHECK(got->error().message ==
        "fabric manager http://fm:8000: POST /fabric/cxi/services: HTTP 401: invalid bearer token");
  CHECK(rig.transport.sent.size() == 1);
  CHECK(rig.waiter.waits.empty());

  Rig garbled;
  garbled.transport.answers = {answer(201, "<html>")};
  std::optional<Result<CxiCredentials>> bad;
  garbled.client.provision({1, "a", {"n1"}}, [&](Result<CxiCredentials> r) { bad = std::move(r); });
  garbled.drain();
  REQUIRE(bad);
  REQUIRE_FALSE(*bad);
  CHECK(bad->error().message.find("POST /fabric/cxi/services: the service answer is not JSON") !=
        std::string::npos);
}

TEST_CASE("a service whose key cannot be had is deleted before the error is reported") {
  Rig rig;
  rig.transport.answers = {answer(201, R"({"id":"svc-3","svc_id":1})"),
                           answer(200, R"({"auth_key":"not hex"})"), answer(204, "")};
  std::optional<Result<CxiCredentials>> got;
  rig.client.provision({1, "a", {"n1"}}, [&](Result<CxiCredentials> r) { got = std::move(r); });
  rig.drain();
  REQUIRE(got);
  REQUIRE_FALSE(*got);
  CHECK(got->error().message.find(
            "GET /fabric/cxi/services/svc-3/auth: the auth key must be hex") != std::string::npos);
  REQUIRE(rig.transport.sent.size() == 3);
  CHECK(rig.transport.sent[2].method == "DELETE");
  CHECK(rig.transport.sent[2].url == "http://fm:8000/fabric/cxi/services/svc-3");
}

TEST_CASE("an unreachable fabric manager is reported after the last attempt, naming it") {
  Rig rig;  // no answers: every exchange is refused
  std::optional<Result<CxiCredentials>> got;
  rig.client.provision({1, "a", {"n1"}}, [&](Result<CxiCredentials> r) { got = std::move(r); });
  rig.drain();
  REQUIRE(got);
  REQUIRE_FALSE(*got);
  CHECK(
      got->error().message ==
      "fabric manager http://fm:8000: POST /fabric/cxi/services: Connection refused (3 attempts)");
}
