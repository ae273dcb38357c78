// lattice-test-rogue: a peer that holds a cluster key (or pretends to) and does what an honest
// launcher or agent never would, for the security integration tests: sends aborts, signals and
// fence chunks for other launches, forges fromNode, asks to launch with the wrong role, sends a
// header that claims a huge frame and then trickles. It prints what happened, one line each:
//   established as agent n1 | reply: ok | reply: error: TEXT | closed: REASON | sent
// It also plays lattice-api honestly (seed-launch): one node's request in the seed's form, and
// what the agent reports back. Test-only; never installed.
#include <capnp/serialize.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/strings.hpp"
#include "fence/kv_pack.hpp"
#include "link/connection.hpp"
#include "net/connect.hpp"
#include "net/listener.hpp"
#include "net/loop.hpp"
#include "net/signal.hpp"
#include "net/timer.hpp"
#include "policy/failure.hpp"
#include "proc/exit_status.hpp"
#include "proc/own_user.hpp"
#include "rogue_args.hpp"
#include "rpc/outgoing.hpp"
#include "secure/credentials.hpp"
#include "wire/launch_request.hpp"
#include "wire/launch_signature.hpp"
#include "wire/reports.hpp"
#include "wire/texts.hpp"

using namespace lattice;
using rogue::Args;
using rogue::kUsage;

namespace {

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

uint32_t number(const std::string& text) {
  return static_cast<uint32_t>(parse_int(text).value_or(0));
}

// "n1=127.0.0.1:7000,n2=..." as a launch's peers, by node index; nullopt when malformed.
std::optional<std::vector<wire::PeerInfo>> peers_of(const std::string& list) {
  std::vector<wire::PeerInfo> peers;
  for (const std::string& entry : split(list, ',')) {
    auto eq = entry.find('=');
    auto hp = eq == std::string::npos ? std::nullopt : parse_host_port(entry.substr(eq + 1));
    if (!hp) return std::nullopt;
    peers.push_back(wire::PeerInfo{entry.substr(0, eq), hp->host, static_cast<uint16_t>(hp->port)});
  }
  return peers;
}

class Rogue {
 public:
  Rogue(net::Loop& loop, const secure::Credentials* key, Args args)
      : loop_(loop), key_(key), args_(std::move(args)), timer_(loop) {}

  void start() {
    if (args_.listen) return serve();
    if (!args_.door.empty()) return knock();
    net::connect_tcp(loop_, args_.host, args_.port, [this](Result<std::unique_ptr<net::Stream>> s) {
      if (!s) return finish(cat("closed: ", s.error().message));
      rpc::Session::Handlers handlers;
      // Only a launch gets reports; the other actions leave whatever the agent sends to the
      // session (calls get an error).
      if (args_.action == "seed-launch")
        handlers.on_message = [this](uint64_t, schema::Envelope::Reader m) { reported(m); };
      open(std::move(s.value()), secure::Channel::Side::initiator, std::move(handlers));
    });
  }

  int status() const { return status_; }

