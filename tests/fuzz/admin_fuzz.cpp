// libFuzzer target: the admin socket, both ends. The agent's side takes a client's bytes in
// pieces (admin::RequestBuffer) and answers the one request line (admin::handle_request) from
// an agent state whose texts come from the input too: rank and launch rows hold what ranks and
// ranks put there (a rank's last PMI command is whatever it sent). `lattice admin`'s side
// reads that answer (admin::AnswerBuffer). The request is taken once and bounded; the answer is
// lines; what reaches the operator's terminal holds no byte a terminal acts on.
// Input: one byte, the size of the pieces the request arrives in (0: all at once); a request
// part ending at the first NUL; then the state's strings, NUL-separated, used in turn.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "admin/metrics.hpp"
#include "admin/protocol.hpp"
#include "admin/status.hpp"

namespace {

using namespace lattice::admin;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "admin: %s\n", what);
  std::abort();
}

// The input's strings, one after another; "" once they run out.
struct Strings {
  std::string_view rest;
  std::string next() {
    size_t end = std::min(rest.find('\0'), rest.size());
    std::string s(rest.substr(0, end));
    rest.remove_prefix(std::min(end + 1, rest.size()));
    return s;
  }
  uint64_t number() {
    std::string s = next();
    uint64_t n = 0;
    for (unsigned char c : s) n = n * 131 + c;
    return n;
  }
};

// The PMI engine's names for a rank's state; its last command is whatever the rank sent.
const char* const kStates[] = {"initialized", "in_fence", ""};

struct State : AgentControl {
  Strings in;
  // The agent's refusal ("" when it ends the allocation): whatever the input says.
  std::string end_allocation(const std::string&) override { return in.next(); }
  void drain(const std::string& reason) override { draining = reason; }
  // Label values are the agent's own, but the rendering must hold even if one were not.
  std::string metrics() override {
    MetricsTally tally({in.next()}, {in.next()});
    tally.launch_ended(in.next());
    tally.refused(in.next());
    tally.fence_released(in.number());
    MetricsGauges gauges;
    gauges.node_id = in.next();
    gauges.uptime_ms = in.number();
    return render_metrics(tally, gauges);
  }
  std::string draining;
  AgentStatus status() override {
    AgentStatus st;
    st.draining = draining;
    st.version = "0.1.0";
    st.node_id = "n1";
    st.listen = "127.0.0.1:7400";
    st.uptime_ms = in.number();
    for (int l = 0; l < 2 && !in.rest.empty(); ++l) {
      LaunchRow row;
      row.launch_id = "L" + std::to_string(l);  // path-safe: the request's decoding made sure
      row.nnodes = 2;
      row.world_size = 4;
      row.age_ms = in.number();
      row.fence_waiting_for = {static_cast<int>(in.number() % 8), 3};
      row.last_fence.push_back(FenceRow{in.number(), in.number(), 0, in.number(), 0});
      for (int r = 0; r < 3; ++r)
        row.ranks.push_back(RankRow{r, static_cast<int>(in.number() % 100000),
                                    kStates[in.number() % 3], in.next(), in.number(), in.number()});
      st.launches.push_back(std::move(row));
    }
    return st;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = data[0];
  std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  size_t nul = std::min(input.find('\0'), input.size());
  std::string_view client = input.substr(0, nul);
  State state;
  state.in.rest = input.substr(std::min(nul + 1, input.size()));

  RequestBuffer request;
  std::string answer;
  int answers = 0;
  while (!client.empty()) {
    size_t n = piece == 0 ? client.size() : std::min(piece, client.size());
    if (auto line = request.add(client.substr(0, n))) {
      require(line->size() <= kMaxRequestBytes && line->find('\n') == std::string::npos,
              "a request is one bounded line");
      answer = handle_request(*line, state);
      ++answers;
    }
    client.remove_prefix(n);
  }
  require(answers <= 1, "one answer per client");
  if (answers == 0) return 0;
  require(!answer.empty() && answer.back() == '\n', "an answer is whole lines");

  AnswerBuffer reader;
  for (size_t at = 0; at < answer.size(); at += 4096)
    if (!reader.add(std::string_view(answer).substr(at, 4096))) break;
  Answer shown = reader.take();
  require(shown.error == (answer.rfind("error:", 0) == 0), "the error flag");
  for (unsigned char c : shown.text)
    require(c == '\n' || (c >= 0x20 && c < 0x7f), "the client prints a control byte");
  // What the agent itself writes must be as safe: other clients (socat, scripts) print it raw.
  for (unsigned char c : answer)
    require(c == '\n' || (c >= 0x20 && c < 0x7f), "the agent's answer holds a control byte");
  return 0;
}
