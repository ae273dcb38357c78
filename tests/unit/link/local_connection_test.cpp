// A local link (LinkOptions::local_peer: the agent's user door, and the launcher's end of it)
// over a real socketpair: established at once as the identity its owner gave, no handshake and
// no seal (the other end is a plain rpc::Session, and every byte on the wire is an rpc frame),
// rpc calls both ways, and EOF reported as the peer closing the link.
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "../net/net_test_support.hpp"
#include "link/connection.hpp"
#include "rpc/framing.hpp"
#include "rpc/limits.hpp"

using namespace lattice;
using lattice::net::test::run_until;

namespace {

// rpc bytes straight onto a stream, unsealed.
class StreamTransport : public rpc::ByteTransport {
 public:
  explicit StreamTransport(net::Stream& stream) : stream_(stream) {}
  void write(std::string bytes) override { stream_.write(std::move(bytes)); }
  void close() override { stream_.close(); }

 private:
  net::Stream& stream_;
};

rpc::Outgoing accepted(const std::string& node) {
  rpc::Outgoing msg;
  msg.body().initLaunchAccepted().setNodeId(node);
  return msg;
}

// The other end of the socketpair: a plain session, no link. It answers every request with
// LaunchAccepted{node "plain"} while `answering`, and keeps every byte it read.
struct PlainEnd {
  explicit PlainEnd(std::unique_ptr<net::Stream> s)
      : stream(std::move(s)),
        transport(*stream),
        session(transport,
                rpc::Session::Handlers{[this](uint64_t id, schema::Envelope::Reader envelope) {
                                         ++messages;
                                         last_body = envelope.getBody().which();
                                         if (id && answering)
                                           session.respond(id, accepted("plain"));
                                       },
                                       [this](const std::string& why) { error = why; }}) {
    stream->start(
        [this](std::string_view bytes) {
          raw.append(bytes);
          session.receive(bytes);
        },
        [this](const Error& why) { ended = why; });
  }

  // How many whole rpc frames `raw` holds; nullopt if it holds anything else.
  std::optional<int> frames() const {
    rpc::FrameDecoder decoder(rpc::kMaxMessageBytes);
    std::string_view input = raw;
    int n = 0;
    for (;;) {
      auto words = decoder.next(input);
      if (!words) return std::nullopt;
      if (words->size() == 0) break;
      ++n;
    }
    if (!input.empty()) return std::nullopt;
    return n;
  }

  std::unique_ptr<net::Stream> stream;
  StreamTransport transport;
  rpc::Session session;
  std::string raw;
  bool answering = true;
  int messages = 0;
  std::optional<schema::Envelope::Body::Which> last_body;
  std::optional<std::string> error;
  std::optional<Error> ended;
};

// The link's end: answers every request with LaunchAccepted{node "agent"}.
struct LocalEnd {
  LocalEnd(net::Loop& loop, std::unique_ptr<net::Stream> stream, secure::Identity peer) {
    link::LinkOptions options;
    options.local_peer = std::move(peer);
    rpc::Session::Handlers handlers;
    handlers.on_message = [this](uint64_t id, schema::Envelope::Reader) {
      ++messages;
      if (id) conn->session().respond(id, accepted("agent"));
    };
    conn = std::make_unique<link::Connection>(
        loop, std::move(stream), std::move(options), std::move(handlers),
        [this](const secure::Identity&) { ++established_calls; },
        [this](const Error& why) { closed = why; });
  }

  std::unique_ptr<link::Connection> conn;
  int messages = 0;
  int established_calls = 0;
  std::optional<Error> closed;
};

// A call's outcome: the answering node's name, or the error.
struct Answer {
  std::optional<std::string> node, error;
  bool done() const { return node || error; }
};

rpc::ResponseCallback record(Answer& answer) {
  return [&answer](Result<schema::Envelope::Reader> reply) {
    if (!reply)
      answer.error = reply.error().message;
    else
      answer.node = std::string(reply->getBody().getLaunchAccepted().getNodeId().cStr());
  };
}

rpc::Outgoing heartbeat() {
  rpc::Outgoing msg;
  msg.body().setHeartbeat();
  return msg;
}

}  // namespace