 private:
  void act() {
    const std::string& a = args_.action;
    if (a == "abort") {
      rpc::Outgoing m;
      auto abort = m.body().initAbortProcesses();
      abort.setLaunchId(args_.launch);
      abort.initFailure().setDetail("rogue abort");
      return call(std::move(m));
    }
    if (a == "signal" && args_.rest.size() == 1) {
      rpc::Outgoing m;
      auto sig = m.body().initSignalProcesses();
      sig.setLaunchId(args_.launch);
      sig.setSignal(static_cast<int32_t>(parse_int(args_.rest[0]).value_or(SIGTERM)));
      return call(std::move(m));
    }
    if (a == "status") {  // what `lattice admin --agents` asks
      rpc::Outgoing m;
      m.body().initAgentStatus();
      return call(std::move(m));
    }
    if (a == "launch") {
      rpc::Outgoing m;
      auto req = m.body().initLaunchProcesses();
      req.setLaunchId("rogue-launch");
      req.setEntrypoint("/bin/true");
      req.setWorldSize(1);
      req.setTasksPerNode(1);
      auto user = req.initUser();
      user.setName("root");
      return call(std::move(m));
    }
    if (a == "relayed-launch" && args_.rest.size() == 2) {
      rpc::Outgoing m;
      auto req = m.body().initLaunchProcesses();
      req.setLaunchId("rogue-relayed");
      req.setEntrypoint("/bin/true");
      std::vector<std::string> ids = split(args_.rest[0], ',');
      auto peers = req.initPeers(static_cast<unsigned>(ids.size()));
      for (unsigned i = 0; i < peers.size(); ++i) {
        peers[i].setNodeId(ids[i]);
        peers[i].setHost("127.0.0.1");
        peers[i].setPort(1);
      }
      req.setWorldSize(static_cast<uint32_t>(ids.size()));
      req.setTasksPerNode(1);
      uint32_t index = number(args_.rest[1]);
      req.setNodeIndex(index);
      req.setFirstRank(index);
      req.setFanout(2);
      req.setRelayed(true);
      req.setLauncherName(args_.launcher_name);
      auto user = req.initUser();
      user.setName("root");
      if (!args_.sign_with.empty()) {
        auto signer = secure::load_identity_file(args_.sign_with);
        if (!signer) return finish(signer.error().message);
        auto signed_ = wire::sign_launch(req, *signer, static_cast<uint64_t>(::time(nullptr)));
        if (!signed_) return finish(signed_.error().message);
      }
      return call(std::move(m));
    }
    if ((a == "ended" || a == "lost") && args_.rest.size() == 1) {
      uint32_t node = number(args_.rest[0]);
      rpc::Outgoing m;
      if (a == "ended") {
        auto end = m.body().initLaunchEnded();
        end.setLaunchId(args_.launch);
        end.setNodeIndex(node);
      } else {
        auto answer = m.body().initNodeAnswer();
        answer.setLaunchId(args_.launch);
        answer.setNodeIndex(node);
        answer.setError("rogue: lost");
        answer.setLost(true);
      }
      conn_->session().notify(stamped(std::move(m)));
      say("sent");
      return linger(500);
    }
    if ((a == "fence" && args_.rest.size() >= 3) ||
        (a == "fence-packed" && args_.rest.size() == 4) ||
        (a == "fence-error" && args_.rest.size() == 3)) {
      uint64_t epoch = static_cast<uint64_t>(parse_int(args_.rest[0]).value_or(1));
      uint32_t from = number(args_.rest[1]);
      bool down = a == "fence-error" || args_.rest[2] == "down";
      rpc::Outgoing m;
      auto fill = [&](auto msg) {
        msg.setLaunchId(args_.launch);
        msg.setEpoch(epoch);
        msg.setFromNode(from);
        msg.setChunkIndex(0);
        msg.setChunkCount(1);
        std::vector<KvView> kv;
        for (size_t i = 3; a == "fence" && i < args_.rest.size(); ++i) {
          std::string_view pair = args_.rest[i];
          auto eq = pair.find('=');
          kv.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
        }
        std::string packed(fence::packed_size(kv), '\0');
        fence::pack(kv, packed.data());
        if (a == "fence-packed") packed = from_hex(args_.rest[3]).value_or("");  // raw bytes
        msg.setEntries(
            kj::arrayPtr(reinterpret_cast<const capnp::byte*>(packed.data()), packed.size()));
        return msg;
      };
      if (a == "fence-error")
        fill(m.body().initPmiFenceComplete()).setErrorMessage(args_.rest[2]);
      else if (down)
        fill(m.body().initPmiFenceComplete());
      else
        fill(m.body().initPmiFence());
      conn_->session().notify(stamped(std::move(m)));
      say("sent");
      return linger(500);
    }
    if (a == "trickle" && args_.rest.size() == 1) {
      // A frame header claiming one segment of 60 MiB, then a kilobyte every 100 ms.
      uint32_t words = (60u << 20) / 8;
      char header[8] = {0, 0, 0, 0};
      std::memcpy(header + 4, &words, 4);
      conn_->write(std::string(header, 8));
      ticks_ = static_cast<int>(parse_int(args_.rest[0]).value_or(1)) * 10;
      timer_.start(100, 100, [this] {
        if (--ticks_ < 0) return finish("sent");
        conn_->write(std::string(1024, '\0'));
      });
      return;
    }
    if (a == "seed-launch" && args_.rest.size() >= 6) return seed_launch();
    if (a == "hold" && args_.rest.size() == 1)
      return linger(static_cast<uint64_t>(parse_int(args_.rest[0]).value_or(1)) * 1000);
    status_ = 2;
    finish(cat("unknown action or arguments\n", kUsage));
  }

