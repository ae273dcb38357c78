// Writes the generated seeds of the fuzz targets into DIR/<target>/ (committed under
// tests/fuzz/corpus): capnp frames of every body kind for rpc_session, real handshake messages
// and records for sealed_channel, the launcher's own requests for launch_request, and a PMIx
// launch's fence chunks and modex messages for peer_pmix, and an allocation's four messages for
// allocation. Run by hand after a schema or handshake change.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "agent/pmix_blobs.hpp"
#include "fence/chunk.hpp"
#include "launcher/launch_request.hpp"
#include "rpc_test_support.hpp"
#include "secure/channel.hpp"
#include "wire/allocation.hpp"
#include "wire/fence_chunk.hpp"
#include "wire/modex.hpp"

namespace {

using namespace lattice;

void write_seed(const std::filesystem::path& dir, const std::string& name,
                const std::string& bytes) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

std::string frame_with_id(rpc::Outgoing& msg, uint64_t id, bool response) {
  msg.envelope().setRequestId(id);
  msg.envelope().setIsResponse(response);
  return rpc::test::frame_of(msg);
}

void rpc_seeds(const std::filesystem::path& dir) {
  // Control byte 0: everything in one receive(), no loopback (see rpc_session_fuzz.cpp).
  std::string all(1, '\0');
  for (auto& msg : rpc::test::one_of_each_body()) all += rpc::test::frame_of(msg);
  write_seed(dir, "every_body_kind", all);

  auto bodies = rpc::test::one_of_each_body();
  write_seed(dir, "launch_request", std::string(1, '\0') + frame_with_id(bodies[1], 7, false));
  write_seed(dir, "fence_chunk_pieces", std::string(1, '\x05') + rpc::test::frame_of(bodies[7]));

  rpc::Outgoing accepted, refused;
  accepted.body().initLaunchAccepted().setNodeId("n1");
  refused.envelope().setError("no such launch");
  write_seed(
      dir, "responses",
      std::string(1, '\0') + frame_with_id(accepted, 1, true) + frame_with_id(refused, 2, true));

  rpc::Outgoing destroy;
  destroy.body().initSignalProcesses().setSignal(99);
  write_seed(
      dir, "loopback_destroy",
      std::string(1, '\x80') + frame_with_id(bodies[3], 9, false) + rpc::test::frame_of(destroy));
}

void channel_seeds(const std::filesystem::path& dir) {
  uint8_t key_bytes[secure::kClusterKeyBytes];
  std::memset(key_bytes, 0x5a, sizeof key_bytes);  // the fuzz target's key
  secure::Credentials key(secure::ClusterKey::from_bytes(key_bytes));
  // Both record ciphers (bit 2 of the mode byte: XChaCha20-Poly1305 only).
  for (bool xchacha_only : {false, true}) {
    const auto ciphers = xchacha_only
                             ? static_cast<secure::Ciphers>(secure::Cipher::xchacha20poly1305)
                             : secure::local_ciphers();
    const char flag = xchacha_only ? 4 : 0;
    const std::string suffix = xchacha_only ? "_xchacha" : "";
    secure::Channel initiator(secure::Channel::Side::initiator, key,
                              {secure::Role::launcher, "fuzz-launcher"}, {}, ciphers);
    secure::Channel responder(secure::Channel::Side::responder, key, {secure::Role::agent, "n1"},
                              {}, ciphers);
    std::string m1 = initiator.start();
    secure::ChannelOutput m2;
    if (!responder.receive(m1, m2)) std::abort();
    secure::ChannelOutput m3;
    if (!initiator.receive(m2.to_network, m3)) std::abort();
    secure::ChannelOutput done;
    if (!responder.receive(m3.to_network, done) || !responder.established()) std::abort();
    // Mode byte, piece-size byte, payload (see sealed_channel_fuzz.cpp).
    write_seed(dir, "m1" + suffix, std::string{flag, 0} + m1);
    write_seed(dir, "m2" + suffix, std::string{static_cast<char>(flag | 1), 0} + m2.to_network);
    std::string stream = initiator.seal("hello, records") + initiator.seal_final();
    write_seed(dir, "records" + suffix,
               std::string{static_cast<char>(flag | 2), 0} +
                   stream.substr(secure::stream_header_bytes(initiator.cipher())));
  }
  write_seed(dir, "plaintext", std::string("\3\7", 2) + "plaintext in pieces of seven");
}

// A request the launcher writes, for node `node` of `agents`: n0, n1, ... on 10.0.0.x.
std::string request_frame(const launcher::LaunchOptions& options,
                          const launcher::JobRequest& request, int agents, int node,
                          const std::vector<int>& rank_nodes) {
  std::vector<wire::PeerInfo> peers;
  for (int i = 0; i < agents; ++i)
    peers.push_back({"n" + std::to_string(i), "10.0.0." + std::to_string(i + 1), 7400});
  launcher::Layout layout{static_cast<int>(rank_nodes.size()), agents, rank_nodes};
  auto plain = launcher::launch_request(options, request, layout, peers, "/home/alice");
  plain.node_index = static_cast<uint32_t>(node);
  auto msg = wire::launch_request(plain);
  return rpc::test::frame_of(msg);
}

// The control byte of launch_request_fuzz.cpp: the agent's node, root, root jobs, hooks allowed.
char agent_byte(int node, bool root, bool allow_root, bool allow_hooks) {
  return static_cast<char>(node | (root ? 4 : 0) | (allow_root ? 8 : 0) | (allow_hooks ? 16 : 0));
}

void launch_request_seeds(const std::filesystem::path& dir) {
  launcher::LaunchOptions one;
  one.apps = {launcher::App{8, {{"OMP_NUM_THREADS", "2"}}, "/bin/echo", {"a", "b c"}}};
  one.cpu_bind.kind = proc::CpuBind::Kind::cores;
  one.cpus_per_task = 2;
  one.gpus.per_task = 1;
  one.gpus.bind = proc::GpuRequest::Bind::closest;
  launcher::JobRequest alice{"L-1",
                             {1000, 1000, {1000, 27}, "alice"},
                             {{"HOME", "/home/alice"}, {"PYTHONPATH", "/opt/py"}},
                             {{"FOO", "bar"}}};
  write_seed(dir, "block_of_four",
             agent_byte(1, true, false, false) +
                 request_frame(one, alice, 4, 1, {0, 0, 1, 1, 2, 2, 3, 3}));

  launcher::LaunchOptions mpmd;
  mpmd.apps = {launcher::App{3, {{"A", "1"}}, "./a", {"x"}},
               launcher::App{2, {{"B", "2"}}, "./b", {}}};
  mpmd.input_rank = -1;
  write_seed(
      dir, "mpmd_cyclic",
      agent_byte(0, false, false, false) + request_frame(mpmd, alice, 2, 0, {0, 1, 0, 1, 0}));

  // A relayed root job with hooks in its environment, to an agent that allows some.
  launcher::JobRequest root{"L-2",
                            {0, 0, {0}, "root"},
                            {{"BASH_ENV", "/tmp/x"}, {"LANG", "/tmp/l"}, {"TZ", "UTC"}},
                            {{"PYTHONSTARTUP", "/tmp/s.py"}},
                            true,
                            "lattice@host:1"};
  launcher::LaunchOptions binary_tree = one;
  binary_tree.fanout = 2;  // every launch names its fanout; a relayed one must
  write_seed(dir, "relayed_root",
             agent_byte(2, true, true, true) +
                 request_frame(binary_tree, root, 3, 2, {0, 0, 1, 1, 2, 2, 2, 2}));

  // Names that no host list holds: the peers travel as a list, the layout as rankNodes.
  rpc::Outgoing listed;
  auto r = listed.body().initLaunchProcesses();
  r.setLaunchId("L-3");
  r.setEntrypoint("/bin/true");
  r.setWorldSize(3);
  auto peers = r.initPeers(2);
  peers[0].setNodeId("alpha");
  peers[1].setNodeId("n1");
  peers[1].setPort(7401);
  r.setNodeIndex(1);
  auto nodes = r.initRankNodes(3);
  nodes.set(0, 0);
  nodes.set(1, 1);
  nodes.set(2, 1);
  auto user = r.initUser();
  user.setUid(1000);
  user.setGid(1000);
  user.setName("alice");
  write_seed(dir, "listed_peers", agent_byte(1, false, false, false) + rpc::test::frame_of(listed));
}

// The chunks of one node's store as it sends them (down: from the parent, else to it).
std::string chunk_frames(int from, bool down, uint64_t epoch, const pmi::KvList& store) {
  std::vector<KvView> views(store.begin(), store.end());
  std::string out;
  for (const auto& chunk : fence::make_chunks(epoch, views, 48)) {
    auto msg = wire::fence_chunk("job-1", from, down, chunk, "");
    out += rpc::test::frame_of(msg);
  }
  return out;
}

void peer_pmix_seeds(const std::filesystem::path& dir) {
  // The links of peer_pmix_fuzz.cpp: n3 (this node's child) sends up, n0 (its parent) down.
  const std::string links("\x03\x00\x00\x00\x00\x00\x00\x00", 8);
  pmi::KvList merged;
  for (int node = 0; node < 4; ++node) {
    auto part = agent::PmixBlobs(node).contribution("libpmix blob of node " + std::to_string(node));
    merged.insert(merged.end(), part.begin(), part.end());
  }
  write_seed(dir, "fence_up_and_down",
             links + chunk_frames(3, false, 1, agent::PmixBlobs(3).contribution("blob of n3")) +
                 chunk_frames(0, true, 1, merged));

  fence::Chunk none;
  none.epoch = 1;
  auto failed = wire::fence_chunk("job-1", 0, true, none, "fence 1 timed out");
  write_seed(dir, "fence_failed", std::string(8, '\x00') + rpc::test::frame_of(failed));

  // A request from n2 about rank 2 (this node's), and an answer with a blob.
  auto q = wire::modex_request({"job-1", 2});
  auto a = wire::modex_answer(std::string("\x00\x01pmix", 6));
  write_seed(dir, "modex",
             std::string(8, '\x02') + rpc::test::frame_of(q) + rpc::test::frame_of(a));
}

void allocation_seeds(const std::filesystem::path& dir) {
  wire::AllocationSpec spec;
  spec.id = "123e4567-e89b-12d3-a456-426614174000";
  spec.user = {1000, 1000, std::vector<uint32_t>{1000, 27}, "alice"};
  spec.nodes = {{"n0", "10.0.0.1", 7400}, {"n1", "10.0.0.2", 7400}, {"n2", "10.0.0.3", 7401}};
  spec.node_index = 1;
  spec.time_limit_ms = 3600000;
  spec.cpus = 8;
  spec.memory_bytes = uint64_t{4} << 30;
  spec.gpus = {"0", "1"};
  auto key = std::make_shared<secure::Secret>(16);
  std::memset(key->data(), 0xa5, key->size());
  spec.cxi.emplace(wire::CxiKey{1234, 7, key});
  spec.slurm_compat = true;
  auto start = wire::allocation_start(spec);
  write_seed(dir, "start", rpc::test::frame_of(start));

  wire::AllocationSpec bare;
  bare.id = "A";
  bare.user = {1000, 1000, std::nullopt, "alice"};
  bare.nodes = {{"n0", "", 0}};
  auto minimal = wire::allocation_start(bare);
  write_seed(dir, "start_minimal", rpc::test::frame_of(minimal));

  wire::AllocationInfo info{spec.id, spec.user, spec.nodes, 2, 59000, true, true};
  auto request = wire::allocation_info_request(spec.id);
  auto answer = wire::allocation_info(info);
  write_seed(dir, "info", rpc::test::frame_of(request) + rpc::test::frame_of(answer));

  auto end = wire::allocation_end({spec.id, "the batch step exited"});
  auto ended = wire::allocation_ended({spec.id, 1, "time limit", true, 3});
  write_seed(dir, "end_and_ended", rpc::test::frame_of(end) + rpc::test::frame_of(ended));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::filesystem::path dir(argv[1]);
  rpc_seeds(dir / "rpc_session");
  channel_seeds(dir / "sealed_channel");
  launch_request_seeds(dir / "launch_request");
  peer_pmix_seeds(dir / "peer_pmix");
  allocation_seeds(dir / "allocation");
  return 0;
}
