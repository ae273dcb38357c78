// Calibration against the real code (see calibrate.hpp). Timings are the thread's CPU time, not
// wall time, and medians of repeats, so other processes on this shared machine (its two cores
// are often busy) do not set a parameter; cache contention still can, a little.
#include "calibrate.hpp"

#include <capnp/serialize.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/launch_spec.hpp"
#include "fence/reducer.hpp"
#include "launcher/launch_request.hpp"
#include "pmi/kvs.hpp"
#include "rpc/framing.hpp"
#include "rpc/limits.hpp"
#include "secure/channel.hpp"
#include "wire/fence_chunk.hpp"
#include "wire/launch_request.hpp"

namespace lattice::sim {
namespace {

// This thread's CPU time in microseconds.
double cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

double median(std::vector<double> xs) {
  std::nth_element(xs.begin(), xs.begin() + static_cast<long>(xs.size() / 2), xs.end());
  return xs[xs.size() / 2];
}

// Median over `reps` of the CPU microseconds per call of `rounds` calls of `fn`.
double time_us(int reps, int rounds, const std::function<void()>& fn) {
  std::vector<double> runs;
  for (int r = 0; r < reps; ++r) {
    const double t0 = cpu_us();
    for (int i = 0; i < rounds; ++i) fn();
    runs.push_back((cpu_us() - t0) / rounds);
  }
  return median(std::move(runs));
}

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("calibration: ") + what);
}

secure::Credentials bench_key() {
  uint8_t raw[secure::kClusterKeyBytes];
  std::memset(raw, 42, sizeof raw);
  return secure::Credentials(secure::ClusterKey::from_bytes(raw));
}

using ChannelPair = std::pair<std::unique_ptr<secure::Channel>, std::unique_ptr<secure::Channel>>;
ChannelPair new_pair(const secure::Credentials& key,
                     std::shared_ptr<const secure::EphemeralKey> shared = {}) {
  return {std::make_unique<secure::Channel>(secure::Channel::Side::initiator, key,
                                            secure::Identity{secure::Role::launcher, "bench"},
                                            std::move(shared)),
          std::make_unique<secure::Channel>(secure::Channel::Side::responder, key,
                                            secure::Identity{secure::Role::agent, "n1"})};
}

void handshakes(const secure::Credentials& key, Calibration& c) {
  // Each side's calls timed on their own; the messages are the real ones. The initiator shares
  // one key pair across its links, as a launcher does (the pair's making is not timed).
  std::vector<double> initiator, responder;
  double bytes = 0;
  const int rounds = 300;
  const auto shared = secure::EphemeralKey::generate();
  for (int n = 0; n < rounds; ++n) {
    auto [i, r] = new_pair(key, shared);
    secure::ChannelOutput ro, io, r3;
    const double t0 = cpu_us();
    std::string hello = i->start();
    const double t1 = cpu_us();
    check(static_cast<bool>(r->receive(hello, ro)), "handshake (responder)");
    const double t2 = cpu_us();
    check(static_cast<bool>(i->receive(ro.to_network, io)), "handshake (initiator)");
    const double t3 = cpu_us();
    check(static_cast<bool>(r->receive(io.to_network, r3)), "handshake (final)");
    const double t4 = cpu_us();
    initiator.push_back(t1 - t0 + t3 - t2);
    responder.push_back(t2 - t1 + t4 - t3);
    bytes += static_cast<double>(hello.size() + ro.to_network.size() + io.to_network.size()) / 3;
  }
  c.handshake_initiator_us = median(std::move(initiator));
  c.handshake_responder_us = median(std::move(responder));
  c.handshake_msg_bytes = bytes / rounds;
}

