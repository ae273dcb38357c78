// NodeLinks over a real loop: two in-process ends, each with a TCP listener and sealed links
// (link::Connection) owned as the agent owns them, so what is counted is real connections.
#include "agent/node_links.hpp"

#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../net/net_test_support.hpp"
#include "net/listener.hpp"

using namespace lattice;
using namespace lattice::agent;
using lattice::net::test::run_until;

namespace {

secure::Credentials test_key() {
  uint8_t bytes[secure::kClusterKeyBytes] = {7};
  return secure::Credentials(secure::ClusterKey::from_bytes(bytes));
}

// One agent's links: it answers heartbeats and CloseLink as Agent::on_message does, and keeps
// the output chunks that arrive (their data, in order).
class End : public NodeLinks::Host {
 public:
  End(net::Loop& loop, const secure::Credentials& key, std::string name, uint64_t linger_ms)
      : loop_(loop),
        key_(key),
        name_(std::move(name)),
        links(loop, *this, NodeLinks::Options{{100, 3}, linger_ms},
              [this](const std::string& node, const std::string& why, bool peer_ended) {
                lost.push_back(node + ": " + why + (peer_ended ? " [peer ended]" : ""));
              }) {
    listener_ = net::TcpListener::listen(loop, "127.0.0.1", 0, [this](auto stream) {
                  add(std::move(stream), secure::Channel::Side::responder);
                }).value();
  }

  Peer me() const { return Peer{name_, "127.0.0.1", listener_->bound().port}; }
  size_t open() const {
    size_t n = 0;
    for (const auto& [id, conn] : conns_) n += conn->open();
    return n;
  }
  void say(const Peer& to, const std::string& data) {
    rpc::Outgoing message;
    auto out = message.envelope().initBody().initOutput();
    out.setLaunchId("L");
    out.setData(kj::arrayPtr(reinterpret_cast<const kj::byte*>(data.data()), data.size()));
    links.send(to, std::move(message));
  }

  uint64_t link_made(std::unique_ptr<net::Stream> stream) override {
    return add(std::move(stream), secure::Channel::Side::initiator);
  }
  link::Connection* connection(uint64_t id) override {
    auto it = conns_.find(id);
    return it == conns_.end() || !it->second->open() ? nullptr : it->second.get();
  }
  void drop(uint64_t id, const std::string& why) override {
    if (link::Connection* conn = connection(id)) {
      conn->close();
      links.closed(id, make_error(why, ErrorKind::closed_here));  // as Agent::drop
    }
  }

  std::vector<std::string> heard, lost;

 private:
  uint64_t add(std::unique_ptr<net::Stream> stream, secure::Channel::Side side) {
    uint64_t id = next_++;
    rpc::Session::Handlers handlers;
    handlers.on_message = [this, id](uint64_t request, schema::Envelope::Reader envelope) {
      auto& session = conns_.at(id)->session();
      auto body = envelope.getBody();
      if (body.isOutput()) {
        auto data = body.getOutput().getData();
        heard.emplace_back(reinterpret_cast<const char*>(data.begin()), data.size());
      } else if (body.isCloseLink()) {
        if (links.may_close(id))
          session.respond(request, rpc::Outgoing());
        else
          session.respond_error(request, "in use");
      } else if (request) {
        session.respond(request, rpc::Outgoing());
      }
    };
    link::LinkOptions options;
    options.side = side;
    options.credentials = &key_;
    options.self = secure::Identity{secure::Role::agent, name_};
    conns_[id] = std::make_unique<link::Connection>(
        loop_, std::move(stream), std::move(options), std::move(handlers),
        [this, id](const secure::Identity& peer) { links.established(id, peer); },
        [this, id](const Error& why) { links.closed(id, why); });
    return id;
  }

  net::Loop& loop_;
  const secure::Credentials& key_;
  std::string name_;
  std::unique_ptr<net::TcpListener> listener_;
  std::map<uint64_t, std::unique_ptr<link::Connection>> conns_;
  uint64_t next_ = 1;

 public:
  NodeLinks links;  // after conns_: goes first
};

// Each end holds exactly one open connection, the other's.
void one_link_each(const End& a, const End& b) {
  CHECK(a.open() == 1);
  CHECK(b.open() == 1);
}

void nothing_lost(const End& a, const End& b) {
  CHECK(a.lost.empty());
  CHECK(b.lost.empty());
}

}  // namespace

