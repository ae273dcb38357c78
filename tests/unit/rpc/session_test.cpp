// Session between well-behaved peers: calls and responses (in and out of order), notifications
// of every kind, error responses, deadlines, fail_all and the size limit on the sending side.
#include "rpc/session.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "base/strings.hpp"
#include "rpc_test_support.hpp"

using namespace lattice;
using namespace lattice::rpc;

namespace {

Outgoing signal_message(int signal) {
  Outgoing msg;
  msg.body().initSignalProcesses().setSignal(signal);
  return msg;
}

// What a response callback saw: the error text, or the signal number of a signalProcesses body.
struct Outcome {
  bool called = false;
  std::string error;
  ErrorKind kind = ErrorKind::other;
  int signal = 0;
};

Session::ResponseCallback record(Outcome& out) {
  return [&out](Result<schema::Envelope::Reader> r) {
    out.called = true;
    if (!r.ok()) {
      out.error = r.error().message;
      out.kind = r.error().kind;
      return;
    }
    auto body = r->getBody();
    if (body.isSignalProcesses()) out.signal = body.getSignalProcesses().getSignal();
  };
}

}  // namespace

TEST_CASE("two sessions back to back: a call and its response, in any chunking") {
  for (size_t piece : {size_t{1}, size_t{3}, size_t{4096}}) {
    CAPTURE(piece);
    std::vector<uint64_t> seen_ids;
    Session::Handlers server;
    test::Link* link_ptr = nullptr;
    server.on_message = [&](uint64_t id, schema::Envelope::Reader request) {
      seen_ids.push_back(id);
      REQUIRE(request.getBody().isLaunchProcesses());
      Outgoing reply;
      reply.body().initLaunchAccepted().setNodeId(
          cat("n", request.getBody().getLaunchProcesses().getWorldSize()));
      link_ptr->b.respond(id, std::move(reply));
    };
    test::Link link({}, server);
    link_ptr = &link;

    Outgoing request;
    request.body().initLaunchProcesses().setWorldSize(1234);
    std::string node;
    uint64_t id = link.a.call(std::move(request), 1000, [&](Result<schema::Envelope::Reader> r) {
      REQUIRE(r.ok());
      REQUIRE(r->getIsResponse());
      node = r->getBody().getLaunchAccepted().getNodeId();
    });
    CHECK(id != 0);
    CHECK(link.a.pending() == 1);
    link.pump(piece);
    CHECK(seen_ids == std::vector<uint64_t>{id});
    CHECK(node == "n1234");
    CHECK(link.a.pending() == 0);
  }
}

TEST_CASE("every body kind arrives intact as a notification") {
  std::vector<std::string> received;
  Session::Handlers server;
  server.on_message = [&](uint64_t id, schema::Envelope::Reader envelope) {
    CHECK(id == 0);
    received.push_back(test::text_of(envelope));
  };
  test::Link link({}, server);
  std::vector<std::string> sent;
  for (auto& msg : test::one_of_each_body()) {
    sent.push_back(test::text_of(msg.envelope().asReader()));
    link.a.notify(std::move(msg));
  }
  link.pump(1);
  CHECK(received == sent);
  CHECK(link.b_to_a.queued.empty());  // notifications get no response
}

TEST_CASE("responses are matched to their calls when they come back out of order") {
  std::vector<std::pair<uint64_t, int>> requests;
  Session::Handlers server;
  server.on_message = [&](uint64_t id, schema::Envelope::Reader envelope) {
    requests.emplace_back(id, envelope.getBody().getSignalProcesses().getSignal());
  };
  test::Link link({}, server);

  Outcome out[3];
  for (int i = 0; i < 3; ++i) link.a.call(signal_message(i + 1), 1000, record(out[i]));
  link.pump();
  REQUIRE(requests.size() == 3);
  for (auto it = requests.rbegin(); it != requests.rend(); ++it)
    link.b.respond(it->first, signal_message(it->second * 10));
  link.pump();
  for (int i = 0; i < 3; ++i) {
    CHECK(out[i].called);
    CHECK(out[i].error.empty());
    CHECK(out[i].signal == (i + 1) * 10);
  }
  CHECK(link.a.pending() == 0);
}

TEST_CASE("respond_error reaches the caller's callback as an error") {
  Session::Handlers server;
  test::Link* link_ptr = nullptr;
  server.on_message = [&](uint64_t id, schema::Envelope::Reader) {
    link_ptr->b.respond_error(id, "no launch 'x'");
  };
  test::Link link({}, server);
  link_ptr = &link;
  Outcome out;
  link.a.call(signal_message(1), 1000, record(out));
  link.pump();
  CHECK(out.called);
  CHECK(out.error == "no launch 'x'");
  // The peer's own answer: it did not do what was asked (a timeout or a lost link says nothing).
  CHECK(out.kind == ErrorKind::refused);
}

