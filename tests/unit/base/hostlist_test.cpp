#include "base/hostlist.hpp"

#include <doctest/doctest.h>

#include <random>

using namespace lattice;

namespace {
std::vector<std::string> numbered(const std::string& prefix, int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i <= to; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}
}  // namespace

TEST_CASE("compress_hostlist: numbered neighbours share a range, in order") {
  CHECK(compress_hostlist(numbered("n", 1, 256)) == "n[1-256]");
  auto hosts = numbered("127.0.0.", 1, 255);
  hosts.push_back("127.0.1.0");
  CHECK(compress_hostlist(hosts) == "127.0.0.[1-255],127.0.1.0");
  CHECK(compress_hostlist({"gpu001", "gpu002", "gpu003", "login1"}) == "gpu[001-003],login1");
  CHECK(compress_hostlist({"n3", "n1", "n2"}) == "n3,n[1-2]");  // order is kept
  CHECK(compress_hostlist({"n9", "n10", "n011"}) == "n[9-10],n011");
  CHECK(compress_hostlist({"node"}) == "node");
  CHECK(!compress_hostlist({"a[1]"}));
  CHECK(!compress_hostlist({"a,b"}));
  CHECK(!compress_hostlist({""}));
}

TEST_CASE("expand_hostlist: Slurm's forms, bounded") {
  CHECK(expand_hostlist("n[1-3]", 10).value() == std::vector<std::string>{"n1", "n2", "n3"});
  CHECK(expand_hostlist("gpu[008-010],login1", 10).value() ==
        std::vector<std::string>{"gpu008", "gpu009", "gpu010", "login1"});
  CHECK(expand_hostlist("r[1,3-4]x", 10).value() == std::vector<std::string>{"r1x", "r3x", "r4x"});
  CHECK(expand_hostlist("[7-8]", 10).value() == std::vector<std::string>{"7", "8"});
  CHECK(expand_hostlist("n[1-1000000000]", 4096).error().message.find("more than 4096") !=
        std::string::npos);
  CHECK(!expand_hostlist("n[1-3]", 2));
  CHECK(expand_hostlist("a,b,c", 2).error().message.find("more than 2") != std::string::npos);
  for (const char* bad : {"", ",", "a,", "n[", "n]", "n[1-", "n[3-1]", "n[a]", "n[1]]", "n[[1]]",
                          "n[1][2]", "n[-1]", "n[1--2]", "n[99999999999999999999]"})
    CHECK_MESSAGE(!expand_hostlist(bad, 100), bad);
}

TEST_CASE("expand(compress(names)) == names, for random numbered names") {
  std::mt19937 rng(42);
  for (int round = 0; round < 500; ++round) {
    std::vector<std::string> names;
    int count = 1 + int(rng() % 40);
    for (int i = 0; i < count; ++i) {
      std::string prefix = std::string(1, char('a' + rng() % 3));
      unsigned n = rng() % 4 == 0 ? unsigned(names.size()) : rng() % 120;
      std::string digits = std::to_string(n);
      if (rng() % 5 == 0) digits = std::string(rng() % 3, '0') + digits;
      names.push_back(rng() % 10 == 0 ? prefix : prefix + digits);
    }
    auto text = compress_hostlist(names);
    REQUIRE(text);
    auto back = expand_hostlist(*text, 1000);
    REQUIRE_MESSAGE(back, *text);
    CHECK_MESSAGE(*back == names, *text);
  }
}