  // lattice-api's request to one node: the seed's fields only, set one by one as its own capnp
  // code sets them (wire::launch_request would add this launcher's later fields), with
  // nodeIndex and user, which an agent requires. The job runs as this process's user (looked
  // up in the loop, which has nothing else to do yet).
  void seed_launch() {
    auto peers = peers_of(args_.rest[0]);
    auto self = proc::own_user();
    if (!peers || !self) {
      status_ = 2;
      return finish(self ? cat("malformed node list\n", kUsage) : self.error().message);
    }
    rpc::Outgoing m;
    auto req = m.body().initLaunchProcesses();
    req.setLaunchId(args_.launch);
    req.setEntrypoint(args_.rest[5]);
    wire::set_texts(req.initArgs(static_cast<unsigned>(args_.rest.size() - 6)),
                    {args_.rest.begin() + 6, args_.rest.end()});
    req.setTasksPerNode(number(args_.rest[2]));
    req.setFirstRank(number(args_.rest[3]));
    req.setWorldSize(number(args_.rest[4]));
    auto env = req.initEnv(static_cast<unsigned>(args_.env.size()));
    for (unsigned i = 0; i < env.size(); ++i) {
      auto eq = args_.env[i].find('=');
      env[i].setName(args_.env[i].substr(0, eq));
      env[i].setValue(eq == std::string::npos ? "" : args_.env[i].substr(eq + 1));
    }
    req.setPmiMode(args_.pmix ? schema::PmiMode::PMIX : schema::PmiMode::PMI2);  // else MPICH's
    if (!args_.vendor_file.empty()) {
      std::ifstream in(args_.vendor_file, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      req.initAppSetup().setVendor(
          capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(bytes.data()), bytes.size()));
    }
    auto list = req.initPeers(static_cast<unsigned>(peers->size()));
    for (unsigned i = 0; i < list.size(); ++i) {
      const wire::PeerInfo& peer = (*peers)[i];
      list[i].setNodeId(peer.node_id);
      list[i].setHost(peer.host);
      list[i].setPort(peer.port);
    }
    req.setHeadNodeIndex(0);  // rank 0's node, in a block layout
    req.setNodeIndex(number(args_.rest[1]));
    auto user = req.initUser();
    user.setUid(self->uid);
    user.setGid(self->gid);
    user.setName(self->name);
    conn_->session().call(stamped(std::move(m)), loop_.now_ms() + 10000,
                          [this](Result<schema::Envelope::Reader> reply) {
                            if (!reply) return finish(cat("refused: ", reply.error().message));
                            auto accepted = reply->getBody().getLaunchAccepted();
                            say(cat("accepted by ", wire::decode_accepted(accepted).node_id));
                          });
  }

  // --door: a plain Unix connection to the user door, taken as is (the agent knows the caller
  // by SO_PEERCRED), then the action (door-launch).
  void knock() {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    net::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (args_.door.size() >= sizeof addr.sun_path) return finish("closed: door path too long");
    std::memcpy(addr.sun_path, args_.door.c_str(), args_.door.size() + 1);
    if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      return finish(cat("closed: cannot connect: ", std::strerror(errno)));
    auto stream = net::Stream::open_fd(loop_, std::move(fd), args_.door);
    if (!stream) return finish(cat("closed: ", stream.error().message));
    link::LinkOptions options;
    options.local_peer = secure::Identity{secure::Role::agent, "door"};
    conn_ = std::make_unique<link::Connection>(
        loop_, std::move(stream.value()), std::move(options), rpc::Session::Handlers{}, nullptr,
        [this](const Error& why) { finish(cat("closed: ", why.message)); });
    if (args_.action == "door-launch" && args_.rest.size() == 3) return door_launch();
    if (args_.action == "door-signal" && args_.rest.size() == 2) {
      rpc::Outgoing m;
      auto sig = m.body().initSignalProcesses();
      sig.setLaunchId(args_.rest[0]);
      sig.setSignal(static_cast<int32_t>(parse_int(args_.rest[1]).value_or(SIGTERM)));
      return call(std::move(m));
    }
    status_ = 2;
    finish(cat("unknown action or arguments\n", kUsage));
  }

