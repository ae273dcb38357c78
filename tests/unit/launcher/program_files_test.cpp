// srun's --multi-prog file and mpiexec's -configfile -> apps; -w/-x and -f -> the nodes.
#include "launcher/program_files.hpp"

#include <doctest/doctest.h>

#include "launcher/node_choice.hpp"

using namespace lattice::launcher;
using Args = std::vector<std::string>;

TEST_CASE("--multi-prog: ranks, ranges, '*', %t and %o") {
  auto apps = parse_multi_prog(
      "# srun's example\n"
      "4-6   hostname\n"
      "1,7   echo  task:%t offset:%o\n"
      "0,2-3 ./a.out 'two words' \"x y\"\n"
      "*     ./rest\n",
      9);
  REQUIRE_MESSAGE(apps, apps.error().message);
  // Rank by rank: 0 a, 1 echo(1,0), 2-3 a, 4-6 hostname, 7 echo(7,1), 8 rest.
  REQUIRE(apps->size() == 6);
  CHECK((*apps)[0].program == "./a.out");
  CHECK((*apps)[0].args == Args{"two words", "x y"});
  CHECK((*apps)[0].ntasks == 1);
  CHECK((*apps)[1].program == "echo");
  CHECK((*apps)[1].args == Args{"task:1", "offset:0"});
  CHECK((*apps)[2].ntasks == 2);
  CHECK((*apps)[3].program == "hostname");
  CHECK((*apps)[3].ntasks == 3);
  CHECK((*apps)[4].args == Args{"task:7", "offset:1"});
  CHECK((*apps)[5].program == "./rest");
  CHECK((*apps)[5].ntasks == 1);
}

TEST_CASE("--multi-prog: -n from the file, and its errors") {
  auto derived = parse_multi_prog("0-3 ./a\n", 0);
  REQUIRE(derived);
  REQUIRE(derived->size() == 1);
  CHECK((*derived)[0].ntasks == 4);
  auto error = [](const char* text, int ntasks) {
    auto apps = parse_multi_prog(text, ntasks);
    REQUIRE_FALSE(apps);
    return apps.error().message;
  };
  CHECK(error("0 ./a\n", 2) == "--multi-prog: no line names rank 1");
  CHECK(error("0-1 ./a\n1 ./b\n", 2) == "--multi-prog: rank 1 is on lines 1 and 2");
  CHECK(error("0-4 ./a\n", 2) == "--multi-prog: line 1 names rank 2, but the launch has 2 ranks");
  CHECK(error("* ./a\n", 0).find("give -n") != std::string::npos);
  CHECK(error("x ./a\n", 1).find("line 1: expected ranks") != std::string::npos);
  CHECK(error("3-1 ./a\n", 4).find("expected ranks") != std::string::npos);
  CHECK(error("0\n", 1).find("expected RANKS PROGRAM") != std::string::npos);
  CHECK(error("0 './a\n", 1).find("quote is not closed") != std::string::npos);
  CHECK(error("0-99999999999 ./a\n", 4).find("expected ranks") != std::string::npos);
  CHECK(error("", 0).find("give -n") != std::string::npos);
}

TEST_CASE("-configfile: a segment a line") {
  auto apps = parse_configfile("# two programs\n-n 2 -env A 1 ./a x\n\n-np 1 --env B=2 ./b\n./c\n");
  REQUIRE_MESSAGE(apps, apps.error().message);
  REQUIRE(apps->size() == 3);
  CHECK((*apps)[0].ntasks == 2);
  CHECK((*apps)[0].env == std::vector<std::pair<std::string, std::string>>{{"A", "1"}});
  CHECK((*apps)[0].args == Args{"x"});
  CHECK((*apps)[1].program == "./b");
  CHECK((*apps)[2].ntasks == 0);
  CHECK(parse_configfile("-N 2 ./a\n").error().message.find("a segment takes only") !=
        std::string::npos);
  CHECK(parse_configfile("-n 2\n").error().message == "-configfile: line 1: no program");
  CHECK(parse_configfile("# nothing\n").error().message == "-configfile: no segment in the file");
}

TEST_CASE("a program file's apps take the command line's --env and -genv") {
  auto o = parse_launch_options(Args{"-genv", "G", "1", "-configfile", "f"});
  REQUIRE_MESSAGE(o, o.error().message);
  REQUIRE(use_program_file(*o, "-n 1 -env G mine ./a\n-n 2 ./b\n"));
  REQUIRE(o->apps.size() == 2);
  CHECK(o->ntasks() == 3);
  CHECK(o->apps[0].env == std::vector<std::pair<std::string, std::string>>{{"G", "mine"}});
  CHECK(o->apps[1].env == std::vector<std::pair<std::string, std::string>>{{"G", "1"}});
  auto m = parse_launch_options(Args{"-n", "2", "--env", "E=1", "--multi-prog", "f"});
  REQUIRE(m);
  REQUIRE(use_program_file(*m, "0 ./a\n1 ./b\n"));
  REQUIRE(m->apps.size() == 2);
  CHECK(m->apps[1].env == std::vector<std::pair<std::string, std::string>>{{"E", "1"}});
}

TEST_CASE("-w/-x choose among the nodes by node id, in the nodes' order") {
  const std::vector<std::string> ids = {"n1", "n2", "n3", "gpu1"};
  CHECK(*choose_nodes(ids, "", "") == std::vector<size_t>{0, 1, 2, 3});
  CHECK(*choose_nodes(ids, "n[3,1]", "") == std::vector<size_t>{0, 2});
  CHECK(*choose_nodes(ids, "", "n[1-2]") == std::vector<size_t>{2, 3});
  CHECK(*choose_nodes(ids, "n[1-3]", "n2") == std::vector<size_t>{0, 2});
  auto unknown = choose_nodes(ids, "n1,n9", "");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message ==
        "--nodelist: no node 'n9' among the launch's nodes (n1, n2, n3, gpu1)");
  CHECK(choose_nodes(ids, "", "cpu7").error().message.find("--exclude: no node 'cpu7'") == 0);
  CHECK(choose_nodes(ids, "n1", "n1").error().message.find("leave no node") != std::string::npos);
  CHECK_FALSE(choose_nodes(ids, "n[1-", ""));
}

TEST_CASE("-f: Hydra's host file") {
  CHECK(*hostfile_nodelist("# nodes\nn1:2\n  n2 \n\nn3 # last\nn4 slots=2\n") == "n1,n2,n3,n4");
  CHECK_FALSE(hostfile_nodelist("\n# none\n"));
  CHECK_FALSE(hostfile_nodelist("a,b\n"));
  CHECK_FALSE(hostfile_nodelist("n[1-2]\n"));
  auto named = hostfile_nodelist("a,b\n", "hostfile /h");
  REQUIRE_FALSE(named);
  CHECK(named.error().message.rfind("hostfile /h: expected a node id", 0) == 0);
}

TEST_CASE("--multi-prog: an empty quoted program is refused (found by fuzz_program_files)") {
  auto apps = parse_multi_prog("* \"\"\n", 2);
  REQUIRE_FALSE(apps);
  CHECK(apps.error().message == "--multi-prog: line 1: no program");
}