void sealing(const secure::Credentials& key, Calibration& c) {
  // Named, not a structured binding: the lambdas below capture them (C++17).
  ChannelPair pair = new_pair(key);
  auto& i = pair.first;
  auto& r = pair.second;
  secure::ChannelOutput ro, io, r3;
  check(
      r->receive(i->start(), ro) && i->receive(ro.to_network, io) && r->receive(io.to_network, r3),
      "handshake");
  // Seal a batch, then open it: records must be opened in order, once each.
  auto per_record = [&](size_t size, int count, double& seal, double& open) {
    const std::string plain(size, 'x');
    std::vector<std::string> sealed(static_cast<size_t>(count));
    std::vector<double> seals, opens;
    for (int rep = 0; rep < 5; ++rep) {
      seals.push_back(time_us(1, 1,
                              [&] {
                                for (auto& s : sealed) s = i->seal(plain);
                              }) /
                      count);
      opens.push_back(time_us(1, 1,
                              [&] {
                                for (const auto& s : sealed) {
                                  secure::ChannelOutput out;
                                  check(r->receive(s, out) && out.plaintext.size() == size, "open");
                                }
                              }) /
                      count);
    }
    seal = median(std::move(seals));
    open = median(std::move(opens));
  };
  double seal_small = 0, open_small = 0, seal_big = 0, open_big = 0;
  per_record(100, 4000, seal_small, open_small);
  per_record(64 * 1024, 100, seal_big, open_big);
  const double span = 64 * 1024 - 100;
  c.seal_byte_us = std::max(0.0, (seal_big - seal_small) / span);
  c.open_byte_us = std::max(0.0, (open_big - open_small) / span);
  c.seal_msg_us = std::max(0.0, seal_small - 100 * c.seal_byte_us);
  c.open_msg_us = std::max(0.0, open_small - 100 * c.open_byte_us);
}

fence::Chunk fence_chunk(size_t keys, size_t value_bytes) {
  fence::KvList entries;
  for (size_t k = 0; k < keys; ++k)
    entries.emplace_back("f1-" + std::to_string(10000 + k), std::string(value_bytes, 'v'));
  auto chunks = fence::make_chunks(1, owning_store(std::move(entries)).entries, SIZE_MAX);
  return chunks.at(0);
}

const std::string kLaunchId = "0b8f6a52-3c1e-4d2a-9f3b-6a1c2d3e4f50";

std::string encode(rpc::Outgoing& msg) {
  auto frame = rpc::encode_frame(msg.message(), rpc::kMaxMessageBytes);
  check(static_cast<bool>(frame), "encode_frame");
  return std::move(*frame);
}

// Decodes one frame as the agent's session does (word-aligned copy, the rpc limits) and hands
// the envelope to `use`.
void read_frame(const std::string& frame,
                const std::function<void(schema::Envelope::Reader)>& use) {
  rpc::FrameDecoder decoder(rpc::kMaxMessageBytes);
  std::string_view input(frame);
  auto words = decoder.next(input);
  check(words && words->size() > 0, "frame decode");
  capnp::ReaderOptions options;
  options.traversalLimitInWords = rpc::kTraversalLimitWords;
  options.nestingLimit = rpc::kNestingLimit;
  capnp::FlatArrayMessageReader reader(*words, options);
  use(reader.getRoot<schema::Envelope>());
}

void fence_codec(size_t value_bytes, Calibration& c) {
  const size_t many = 230;  // about one 16 KiB chunk of 64-byte values
  auto one = fence_chunk(1, value_bytes), full = fence_chunk(many, value_bytes);
  auto frame_of = [](const fence::Chunk& chunk) {
    auto msg = wire::fence_chunk(kLaunchId, 1, true, chunk, "");
    return encode(msg);
  };
  const std::string small = frame_of(one), big = frame_of(full);
  const double payload_one =
      static_cast<double>(fence::store_of({one}).entries.at(0).first.size() + value_bytes);
  c.entry_wire_bytes = static_cast<double>(big.size() - small.size()) / (many - 1) - payload_one;
  c.chunk_wire_bytes = static_cast<double>(small.size()) - c.entry_wire_bytes - payload_one;
  c.key_encode_us = time_us(7, 20, [&] { frame_of(full); }) / many;
  // A leaf's whole receive path in isolation: decode, the Reducer, the PMI store's publish.
  // Freeing is not timed: the store keeps the strings until the launch ends, as the agent's does.
  std::vector<double> runs;
  for (int rep = 0; rep < 21; ++rep) {
    fence::Reducer leaf(1, fence::Tree(2, 0, 2));
    leaf.local_ready(1, {});
    pmi::Kvs kvs(pmi::Limits{});
    const double t0 = cpu_us();
    read_frame(big, [&](schema::Envelope::Reader e) {
      auto m = wire::decode_fence_down(e.getBody().getPmiFenceComplete());
      check(m.ok(), "the chunk decodes");
      auto actions = leaf.from_parent(std::move(m->chunk));
      auto* done = std::get_if<fence::Complete>(&actions.back());
      check(done && done->merged.entries.size() == many, "leaf completes");
      kvs.publish(std::move(done->merged));
      kvs.compact();
    });
    runs.push_back((cpu_us() - t0) / many);
  }
  c.key_path_us = median(std::move(runs));
}

}  // namespace