  // What `lattice launch` inside an allocation sends its door, but with peers of our choosing.
  void door_launch() {
    auto peers = peers_of(args_.rest[1]);
    auto self = proc::own_user();
    if (!peers || !self) {
      status_ = 2;
      return finish(self ? cat("malformed node list\n", kUsage) : self.error().message);
    }
    rpc::Outgoing m;
    auto req = m.body().initLaunchProcesses();
    req.setLaunchId("rogue-door-launch");
    req.setAllocationId(args_.rest[0]);
    req.setEntrypoint(args_.rest[2]);
    req.setTasksPerNode(1);
    req.setWorldSize(static_cast<uint32_t>(peers->size()));
    req.setPmiMode(schema::PmiMode::PMI2);
    auto list = req.initPeers(static_cast<unsigned>(peers->size()));
    for (unsigned i = 0; i < list.size(); ++i) {
      list[i].setNodeId((*peers)[i].node_id);
      list[i].setHost((*peers)[i].host);
      list[i].setPort((*peers)[i].port);
    }
    req.setHeadNodeIndex(0);
    req.setNodeIndex(0);
    req.setFanout(2);
    req.setLauncherName(std::to_string(self->uid));
    auto user = req.initUser();
    user.setUid(self->uid);
    user.setGid(self->gid);
    user.setName(self->name);
    std::vector<uint32_t> groups;  // as `lattice alloc` gives the allocation's: login groups
    for (uint32_t g : self->login_groups)
      if (g != self->gid) groups.push_back(g);
    auto list_groups = user.initGroups(static_cast<unsigned>(groups.size()));
    for (unsigned i = 0; i < groups.size(); ++i) list_groups.set(i, groups[i]);
    call(std::move(m));
  }

  // A seed-launch's reports, one line each (output, one per line of it), until its end here.
  void reported(schema::Envelope::Reader envelope) {
    auto body = envelope.getBody();
    switch (body.which()) {
      case schema::Envelope::Body::OUTPUT: {
        auto out = wire::decode_output(body.getOutput());
        if (!out.data.empty() && out.data.back() == '\n') out.data.pop_back();
        for (const std::string& line : split(out.data, '\n'))
          say(cat("rank ", out.rank, out.is_stderr ? " stderr: " : " stdout: ", line));
        return;
      }
      case schema::Envelope::Body::RANK_EXIT: {
        auto exit = wire::decode_rank_exit(body.getRankExit());
        return say(cat("exit rank ", exit.rank, " node ", exit.node_index, ": ",
                       proc::describe(exit.status)));
      }
      case schema::Envelope::Body::LAUNCH_ENDED: {
        auto end = wire::decode_launch_ended(body.getLaunchEnded());
        return finish(cat("ended node ", end.node_index,
                          end.failure ? cat(": failed: ", policy::describe(*end.failure)) : ""));
      }
      default:
        return;
    }
  }

  // A sealed link on `stream`, as the identity given; `act()` once the peer is authenticated.
  void open(std::unique_ptr<net::Stream> stream, secure::Channel::Side side,
            rpc::Session::Handlers handlers) {
    link::LinkOptions options;
    options.side = side;
    options.credentials = key_;
    std::string role = args_.identity.substr(0, args_.identity.find(':'));
    options.self =
        secure::Identity{role == "launcher" ? secure::Role::launcher : secure::Role::agent,
                         args_.identity.substr(args_.identity.find(':') + 1)};
    conn_ = std::make_unique<link::Connection>(
        loop_, std::move(stream), std::move(options), std::move(handlers),
        [this](const secure::Identity& peer) {
          say(cat("established as ", secure::describe(peer)));
          if (!args_.listen) act();
        },
        [this](const Error& why) { finish(cat("closed: ", why.message)); });
  }

  // --listen: the first link to come is the launcher's (later ones, the real agents' fence
  // links, are refused by closing them).
  void serve() {
    if (args_.action != "forge-exit" || args_.rest.size() != 5) {
      status_ = 2;
      return finish(cat("unknown action or arguments\n", kUsage));
    }
    auto listener = net::TcpListener::listen(
        loop_, args_.host, args_.port, [this](std::unique_ptr<net::Stream> stream) {
          if (conn_) return;  // dropped: closes it
          rpc::Session::Handlers handlers;
          handlers.on_message = [this](uint64_t id, schema::Envelope::Reader envelope) {
            if (id == 0 || !envelope.getBody().isLaunchProcesses()) return;
            auto req = envelope.getBody().getLaunchProcesses();
            launch_ = req.getLaunchId();
            node_ = req.getNodeIndex();
            rpc::Outgoing reply;
            reply.body().initLaunchAccepted().setNodeId(
                args_.identity.substr(args_.identity.find(':') + 1));
            conn_->session().respond(id, stamped(std::move(reply)));
            say(cat("accepted launch ", launch_, " as node ", node_));
            timer_.start(static_cast<uint64_t>(parse_int(args_.rest[4]).value_or(0)), 0,
                         [this] { ask_launcher(); });
          };
          open(std::move(stream), secure::Channel::Side::responder, std::move(handlers));
        });
    if (!listener) return finish(cat("closed: ", listener.error().message));
    listener_ = std::move(listener.value());
    say(cat("listening on ", listener_->bound().host, ':', listener_->bound().port));
  }

