// Sealed links as the agent's metrics see them, over a real socketpair: each side counts the
// bytes it put on and took off the network (handshake and records), and a link that ends before
// its peer authenticated says why as a fixed cause; one its owner closed says nothing.
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>

#include "../net/net_test_support.hpp"
#include "../secure/secure_test_support.hpp"
#include "link/connection.hpp"

using namespace lattice;
using lattice::net::test::run_until;

namespace {

using secure::testing::key_of;

struct End {
  End(net::Loop& loop, std::unique_ptr<net::Stream> stream, secure::Channel::Side side,
      const secure::Credentials& key, uint64_t handshake_ms = 5000) {
    link::LinkOptions options;
    options.side = side;
    options.credentials = &key;
    options.self = side == secure::Channel::Side::responder
                       ? secure::Identity{secure::Role::agent, "n1"}
                       : secure::Identity{secure::Role::launcher, "l@test"};
    options.handshake_timeout_ms = handshake_ms;
    options.sealed = &sealed;
    rpc::Session::Handlers handlers;
    handlers.on_message = [this](uint64_t, schema::Envelope::Reader) { ++messages; };
    conn = std::make_unique<link::Connection>(
        loop, std::move(stream), std::move(options), std::move(handlers),
        [this](const secure::Identity&) { established = true; },
        [this](const Error& why) { closed = why; });
  }
  link::SealedBytes sealed;
  std::unique_ptr<link::Connection> conn;
  bool established = false;
  int messages = 0;
  std::optional<Error> closed;
};

rpc::Outgoing heartbeat() {
  rpc::Outgoing msg;
  msg.body().setHeartbeat();
  return msg;
}

}  // namespace

TEST_CASE("each side counts the sealed bytes it sent and received, handshake included") {
  net::Loop loop;
  auto key = key_of(4);
  auto pair = net::test::stream_pair(loop);
  End agent(loop, std::move(pair.a), secure::Channel::Side::responder, key);
  End launcher(loop, std::move(pair.b), secure::Channel::Side::initiator, key);
  REQUIRE(run_until(loop, [&] { return agent.established && launcher.established; }));
  CHECK(launcher.sealed.sent > secure::kHandshakeMagic.size());
  launcher.conn->session().notify(heartbeat());
  REQUIRE(run_until(loop, [&] { return agent.messages == 1; }));
  CHECK(agent.sealed.received == launcher.sealed.sent);
  CHECK(launcher.sealed.received == agent.sealed.sent);
  CHECK(agent.conn->refusal().empty());
  agent.conn->close();
  REQUIRE(run_until(loop, [&] { return launcher.closed.has_value(); }));
  CHECK(launcher.conn->refusal().empty());  // it was established
}

TEST_CASE("a link that ends in its handshake names the cause; its owner's close names none") {
  net::Loop loop;
  auto key = key_of(4), other = key_of(5);
  SUBCASE("another key: the responder finds out from M1, and says so to the initiator") {
    auto pair = net::test::stream_pair(loop);
    End agent(loop, std::move(pair.a), secure::Channel::Side::responder, key);
    End launcher(loop, std::move(pair.b), secure::Channel::Side::initiator, other);
    REQUIRE(run_until(loop, [&] { return agent.closed && launcher.closed; }));
    CHECK(launcher.conn->refusal() == "key");
    CHECK(agent.conn->refusal() == "key");
  }
  SUBCASE("a silent peer: timeout") {
    auto pair = net::test::stream_pair(loop);
    End agent(loop, std::move(pair.a), secure::Channel::Side::responder, key, 50);
    REQUIRE(run_until(loop, [&] { return agent.closed.has_value(); }));
    CHECK(agent.conn->refusal() == "timeout");
    pair.b->close();
  }
  SUBCASE("another protocol: not_lattice") {
    auto pair = net::test::stream_pair(loop);
    End agent(loop, std::move(pair.a), secure::Channel::Side::responder, key);
    pair.b->write("GET /metrics HTTP/1.1\r\n\r\n");
    REQUIRE(run_until(loop, [&] { return agent.closed.has_value(); }));
    CHECK(agent.conn->refusal() == "not_lattice");
    pair.b->close();
  }
  SUBCASE("closed by its owner") {
    auto pair = net::test::stream_pair(loop);
    End agent(loop, std::move(pair.a), secure::Channel::Side::responder, key);
    agent.conn->close();
    CHECK(agent.conn->refusal().empty());
    pair.b->close();
  }
}
