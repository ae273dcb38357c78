// srun's file-name patterns for --output/--error, and where each rank's bytes land.
#include "launcher/output_files.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

using namespace lattice::launcher;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
}  // namespace

TEST_CASE("patterns: %t rank, %n node, %j launch id, %% percent; anything else refused") {
  CHECK(*expand_output_pattern("out-%j-%n-%t.txt", 7, 2, "L1") == "out-L1-2-7.txt");
  CHECK(*expand_output_pattern("100%%-%t", 0, 0, "L") == "100%-0");
  CHECK(*expand_output_pattern("plain.log", 3, 1, "L") == "plain.log");
  CHECK(!expand_output_pattern("x-%q", 0, 0, "L"));
  CHECK(!expand_output_pattern("x-%", 0, 0, "L"));
}

TEST_CASE("each rank's stream lands in its own file; stderr joins --output's by default") {
  char dir[] = "/tmp/lattice-outXXXXXX";
  REQUIRE(::mkdtemp(dir));
  std::string base = std::string(dir) + "/r%t.out";
  lattice::net::Loop loop;
  OutputWriter out(loop, 1), err(loop, 2);  // unused: every stream has its file
  auto me = resolve_job_user("");
  REQUIRE(me);
  {
    OutputFiles files(base, "", false, "L", {0, 0, 1}, *me, out, err);
    files.write(0, false, "zero\n");
    files.write(2, false, "two\n");
    files.write(2, true, "two-err\n");
    files.write(0, false, "again\n");
  }
  CHECK(slurp(std::string(dir) + "/r0.out") == "zero\nagain\n");
  CHECK(slurp(std::string(dir) + "/r2.out") == "two\ntwo-err\n");
  {  // --open-mode=append keeps what an earlier launch wrote; the default truncates
    OutputFiles appended(base, "", true, "L", {0}, *me, out, err);
    appended.write(0, false, "more\n");
  }
  CHECK(slurp(std::string(dir) + "/r0.out") == "zero\nagain\nmore\n");
  {
    OutputFiles truncated(base, "", false, "L", {0}, *me, out, err);
    truncated.write(0, false, "new\n");
  }
  CHECK(slurp(std::string(dir) + "/r0.out") == "new\n");
  {
    OutputFiles shared(std::string(dir) + "/all.out", std::string(dir) + "/n%n.err", false, "L",
                       {0, 1}, *me, out, err);
    shared.write(0, false, "a\n");
    shared.write(1, false, "b\n");
    shared.write(1, true, "e\n");
  }
  CHECK(slurp(std::string(dir) + "/all.out") == "a\nb\n");
  CHECK(slurp(std::string(dir) + "/n1.err") == "e\n");
  for (const char* f : {"/r0.out", "/r2.out", "/all.out", "/n1.err"})
    std::remove((std::string(dir) + f).c_str());
  ::rmdir(dir);
}
