// docs/protocol.md's rpc frame vectors (read from the document at run time) against what a real
// session writes, and read back by a real session as the Envelopes they are documented to be.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "base/strings.hpp"
#include "protocol_vectors.hpp"
#include "rpc/session.hpp"
#include "rpc_test_support.hpp"

using namespace lattice;
using namespace lattice::rpc;
using lattice::testing::ProtocolVectors;

TEST_CASE("docs/protocol.md: a heartbeat call, its answer and an error answer are its frames") {
  auto loaded = ProtocolVectors::load("rpc");
  REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error().message));
  ProtocolVectors& v = loaded.value();
  const std::string& request = v.bytes("heartbeat_request_frame");
  const std::string& answer = v.bytes("heartbeat_response_frame");
  const std::string& refusal = v.bytes("error_response_frame");

  // The launcher's side: its first call on a link.
  test::RecordingTransport launcher_wire;
  Session launcher(launcher_wire, {});
  std::optional<std::string> heard;  // "ok", or the error a call failed with
  auto beat = [] {
    Outgoing msg;
    msg.body().setHeartbeat();
    return msg;
  };
  auto record = [&](Result<schema::Envelope::Reader> reply) {
    heard = reply ? "ok" : reply.error().message;
  };
  launcher.call(beat(), 1000, record);
  REQUIRE(launcher_wire.writes.size() == 1);
  CHECK(to_hex(launcher_wire.writes[0]) == to_hex(request));

  // The agent's side reads it as a heartbeat request and answers it, once well and once not.
  test::RecordingTransport agent_wire;
  Session::Handlers handlers;
  int requests = 0;
  handlers.on_message = [&](uint64_t id, schema::Envelope::Reader envelope) {
    ++requests;
    CHECK(id == 1);
    CHECK(envelope.getBody().isHeartbeat());
  };
  Session agent(agent_wire, handlers);
  agent.receive(request);
  CHECK(requests == 1);
  agent.respond(1, Outgoing());
  agent.respond_error(1, "no launch 'x'");
  REQUIRE(agent_wire.writes.size() == 2);
  CHECK(to_hex(agent_wire.writes[0]) == to_hex(answer));
  CHECK(to_hex(agent_wire.writes[1]) == to_hex(refusal));

  // Each answers request 1: the empty one completes it, the error one fails it with its text.
  launcher.receive(answer);
  CHECK(heard == "ok");
  test::RecordingTransport other_wire;
  Session other(other_wire, {});
  heard.reset();
  other.call(beat(), 1000, record);
  other.receive(refusal);
  CHECK(heard == "no launch 'x'");
  CHECK(join(v.unused(), ", ") == "");
}
