// libFuzzer target: what peer agents send one agent of a PMIx launch: fence chunks going up and
// down the tree (PmiFence, PmiFenceComplete: chunk framing, epochs, errors), the PMIx blobs the
// merged stores carry, and direct modex requests and answers (PmixModex). Each message is
// decoded as the agent decodes it, judged by the authority rules for the link it came on, and
// then goes where the agent sends it: fence chunks into this node's real TreeFence (its
// fence::Reducer), every merged store a fence completes through PmixBlobs::fence_data, as libpmix's
// answer, and a modex request into the answer the agent would send back; PMIx events (PmixEvent)
// and job control (PmixControl) are decoded, judged by the link's node, and planned as the
// wire-up plans them (the nodes a range reaches, the ranks a control acts on here). PMIx
// collectives (PmixConnect) and PMIx name requests (PmiName) go, as at the launch's head, through
// the authority rules into a real ConnectTally (participant_nodes) and NameRegistry, whose answers
// must name only requests they were given.
// The launch: 8 ranks on n0..n3 (two each), fanout 2, this agent is n1 (parent n0, child n3);
// its own ranks enter each fence as soon as the previous one completed.
// Input: 8 bytes naming the link of each message (message i: byte i % 8; b % 5 < 4 is agent
// n<b % 5>, 4 a launcher), then rpc frames.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/authority.hpp"
#include "agent/connect_tally.hpp"
#include "agent/name_registry.hpp"
#include "agent/pmix_blobs.hpp"
#include "agent/pmix_events.hpp"
#include "agent/pmix_messages.hpp"
#include "agent/pmix_procs.hpp"
#include "agent/tree_fence.hpp"
#include "base/strings.hpp"
#include "net/loop.hpp"
#include "session_input.hpp"
#include "wire/connect_codec.hpp"
#include "wire/fence_chunk.hpp"
#include "wire/modex.hpp"
#include "wire/names_codec.hpp"

namespace {

using namespace lattice;
using namespace lattice::agent;

constexpr size_t kLinkBytes = 8;
constexpr uint64_t kMaxEpochs = 64;  // bounds the local entries of one input

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "peer_pmix: %s\n", what);
  std::abort();
}

LaunchSpec launch() {
  LaunchSpec spec;
  spec.launch_id = "job-1";
  spec.world_size = 8;
  spec.peers = PeerTable({{"n0", "10.0.0.1", 7400},
                          {"n1", "10.0.0.2", 7400},
                          {"n2", "10.0.0.3", 7400},
                          {"n3", "10.0.0.4", 7400}});
  spec.rank_nodes = {0, 0, 1, 1, 2, 2, 3, 3};
  spec.node_index = 1;
  spec.head_node = 0;
  spec.fanout = 2;
  spec.pmi = wire::PmiMode::pmix;
  return spec;
}

Sender link_of(uint8_t b) {
  const int who = b % 5;
  if (who == 4) return Sender{5, {secure::Role::launcher, "fuzz-launcher"}};
  return Sender{static_cast<uint64_t>(who + 1), {secure::Role::agent, cat("n", who)}};
}

// What this node sends a peer decodes back to the same chunk.
void check_sent(rpc::Outgoing& msg, int self) {
  auto body = msg.envelope().asReader().getBody();
  auto decoded = body.isPmiFence() ? wire::decode_fence_up(body.getPmiFence())
                                   : wire::decode_fence_down(body.getPmiFenceComplete());
  require(static_cast<bool>(decoded), "a chunk this node sent does not decode");
  require(decoded->from == self && decoded->launch_id == "job-1", "a sent chunk's sender");
  require(decoded->chunk.count >= 1 && decoded->chunk.index < decoded->chunk.count,
          "a sent chunk's framing");
}

