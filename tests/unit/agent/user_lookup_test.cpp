// UserLookup with the lattice-rank-exec this build made: the job's user as passwd has it, or the
// helper's own reason; a lookup dropped before its answer kills the helper and stays silent.
#include "agent/user_lookup.hpp"

#include <doctest/doctest.h>
#include <unistd.h>
#include <uv.h>

#include <optional>

#include "net/loop.hpp"

namespace lattice::agent {
namespace {

std::optional<Result<proc::ProcessUser>> look_up(const JobUser& user) {
  net::Loop loop;
  std::optional<Result<proc::ProcessUser>> answer;
  auto lookup =
      UserLookup::start(loop, LATTICE_TEST_RANK_EXEC, user,
                        [&](Result<proc::ProcessUser> u) { answer.emplace(std::move(u)); });
  REQUIRE(lookup.ok());
  for (int i = 0; i < 10000 && !answer; ++i) uv_run(loop.raw(), UV_RUN_ONCE);
  return answer;
}

}  // namespace

TEST_CASE("UserLookup: the job's user with passwd's home and shell and the groups to set") {
  if (::geteuid() != 0) return;  // without root the helper only describes its own user
  auto user = look_up(JobUser{65534, 65534, std::vector<uint32_t>{100, 65534}, "nobody"});
  REQUIRE(user);
  REQUIRE_MESSAGE(user->ok(), (user->ok() ? "" : user->error().message));
  CHECK(user->value().name == "nobody");
  CHECK(user->value().home == "/nonexistent");
  CHECK(user->value().shell == "/usr/sbin/nologin");
  CHECK(user->value().groups == std::vector<uint32_t>{100, 65534});
}

TEST_CASE("UserLookup: a user this node does not know is refused in the helper's words") {
  auto user = look_up(JobUser{4242, 4242, std::nullopt, "ghost"});
  REQUIRE(user);
  REQUIRE(!user->ok());
  CHECK(user->error().message ==
        "lattice-rank-exec: user ghost (uid 4242) is not known on this node");
}

TEST_CASE("UserLookup: a missing helper is an error at once") {
  net::Loop loop;
  auto lookup = UserLookup::start(loop, "/nonexistent/lattice-rank-exec",
                                  JobUser{65534, 65534, std::nullopt, "nobody"},
                                  [](Result<proc::ProcessUser>) { FAIL("answered"); });
  REQUIRE(!lookup.ok());
  CHECK(lookup.error().message.find("cannot execute '/nonexistent/lattice-rank-exec'") == 0);
}

}  // namespace lattice::agent
