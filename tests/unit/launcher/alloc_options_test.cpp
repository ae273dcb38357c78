// `lattice alloc`'s command line: every option in its spaced, = and attached forms, where the
// batch step's command starts, and the errors; and --mem's sizes.
#include "launcher/alloc_options.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace lattice::launcher;
using Args = std::vector<std::string>;

namespace {

void refused(const Args& args, const std::string& needle) {
  auto o = parse_alloc_options(args);
  REQUIRE_FALSE_MESSAGE(o, "accepted: ", needle);
  CHECK_MESSAGE(o.error().message.find(needle) != std::string::npos, o.error().message);
}

}  // namespace

TEST_CASE("alloc options: the defaults, and a bare command") {
  auto o = parse_alloc_options(Args{"./batch.sh", "-N", "2"});
  REQUIRE(o);
  CHECK(o->agents.empty());
  CHECK(o->nodes == 0);
  CHECK(o->user.empty());
  CHECK(o->time_limit_ms == 0);
  CHECK(o->key_file.empty());
  CHECK(o->id.empty());
  CHECK(o->cpus == 0);
  CHECK(o->memory_bytes == 0);
  CHECK_FALSE(o->slurm_compat);
  CHECK_FALSE(o->verbose);
  CHECK(o->vni == 0);
  CHECK(o->fabric_url.empty());
  CHECK(o->fabric_token_file.empty());
  CHECK(o->config_file.empty());
  // The first non-option starts the command: what follows is the command's own.
  CHECK(o->command == Args{"./batch.sh", "-N", "2"});
}

TEST_CASE("alloc options: every option, spaced") {
  auto o = parse_alloc_options(Args{"--agents",
                                    "n1=10.0.0.1:7400,10.0.0.2:7401,[::1]:7402",
                                    "-N",
                                    "2",
                                    "--user",
                                    "alice",
                                    "-t",
                                    "1:30",
                                    "--key-file",
                                    "/etc/lattice/key",
                                    "--id",
                                    "job-42.a_b",
                                    "--cpus-per-node",
                                    "8",
                                    "--mem",
                                    "4G",
                                    "--slurm-compat",
                                    "-v",
                                    "--vni",
                                    "7",
                                    "--fabric-url",
                                    "https://fm:8000",
                                    "--fabric-token-file",
                                    "/run/token",
                                    "--config",
                                    "/etc/lattice/launcher.yaml",
                                    "sh",
                                    "-c",
                                    "srun hostname"});
  REQUIRE_MESSAGE(o, o.error().message);
  REQUIRE(o->agents.size() == 3);
  CHECK(o->agents[0].name == "n1");
  CHECK(o->agents[0].address.host == "10.0.0.1");
  CHECK(o->agents[0].address.port == 7400);
  CHECK(o->agents[1].name.empty());
  CHECK(o->agents[2].address.host == "::1");
  CHECK(o->agents[2].address.port == 7402);
  CHECK(o->nodes == 2);
  CHECK(o->user == "alice");
  CHECK(o->time_limit_ms == 90000);  // MM:SS
  CHECK(o->key_file == "/etc/lattice/key");
  CHECK(o->id == "job-42.a_b");
  CHECK(o->cpus == 8);
  CHECK(o->memory_bytes == uint64_t{4} << 30);
  CHECK(o->slurm_compat);
  CHECK(o->verbose);
  CHECK(o->vni == 7);
  CHECK(o->fabric_url == "https://fm:8000");
  CHECK(o->fabric_token_file == "/run/token");
  CHECK(o->config_file == "/etc/lattice/launcher.yaml");
  CHECK(o->command == Args{"sh", "-c", "srun hostname"});
}

