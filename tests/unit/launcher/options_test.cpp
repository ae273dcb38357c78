#include "launcher/options.hpp"

#include <doctest/doctest.h>

using namespace lattice::launcher;
using Args = std::vector<std::string>;

TEST_CASE("launch options: the srun-like flags") {
  auto o = parse_launch_options(Args{"-n", "8", "-l", "--env", "A=b=c", "--env",
                                     "X=", "--fence-timeout", "2.5", "./prog", "-n", "3"});
  REQUIRE(o);
  REQUIRE(o->apps.size() == 1);
  CHECK(o->ntasks() == 8);
  CHECK(o->label);
  CHECK(o->apps[0].env ==
        std::vector<std::pair<std::string, std::string>>{{"A", "b=c"}, {"X", ""}});
  CHECK(o->fence_timeout_ms == 2500);
  CHECK(o->apps[0].program == "./prog");
  CHECK(o->apps[0].args == Args{"-n", "3"});  // the program's own flags stay its own
}

TEST_CASE("launch options: joined and = forms") {
  auto o = parse_launch_options(Args{"-n4", "-N2", "--tasks-per-node=2", "--distribution", "cyclic",
                                     "--agents", "127.0.0.1:7400,[::1]:7401", "prog"});
  REQUIRE(o);
  CHECK(o->ntasks() == 4);
  CHECK(o->nodes == 2);
  CHECK(o->tasks_per_node == 2);
  CHECK(o->distribution == Distribution::cyclic);
  REQUIRE(o->agents.size() == 2);
  CHECK(o->agents[1].address.host == "::1");
  CHECK(o->agents[1].name.empty());
  auto named = parse_launch_options(Args{"--agents", "n1=10.0.0.1:7400,gpu-2=[::1]:7401", "p"});
  REQUIRE(named);
  CHECK(named->agents[0].name == "n1");
  CHECK(named->agents[1].name == "gpu-2");
  CHECK(named->agents[1].address.port == 7401);
}

TEST_CASE("launch options: errors name the flag") {
  auto check = [](Args args, const std::string& needle) {
    auto o = parse_launch_options(args);
    REQUIRE_FALSE(o);
    CHECK_MESSAGE(o.error().message.find(needle) != std::string::npos, o.error().message);
  };
  check({"-n", "0", "p"}, "-n");
  check({"-n", "x", "p"}, "-n");
  check({"-n"}, "needs a value");
  check({"--pmi", "pmi3", "p"}, "--pmi");
  check({"--env", "=v", "p"}, "--env");
  check({"--agents", "hostonly", "p"}, "--agents");
  check({"--fence-timeout", "-1", "p"}, "--fence-timeout");
  check({"--bogus", "p"}, "unknown option");
  check({"-l"}, "no program");
  check({"-N", "3", "--agents", "a:1,b:2", "p"}, "more nodes");
  check({"--label=yes", "p"}, "takes no value");
  check({"--agents", "=h:1", "p"}, "--agents");
  check({"--agents", "a=h:1,a=h:2", "p"}, "given twice");
}

TEST_CASE("launch options: MPMD segments after ':' (mpiexec's form)") {
  auto o = parse_launch_options(Args{"-N", "2", "-n", "2", "--env", "A=1", "./a", "argA", ":", "-n",
                                     "3", "--env", "B=2", "./b", "argB", "x", ":", "./c"});
  REQUIRE(o);
  REQUIRE(o->apps.size() == 3);
  CHECK(o->nodes == 2);
  CHECK(o->apps[0].program == "./a");
  CHECK(o->apps[0].args == Args{"argA"});
  CHECK(o->apps[0].env == std::vector<std::pair<std::string, std::string>>{{"A", "1"}});
  CHECK(o->apps[1].ntasks == 3);
  CHECK(o->apps[1].program == "./b");
  CHECK(o->apps[1].args == Args{"argB", "x"});
  CHECK(o->apps[1].env == std::vector<std::pair<std::string, std::string>>{{"B", "2"}});
  CHECK(o->apps[2].program == "./c");
  CHECK(o->apps[2].args.empty());
  CHECK(o->ntasks() == 6);  // a segment without -n has one rank, as under mpiexec
  // "--" lets a segment's program start with '-'.
  auto dashed = parse_launch_options(Args{"p", ":", "-n", "2", "--", "-odd"});
  REQUIRE(dashed);
  CHECK(dashed->apps[1].program == "-odd");

  auto check = [](Args args, const std::string& needle) {
    auto bad = parse_launch_options(args);
    REQUIRE_FALSE(bad);
    CHECK_MESSAGE(bad.error().message.find(needle) != std::string::npos, bad.error().message);
  };
  check({"./a", ":"}, "after the last ':'");
  check({"./a", ":", "-n", "2"}, "after the last ':'");
  check({":", "./a"}, "no program before it");
  check({"./a", ":", ":", "./b"}, "no program before it");
  check({"./a", ":", "-N", "2", "./b"}, "a segment takes only -n and --env");
  check({"./a", ":", "-n", "1048576", "./b"}, "more than");
  // An empty argument where a segment's program goes is no program (found by
  // fuzz_launch_options: agents refused the launch, "app 1 has no entrypoint").
  check({"./a", ":", "", ":", "./c"}, "no program given after a ':' (segment 2)");
  check({"./a", ":", "-n", "2", ""}, "no program given after the last ':' (segment 2)");
}

