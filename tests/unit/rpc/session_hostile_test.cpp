// Session against a hostile or buggy peer, and against owners that re-enter or destroy it from
// their handlers: every failure ends in on_error and a closed transport, never in a throw.
#include <capnp/any.h>
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rpc/session.hpp"
#include "rpc_test_support.hpp"

using namespace lattice;
using namespace lattice::rpc;

namespace {

// A session on a recording transport that logs on_error reasons and counts messages.
struct Harness {
  explicit Harness(SessionOptions options = {},
                   std::function<void(uint64_t, schema::Envelope::Reader)> on_message = {})
      : session(transport, handlers(std::move(on_message)), options) {}

  Session::Handlers handlers(std::function<void(uint64_t, schema::Envelope::Reader)> on_message) {
    Session::Handlers h;
    h.on_message = on_message ? std::move(on_message)
                              : [this](uint64_t, schema::Envelope::Reader) { ++messages; };
    h.on_error = [this](const std::string& reason) { errors.push_back(reason); };
    return h;
  }

  test::RecordingTransport transport;
  std::vector<std::string> errors;
  int messages = 0;
  Session session;
};

// A launch request with `vars` environment variables: a list of structs with texts.
std::string env_frame(unsigned vars) {
  Outgoing msg;
  auto list = msg.body().initLaunchProcesses().initEnv(vars);
  for (unsigned i = 0; i < vars; ++i) list[i].setName("SOME_NAME");
  return test::frame_of(msg);
}

std::string heartbeat_frame() {
  Outgoing msg;
  msg.body().setHeartbeat();
  return test::frame_of(msg);
}

std::string from_hex(std::string_view hex) {
  std::string s;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    s += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  return s;
}

std::string bytes_of(std::initializer_list<unsigned> values) {
  std::string s;
  for (unsigned v : values) s += static_cast<char>(v);
  return s;
}

}  // namespace

TEST_CASE("a 16 GiB header closes the session and fails its pending calls") {
  Harness h;
  std::string failure;
  h.session.call(Outgoing(), 1000,
                 [&](Result<schema::Envelope::Reader> r) { failure = r.error().message; });
  std::string header = bytes_of({0, 0, 0, 0, 0, 0, 0, 0x80});
  CHECK_NOTHROW(h.session.receive(header));
  REQUIRE(h.errors.size() == 1);
  CHECK(h.errors[0].find("17179869192 bytes") != std::string::npos);
  CHECK(h.transport.closes == 1);
  CHECK(failure == "connection closed: " + h.errors[0]);
  CHECK(h.session.closed());
  // Whatever else the peer sends is ignored; on_error is not repeated.
  h.session.receive(heartbeat_frame());
  CHECK(h.messages == 0);
  CHECK(h.errors.size() == 1);
}

TEST_CASE("a huge message read past the traversal limit -> on_error, not a crash") {
  SessionOptions tight;
  tight.traversal_limit_words = 64;
  int read = 0;
  Harness h(tight, [&](uint64_t, schema::Envelope::Reader envelope) {
    for (auto var : envelope.getBody().getLaunchProcesses().getEnv()) read += var.hasName();
  });
  std::string frame = env_frame(500) + heartbeat_frame();
  CHECK_NOTHROW(h.session.receive(frame));
  REQUIRE(h.errors.size() == 1);
  CHECK(h.errors[0].find("traversal limit") != std::string::npos);
  CHECK(h.transport.closes == 1);
  CHECK(read < 500);

  SUBCASE("the default limit lets the same message through") {
    int full = 0;
    Harness ok({}, [&](uint64_t, schema::Envelope::Reader envelope) {
      for (auto var : envelope.getBody().getLaunchProcesses().getEnv()) full += var.hasName();
    });
    ok.session.receive(frame);
    CHECK(ok.errors.empty());
    CHECK(full == 500);
  }
}