TEST_CASE("alloc options: the = forms, and -N/-t attached") {
  auto o = parse_alloc_options(Args{"--agents=a:1,b:2,c:3", "--nodes=3", "--user=1001",
                                    "--time=2-00", "--key-file=/k", "--id=x", "--cpus-per-node=4",
                                    "--mem=512", "--vni=9", "--fabric-url=u",
                                    "--fabric-token-file=t", "--config=c", "--verbose", "prog"});
  REQUIRE_MESSAGE(o, o.error().message);
  CHECK(o->agents.size() == 3);
  CHECK(o->nodes == 3);
  CHECK(o->user == "1001");
  CHECK(o->time_limit_ms == 2ull * 86400 * 1000);
  CHECK(o->key_file == "/k");
  CHECK(o->id == "x");
  CHECK(o->cpus == 4);
  CHECK(o->memory_bytes == uint64_t{512} << 20);
  CHECK(o->vni == 9);
  CHECK(o->fabric_url == "u");
  CHECK(o->fabric_token_file == "t");
  CHECK(o->config_file == "c");
  CHECK(o->verbose);
  CHECK(o->command == Args{"prog"});

  auto attached = parse_alloc_options(Args{"-N2", "-t10", "prog"});
  REQUIRE_MESSAGE(attached, attached.error().message);
  CHECK(attached->nodes == 2);
  CHECK(attached->time_limit_ms == 600000);  // minutes
  CHECK(attached->command == Args{"prog"});

  // A value that is itself an '=' is kept whole after the first.
  auto url = parse_alloc_options(Args{"--fabric-url=https://fm/?a=b", "p"});
  REQUIRE(url);
  CHECK(url->fabric_url == "https://fm/?a=b");
}

TEST_CASE("alloc options: a later option overrides an earlier one") {
  auto o = parse_alloc_options(Args{"-N", "1", "-N3", "--mem", "1G", "--mem=2G", "p"});
  REQUIRE(o);
  CHECK(o->nodes == 3);
  CHECK(o->memory_bytes == uint64_t{2} << 30);
}

TEST_CASE("alloc options: '--' ends the options, so a command may start with '-'") {
  auto o = parse_alloc_options(Args{"-N", "1", "--", "-odd", "--mem", "1"});
  REQUIRE(o);
  CHECK(o->nodes == 1);
  CHECK(o->memory_bytes == 0);
  CHECK(o->command == Args{"-odd", "--mem", "1"});

  auto only = parse_alloc_options(Args{"--", "--"});
  REQUIRE(only);
  CHECK(only->command == Args{"--"});

  // The command's own "--" and options are its own.
  auto inner = parse_alloc_options(Args{"prog", "--", "-v"});
  REQUIRE(inner);
  CHECK_FALSE(inner->verbose);
  CHECK(inner->command == Args{"prog", "--", "-v"});
}

TEST_CASE("alloc options: -N within the agents given") {
  auto all = parse_alloc_options(Args{"--agents", "a:1,b:2", "-N", "2", "p"});
  REQUIRE(all);
  CHECK(all->nodes == 2);
  auto first = parse_alloc_options(Args{"-N1", "--agents", "a:1,b:2", "p"});
  REQUIRE(first);
  CHECK(first->nodes == 1);
  // Without --agents, -N is how many local agents to start: not bounded by agents.
  auto local = parse_alloc_options(Args{"-N", "65536", "p"});
  REQUIRE(local);
  CHECK(local->nodes == 65536);

  refused({"--agents", "a:1,b:2", "-N", "3", "p"}, "-N 3 asks for more nodes than the 2 agents");
  refused({"-N3", "--agents", "a:1", "p"}, "-N 3 asks for more nodes than the 1 agents");
}

TEST_CASE("alloc options: --help among the options asks for the usage") {
  CHECK(parse_alloc_options(Args{"-N2", "--help"})->help);
  CHECK(parse_alloc_options(Args{"-h"})->help);
  CHECK_FALSE(parse_alloc_options(Args{"prog", "--help"})->help);  // the command's own
}

