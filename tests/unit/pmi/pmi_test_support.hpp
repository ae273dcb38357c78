// Test support for the PMI engine: a recording ServerHooks, PMI-2 frame building, and the
// transcript format of tests/corpus/pmi (directives, then C<conn>/S<conn> lines of escaped
// bytes, E<conn> for a client's EOF) with a replayer that completes fences the way the single-node
// agent does.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pmi/server.hpp"

namespace lattice::pmi::test {

struct Sent {
  ConnId conn;
  std::string bytes;
};

struct AbortCall {
  int rank;
  std::optional<int> exit_code;
  std::string message;
};

struct Failure {
  ConnId conn;
  int rank;
  std::string message;
};

class FakeHooks : public ServerHooks {
 public:
  void send(ConnId conn, std::string bytes) override;
  void fence_ready(uint64_t epoch, KvList local_puts) override;
  void abort_requested(int rank, std::optional<int> exit_code, std::string message) override {
    aborts.push_back({rank, exit_code, std::move(message)});
  }
  void client_failed(ConnId conn, int rank, std::string message) override;
  bool name_request(ConnId conn, NameOp op, const std::string& name,
                    const std::string& port) override {
    names.push_back({conn, op, name, port});
    return serve_names;
  }
  void rank_initialized(int rank) override { initialized.push_back(rank); }
  void rank_finalized(int rank) override { finalized.push_back(rank); }
  bool tracing() const override { return true; }
  void trace(ConnId conn, char direction, std::string_view message) override {
    traces.push_back(std::string(1, direction) + ":" + std::string(message));
  }
  uint64_t now_ms() override { return clock_ms; }

  // Sends since the last call.
  std::vector<Sent> take_sent();
  // The bytes sent to `conn` since the last take, concatenated (other conns' stay queued).
  std::string take_for(ConnId conn);

  std::vector<Sent> sent;
  std::vector<std::pair<uint64_t, KvList>> ready;  // fence_ready calls
  std::vector<AbortCall> aborts;
  std::vector<Failure> failures;
  int sends_after_failure = 0;  // engine broke its promise to ignore a failed connection
  std::vector<int> initialized, finalized;
  struct NameCall {
    ConnId conn;
    NameOp op;
    std::string name, port;
  };
  bool serve_names = false;  // answer name requests (later, through name_answer) or refuse them
  std::vector<NameCall> names;
  std::vector<std::string> traces;
  uint64_t clock_ms = 1000;
  // When set, run from inside fence_ready (e.g. a synchronous fence_complete).
  std::function<void(uint64_t, const KvList&)> on_fence_ready;
};

// A PMI-2 frame as clients write it: left-aligned length, then the body.
std::string frame(std::string_view body);

// A standard single-node launch: ranks 0..n-1 all local, mapping (vector,(0,1,n)).
LaunchInfo local_launch(int ranks, std::string jobid = "job-1");

// Feeds the bytes of one request and returns what was sent to that connection in answer.
std::string ask(Server& server, FakeHooks& hooks, ConnId conn, std::string_view bytes);

// --- transcripts (tests/corpus/pmi) ---
struct Step {
  enum Kind : char { request = 'C', answer = 'S', close = 'E' } kind;
  int conn;  // index within the transcript
  std::string bytes;
};

struct Transcript {
  std::string name;
  LaunchInfo info;
  bool ranks_known = true;  // "@connect known": connection i is rank local_ranks[i] (PMI_FD)
  std::vector<Step> steps;
};

// Undoes the corpus escapes: \n \0 \\ \xNN.
std::string unescape(std::string_view text);
Transcript load_transcript(const std::string& file_name);
// Replays a transcript, checking every server answer byte for byte. `chunk` > 0 delivers the
// client bytes that many at a time (1 = byte-at-a-time).
void replay(const Transcript& transcript, size_t chunk = 0);

}  // namespace lattice::pmi::test