TEST_CASE("a small message cannot list millions of empty entries (found by fuzz_rpc_session)") {
  // A 208-byte pmiFence whose entries pointer (a list of (key, value) structs before the wire's
  // version 2, packed bytes since) is a list of 4194307 zero-sized structs: capnp charges one
  // word per such element, so only a traversal budget tied to the message's size stops it. The
  // handler reads the pointer as a list of two-text structs (EnvVar's shape, KvEntry's then),
  // whatever the schema now says it holds.
  std::string frame = from_hex(
      "00000000190000000000000002000200000000000000000000000700000000000000000000000000000000000300"
      "0200"
      "030000000000000005000000010000000200000000000000050000003200000005000000370000006a6f622d3100"
      "0000"
      "0c000001000000001500000032000000150000004200000015000000300000001500000042000000150000003200"
      "0000"
      "150000004a0000006b65792d3000000076616c75652d30006b65792d3100000076616c75652d37006b65792d3200"
      "0000"
      "76616c75652d31340000000000000000");
  size_t read = 0;
  Harness h({}, [&](uint64_t, schema::Envelope::Reader envelope) {
    auto fence = capnp::toAny(envelope.getBody().getPmiFence());
    auto entries = fence.getPointerSection()[1].getAs<capnp::List<schema::EnvVar>>();
    for (auto entry : entries) read += entry.getName().size() + 1;
  });
  CHECK_NOTHROW(h.session.receive(frame));
  REQUIRE(h.errors.size() == 1);
  CHECK(h.errors[0].find("traversal limit") != std::string::npos);
  CHECK(read < 4 * frame.size() / 8);
}

TEST_CASE("a message nested deeper than the nesting limit -> on_error") {
  SessionOptions shallow;
  shallow.nesting_limit = 2;
  Harness h(shallow, [](uint64_t, schema::Envelope::Reader envelope) {
    auto peers = envelope.getBody().getLaunchProcesses().getPeers();
    (void)peers[0].getHost();
  });
  Outgoing msg;
  msg.body().initLaunchProcesses().initPeers(1)[0].setHost("10.0.0.1");
  CHECK_NOTHROW(h.session.receive(test::frame_of(msg)));
  REQUIRE(h.errors.size() == 1);
  CHECK(h.errors[0].find("nest") != std::string::npos);
}

TEST_CASE("a root pointer out of bounds -> on_error") {
  Harness h;
  // One segment of one word whose root struct pointer points 1000 words past the segment.
  std::string frame = bytes_of({0, 0, 0, 0, 1, 0, 0, 0, 0xa0, 0x0f, 0, 0, 1, 0, 0, 0});
  CHECK_NOTHROW(h.session.receive(frame));
  REQUIRE(h.errors.size() == 1);
  CHECK(h.errors[0].find("cannot handle a message") == 0);
  CHECK(h.transport.closes == 1);
}

TEST_CASE("a response with a malformed error field completes its call with an error") {
  Harness h;
  std::vector<std::string> outcomes;
  auto record = [&](Result<schema::Envelope::Reader> r) {
    outcomes.push_back(r.ok() ? std::string("ok") : r.error().message);
  };
  uint64_t id = h.session.call(Outgoing(), 1000, record);
  h.session.call(Outgoing(), 1000, record);

  Outgoing response;
  response.envelope().setRequestId(id);
  response.envelope().setIsResponse(true);
  response.envelope().setError("x");
  std::string frame = test::frame_of(response);
  // Find the error pointer through the root pointer (frame header, then the segment's word 0:
  // a struct pointer whose offset, data size and pointer count locate the Envelope's pointers).
  REQUIRE(frame.size() >= 16);
  uint64_t root = 0;
  std::memcpy(&root, frame.data() + 8, 8);
  REQUIRE((root & 3) == 0);
  int64_t offset = static_cast<int32_t>(root & 0xffffffffu) >> 2;
  uint64_t data_words = (root >> 32) & 0xffff;
  size_t error_at = 8 + 8 * static_cast<size_t>(1 + offset + static_cast<int64_t>(data_words));
  REQUIRE(error_at + 8 <= frame.size());
  uint64_t list = 0;
  std::memcpy(&list, frame.data() + error_at, 8);
  REQUIRE((list & 3) == 1);  // the error text's list pointer
  // Point the text a million words past the end of the segment.
  list = (list & ~uint64_t{0xfffffffc}) | (uint64_t{1000000} << 2);
  std::memcpy(&frame[error_at], &list, 8);

  CHECK_NOTHROW(h.session.receive(frame));
  REQUIRE(outcomes.size() == 2);
  CHECK(outcomes[0].find("malformed response to request " + std::to_string(id)) == 0);
  CHECK(outcomes[1].find("connection closed: cannot handle a message: malformed") == 0);
  REQUIRE(h.errors.size() == 1);
  CHECK(h.errors[0].find("cannot handle a message: malformed response") == 0);
  CHECK(h.transport.closes == 1);
  CHECK(h.session.pending() == 0);
}

TEST_CASE("a handler that throws closes the connection; later messages are not dispatched") {
  int calls = 0;
  Harness h({}, [&](uint64_t, schema::Envelope::Reader) {
    ++calls;
    throw std::runtime_error("boom");
  });
  CHECK_NOTHROW(h.session.receive(heartbeat_frame() + heartbeat_frame()));
  CHECK(calls == 1);
  REQUIRE(h.errors.size() == 1);
  CHECK(h.errors[0] == "cannot handle a message: boom");
  CHECK(h.transport.closes == 1);
}

