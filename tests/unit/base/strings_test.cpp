#include "base/strings.hpp"

#include <doctest/doctest.h>

#include <climits>
#include <cstdint>
#include <filesystem>
#include <sstream>

using namespace lattice;

TEST_CASE("parse_int is strict") {
  CHECK(parse_int("42") == 42);
  CHECK(parse_int("-1") == -1);
  CHECK_FALSE(parse_int(""));
  CHECK_FALSE(parse_int("-"));
  CHECK_FALSE(parse_int("4 2"));
  CHECK_FALSE(parse_int("+4"));
  CHECK_FALSE(parse_int("12x"));
  CHECK_FALSE(parse_int("9999999999999999999999"));
}

TEST_CASE("parse_host_port") {
  auto hp = parse_host_port("127.0.0.2:7400");
  REQUIRE(hp);
  CHECK(hp->host == "127.0.0.2");
  CHECK(hp->port == 7400);
  auto v6 = parse_host_port("[::1]:0");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK_FALSE(parse_host_port("nohost"));
  CHECK_FALSE(parse_host_port(":80"));
  CHECK_FALSE(parse_host_port("h:99999"));
}

TEST_CASE("split keeps empty fields") {
  CHECK(split("a,,b", ',') == std::vector<std::string>{"a", "", "b"});
  CHECK(split("", ',') == std::vector<std::string>{""});
}

TEST_CASE("rank lists compress into ranges") {
  CHECK(compress_ranges({0, 1, 2, 3, 7}) == "0-3,7");
  CHECK(compress_ranges({1, 3, 4}) == "1,3-4");
  CHECK(compress_ranges({5}) == "5");
  CHECK(compress_ranges({}).empty());
  CHECK(compress_ranges({4, 2, 3, 3, 0}) == "0,2-4");  // unsorted and duplicated input
}

TEST_CASE("printable writes every byte but printable ASCII, and backslashes, as \\xNN") {
  CHECK(printable("plain text: ok ~") == "plain text: ok ~");
  CHECK(printable(std::string("\x1b]0;x\x07\n\t\0\x7f\xff\\", 12)) ==
        "\\x1b]0;x\\x07\\x0a\\x09\\x00\\x7f\\xff\\x5c");
  CHECK(printable("") == "");
}

TEST_CASE("hex round-trips any bytes and refuses what is not hex") {
  std::string bytes("\x00\x01\x7f\x80\xff ab", 8);
  CHECK(to_hex(bytes) == "00017f80ff206162");
  CHECK(from_hex(to_hex(bytes)) == bytes);
  CHECK(from_hex("ABcd") == std::string("\xab\xcd"));
  CHECK(from_hex("") == std::string());
  CHECK_FALSE(from_hex("abc").has_value());  // odd length
  CHECK_FALSE(from_hex("zz").has_value());
  CHECK_FALSE(from_hex("0g").has_value());
}

namespace {
template <class... Args>
std::string streamed(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
}  // namespace

TEST_CASE("cat writes every piece as an ostream would") {
  std::string s = "str";
  std::string_view v = "view";
  const char* p = "ptr";
  auto check_same = [](const std::string& ours, const std::string& theirs) {
    CHECK(ours == theirs);
  };
  check_same(cat(s, v, p, 'c', "lit"), streamed(s, v, p, 'c', "lit"));
  check_same(cat(int64_t{INT64_MIN}, ' ', uint64_t{UINT64_MAX}, ' ', -5, ' ', size_t{0}),
             streamed(int64_t{INT64_MIN}, ' ', uint64_t{UINT64_MAX}, ' ', -5, ' ', size_t{0}));
  for (double d : {0.1, 1.5, 1e-7, 123456789.0, 2.0 / 3, -0.0, 60.0, 1e300})
    check_same(cat(d), streamed(d));
  check_same(cat(0.25f), streamed(0.25f));
  check_same(cat(uint8_t{65}, int8_t{66}, true, false),
             streamed(uint8_t{65}, int8_t{66}, true, false));
  std::filesystem::path path = "/a b";
  check_same(cat(path), streamed(path));  // through its own << (quoted)
  CHECK(cat() == "");
}
