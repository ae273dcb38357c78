// UserLookup with the lattice-rank-exec this build made: the job's user as passwd has it, or the
// helper's own reason; a lookup dropped before its answer kills the helper and stays silent.
#include "agent/user_lookup.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include <optional>
#include <string>

#include "net/loop.hpp"

namespace lattice::agent {
namespace {

std::optional<Result<proc::ProcessUser>> look_up(const JobUser& user,
                                                 const std::string& helper = LATTICE_TEST_RANK_EXEC,
                                                 uint64_t timeout_ms = UserLookup::kTimeoutMs) {
  net::Loop loop;
  std::optional<Result<proc::ProcessUser>> answer;
  auto lookup = UserLookup::start(
      loop, helper, user, [&](Result<proc::ProcessUser> u) { answer.emplace(std::move(u)); },
      timeout_ms);
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

TEST_CASE("UserLookup: a helper stuck (on NSS, say) is killed at the deadline, and says so") {
  char path[] = "/tmp/lattice-stuck-helper-XXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  const std::string script = "#!/bin/sh\nexec sleep 30\n";
  REQUIRE(::write(fd, script.data(), script.size()) == static_cast<ssize_t>(script.size()));
  ::fchmod(fd, 0700);
  ::close(fd);
  auto user = look_up(JobUser{65534, 65534, std::nullopt, "nobody"}, path, 200);
  ::unlink(path);
  REQUIRE(user);
  REQUIRE(!user->ok());
  CHECK(user->error().message == "looking up user nobody (uid 65534) on this node took over 0.2 s");
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
