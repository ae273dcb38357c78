#include "agent/agent_flags.hpp"

#include <doctest/doctest.h>

using namespace lattice::agent;
using Args = std::vector<std::string>;

TEST_CASE("lattice-agentd's flags: overrides kept in order, the rest parsed") {
  auto f = parse_agent_flags(Args{"--config", "/c.yaml", "--listen=127.0.0.1:0", "--node-id", "n1",
                                  "--ready-fd", "3", "--allow-root-jobs", "--check-config"});
  REQUIRE_MESSAGE(f, f.error().message);
  CHECK(f->config_path == "/c.yaml");
  CHECK(f->ready_fd == 3);
  CHECK(f->check_config);
  CHECK(f->overrides ==
        std::vector<std::pair<std::string, std::string>>{
            {"--listen", "127.0.0.1:0"}, {"--node-id", "n1"}, {"--allow-root-jobs", ""}});
  CHECK(parse_agent_flags(Args{"--help"})->help);
  CHECK(parse_agent_flags(Args{"--version"})->version);
  CHECK(parse_agent_flags(Args{"--generate-key", "/k"})->generate_key == "/k");
}

TEST_CASE("lattice-agentd's flags: one-line errors") {
  auto error = [](Args args) { return parse_agent_flags(args).error().message; };
  CHECK(error({"--lisen", "h:1"}) == "unknown option '--lisen'; did you mean '--listen'?");
  CHECK(error({"--node-id"}) == "--node-id needs a value");
  CHECK(error({"--ready-fd", "x"}) == "--ready-fd: expected a file descriptor number, got 'x'");
  CHECK(error({"--check-config=1"}) == "--check-config takes no value");
  CHECK(error({"stray"}) == "unexpected argument 'stray' (flags only)");
}
