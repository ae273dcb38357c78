// Test support: the example bodies use every field so a decode slip in any of them shows up in
// the text comparison; Wire keeps queued and synchronous delivery in one place.
#include "rpc_test_support.hpp"

#include <kj/string.h>

#include <algorithm>
#include <utility>

#include "rpc/bytes.hpp"
#include "rpc/framing.hpp"

namespace lattice::rpc::test {
namespace {

void fill_launch(schema::LaunchProcessesRequest::Builder r) {
  r.setLaunchId("job-1");
  r.setAllocationId("alloc-7");
  r.setEntrypoint("/bin/hostname");
  auto args = r.initArgs(2);
  args.set(0, "-s");
  args.set(1, "--verbose");
  r.setTasksPerNode(4);
  r.setFirstRank(8);
  r.setWorldSize(16);
  auto env = r.initEnv(1);
  env[0].setName("OMP_NUM_THREADS");
  env[0].setValue("2");
  r.setPmiMode(schema::PmiMode::PMIX);
  auto cxi = r.initCxiCredentials();
  cxi.setVni(1025);
  cxi.setSvcId(42);
  cxi.setAuthKey(rpc::as_data(std::string_view("\x01\x02")));
  auto peers = r.initPeers(2);
  peers[1].setNodeId("n2");
  peers[1].setHost("10.0.0.2");
  peers[1].setPort(7001);
  r.setHeadNodeIndex(1);
  r.setNodeIndex(1);
  auto nodes = r.initRankNodes(3);
  nodes.set(2, 1);
  r.setFenceTimeoutMs(30000);
  r.setSlurmCompat(true);
  r.setWorkdir("/scratch");
  r.setFanout(8);
  r.setUsePmiPort(true);
}

// `count` packed fence entries (src/fence/kv_pack.hpp: short strings, so one length byte
// each), as an agent sends them.
kj::Array<capnp::byte> packed_entries(unsigned count) {
  std::string packed;
  for (unsigned i = 0; i < count; ++i) {
    for (const std::string& s : {"key-" + std::to_string(i), "value-" + std::to_string(i * 7)}) {
      packed += static_cast<char>(s.size());
      packed += s;
    }
  }
  return kj::heapArray(reinterpret_cast<const capnp::byte*>(packed.data()), packed.size());
}

}  // namespace

std::vector<Outgoing> one_of_each_body() {
  std::vector<std::function<void(schema::Envelope::Body::Builder)>> fillers = {
      [](auto b) { b.setNone(); },
      [](auto b) { fill_launch(b.initLaunchProcesses()); },
      [](auto b) { b.initLaunchAccepted().setNodeId("n7"); },
      [](auto b) {
        auto a = b.initAbortProcesses();
        a.setLaunchId("job-1");
        auto f = a.initFailure();
        f.setKind(schema::FailureKind::EXITED);
        f.setExitCode(7);
        f.setRank(3);
        f.setNode("n2");
      },
      [](auto b) {
        auto o = b.initOutput();
        o.setLaunchId("job-1");
        o.setRank(5);
        o.setStream(schema::OutputStream::STDERR);
        const capnp::byte data[] = {'h', 'i', '\n', 0, 0xff};
        o.setData(capnp::Data::Reader(data, sizeof data));
      },
      [](auto b) {
        auto e = b.initRankExit();
        e.setLaunchId("job-1");
        e.setRank(6);
        e.setNodeIndex(2);
        e.setExitCode(-3);
        e.setSignal(9);
        e.setPid(777);
      },
      [](auto b) {
        auto e = b.initLaunchEnded();
        e.setLaunchId("job-1");
        e.setNodeIndex(1);
        e.setFailed(true);
        auto f = e.initFailure();
        f.setKind(schema::FailureKind::EXITED);
        f.setExitCode(137);
        f.setSignal(9);
        f.setRank(2);
        f.setNode("n1");
        auto t = e.initTimings();
        t.setSpawnedUs(10);
        t.setFirstInitUs(20);
        t.setLastFinalizeUs(30);
        t.setExitedUs(40);
      },
      [](auto b) {
        auto f = b.initPmiFence();
        f.setLaunchId("job-1");
        f.setEpoch(3);
        f.setFromNode(5);
        f.setEntries(packed_entries(3));
        f.setChunkIndex(1);
        f.setChunkCount(2);
      },
      [](auto b) {
        auto f = b.initPmiFenceComplete();
        f.setLaunchId("job-1");
        f.setEpoch(3);
        f.setEntries(packed_entries(2));
        f.setErrorMessage("");
        f.setChunkIndex(0);
        f.setChunkCount(1);
        f.setFromNode(0);
      },
      [](auto b) { b.setHeartbeat(); },
      [](auto b) { b.setCloseLink(); },
      [](auto b) {
        auto s = b.initSignalProcesses();
        s.setLaunchId("job-1");
        s.setSignal(15);
      },
      [](auto b) {
        auto m = b.initPmixModex();
        m.setLaunchId("job-1");
        m.setRank(3);
        m.setData(capnp::Data::Reader(reinterpret_cast<const capnp::byte*>("blob"), 4));
      },
      [](auto b) {
        auto e = b.initPmixEvent();
        e.setLaunchId("job-1");
        e.setCode(-7);
        e.setSourceRank(1);
        e.setRange(3);
        auto info = e.initInfo(2);
        info[0].setKey("pmix.evproc");
        info[0].setPmixType(22);
        auto procs = info[0].getValue().initProcs(1);
        procs[0].setNspace("lattice.job-1");
        procs[0].setRank(1);
        info[1].setKey("pmix.exit.code");
        info[1].setPmixType(6);
        info[1].getValue().setInteger(3);
      },
      [](auto b) {
        auto c = b.initPmixControl();
        c.setLaunchId("job-1");
        c.setAction(schema::PmixControlAction::SIGNAL);
        c.setSignal(10);
        auto ranks = c.initRanks(2);
        ranks.set(0, 2);
        ranks.set(1, 3);
      },
      [](auto b) {
        auto e = b.initRemoteExec();
        e.setLaunchId("job-1");
        e.setExecId(2);
        auto cmd = e.initCommand(2);
        cmd.set(0, "hydra_pmi_proxy");
        cmd.set(1, "--proxy-id");
      },
      [](auto b) {
        auto e = b.initRemoteExecEvent();
        e.setLaunchId("job-1");
        e.setExecId(2);
        e.setExited(true);
        e.setExitCode(7);
      },
      [](auto b) {
        auto k = b.initRemoteExecKill();
        k.setLaunchId("job-1");
        k.setExecId(2);
      },
      [](auto b) {
        auto s = b.initStdinChunk();
        s.setLaunchId("job-1");
        s.setData(capnp::Data::Reader(reinterpret_cast<const capnp::byte*>("in\n"), 3));
        s.setEof(true);
      },
      [](auto b) {
        auto t = b.initStdinTaken();
        t.setLaunchId("job-1");
        t.setBytes(262144);
        t.setNodeIndex(5);
      },
      [](auto b) {
        auto a = b.initNodeAnswer();
        a.setLaunchId("job-1");
        a.setNodeIndex(3);
        a.setError("node n3 lost: connection closed");
        a.setLost(true);
      },
      [](auto b) {
        auto n = b.initPmiName();
        n.setLaunchId("job-1");
        n.setOp(schema::NameOp::LOOKUP);
        n.setName("svc");
      },
      [](auto b) {
        auto c = b.initPmixConnect();
        c.setLaunchId("job-1");
        c.setKind(schema::PmixCollectiveKind::DISCONNECT);
        auto procs = c.initProcs(2);
        procs[0].setNspace("lattice.job-1");
        procs[0].setRank(0);
        procs[1].setNspace("lattice.job-1");
        procs[1].setRank(0xfffffffe);
      },
      [](auto b) {
        auto r = b.initExecRequest();
        r.setToken("00ff");
        r.setNode("n2");
        r.initCommand(1).set(0, "true");
      },
      [](auto b) {
        auto a = b.initAllocationStart();
        a.setAllocationId("A1");
        a.initUser().setName("alice");
        auto node = a.initNodes(1)[0];
        node.setNodeId("n1");
        node.setHost("10.0.0.1");
        node.setPort(7400);
        a.setTimeLimitMs(60000);
        a.setMemoryBytes(1u << 30);
      },
      [](auto b) {
        auto e = b.initAllocationEnd();
        e.setAllocationId("A1");
        e.setReason("its batch step ended");
      },
      [](auto b) {
        auto e = b.initAllocationEnded();
        e.setAllocationId("A1");
        e.setTimeLimit(true);
        e.setKilled(2);
      },
      [](auto b) { b.initAllocationInfo().setAllocationId("A1"); },
      [](auto b) {
        auto s = b.initPmixSpawn();
        s.setLaunchId("job-1");
        s.setRank(2);
        auto app = s.initApps(1)[0];
        app.setEntrypoint("/bin/child");
        app.setSize(2);
      },
      [](auto b) {
        auto f = b.initPmixFamily();
        f.setLaunchId("job-1");
        f.setChildLaunchId("job-2");
        f.initRankNodes(2).set(1, 1);
      },
      [](auto b) {
        auto st = b.initAgentStatus();
        st.setJson(true);
        st.setLaunchId("job-1");
      },
  };
  std::vector<Outgoing> out;
  for (auto& fill : fillers) {
    Outgoing msg;
    fill(msg.body());
    out.push_back(std::move(msg));
  }
  return out;
}

std::vector<std::string_view> random_pieces(std::string_view bytes, size_t max_piece,
                                            std::mt19937& rng) {
  std::uniform_int_distribution<size_t> size(1, max_piece);
  std::vector<std::string_view> pieces;
  while (!bytes.empty()) {
    size_t n = std::min(size(rng), bytes.size());
    pieces.push_back(bytes.substr(0, n));
    bytes.remove_prefix(n);
  }
  return pieces;
}

std::string text_of(schema::Envelope::Reader envelope) {
  return std::string(kj::str(envelope).cStr());
}

std::string frame_of(Outgoing& msg) {
  return std::move(encode_frame(msg.message(), kMaxMessageBytes).value());
}

void Wire::write(std::string bytes) {
  if (closed) return;
  if (synchronous)
    peer->receive(bytes);
  else
    queued += bytes;
}

bool Wire::flush(size_t piece) {
  if (queued.empty() || closed) return false;
  std::string bytes = std::exchange(queued, std::string());
  for (size_t at = 0; at < bytes.size(); at += piece)
    peer->receive(std::string_view(bytes).substr(at, piece));
  return true;
}

Link::Link(Session::Handlers a_handlers, Session::Handlers b_handlers, SessionOptions options)
    : a(a_to_b, std::move(a_handlers), options), b(b_to_a, std::move(b_handlers), options) {
  a_to_b.peer = &b;
  b_to_a.peer = &a;
}

void Link::pump(size_t piece) {
  for (bool moved = true; moved;) {
    moved = a_to_b.flush(piece);
    moved = b_to_a.flush(piece) || moved;
  }
}

}  // namespace lattice::rpc::test