Calibration calibrate(size_t value_bytes) {
  const auto key = bench_key();
  Calibration c;
  handshakes(key, c);
  sealing(key, c);
  fence_codec(value_bytes, c);
  return c;
}

void apply(const Calibration& c, Model& m) {
  m.handshake_initiator_us = c.handshake_initiator_us;
  m.handshake_responder_us = c.handshake_responder_us;
  m.handshake_msg_bytes = c.handshake_msg_bytes;
  m.seal_msg_us = c.seal_msg_us;
  m.seal_byte_us = c.seal_byte_us;
  m.open_msg_us = c.open_msg_us;
  m.open_byte_us = c.open_byte_us;
  m.key_encode_us = c.key_encode_us;
  m.entry_wire_bytes = c.entry_wire_bytes;
  m.chunk_wire_bytes = c.chunk_wire_bytes;
}

RequestCost measure_request(int agents, int ranks_per_node) {
  launcher::LaunchOptions options;
  launcher::App app;
  app.ntasks = agents * ranks_per_node;
  app.program = "/bin/true";
  options.apps.push_back(app);
  options.nodes = agents;
  launcher::Layout layout;
  layout.ntasks = agents * ranks_per_node;
  layout.nodes = agents;
  for (int n = 0; n < agents; ++n)
    for (int j = 0; j < ranks_per_node; ++j) layout.rank_nodes.push_back(n);
  launcher::JobRequest request;
  request.launch_id = kLaunchId;
  request.user = {1000, 1000, {1000, 27, 100}, "alice"};
  for (int v = 0; v < 30; ++v)  // a login shell's environment, roughly
    request.exported.emplace_back("VARIABLE_" + std::to_string(v), std::string(48, 'e'));
  // Numbered nodes on a management network's /16, as clusters name and address them: the
  // request carries them as host lists (a few bytes per 256 nodes), worked out once per launch.
  std::vector<wire::PeerInfo> peers;
  for (int n = 0; n < agents; ++n)
    peers.push_back({"node" + std::to_string(10000 + n),
                     "10.1." + std::to_string(n / 256 % 256) + "." + std::to_string(n % 256),
                     7400});
  const std::string self = peers.back().node_id;
  const std::string workdir = "/home/alice/jobs/run-0001";
  wire::LaunchRequest plain = launcher::launch_request(options, request, layout, peers, workdir);
  plain.node_index = static_cast<uint32_t>(agents - 1);
  auto encode_one = [&] {
    auto msg = wire::launch_request(plain);
    return encode(msg);
  };
  const std::string frame = encode_one();
  agent::LaunchDefaults defaults;
  defaults.node_id = self;
  defaults.agent_uid = 1000;
  const int reps = agents >= 8192 ? 5 : 9;
  RequestCost cost;
  cost.bytes = static_cast<double>(frame.size());
  cost.encode_us = time_us(reps, 1, [&] { encode_one(); });
  cost.decode_us = time_us(reps, 1, [&] {
    read_frame(frame, [&](schema::Envelope::Reader e) {
      auto decoded = wire::decode_launch_request(e.getBody().getLaunchProcesses());
      check(decoded.ok(), "request decode");
      auto spec = agent::make_launch_spec(*decoded, defaults);
      if (!spec) throw std::runtime_error("calibration: request refused: " + spec.error().message);
      check(spec->nnodes() == agents, "request decode");
    });
  });
  return cost;
}

}  // namespace lattice::sim