TEST_CASE("a request without an on_message handler gets an error response") {
  test::Link link;
  Outcome out;
  link.a.call(signal_message(1), 1000, record(out));
  link.pump();
  CHECK(out.error == "no requests are served on this connection");
}

TEST_CASE("deadlines expire with the right error, and a late response is dropped") {
  std::vector<uint64_t> ids;
  Session::Handlers server;
  server.on_message = [&](uint64_t id, schema::Envelope::Reader) { ids.push_back(id); };
  int errors = 0;
  Session::Handlers client;
  client.on_error = [&](const std::string&) { ++errors; };
  test::Link link(client, server);

  Outcome first, second;
  uint64_t first_id = link.a.call(signal_message(1), 100, record(first));
  link.a.call(signal_message(2), 200, record(second));
  link.pump();

  link.a.expire(99);
  CHECK_FALSE(first.called);
  link.a.expire(150);
  CHECK(first.error == "timed out waiting for the response to request " + std::to_string(first_id));
  CHECK(first.kind != ErrorKind::refused);
  CHECK_FALSE(second.called);
  CHECK(link.a.pending() == 1);
  link.a.expire(200);
  CHECK(second.error.find("timed out") == 0);
  CHECK(link.a.pending() == 0);

  // The peer answers after all: nobody waits for it any more; the connection stays up.
  link.b.respond(ids.at(0), signal_message(5));
  link.pump();
  CHECK(first.signal == 0);
  CHECK(errors == 0);
  CHECK_FALSE(link.a.closed());
  CHECK_FALSE(link.b_to_a.closed);
}

TEST_CASE("fail_all fails every pending call and closes the session") {
  test::RecordingTransport transport;
  Session session(transport, {});
  Outcome one, two;
  session.call(signal_message(1), 100, record(one));
  session.call(signal_message(2), 100000, record(two));
  CHECK(transport.writes.size() == 2);

  session.fail_all("connection closed: end of stream");
  CHECK(one.error == "connection closed: end of stream");
  CHECK(two.error == "connection closed: end of stream");
  CHECK(session.pending() == 0);
  CHECK(session.closed());

  Outcome late;
  CHECK(session.call(signal_message(3), 100, record(late)) == 0);
  CHECK(late.error == "connection closed: end of stream");
  session.notify(signal_message(4));
  session.respond(7, signal_message(4));
  CHECK(transport.writes.size() == 2);
}

TEST_CASE("the size limit on the sending side") {
  SessionOptions small;
  small.max_message_bytes = 1024;
  Session::Handlers server;
  test::Link* link_ptr = nullptr;
  server.on_message = [&](uint64_t id, schema::Envelope::Reader) {
    Outgoing big;
    big.body().initOutput().setLaunchId(std::string(2000, 'r'));
    link_ptr->b.respond(id, std::move(big));
  };
  test::Link link({}, server, small);
  link_ptr = &link;

  SUBCASE("an oversized call fails before call() returns and sends nothing") {
    Outgoing big;
    big.body().initOutput().setLaunchId(std::string(2000, 'c'));
    Outcome out;
    CHECK(link.a.call(std::move(big), 1000, record(out)) == 0);
    CHECK(out.error.find("exceeds the limit of 1024 bytes") != std::string::npos);
    CHECK(link.a.pending() == 0);
    CHECK(link.a_to_b.queued.empty());
  }
  SUBCASE("an oversized response becomes an error response") {
    Outcome out;
    link.a.call(signal_message(1), 1000, record(out));
    link.pump();
    CHECK(out.error.find("the response could not be sent: message of") == 0);
    CHECK_FALSE(link.b.closed());
  }
  SUBCASE("an oversized notification is dropped, the session stays usable") {
    Outgoing big;
    big.body().initOutput().setLaunchId(std::string(2000, 'n'));
    link.a.notify(std::move(big));
    CHECK(link.a_to_b.queued.empty());
    Outcome out;
    link.a.call(signal_message(1), 1000, record(out));
    link.pump();
    CHECK(out.called);
  }
}

TEST_CASE("respond_error bounds the text and never sends an empty error") {
  test::RecordingTransport to_caller, to_replier;
  Session caller(to_replier, {});
  Session replier(to_caller, {});
  Outcome first, second;
  uint64_t first_id = caller.call(signal_message(1), 100, record(first));
  uint64_t second_id = caller.call(signal_message(2), 100, record(second));
  replier.respond_error(first_id, "");
  replier.respond_error(second_id, std::string(kMaxErrorTextBytes * 3, 'e'));
  replier.respond_error(0, "to a notification: nothing is sent");
  REQUIRE(to_caller.writes.size() == 2);
  for (auto& frame : to_caller.writes) caller.receive(frame);
  CHECK(first.error == "unspecified error");
  CHECK(second.error == std::string(kMaxErrorTextBytes, 'e'));
}