TEST_CASE("--fanout: at most what an agent takes (found by fuzz_launch_request)") {
  CHECK(parse_launch_options(Args{"--fanout", "65536", "p"})->fanout == 65536);
  auto wide = parse_launch_options(Args{"--fanout", "65537", "p"});
  REQUIRE_FALSE(wide);
  CHECK(wide.error().message == "--fanout: expected a whole number from 1 to 65536, got '65537'");
}

TEST_CASE("launch options: the fabric manager's flags") {
  auto o = parse_launch_options(Args{"--vni", "77", "--fabric-url", "https://fm:8443",
                                     "--fabric-token-file", "/t", "--config=/c.yaml", "p"});
  REQUIRE(o);
  CHECK(o->vni == 77);
  CHECK(o->fabric_url == "https://fm:8443");
  CHECK(o->fabric_token_file == "/t");
  CHECK(o->config_file == "/c.yaml");
  CHECK_FALSE(parse_launch_options(Args{"--vni", "0", "p"}));
  CHECK_FALSE(parse_launch_options(Args{"--vni", "65536", "p"}));
  CHECK_FALSE(parse_launch_options(Args{"--fabric-url", "fm:8443", "p"}));
}

TEST_CASE("launch options: --pmi pmix is parsed (and refused later, clearly)") {
  auto o = parse_launch_options(Args{"--pmi", "pmix", "p"});
  REQUIRE(o);
  CHECK(o->pmi == lattice::wire::PmiMode::pmix);
}

TEST_CASE("--input: rank 0 by default, none, all or a rank number") {
  CHECK(parse_launch_options(Args{"p"})->input_rank == 0);
  CHECK(parse_launch_options(Args{"--input", "none", "p"})->input_rank == kInputNone);
  CHECK(parse_launch_options(Args{"-i", "all", "p"})->input_rank == kInputAll);
  CHECK(parse_launch_options(Args{"--input=3", "p"})->input_rank == 3);
  CHECK(!parse_launch_options(Args{"--input", "-1", "p"}));
  CHECK(!parse_launch_options(Args{"--input", "some", "p"}));
}

TEST_CASE("time limits in srun's formats") {
  CHECK(*parse_time_limit("5") == 300000);
  CHECK(*parse_time_limit("1:30") == 90000);
  CHECK(*parse_time_limit("2:00:01") == 7201000);
  CHECK(*parse_time_limit("1-2") == (86400 + 7200) * 1000ull);
  CHECK(*parse_time_limit("1-0:30") == (86400 + 1800) * 1000ull);
  CHECK(*parse_time_limit("0-0:0:5") == 5000);
  for (const char* bad : {"", "0", "x", "1:2:3:4", "-5", "1-", "1:-2", "0:00"})
    CHECK_MESSAGE(!parse_time_limit(bad), bad);
  // Days whose seconds wrap 64 bits were taken for 61184 s (17 h): over a year is refused.
  for (const char* long_ago : {"367-0", "213503982334602-0", "100000000000000-0"})
    CHECK_MESSAGE(parse_time_limit(long_ago).error().message ==
                      std::string("a time limit over a year: '") + long_ago + "'",
                  long_ago);
  CHECK(*parse_time_limit("366-0") == 366ull * 86400 * 1000);
}