TEST_CASE("one link serves both ways: the answer goes back on the link the peer made") {
  net::Loop loop;
  auto key = test_key();
  End a(loop, key, "a", 60000), b(loop, key, "b", 60000);
  a.say(b.me(), "up 1");
  a.say(b.me(), "up 2");
  REQUIRE(run_until(loop, [&] { return b.heard.size() == 2; }));
  CHECK(b.heard == std::vector<std::string>{"up 1", "up 2"});
  b.say(a.me(), "down");
  REQUIRE(run_until(loop, [&] { return a.heard.size() == 1; }));
  one_link_each(a, b);
  CHECK(a.links.size() == 1);
  CHECK(b.links.size() == 1);
  nothing_lost(a, b);
}

TEST_CASE("a hold that waits for the peer's link takes it, and heartbeats it") {
  net::Loop loop;
  auto key = test_key();
  End parent(loop, key, "parent", 60000), child(loop, key, "child", 60000);
  auto watching = parent.links.hold(child.me(), false);
  auto up = child.links.hold(parent.me(), true);
  // Heartbeats every 100 ms both ways on the one link; nothing is lost over ten periods.
  uint64_t until = loop.now_ms() + 1000;
  run_until(
      loop, [&] { return loop.now_ms() >= until; }, 2000);
  one_link_each(parent, child);
  CHECK(parent.links.held_count() == 1);
  nothing_lost(parent, child);
}

TEST_CASE("an unused link closes once both ends agree, and neither calls it lost") {
  net::Loop loop;
  auto key = test_key();
  End a(loop, key, "a", 200), b(loop, key, "b", 200);
  {
    auto held = b.links.hold(a.me(), false);  // b holds it: a's CloseLink is refused
    a.say(b.me(), "hello");
    REQUIRE(run_until(loop, [&] { return b.heard.size() == 1; }));
    uint64_t until = loop.now_ms() + 600;
    run_until(
        loop, [&] { return loop.now_ms() >= until; }, 2000);
    CHECK(a.open() == 1);
  }
  REQUIRE(run_until(loop, [&] { return a.open() == 0 && b.open() == 0; }));
  CHECK(a.links.size() == 0);
  nothing_lost(a, b);
  // The next message makes a new link.
  b.say(a.me(), "again");
  REQUIRE(run_until(loop, [&] { return a.heard.size() == 1; }));
  CHECK(a.heard[0] == "again");
}

TEST_CASE("links made from both ends at once: each keeps its order, and the spare goes") {
  net::Loop loop;
  auto key = test_key();
  End a(loop, key, "a", 200), b(loop, key, "b", 200);
  for (int i = 0; i < 5; ++i) {
    a.say(b.me(), "a" + std::to_string(i));
    b.say(a.me(), "b" + std::to_string(i));
  }
  REQUIRE(run_until(loop, [&] { return a.heard.size() == 5 && b.heard.size() == 5; }));
  CHECK(b.heard == std::vector<std::string>{"a0", "a1", "a2", "a3", "a4"});
  CHECK(a.heard == std::vector<std::string>{"b0", "b1", "b2", "b3", "b4"});
  REQUIRE(run_until(loop, [&] { return a.open() == 0 && b.open() == 0; }));
  nothing_lost(a, b);
}

TEST_CASE(
    "a held link the peer ends is lost as ended by the peer; one this side ends is not an echo") {
  net::Loop loop;
  auto key = test_key();
  End a(loop, key, "a", 60000), b(loop, key, "b", 60000);
  auto hold = a.links.hold(b.me(), true);
  a.say(b.me(), "hello");
  REQUIRE(run_until(loop, [&] { return b.heard.size() == 1; }));
  b.drop(1, "revoked");  // b's only connection: the one a made
  REQUIRE(run_until(loop, [&] { return !a.lost.empty(); }));
  CHECK(a.lost[0] == "b: connection closed (closed by the peer) [peer ended]");
  // b, whose own choice it was, reports it with its reason, as no echo.
  REQUIRE(b.lost.size() == 1);
  CHECK(b.lost[0] == "a: connection closed (revoked)");
  // Nor is a's own verdict on a link it made.
  End c(loop, key, "c", 60000);
  auto held = c.links.hold(a.me(), true);
  c.say(a.me(), "hello");
  REQUIRE(run_until(loop, [&] { return a.heard.size() == 1; }));
  c.links.closed(1, make_error("gone"));
  CHECK(c.lost.back() == "a: connection closed (gone)");
}

TEST_CASE("a peer that proves another name is lost, with why") {
  net::Loop loop;
  auto key = test_key();
  End a(loop, key, "a", 60000), b(loop, key, "b", 60000);
  Peer wrong = b.me();
  wrong.node_id = "c";
  a.say(wrong, "for c");
  REQUIRE(run_until(loop, [&] { return !a.lost.empty(); }));
  CHECK(a.lost[0].find("proved to be agent b, not agent c") != std::string::npos);
  CHECK(a.open() == 0);
}