TEST_CASE("alloc options: errors") {
  // Unknown options, wherever they are, and with or without a value after them.
  refused({"--bogus", "p"}, "unknown option '--bogus'");
  refused({"--bogus=1", "p"}, "unknown option '--bogus'");
  refused({"-x", "p"}, "unknown option '-x'");
  refused({"-n", "4", "p"}, "unknown option '-n'");
  refused({"--bogus"}, "unknown option '--bogus'");
  refused({"--nods", "2", "p"}, "unknown option '--nods'; did you mean '--nodes'?");
  refused({"-"}, "unknown option '-'");

  // A value missing, at the end or given empty.
  for (const char* flag :
       {"--agents", "-N", "--nodes", "-t", "--time", "--mem", "--id", "--user", "--key-file",
        "--cpus-per-node", "--vni", "--fabric-url", "--fabric-token-file", "--config"})
    refused({flag}, std::string(flag) + " needs a value");
  for (const char* flag :
       {"--user", "--key-file", "--fabric-url", "--fabric-token-file", "--config"})
    refused({std::string(flag) + "=", "p"}, std::string(flag) + " needs a value");

  // Flags that take none.
  refused({"--verbose=1", "p"}, "--verbose takes no value");
  refused({"--slurm-compat=yes", "p"}, "--slurm-compat takes no value");

  // No command.
  refused({}, "no command for the batch step");
  refused({"-N", "2"}, "no command for the batch step");
  refused({"-v", "--"}, "no command for the batch step");
  refused({""}, "no command for the batch step");
  refused({"--", ""}, "no command for the batch step");

  // Bad --id.
  refused({"--id", ".hidden", "p"}, "--id: letters, digits and '-_.'");
  refused({"--id", "a/b", "p"}, "--id:");
  refused({"--id", "a b", "p"}, "--id:");
  refused({"--id=", "p"}, "--id:");
  refused({"--id", std::string(129, 'a'), "p"}, "--id:");
  auto longest = parse_alloc_options(Args{"--id", std::string(128, 'a'), "p"});
  REQUIRE(longest);
  CHECK(longest->id.size() == 128);

  // Bad numbers: counts from 1 to 65536.
  for (const char* flag : {"-N", "--nodes", "--cpus-per-node", "--vni"}) {
    const std::string f = flag;
    refused({f, "0", "p"}, f + ": expected a number from 1 to 65536, got '0'");
    refused({f, "-1", "p"}, f + ": expected a number from 1 to 65536, got '-1'");
    refused({f, "65537", "p"}, f + ": expected a number from 1 to 65536, got '65537'");
    refused({f, "2x", "p"}, f + ": expected a number");
    refused({f, "", "p"}, f + ": expected a number");
    refused({f, "99999999999999999999", "p"}, f + ": expected a number");
  }
  refused({"-N=2", "p"}, "-N: expected a number from 1 to 65536, got '=2'");
  refused({"-Nx", "p"}, "-N: expected a number");

  // Bad times, sizes and agents.
  refused({"-t", "0", "p"}, "longer than 0");
  refused({"-t", "abc", "p"}, "expected MM, MM:SS");
  refused({"-t", "367-00", "p"}, "over a year");
  refused({"-t1:2:3:4", "p"}, "expected MM, MM:SS");
  refused({"--mem", "lots", "p"}, "--mem: expected a size");
  refused({"--agents", "hostonly", "p"}, "--agents");
  refused({"--agents", "h:0", "p"}, "--agents");
}

TEST_CASE("--mem sizes: K, M, G, T (either case), M by default") {
  CHECK(parse_memory("1").value() == uint64_t{1} << 20);
  CHECK(parse_memory("512").value() == uint64_t{512} << 20);
  CHECK(parse_memory("1K").value() == 1024);
  CHECK(parse_memory("3k").value() == 3072);
  CHECK(parse_memory("1M").value() == uint64_t{1} << 20);
  CHECK(parse_memory("7m").value() == uint64_t{7} << 20);
  CHECK(parse_memory("4G").value() == uint64_t{4} << 30);
  CHECK(parse_memory("2g").value() == uint64_t{2} << 30);
  CHECK(parse_memory("1T").value() == uint64_t{1} << 40);
  CHECK(parse_memory("3t").value() == uint64_t{3} << 40);
  CHECK(parse_memory("0001G").value() == uint64_t{1} << 30);
}

TEST_CASE("--mem sizes: 0, garbage and overflow are refused") {
  auto bad = [](const std::string& text) {
    auto m = parse_memory(text);
    REQUIRE_FALSE_MESSAGE(m, text);
    CHECK(m.error().message == "--mem: expected a size such as 512M or 4G, got '" + text + "'");
  };
  bad("0");
  bad("0G");
  bad("0K");
  bad("");
  bad("G");
  bad("-1");
  bad("+1");
  bad(" 1");
  bad("1 ");
  bad("1 G");
  bad("1.5G");
  bad("1GB");
  bad("1KiB");
  bad("1P");
  bad("1b");
  bad("1GG");
  bad("0x10");
  // 2^62 bytes is the most taken, in any unit.
  CHECK(parse_memory("4194304T").value() == uint64_t{1} << 62);
  bad("4194305T");
  CHECK(parse_memory("4294967296G").value() == uint64_t{1} << 62);
  bad("4294967297G");
  CHECK(parse_memory("4398046511104").value() == uint64_t{1} << 62);  // M
  bad("4398046511105");
  CHECK(parse_memory("4503599627370496K").value() == uint64_t{1} << 62);
  bad("4503599627370497K");
  // Digits beyond what a number holds.
  bad("99999999999999999999");
  bad("999999999999999999999999999999K");
}