  // What the launcher answers an agent's requests: a heartbeat, and one it does not serve.
  void ask_launcher() {
    rpc::Outgoing beat;
    beat.body().setHeartbeat();
    rpc::Outgoing status;
    status.body().initAgentStatus();
    for (auto* m : {&beat, &status}) {
      std::string what = m->body().isHeartbeat() ? "heartbeat" : "agentStatus";
      conn_->session().call(stamped(std::move(*m)), loop_.now_ms() + 10000,
                            [this, what](Result<schema::Envelope::Reader> reply) {
                              say(cat("launcher answered ", what, ": ",
                                      reply ? "ok" : "error: " + reply.error().message));
                              if (++answers_ == 2) forge_exit();
                            });
    }
  }

  void forge_exit() {
    auto exit = [this](int64_t rank, int64_t node, int64_t status) {
      rpc::Outgoing m;
      auto e = m.body().initRankExit();
      e.setLaunchId(launch_);
      e.setRank(static_cast<uint32_t>(rank));
      e.setNodeIndex(static_cast<uint32_t>(node));
      e.setExitCode(static_cast<int32_t>(status));
      conn_->session().notify(stamped(std::move(m)));
    };
    auto arg = [this](size_t i) { return parse_int(args_.rest[i]).value_or(0); };
    exit(arg(1), arg(2), arg(3));  // another node's rank
    exit(arg(0), node_, 0);        // its own
    rpc::Outgoing m;
    auto end = m.body().initLaunchEnded();
    end.setLaunchId(launch_);
    end.setNodeIndex(node_);
    conn_->session().notify(stamped(std::move(m)));
    say("sent");
    linger(3000);
  }

  rpc::Outgoing stamped(rpc::Outgoing m) {
    if (args_.protocol) m.envelope().setVersion(*args_.protocol);
    return m;
  }

  void call(rpc::Outgoing m) {
    conn_->session().call(
        stamped(std::move(m)), loop_.now_ms() + 10000,
        [this](Result<schema::Envelope::Reader> reply) {
          finish(reply ? std::string("reply: ok") : cat("reply: error: ", reply.error().message));
        });
  }

  void linger(uint64_t ms) {
    timer_.start(ms, 0, [this] { finish("done"); });
  }

  void finish(const std::string& line) {
    if (done_) return;
    done_ = true;
    say(line);
    timer_.stop();
    loop_.defer([this] {
      if (conn_) conn_->close();
      listener_.reset();
      loop_.stop();
    });
  }

  net::Loop& loop_;
  const secure::Credentials* key_;  // null: --door (no handshake)
  Args args_;
  std::unique_ptr<link::Connection> conn_;
  std::unique_ptr<net::TcpListener> listener_;
  std::string launch_;
  uint32_t node_ = 0;
  net::Timer timer_;
  int ticks_ = 0;
  int answers_ = 0;  // from the launcher, to ask_launcher()
  int status_ = 0;
  bool done_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!rogue::parse(argc, argv, args)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  net::ignore_sigpipe();
  std::optional<secure::Credentials> key;
  if (args.door.empty()) {
    auto loaded = secure::load_credentials(args.key, args.identity_file, args.authority_file);
    if (!loaded) {
      std::fprintf(stderr, "lattice-test-rogue: %s\n", loaded.error().message.c_str());
      return 2;
    }
    key.emplace(std::move(loaded.value()));
    key->initiate_version = args.handshake;
  }
  net::Loop loop;
  Rogue rogue(loop, key ? &*key : nullptr, std::move(args));
  rogue.start();
  loop.run();
  return rogue.status();
}