struct Node {
  const LaunchSpec spec = launch();
  net::Loop loop;
  std::optional<PmixBlobs> blobs;
  std::unique_ptr<TreeFence> fence;
  uint64_t completed = 0;
  size_t sink = 0;
  // As at the head (node 0): the launch's collectives and names, with a clock of its own.
  LaunchSpec head_spec = [] {
    LaunchSpec s = launch();
    s.node_index = 0;
    return s;
  }();
  ConnectTally tally;
  NameRegistry names;
  uint64_t next_id = 0;
  uint64_t now_ms = 0;

  void answered(const std::vector<ConnectTally::Answer>& answers) {
    for (const auto& a : answers) {
      require(a.id >= 1 && a.id <= next_id, "an answer to a collective nobody entered");
      if (a.result) sink += a.result.value().data.size() + a.result.value().context_id;
    }
  }
  void answered(const std::vector<NameRegistry::Answer>& answers) {
    for (const auto& a : answers) {
      require(a.id >= 1 && a.id <= next_id, "an answer to a name request nobody made");
      if (a.result) sink += a.result.value().size();
    }
  }

  void enter(uint64_t epoch) {
    if (epoch <= kMaxEpochs)
      fence->enter(epoch, blobs->contribution(cat("blob of n1, fence ", epoch)));
  }

  void start() {
    completed = 0;
    blobs.emplace(spec.node_index);
    fence = std::make_unique<TreeFence>(
        loop, spec.launch_id, spec.node_index, spec.fence_tree(),
        [this](const std::vector<int>& nodes, rpc::Outgoing message) {
          for (int node : nodes) require(node >= 0 && node < spec.nnodes(), "sent off the tree");
          check_sent(message, spec.node_index);
        },
        [this](uint64_t epoch, KvStore merged) {
          require(epoch == completed + 1, "fences complete once each, in order");
          completed = epoch;
          size_t others = 0;
          for (const auto& [key, value] : merged.entries)
            if (key != cat("pmix.", spec.node_index)) others += value.size();
          auto data = blobs->fence_data(merged.entries);
          require(!data || data->size() == others, "a blob's size");
          if (data) sink += data->size();
          enter(epoch + 1);
        },
        [this](uint64_t, const std::string& message) { sink += message.size(); },
        [](uint64_t, FencePhase) {});
    enter(1);
  }