TEST_CASE("-t, -K, --alloc and --chdir") {
  auto o =
      parse_launch_options(Args{"-t", "1:30", "-K0", "--alloc", "job-77", "--chdir", "d", "p"});
  REQUIRE(o);
  CHECK(o->time_limit_ms == 90000);
  CHECK(!o->kill_on_bad_exit);
  CHECK(o->alloc == "job-77");
  CHECK(o->chdir == "d");
  auto joined = parse_launch_options(Args{"-t2", "--kill-on-bad-exit=0", "p"});
  REQUIRE(joined);
  CHECK(joined->time_limit_ms == 120000);
  CHECK(!joined->kill_on_bad_exit);
  auto plain = parse_launch_options(Args{"-K", "p"});
  REQUIRE(plain);
  CHECK(plain->kill_on_bad_exit);
  CHECK(plain->apps[0].program == "p");  // -K takes no separate value, as in srun
  CHECK(!parse_launch_options(Args{"-K2", "p"}));
  CHECK(!parse_launch_options(Args{"--time", "soon", "p"}));
  auto files = parse_launch_options(Args{"-o", "o-%t", "--error=e-%n-%j", "p"});
  REQUIRE(files);
  CHECK(files->output == "o-%t");
  CHECK(files->error == "e-%n-%j");
  auto bad = parse_launch_options(Args{"--output", "x-%q", "p"});
  REQUIRE(!bad);
  CHECK(bad.error().message.find("%q") != std::string::npos);
}

TEST_CASE("--launch auto|star|tree; a tree needs every agent's node id") {
  CHECK(parse_launch_options(Args{"p"})->launch == "auto");
  CHECK(parse_launch_options(Args{"--launch", "tree", "p"})->launch == "tree");
  CHECK(parse_launch_options(Args{"--launch=star", "p"})->launch == "star");
  auto bad = parse_launch_options(Args{"--launch", "ring", "p"});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "--launch: auto, star or tree, got 'ring'");
  CHECK(parse_launch_options(Args{"--agents", "a=h1:1,b=h2:1", "--launch", "tree", "p"}));
  auto unnamed = parse_launch_options(Args{"--agents", "a=h1:1,h2:1", "--launch", "tree", "p"});
  REQUIRE_FALSE(unnamed);
  CHECK(unnamed.error().message.find("h2:1 has none") != std::string::npos);
}

TEST_CASE("--sched auto|normal|batch; auto unless asked") {
  CHECK(parse_launch_options(Args{"p"})->sched == "auto");
  CHECK(parse_launch_options(Args{"--sched", "batch", "p"})->sched == "batch");
  CHECK(parse_launch_options(Args{"--sched=normal", "p"})->sched == "normal");
  auto fifo = parse_launch_options(Args{"--sched", "fifo", "p"});
  REQUIRE(!fifo);
  CHECK(fifo.error().message == "--sched: auto, normal or batch, got 'fifo'");
}

TEST_CASE("-u, --open-mode and --signal") {
  auto o = parse_launch_options(Args{"-u", "--open-mode=append", "--signal", "USR1@30", "./p"});
  REQUIRE(o);
  CHECK(o->unbuffered);
  CHECK(o->append_output);
  CHECK(o->warn_signal == 10);
  CHECK(o->warn_before_ms == 30000);
  auto d = parse_launch_options(Args{"--signal=SIGTERM", "--open-mode", "truncate", "./p"});
  REQUIRE(d);
  CHECK(!d->unbuffered);
  CHECK(!d->append_output);
  CHECK(d->warn_signal == 15);
  CHECK(d->warn_before_ms == 60000);  // srun's default
  CHECK(parse_launch_options(Args{"--signal", "B:USR1@5", "./p"})
            .error()
            .message.find("not supported") != std::string::npos);
  CHECK(!parse_launch_options(Args{"--signal", "USR9", "./p"}));
  CHECK(!parse_launch_options(Args{"--signal", "USR1@x", "./p"}));
  CHECK(!parse_launch_options(Args{"--open-mode", "sideways", "./p"}));
  CHECK(!parse_launch_options(Args{"-u=1", "./p"}));
}
