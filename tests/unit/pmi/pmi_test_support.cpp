// Fake hooks, frame building and the transcript replayer (see pmi_test_support.hpp).
#include "pmi_test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "base/strings.hpp"
#include "pmi/text.hpp"

namespace lattice::pmi::test {

void FakeHooks::send(ConnId conn, std::string bytes) {
  for (const auto& f : failures)
    if (f.conn == conn) ++sends_after_failure;
  sent.push_back({conn, std::move(bytes)});
}

void FakeHooks::client_failed(ConnId conn, int rank, std::string message) {
  failures.push_back({conn, rank, std::move(message)});
}

void FakeHooks::fence_ready(uint64_t epoch, KvList local_puts) {
  ready.emplace_back(epoch, local_puts);
  if (on_fence_ready) on_fence_ready(epoch, ready.back().second);
}

std::vector<Sent> FakeHooks::take_sent() {
  std::vector<Sent> out;
  out.swap(sent);
  return out;
}

std::string FakeHooks::take_for(ConnId conn) {
  std::string out;
  std::vector<Sent> rest;
  for (auto& s : sent) {
    if (s.conn == conn)
      out += s.bytes;
    else
      rest.push_back(std::move(s));
  }
  sent.swap(rest);
  return out;
}

std::string frame(std::string_view body) {
  char header[8];
  std::snprintf(header, sizeof header, "%-6zu", body.size());
  return std::string(header, 6) + std::string(body);
}

LaunchInfo local_launch(int ranks, std::string jobid) {
  LaunchInfo info;
  info.jobid = std::move(jobid);
  info.world_size = ranks;
  for (int r = 0; r < ranks; ++r) info.local_ranks.push_back(r);
  info.process_mapping = cat("(vector,(0,1,", ranks, "))");
  return info;
}

std::string ask(Server& server, FakeHooks& hooks, ConnId conn, std::string_view bytes) {
  server.receive(conn, bytes);
  return hooks.take_for(conn);
}

std::string unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    char e = text[++i];
    if (e == 'n') {
      out += '\n';
    } else if (e == '0') {
      out += '\0';
    } else if (e == 'x' && i + 2 < text.size()) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += e;  // "\\"
    }
  }
  return out;
}

Transcript load_transcript(const std::string& file_name) {
  Transcript t;
  t.name = file_name;
  std::ifstream in(std::string(LATTICE_PMI_CORPUS) + "/" + file_name);
  REQUIRE_MESSAGE(in.good(), "cannot open corpus file ", file_name);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '@') {
      std::istringstream words(line.substr(1));
      std::string directive;
      words >> directive;
      if (directive == "jobid") words >> t.info.jobid;
      if (directive == "world_size") words >> t.info.world_size;
      if (directive == "mapping") words >> t.info.process_mapping;
      if (directive == "connect") {
        std::string mode;
        words >> mode;
        t.ranks_known = mode == "known";
      }
      if (directive == "local_ranks")
        for (int r; words >> r;) t.info.local_ranks.push_back(r);
      continue;
    }
    REQUIRE_MESSAGE((line[0] == 'C' || line[0] == 'S' || line[0] == 'E'),
                    "bad corpus line: ", line);
    size_t space = std::min(line.find(' '), line.size());
    Step step;
    step.kind = static_cast<Step::Kind>(line[0]);
    step.conn = std::stoi(line.substr(1, space - 1));
    if (space < line.size()) step.bytes = unescape(std::string_view(line).substr(space + 1));
    t.steps.push_back(std::move(step));
  }
  return t;
}

void replay(const Transcript& t, size_t chunk) {
  FakeHooks hooks;
  Server server(t.info, hooks);
  std::map<int, ConnId> conns;
  auto conn_of = [&](int index) {
    auto it = conns.find(index);
    if (it != conns.end()) return it->second;
    std::optional<int> rank;
    if (t.ranks_known) rank = t.info.local_ranks.at(static_cast<size_t>(index));
    return conns[index] = server.connect(rank);
  };
  size_t completed = 0;
  size_t i = 0;
  while (i < t.steps.size()) {
    const Step& request = t.steps[i];
    REQUIRE_MESSAGE(request.kind != Step::answer, t.name, ": an S line without its C line");
    ConnId conn = conn_of(request.conn);
    if (request.kind == Step::close) {
      server.eof(conn);
    } else {
      size_t step = chunk == 0 ? request.bytes.size() : chunk;
      for (size_t at = 0; at < request.bytes.size(); at += step)
        server.receive(conn, std::string_view(request.bytes).substr(at, step));
    }
    // One node: the merged store is the local puts, delivered after the call returned.
    while (completed < hooks.ready.size()) {
      auto [epoch, puts] = hooks.ready[completed++];
      server.fence_complete(epoch, owning_store(puts));
    }
    std::vector<Sent> got = hooks.take_sent();
    std::vector<Sent> want;
    for (++i; i < t.steps.size() && t.steps[i].kind == Step::answer; ++i)
      want.push_back({conn_of(t.steps[i].conn), t.steps[i].bytes});
    INFO(t.name, " after C", request.conn, " ", printable(request.bytes));
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      CHECK(got[k].conn == want[k].conn);
      CHECK(printable(got[k].bytes) == printable(want[k].bytes));
    }
  }
  CHECK(hooks.failures.empty());
}

}  // namespace lattice::pmi::test