  void receive(const Sender& sender, schema::Envelope::Reader envelope) {
    auto body = envelope.getBody();
    if (body.isPmiFence() || body.isPmiFenceComplete()) {
      auto message = body.isPmiFence() ? wire::decode_fence_up(body.getPmiFence())
                                       : wire::decode_fence_down(body.getPmiFenceComplete());
      if (!message || message->launch_id != spec.launch_id) return;
      if (!may_send_fence(spec, spec.fence_tree(), message->down, message->from, sender)) return;
      fence->receive(std::move(*message));
    } else if (body.isPmixConnect()) {
      auto request = wire::decode_collective(body.getPmixConnect());
      if (!request || request->launch_id != spec.launch_id) return;
      require(!request->procs.empty() && request->procs.size() <= wire::kMaxCollectiveProcs,
              "a decoded collective's procs are bounded");
      auto from = may_enter_collective(head_spec, sender);
      if (!from) return;
      auto nodes = participant_nodes(request->procs, launch_proc_nodes(head_spec));
      if (!nodes) return;
      for (int n : *nodes)
        require(n >= 0 && n < head_spec.nnodes(), "a participant off the launch");
      now_ms += 100;
      answered(tally.arrive(++next_id, request->kind, std::move(request->procs), *nodes, *from,
                            std::move(request->data), now_ms + 1000, request->group));
      answered(tally.expire(now_ms, [](int node) { return std::to_string(node); }));
      require(tally.open() <= kMaxOpenCollectives, "open collectives are bounded");
    } else if (body.isPmiName()) {
      wire::NameRequest request = wire::decode_name(body.getPmiName());
      if (request.launch_id != spec.launch_id) return;
      auto from = may_ask_name(head_spec, sender);
      if (!from) return;
      NameAsk ask;
      ask.op = request.op;
      ask.name = request.name;
      ask.value = request.port;
      ask.pmix = request.pmix;
      ask.nspace = request.nspace;
      ask.rank = request.rank;
      ask.node = *from;
      ask.scope = static_cast<NameScope>(request.scope % 4);
      ask.first_read = request.first_read;
      now_ms += 100;
      if (request.wait_ms) ask.deadline_ms = now_ms + request.wait_ms % 5000;
      answered(names.ask(++next_id, ask, now_ms));
      answered(names.expire(now_ms));
      require(names.waiters() <= kMaxNameWaiters, "waiting lookups are bounded");
    } else if (body.isPmixModex()) {
      // As an answer to this node's own request (a response on the link it went out on).
      auto answered = wire::decode_modex_answer(envelope);
      require(answered.ok(), "a PmixModex reads as an answer");
      sink += answered->size();
      wire::ModexRequest request = wire::decode_modex(body.getPmixModex());
      if (request.launch_id != spec.launch_id) return;
      auto from = may_ask_modex(spec, request.rank, sender);
      if (!from) return;
      require(*from >= 0 && *from < spec.nnodes() && request.rank >= 0 &&
                  request.rank < spec.world_size,
              "an admitted modex request names a rank and a node of the launch");
      // The agent answers a request with the rank's data.
      auto answer = wire::modex_answer("local data");
      auto back = wire::decode_modex_answer(answer.envelope().asReader());
      require(back.ok() && *back == "local data", "a modex answer reads back as sent");
    } else if (body.isPmixEvent()) {
      auto event = decode_pmix_event(body.getPmixEvent());
      if (!event) return;
      require(event->notice.info.size() <= pmix::kMaxEventInfos, "an event's info is bounded");
      for (const auto& v : event->notice.info)
        require(v.text.size() <= pmix::kMaxEventText && v.procs.size() <= pmix::kMaxEventProcs,
                "an event's values are bounded");
      // Re-encoded as this node passes it on, it decodes to the same event.
      auto again = pmix_event_message(*event);
      auto back = decode_pmix_event(again.envelope().asReader().getBody().getPmixEvent());
      require(back && back->notice.info.size() == event->notice.info.size(),
              "an event reads back as sent");
      if (event->launch_id != spec.launch_id) return;
      auto from = member_node(spec, sender, "a PMIx event");
      if (!from) return;
      // As PmixWireUp::event_received: only the sender's own ranks raise its events.
      uint32_t source = event->notice.source_rank;
      if (source >= static_cast<uint32_t>(spec.world_size) || spec.rank_nodes[source] != *from)
        return;
      auto nodes = event_nodes(event->notice, "lattice.job-1", spec.rank_nodes, spec.node_index);
      if (nodes)
        for (int n : *nodes)
          require(n >= 0 && n < spec.nnodes() && n != spec.node_index, "an event's nodes");
    } else if (body.isPmixControl()) {
      auto control = decode_pmix_control(body.getPmixControl());
      if (!control || control->launch_id != spec.launch_id) return;
      if (!member_node(spec, sender, "a PMIx job control")) return;
      int signum = control_signal(control->action, control->signum);
      require(signum > 0 && signum < 65, "a control's signal");
      // As PmixWireUp::control_received: every rank named must be this node's.
      for (int rank : control->ranks)
        if (rank >= spec.world_size || spec.rank_nodes[static_cast<size_t>(rank)] != 1) return;
      sink += control->ranks.size();
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Node node;
  if (size < kLinkBytes) return 0;
  node.start();
  node.tally = ConnectTally();
  node.names = NameRegistry();
  node.next_id = 0;
  std::string_view frames(reinterpret_cast<const char*>(data + kLinkBytes), size - kLinkBytes);
  fuzz::deliver_messages(frames, [&](size_t index, schema::Envelope::Reader envelope) {
    node.receive(link_of(data[index % kLinkBytes]), envelope);
    node.loop.run();  // completions come on a later loop turn, as in the agent
  });
  node.fence.reset();
  node.loop.run();  // the fence's timer is closed
  return 0;
}
