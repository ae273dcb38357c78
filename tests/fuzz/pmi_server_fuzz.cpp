// libFuzzer target: the PMI framer, codec and per-launch server (pmi::Server) driven by a script
// of connections, client bytes, EOFs and fence completions/failures (format below). The server
// must never crash, leak or throw (it reports its own exceptions as "internal error" failures),
// and must never write to a connection it reported as failed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pmi/mapping.hpp"
#include "pmi/server.hpp"

// Input: one header byte, then operations until the input ends.
//   header: bits 0-1 connections - 1; bits 2-3 how they connect: 0 PMI_FD (rank known),
//           1 socket (rank unknown), 2 PMI_PORT (one-time PMI_ID), 3 mixed; bit 4 completes
//           fences synchronously from inside fence_ready; bits 5-6 = 4 - local ranks (ranks
//           0..n-1 of 8 are here, the rest on a second node).
//   op 0x00-0x7f  data: next byte = length n, then n bytes for connection (op % count)
//   op 0x80-0x9f  eof of connection (op & 31) % count
//   op 0xa0-0xbf  complete every announced fence in order (bit 0: add a remote node's entry)
//   op 0xc0-0xdf  fence_failed: bit 4 set = epoch (op & 15), else the oldest open epoch
//   op 0xe0-0xff  arg = op & 31: <8 new connection (mode arg & 3); <16 fence_complete of
//                 epoch arg-8 with an empty store; <24 clock += (arg-15) s; else status reads
// scripts/fuzz turns tests/corpus/pmi transcripts into seeds of this form.
namespace {

using namespace lattice;
using namespace lattice::pmi;

constexpr int kWorldSize = 8;
constexpr size_t kMaxConns = 16;

class Hooks : public ServerHooks {
 public:
  void send(ConnId conn, std::string bytes) override {
    // The engine promises to ignore a connection once it reported it: a write is a bug.
    if (failed.count(conn)) std::abort();
    sent_bytes += bytes.size();
  }
  void fence_ready(uint64_t epoch, KvList local_puts) override {
    ready.emplace_back(epoch, std::move(local_puts));
    if (sync_complete && server) complete_all(false);
  }
  void abort_requested(int, std::optional<int>, std::string) override { ++aborts; }
  void client_failed(ConnId conn, int, std::string message) override {
    // The engine turns an exception from its own code into this failure; for us it is a bug.
    if (message.rfind("internal error: ", 0) == 0) std::abort();
    failed.insert(conn);
  }
  bool tracing() const override { return true; }  // the trace text is code too
  void trace(ConnId, char, std::string_view message) override { traced += message.size(); }
  uint64_t now_ms() override { return clock_ms; }

  void complete_all(bool remote_entry) {
    while (completed < ready.size()) {
      // Copies: a nested fence_ready may grow `ready` while fence_complete runs.
      uint64_t epoch = ready[completed].first;
      KvList merged = ready[completed].second;
      ++completed;
      if (remote_entry) merged.emplace_back("remote-" + std::to_string(epoch), "from-node-1");
      server->fence_complete(epoch, owning_store(std::move(merged)));
    }
  }
  uint64_t oldest_open_epoch() const {
    return completed < ready.size() ? ready[completed].first
                                    : (ready.empty() ? 1 : ready.back().first + 1);
  }

  Server* server = nullptr;
  bool sync_complete = false;
  std::vector<std::pair<uint64_t, KvList>> ready;
  size_t completed = 0;
  std::set<ConnId> failed;
  size_t sent_bytes = 0, traced = 0;
  int aborts = 0;
  uint64_t clock_ms = 1000;
};

LaunchInfo fuzz_launch(int local) {
  LaunchInfo info;
  info.jobid = "fuzz-job";
  info.world_size = kWorldSize;
  std::vector<int> node_of_rank(kWorldSize, 1);
  for (int rank = 0; rank < local; ++rank) {
    info.local_ranks.push_back(rank);
    node_of_rank[static_cast<size_t>(rank)] = 0;
  }
  info.process_mapping = process_mapping(node_of_rank);
  // PMI_IDs equal to the ranks, so the PMI_PORT transcript of tests/corpus works as a seed.
  for (int rank : info.local_ranks) info.port_ids[std::to_string(rank)] = rank;
  return info;
}

ConnId open_conn(Server& server, int mode, size_t index) {
  if (mode == 3) mode = static_cast<int>(index % 3);
  if (mode == 0) return server.connect(static_cast<int>(index % 4));  // may be another node's
  if (mode == 1) return server.connect(std::nullopt);
  return server.connect_port();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t header = data[0];
  Hooks hooks;
  Server server(fuzz_launch(4 - ((header >> 5) & 3)), hooks);
  hooks.server = &server;
  hooks.sync_complete = (header & 0x10) != 0;
  const int mode = (header >> 2) & 3;
  std::vector<ConnId> conns;
  for (size_t i = 0; i < size_t{1} + (header & 3); ++i) conns.push_back(open_conn(server, mode, i));

  size_t at = 1;
  while (at < size) {
    const uint8_t op = data[at++];
    const unsigned arg = op & 31;
    if (op < 0x80) {
      size_t n = at < size ? data[at++] : 0;
      n = std::min(n, size - at);
      server.receive(conns[op % conns.size()],
                     std::string_view(reinterpret_cast<const char*>(data + at), n));
      at += n;
    } else if (op < 0xa0) {
      server.eof(conns[arg % conns.size()]);
    } else if (op < 0xc0) {
      hooks.complete_all(arg & 1);
    } else if (op < 0xe0) {
      uint64_t epoch = (arg & 16) ? arg & 15 : hooks.oldest_open_epoch();
      server.fence_failed(epoch, "fuzz: fence " + std::to_string(epoch) + " failed");
    } else if (arg < 8) {
      if (conns.size() < kMaxConns) conns.push_back(open_conn(server, arg & 3, conns.size()));
    } else if (arg < 16) {
      server.fence_complete(arg - 8, {});
    } else if (arg < 24) {
      hooks.clock_ms += 1000 * (arg - 15);
    } else {
      for (const auto& st : server.status()) hooks.traced += st.last_command.size();
      hooks.traced += server.ranks_not_in_fence().size() + server.fence_epoch();
    }
  }
  // Every rank goes away at the end, as when a launch is torn down.
  for (ConnId conn : conns) server.eof(conn);
  hooks.server = nullptr;
  return 0;
}
