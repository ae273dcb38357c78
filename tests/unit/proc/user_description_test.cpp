// The agent's reading of `lattice-rank-exec --describe`: the exact three lines, or a refusal
// that says what is wrong.
#include "proc/user_description.hpp"

#include <doctest/doctest.h>

#include <string>

namespace lattice::proc {

TEST_CASE("a user's description gives home, shell and groups (sorted, each once)") {
  auto user = parse_user_description("home=/home/ann\nshell=/bin/bash\ngroups=100,27,100\n", 1000,
                                     100, "ann");
  REQUIRE(user.ok());
  CHECK(user->uid == 1000);
  CHECK(user->gid == 100);
  CHECK(user->name == "ann");
  CHECK(user->home == "/home/ann");
  CHECK(user->shell == "/bin/bash");
  CHECK(user->groups == std::vector<uint32_t>{27, 100});
  auto bare = parse_user_description("home=/\nshell=\ngroups=\n", 7, 7, "x");
  REQUIRE(bare.ok());
  CHECK(bare->shell.empty());
  CHECK(bare->groups.empty());
}

TEST_CASE("a user's description that is not exactly the three lines is refused") {
  const std::pair<std::string, std::string> bad[] = {
      {"", "the user's description ends before its home line"},
      {"home=/h\nshell=/s\ngroups=1", "the user's description ends before its groups line"},
      {"shell=/s\nhome=/h\ngroups=1\n",
       "the user's description has no home line where one belongs"},
      {"home /h\nshell=/s\ngroups=1\n",
       "the user's description has no home line where one belongs"},
      {"home=/h\nshell=/s\ngroups=1\nmore=1\n", "the user's description goes on after its groups"},
      {std::string("home=/h\0x\nshell=/s\ngroups=1\n", 26), "the user's home holds a NUL byte"},
      {"home=/h\nshell=/s\ngroups=1,\n", "the user's groups end with a comma"},
      {"home=/h\nshell=/s\ngroups=1,,2\n", "the user's groups hold '', not a group id"},
      {"home=/h\nshell=/s\ngroups=-1\n", "the user's groups hold '-1', not a group id"},
      {"home=/h\nshell=/s\ngroups=4294967295\n", "the user's groups hold 4294967295"},
      {"home=/h\nshell=/s\ngroups=99999999999\n",
       "the user's groups hold '99999999999', not a group id"},
  };
  for (const auto& entry : bad) {
    auto user = parse_user_description(entry.first, 1, 1, "u");
    REQUIRE_MESSAGE(!user.ok(), entry.first);
    CHECK(user.error().message == entry.second);
  }
}

TEST_CASE("a user's description is bounded: its size and its number of groups") {
  std::string many = "home=/h\nshell=/s\ngroups=0";
  for (size_t i = 1; i <= kMaxGroups; ++i) many += "," + std::to_string(i);
  auto user = parse_user_description(many + "\n", 1, 1, "u");
  REQUIRE(!user.ok());
  CHECK(user.error().message == "the user has more than 65536 groups");
  std::string huge = "home=" + std::string(kMaxUserDescriptionBytes, 'h') + "\nshell=\ngroups=\n";
  user = parse_user_description(huge, 1, 1, "u");
  REQUIRE(!user.ok());
  CHECK(user.error().message == "the user's description is over 1048576 bytes");
}

}  // namespace lattice::proc
