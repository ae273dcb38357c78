// Several agents' status shown together: each under its heading, what an agent sent made safe
// for a terminal; or one JSON document with each agent's own object, or its error.
#include "admin/cluster_view.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

using namespace lattice::admin;

TEST_CASE("text: a heading per agent, its lines made printable, errors on the heading") {
  std::vector<AgentAnswer> answers = {
      {"n1", "10.0.0.1:7400", "lattice-agentd on node n1\nlaunch L: \x1b[2Jx\n", ""},
      {"n2", "10.0.0.2:7400", "", "connect to 10.0.0.2:7400: connection refused"},
  };
  CHECK(render_cluster(answers, false) ==
        "== n1 (10.0.0.1:7400)\n"
        "lattice-agentd on node n1\n"
        "launch L: \\x1b[2Jx\n"
        "== n2 (10.0.0.2:7400): connect to 10.0.0.2:7400: connection refused\n");
}

TEST_CASE("json: each agent's object, its error, or why its answer is not one") {
  std::vector<AgentAnswer> answers = {
      {"n1", "h:1", "{\"node_id\":\"n1\",\"launches\":[]}\n", ""},
      {"n2", "h:2", "", "refused"},
      {"n3", "h:3", "error: no launch 'L' on this agent\n", ""},
      {"n4", "h:4", "[1,2]", ""},
      {"n\xff", "h:5", "{\"x\":\"\xc3\xa9\"}", ""},
  };
  std::string text = render_cluster(answers, true);
  for (char c : text) CHECK(((c >= 0x20 && c < 0x7f) || c == '\n'));
  auto doc = nlohmann::json::parse(text);
  auto& agents = doc.at("agents");
  REQUIRE(agents.size() == 5);
  CHECK(agents[0].at("status").at("node_id") == "n1");
  CHECK(agents[0].at("address") == "h:1");
  CHECK(agents[1].at("error") == "refused");
  CHECK(agents[2].at("error") == "no launch 'L' on this agent");
  CHECK(agents[3].at("error") == "its answer is not a JSON object");
  CHECK(agents[4].at("status").at("x") == "\xc3\xa9");
  CHECK_FALSE(agents[0].contains("error"));
}