TEST_CASE("a response to an unknown request is dropped and the connection kept") {
  Harness h;
  test::RecordingTransport out;
  Session replier(out, {});
  replier.respond(77, Outgoing());
  REQUIRE(out.writes.size() == 1);
  h.session.receive(out.writes[0]);
  h.session.receive(heartbeat_frame());
  CHECK(h.errors.empty());
  CHECK(h.messages == 1);
  CHECK(h.transport.closes == 0);
}

TEST_CASE("the session may be destroyed from inside its handlers") {
  test::RecordingTransport transport;
  std::unique_ptr<Session> session;
  int messages = 0;
  std::vector<std::string> errors;
  bool called_back = false;
  Session::Handlers handlers;

  SUBCASE("in on_message: the rest of the input is not dispatched") {
    handlers.on_message = [&](uint64_t, schema::Envelope::Reader) {
      ++messages;
      session.reset();
    };
    session = std::make_unique<Session>(transport, handlers);
    session->receive(heartbeat_frame() + heartbeat_frame());
    CHECK(messages == 1);
    CHECK_FALSE(session);
  }
  SUBCASE("in on_error: pending calls are dropped uncalled") {
    handlers.on_error = [&](const std::string& reason) {
      errors.push_back(reason);
      session.reset();
    };
    session = std::make_unique<Session>(transport, handlers);
    session->call(Outgoing(), 100, [&](Result<schema::Envelope::Reader>) { called_back = true; });
    session->receive(bytes_of({0xff, 0xff, 0, 0, 0, 0, 0, 0}));
    CHECK(errors.size() == 1);
    CHECK_FALSE(called_back);
    CHECK_FALSE(session);
  }
  SUBCASE("in a response callback") {
    session = std::make_unique<Session>(transport, handlers);
    uint64_t id = session->call(Outgoing(), 100, [&](Result<schema::Envelope::Reader> r) {
      called_back = r.ok();
      session.reset();
    });
    test::RecordingTransport out;
    Session replier(out, {});
    replier.respond(id, Outgoing());
    session->receive(out.writes.at(0) + heartbeat_frame());
    CHECK(called_back);
    CHECK_FALSE(session);
  }
  SUBCASE("in an expiry callback: the other expired calls still complete") {
    session = std::make_unique<Session>(transport, handlers);
    int expired = 0;
    for (int i = 0; i < 3; ++i)
      session->call(Outgoing(), 100, [&](Result<schema::Envelope::Reader>) {
        ++expired;
        session.reset();
      });
    session->expire(100);
    CHECK(expired == 3);
    CHECK_FALSE(session);
  }
}

TEST_CASE("a synchronous loopback re-enters the session safely") {
  std::vector<std::string> order;
  Session::Handlers server;
  test::Link* link_ptr = nullptr;
  server.on_message = [&](uint64_t id, schema::Envelope::Reader envelope) {
    if (id == 0) return;
    // The request's body tells the server whether to also notify the client first.
    if (envelope.getBody().isHeartbeat()) link_ptr->b.notify(Outgoing());
    link_ptr->b.respond(id, Outgoing());
  };
  Session::Handlers client;
  client.on_message = [&](uint64_t, schema::Envelope::Reader) {
    order.push_back("notification");
    // A call from inside a handler: its response loops back while we are still dispatching,
    // and must wait until this handler returns.
    link_ptr->a.call(Outgoing(), 100, [&](auto r) { order.push_back(r.ok() ? "inner" : "error"); });
    order.push_back("handler returns");
  };
  test::Link link(client, server);
  link_ptr = &link;
  link.a_to_b.synchronous = true;
  link.b_to_a.synchronous = true;

  SUBCASE("the client's own receive is re-entered: the response waits for the handler") {
    link.b.notify(Outgoing());
    CHECK(order == std::vector<std::string>{"notification", "handler returns", "inner"});
  }
  SUBCASE("the server's receive is re-entered: the inner request waits for its handler") {
    Outgoing request;
    request.body().setHeartbeat();
    link.a.call(std::move(request), 100,
                [&](auto r) { order.push_back(r.ok() ? "outer" : "error"); });
    CHECK(order == std::vector<std::string>{"notification", "handler returns", "outer", "inner"});
  }
  CHECK(link.a.pending() == 0);
  CHECK_FALSE(link.a.closed());
  CHECK_FALSE(link.b.closed());
}