TEST_CASE("a local link is established at once, as the identity its owner gave") {
  net::Loop loop;
  auto pair = net::test::stream_pair(loop);
  LocalEnd local(loop, std::move(pair.a), secure::Identity{secure::Role::user, "1001"});
  PlainEnd plain(std::move(pair.b));
  CHECK(local.conn->open());
  CHECK(local.conn->local());
  CHECK(local.conn->established());
  CHECK(local.conn->identity().role == secure::Role::user);
  CHECK(local.conn->identity().name == "1001");
  CHECK(secure::describe(local.conn->identity()) == "user 1001");
  // Nothing is sent on its own: no handshake hello.
  run_until(
      loop, [&] { return !plain.raw.empty(); }, 50);
  CHECK(plain.raw.empty());
  CHECK_FALSE(local.closed);
}

TEST_CASE("a local link carries rpc calls both ways as plain frames") {
  net::Loop loop;
  auto pair = net::test::stream_pair(loop);
  LocalEnd local(loop, std::move(pair.a), secure::Identity{secure::Role::agent, "n1"});
  PlainEnd plain(std::move(pair.b));

  // The link calls the plain session: the request reaches it readable, the answer comes back.
  Answer from_plain;
  local.conn->session().call(heartbeat(), UINT64_MAX, record(from_plain));
  REQUIRE(run_until(loop, [&] { return from_plain.done(); }));
  CHECK_MESSAGE(from_plain.node == "plain", from_plain.error.value_or(""));
  CHECK(plain.messages == 1);
  CHECK(plain.last_body == schema::Envelope::Body::HEARTBEAT);

  // The plain session calls the link.
  Answer from_local;
  plain.session.call(heartbeat(), UINT64_MAX, record(from_local));
  REQUIRE(run_until(loop, [&] { return from_local.done(); }));
  CHECK_MESSAGE(from_local.node == "agent", from_local.error.value_or(""));
  CHECK(local.messages == 1);

  // A notification too.
  local.conn->session().notify(heartbeat());
  REQUIRE(run_until(loop, [&] { return plain.messages == 2; }));

  // Every byte the link wrote is an rpc frame: its request, its answer, its notification.
  CHECK(plain.frames() == 3);
  CHECK_FALSE(plain.error);
  CHECK_FALSE(local.closed);
  CHECK_FALSE(plain.ended);

  // Closing the link ends the stream with no final record after the frames.
  local.conn->close();
  CHECK_FALSE(local.conn->open());
  REQUIRE(run_until(loop, [&] { return plain.ended.has_value(); }));
  CHECK(plain.ended->kind == ErrorKind::eof);
  CHECK(plain.frames() == 3);
  CHECK_FALSE(local.closed);  // no callback after close()
}

TEST_CASE("a local link reports EOF as closed by the peer, and fails its pending calls") {
  net::Loop loop;
  auto pair = net::test::stream_pair(loop);
  LocalEnd local(loop, std::move(pair.a), secure::Identity{secure::Role::user, "1001"});
  PlainEnd plain(std::move(pair.b));
  plain.answering = false;

  Answer pending;
  local.conn->session().call(heartbeat(), UINT64_MAX, record(pending));
  REQUIRE(run_until(loop, [&] { return plain.messages == 1; }));
  CHECK_FALSE(pending.done());

  plain.stream->close();
  REQUIRE(run_until(loop, [&] { return local.closed.has_value(); }));
  CHECK(local.closed->kind == ErrorKind::closed_by_peer);
  CHECK(local.closed->message == "closed by the peer");
  CHECK_FALSE(local.conn->open());
  REQUIRE(pending.error);
  CHECK(pending.error->find("connection closed: closed by the peer") != std::string::npos);
  // Calls after the end fail at once.
  Answer late;
  local.conn->session().call(heartbeat(), UINT64_MAX, record(late));
  CHECK(late.error);
}

TEST_CASE("a local link ends on bytes that are not rpc frames") {
  net::Loop loop;
  auto pair = net::test::stream_pair(loop);
  LocalEnd local(loop, std::move(pair.a), secure::Identity{secure::Role::user, "1001"});
  auto other = std::move(pair.b);
  other->start([](std::string_view) {}, [](const Error&) {});
  // A segment table claiming 2^31 segments: no rpc frame.
  other->write(std::string("\xff\xff\xff\x7f\0\0\0\0", 8));
  REQUIRE(run_until(loop, [&] { return local.closed.has_value(); }));
  CHECK(local.closed->kind != ErrorKind::closed_by_peer);
  CHECK_FALSE(local.conn->open());
  CHECK(local.messages == 0);
}
