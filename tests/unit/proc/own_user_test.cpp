// proc::own_user against this process's own ids, and the decision of whether a job's user
// needs lattice-rank-exec to switch to it.
#include "proc/own_user.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>

namespace lattice::proc {
namespace {

TEST_CASE("own_user is this process's effective user, from passwd") {
  auto self = own_user();
  REQUIRE_MESSAGE(self.ok(), (self.ok() ? "" : self.error().message));
  CHECK(self->uid == ::geteuid());
  CHECK(self->gid == ::getegid());
  CHECK(!self->name.empty());
  CHECK(!self->home.empty());
  CHECK(std::is_sorted(self->groups.begin(), self->groups.end()));
}

ProcessUser user(uint32_t uid, std::vector<uint32_t> groups, std::vector<uint32_t> login) {
  return ProcessUser{uid, 100, "alice", "/home/alice", "/bin/bash", groups, login};
}

TEST_CASE("runs_as: the same ids and name; for root also the groups the helper would set") {
  auto alice = user(1000, {100, 200}, {100, 300});
  CHECK(runs_as(alice, 1000, 100, "alice", std::nullopt));
  CHECK(runs_as(alice, 1000, 100, "alice", std::vector<uint32_t>{999}));  // not root: kept
  CHECK_FALSE(runs_as(alice, 1001, 100, "alice", std::nullopt));
  CHECK_FALSE(runs_as(alice, 1000, 101, "alice", std::nullopt));
  CHECK_FALSE(runs_as(alice, 1000, 100, "bob", std::nullopt));

  auto root = user(0, {0, 10}, {0, 10});
  root.gid = 100;
  CHECK(runs_as(root, 0, 100, "alice", std::nullopt));  // initgroups would give what it has
  CHECK(runs_as(root, 0, 100, "alice", std::vector<uint32_t>{10, 0, 10}));
  CHECK_FALSE(runs_as(root, 0, 100, "alice", std::vector<uint32_t>{0}));
  root.login_groups = {0};
  CHECK_FALSE(runs_as(root, 0, 100, "alice", std::nullopt));
}

TEST_CASE("set_user_variables replaces HOME, USER, LOGNAME and SHELL, and keeps the rest") {
  std::vector<std::string> env = {"HOME=/elsewhere", "PATH=/bin", "USER=mallory", "HOMEX=1"};
  set_user_variables(env, user(1000, {}, {}));
  CHECK(env == std::vector<std::string>{"PATH=/bin", "HOMEX=1", "HOME=/home/alice", "USER=alice",
                                        "LOGNAME=alice", "SHELL=/bin/bash"});
  auto no_shell = user(1000, {}, {});
  no_shell.shell.clear();
  std::vector<std::string> bare;
  set_user_variables(bare, no_shell);
  CHECK(bare.size() == 3);
}

}  // namespace
}  // namespace lattice::proc
