#include "base/hostlist.hpp"

#include <doctest/doctest.h>

#include <random>
#include <unordered_set>

using namespace lattice;

namespace {
std::vector<std::string> numbered(const std::string& prefix, int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i <= to; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

Result<std::vector<std::string>> expand(std::string_view list, size_t max_names) {
  auto parsed = HostList::parse(list, max_names);
  if (!parsed) return parsed.error();
  return parsed->names();
}

// A random host list in every form the parser reads: prefixes that end in digits, suffixes,
// padded and unpadded ranges that may overlap, several ranges in one bracket, plain names.
std::string random_list(std::mt19937& rng) {
  static const char* prefixes[] = {"", "n", "n1", "a", "a0"};
  static const char* suffixes[] = {"", "", "", "x", "1"};
  std::string out;
  int items = 1 + int(rng() % 4);
  for (int i = 0; i < items; ++i) {
    if (!out.empty()) out += ',';
    out += prefixes[rng() % 5];
    if (rng() % 4 == 0) {
      out += std::to_string(rng() % 30);
      continue;
    }
    out += '[';
    int ranges = 1 + int(rng() % 3);
    for (int r = 0; r < ranges; ++r) {
      if (r) out += ',';
      unsigned low = rng() % 25, count = rng() % 8;
      std::string pad = rng() % 3 == 0 ? "0" : "";
      out += pad + std::to_string(low);
      if (count) out += '-' + std::to_string(low + count);
    }
    out += ']';
    out += suffixes[rng() % 5];
  }
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

TEST_CASE("HostList::parse: Slurm's forms, bounded") {
  CHECK(expand("n[1-3]", 10).value() == std::vector<std::string>{"n1", "n2", "n3"});
  CHECK(expand("gpu[008-010],login1", 10).value() ==
        std::vector<std::string>{"gpu008", "gpu009", "gpu010", "login1"});
  CHECK(expand("r[1,3-4]x", 10).value() == std::vector<std::string>{"r1x", "r3x", "r4x"});
  CHECK(expand("[7-8]", 10).value() == std::vector<std::string>{"7", "8"});
  CHECK(expand("n[1-1000000000]", 4096).error().message.find("more than 4096") !=
        std::string::npos);
  CHECK(!expand("n[1-3]", 2));
  CHECK(expand("a,b,c", 2).error().message.find("more than 2") != std::string::npos);
  for (const char* bad : {"", ",", "a,", "n[", "n]", "n[1-", "n[3-1]", "n[a]", "n[1]]", "n[[1]]",
                          "n[1][2]", "n[-1]", "n[1--2]", "n[99999999999999999999]"})
    CHECK_MESSAGE(!expand(bad, 100), bad);
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
    auto back = expand(*text, 1000);
    REQUIRE_MESSAGE(back, *text);
    CHECK_MESSAGE(*back == names, *text);
  }
}

TEST_CASE("HostList names, finds and joins without expanding, and agrees with its expansion") {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string text = random_list(rng);
    auto list = HostList::parse(text, 1000);
    REQUIRE_MESSAGE(list, text);
    auto names = list->names();
    REQUIRE(names.size() == list->size());
    std::string joined;
    std::unordered_set<std::string> seen;
    std::optional<std::string> repeated;
    for (size_t i = 0; i < names.size(); ++i) {
      CHECK_MESSAGE(list->name(i) == names[i], text);
      auto at = list->find(names[i]);
      REQUIRE_MESSAGE(at, text, " ", names[i]);
      CHECK_MESSAGE(names[*at] == names[i], text);
      CHECK_MESSAGE(*at <= i, text);
      joined += (i ? "," : "") + names[i];
      if (!seen.insert(names[i]).second && !repeated) repeated = names[i];
    }
    CHECK(list->joined(',') == joined);
    auto twice = list->duplicate();
    CHECK_MESSAGE(twice.has_value() == repeated.has_value(), text);
    if (twice) CHECK_MESSAGE(seen.count(*twice) == 1, text);
  }
}

TEST_CASE("HostList::find: only the names listed, written as listed") {
  auto list = HostList::parse("n[1-3,8],gpu[008-010]x,login1", 100).value();
  CHECK(list.find("n3") == 2u);
  CHECK(list.find("n8") == 3u);
  CHECK(list.find("gpu009x") == 5u);
  CHECK(list.find("login1") == 7u);
  for (const char* absent : {"n4", "n03", "n", "gpu9x", "gpu009", "n1x", "login", "", "n-1"})
    CHECK_MESSAGE(!list.find(absent), absent);
}

TEST_CASE(
    "HostList::duplicate: found from the ranges, or by hashing when names are not split "
    "by their number") {
  auto twice = [](const char* text) { return HostList::parse(text, 1000).value().duplicate(); };
  CHECK(twice("n[1-256]") == std::nullopt);
  CHECK(twice("n[1-3],n2") == "n2");
  CHECK(twice("n[1-3],n02") == std::nullopt);  // another name
  CHECK(twice("n[1-2,2-3]") == "n2");
  CHECK(twice("a,b,a") == "a");
  CHECK(twice("[7-8],7") == "7");
  CHECK(twice("n1[0-2],n[10-12]") == "n10");  // a prefix ending in a digit
  CHECK(twice("r[1-2]x,r2x") == "r2x");       // a suffix
  CHECK(twice("gpu[001-003],gpu[4-5],login1") == std::nullopt);
  CHECK(HostList::of({"a[1]", "b", "a[1]"}).duplicate() == "a[1]");
  CHECK(HostList::of({"a[1]", "b"}).find("a[1]") == 0u);
}
