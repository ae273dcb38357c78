// Protocol versions between sessions: adjacent versions are served, others are refused with
// both versions named, whether the far version comes in a request or in a response.
#include "rpc/version.hpp"

#include <doctest/doctest.h>

#include <string>

#include "rpc/session.hpp"
#include "rpc_test_support.hpp"

using namespace lattice;
using namespace lattice::rpc;

namespace {

Outgoing signal_of_version(uint16_t version) {
  Outgoing msg;
  msg.envelope().setVersion(version);
  msg.body().initSignalProcesses().setSignal(15);
  return msg;
}

struct Answer {
  bool called = false;
  std::string error;
};

Session::ResponseCallback into(Answer& answer) {
  return [&answer](Result<schema::Envelope::Reader> r) {
    answer.called = true;
    if (!r.ok()) answer.error = r.error().message;
  };
}

}  // namespace

TEST_CASE("versions one apart are adjacent, others are not") {
  CHECK(kProtocolVersion == 2);
  CHECK(adjacent_version(kProtocolVersion - 1));
  CHECK(adjacent_version(kProtocolVersion));
  CHECK(adjacent_version(kProtocolVersion + 1));
  CHECK_FALSE(adjacent_version(0));
  CHECK_FALSE(adjacent_version(kProtocolVersion + 2));
  CHECK_FALSE(adjacent_version(65535));
  CHECK(version_refusal(kProtocolVersion + 1).empty());
  CHECK(version_refusal(9) ==
        "the peer speaks protocol version 9 and this side 2: only adjacent versions (1 to 3) "
        "work together; upgrade the older side");
}

TEST_CASE("every message is stamped with this side's version") {
  Outgoing msg;
  CHECK(msg.envelope().getVersion() == kProtocolVersion);
}

TEST_CASE("requests of adjacent versions are served") {
  for (uint16_t version : {uint16_t{1}, uint16_t{2}, uint16_t{3}}) {
    CAPTURE(version);
    int served = 0;
    Session::Handlers server;
    test::Link* link_ptr = nullptr;
    server.on_message = [&](uint64_t id, schema::Envelope::Reader) {
      ++served;
      link_ptr->b.respond(id, Outgoing());
    };
    test::Link link({}, server);
    link_ptr = &link;
    Answer answer;
    link.a.call(signal_of_version(version), 1000, into(answer));
    link.pump();
    CHECK(served == 1);
    CHECK(answer.called);
    CHECK(answer.error.empty());
    CHECK_FALSE(link.b.closed());
  }
}

TEST_CASE("a request of a far version is refused, answered with both versions, and closes") {
  int served = 0;
  std::string server_error;
  Session::Handlers server;
  server.on_message = [&](uint64_t, schema::Envelope::Reader) { ++served; };
  server.on_error = [&](const std::string& reason) { server_error = reason; };
  test::Link link({}, server);
  // The answer goes out before the close, as a connection's socket takes it (test::Wire drops
  // what is queued once closed).
  link.b_to_a.synchronous = true;
  Answer answer;
  link.a.call(signal_of_version(9), 1000, into(answer));
  link.pump();
  CHECK(served == 0);
  // The refusing side names both versions in its log (on_error) and to the peer (the answer),
  // so a peer that does not check versions itself still hears why.
  const std::string why = version_refusal(9);
  CHECK(server_error == why);
  CHECK(answer.error == version_answer(9));
  CHECK(version_answer(9) ==
        "you speak protocol version 9 and this peer 2: only adjacent versions (1 to 3) work "
        "together; upgrade the older side");
  CHECK(link.b.closed());
  CHECK(link.a_to_b.closed == false);
  CHECK(link.b_to_a.closed);
}

TEST_CASE("a notification of a far version closes the session unserved") {
  int served = 0;
  Session::Handlers server;
  server.on_message = [&](uint64_t, schema::Envelope::Reader) { ++served; };
  test::Link link({}, server);
  link.a.notify(signal_of_version(0));
  link.pump();
  CHECK(served == 0);
  CHECK(link.b.closed());
}

TEST_CASE("a response of a far version fails the call with both versions named") {
  Session::Handlers server;
  test::Link* link_ptr = nullptr;
  server.on_message = [&](uint64_t id, schema::Envelope::Reader) {
    Outgoing reply;
    reply.envelope().setVersion(kProtocolVersion + 2);
    link_ptr->b.respond(id, std::move(reply));
  };
  std::string client_error;
  Session::Handlers client;
  client.on_error = [&](const std::string& reason) { client_error = reason; };
  test::Link link(client, server);
  link_ptr = &link;
  Answer answer;
  link.a.call(signal_of_version(kProtocolVersion), 1000, into(answer));
  link.pump();
  CHECK(client_error == version_refusal(kProtocolVersion + 2));
  CHECK(answer.error == "connection closed: " + version_refusal(kProtocolVersion + 2));
  CHECK(link.a.closed());
}
