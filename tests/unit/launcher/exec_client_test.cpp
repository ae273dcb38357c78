// parse_ssh_command on the command lines real MPI launchers give their "ssh" (docs/pmi-wire.md
// §8), and run_remote when no agent answers.
#include "launcher/exec_client.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace lattice::launcher;
using Args = std::vector<std::string>;

TEST_CASE("Hydra's shape: -x HOST then the proxy command, quotes and all") {
  auto r = parse_ssh_command(
      {"-x", "n2", "\"/usr/bin/hydra_pmi_proxy\"", "--control-port", "vm:4242", "--proxy-id", "1"});
  REQUIRE(r);
  CHECK(r->node == "n2");
  CHECK(r->command ==
        Args{"\"/usr/bin/hydra_pmi_proxy\"", "--control-port", "vm:4242", "--proxy-id", "1"});
}

TEST_CASE("Open MPI's shape: HOST then orted's words") {
  auto r = parse_ssh_command({"n1", " orted", "-mca", "ess", "\"env\""});
  REQUIRE(r);
  CHECK(r->node == "n1");
  CHECK(r->command == Args{" orted", "-mca", "ess", "\"env\""});
}

TEST_CASE("ssh options with values are skipped with their values") {
  auto r = parse_ssh_command({"-o", "StrictHostKeyChecking=no", "-p", "22", "-q", "n3", "true"});
  REQUIRE(r);
  CHECK(r->node == "n3");
  CHECK(r->command == Args{"true"});
}

TEST_CASE("no host, no command, or an option without its value is an error") {
  CHECK_FALSE(parse_ssh_command({}));
  CHECK_FALSE(parse_ssh_command({"-x"}));
  CHECK_FALSE(parse_ssh_command({"n1"}));
  CHECK_FALSE(parse_ssh_command({"-o"}));
}

TEST_CASE("an unreachable agent is status 255") {
  CHECK(run_remote({"n1", {"true"}}, "/nonexistent-dir/exec.sock", "t") == 255);
}
