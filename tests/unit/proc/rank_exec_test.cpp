// lattice-rank-exec as built (LATTICE_TEST_RANK_EXEC): usage errors, the switch to the job's
// user checked against passwd, --chdir after that switch, the environment it sets, and the
// parent-death guard surviving the switch. The checks that switch users need root.
#include <doctest/doctest.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "run_program.hpp"

namespace lattice::proc::test {
namespace {

const std::string kNobody = "65534:65534:nobody";
const std::vector<std::string> kEnv = {"PATH=/usr/bin:/bin", "HOME=/root", "USER=root",
                                       "LOGNAME=root", "SHELL=/bin/bash"};

Ran rank_exec(std::vector<std::string> args, const std::vector<std::string>& env = kEnv) {
  args.insert(args.begin(), LATTICE_TEST_RANK_EXEC);
  return run_program(args, env);
}

bool root() {
  if (::geteuid() == 0) return true;
  MESSAGE("not root: the checks that switch users are skipped");
  return false;
}

TEST_CASE("lattice-rank-exec: the plain form execs the program") {
  CHECK(rank_exec({"/bin/true"}).status == 0);
  auto ran = rank_exec({"/bin/sh", "-c", "echo \"$0 $1\"", "a", "b"});
  CHECK(ran.status == 0);
  CHECK(ran.out == "a b\n");
  CHECK(rank_exec({"--", "/bin/true"}).status == 0);
}

TEST_CASE("lattice-rank-exec: --cpus binds the program before it runs; a bad list is refused") {
  auto ran =
      rank_exec({"--cpus", "0", "--", "/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status"});
  CHECK(ran.status == 0);
  CHECK(ran.out == "Cpus_allowed_list:\t0\n");
  auto bad = rank_exec({"--cpus", "0,x", "--", "/bin/true"});
  CHECK(bad.status == 127);
  CHECK(bad.err.find("not a list of CPU numbers") != std::string::npos);
  CHECK(rank_exec({"--cpus", "99999", "--", "/bin/true"}).status == 127);
}

TEST_CASE("lattice-rank-exec: bad usage exits 2 with the usage line") {
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"--"},
      {"--user", kNobody},
      {"--user"},
      {"--frobnicate", "x", "/bin/true"},
      {"-x", "/bin/true"},
      {"--user", "65534:65534:", "/bin/true"},
      {"--user", "65534:nobody", "/bin/true"},
      {"--user", "65534::nobody", "/bin/true"},
      {"--user", "-1:65534:nobody", "/bin/true"},
      {"--user", "+65534:65534:nobody", "/bin/true"},
      {"--user", "65534x:65534:nobody", "/bin/true"},
      {"--user", " 65534:65534:nobody", "/bin/true"},
      {"--user", "4294967295:65534:nobody", "/bin/true"},
      {"--user", "99999999999:65534:nobody", "/bin/true"},
      {"--user", kNobody, "--user", kNobody, "/bin/true"},
      {"--groups", "", "/bin/true"},
      {"--user", kNobody, "--groups", "1,,2", "/bin/true"},
      {"--user", kNobody, "--groups", "1,", "/bin/true"},
      {"--user", kNobody, "--groups", "x", "/bin/true"},
      {"--chdir", "/tmp", "--chdir", "/tmp", "/bin/true"},
      {"--describe"},
      {"--describe", "--describe", "--user", kNobody},
      {"--describe", "--user", kNobody, "/bin/true"},
      {"--describe", "--user", kNobody, "--chdir", "/tmp"},
      {"--describe", "--user", kNobody, "--cpus", "0"},
  };
  for (const auto& args : bad) {
    std::string shown;
    for (const auto& a : args) shown += "[" + a + "]";
    auto ran = rank_exec(args);
    CHECK_MESSAGE(ran.status == 2, shown);
    CHECK_MESSAGE(ran.err.find("usage: lattice-rank-exec [--user UID:GID:NAME]") == 0, shown);
    CHECK_MESSAGE(ran.out.empty(), shown);
  }
}

TEST_CASE("lattice-rank-exec: --chdir changes directory, and refuses one that is missing") {
  auto ran = rank_exec({"--chdir", "/tmp", "--", "/bin/pwd"});
  CHECK(ran.status == 0);
  CHECK(ran.out == "/tmp\n");
  ran = rank_exec({"--chdir", "/nonexistent", "--", "/bin/pwd"});
  CHECK(ran.status == 127);
  CHECK(ran.out.empty());
  CHECK(ran.err ==
        "lattice-rank-exec: cannot change to directory '/nonexistent': No such file or "
        "directory\n");
}

TEST_CASE("lattice-rank-exec: --user must agree with this node's passwd") {
  auto ran = rank_exec({"--user", "65534:65534:wrongname", "--", "/bin/true"});
  CHECK(ran.status == 127);
  CHECK(ran.err == "lattice-rank-exec: uid 65534 is 'nobody' on this node, not 'wrongname'\n");
  ran = rank_exec({"--user", "4242:4242:ghost", "--", "/bin/true"});
  CHECK(ran.status == 127);
  CHECK(ran.err == "lattice-rank-exec: user ghost (uid 4242) is not known on this node\n");
}

TEST_CASE("lattice-rank-exec: root becomes the job's user with exactly the groups given") {
  if (!root()) return;
  auto ran = rank_exec({"--user", kNobody, "--groups", "", "--", "/usr/bin/id"});
  CHECK(ran.status == 0);
  CHECK(ran.err.empty());
  CHECK(ran.out.find("uid=65534(") == 0);
  CHECK(ran.out.find(" gid=65534(") != std::string::npos);
  CHECK(rank_exec({"--user", kNobody, "--groups", "", "--", "/usr/bin/id", "-G"}).out ==
        "65534\n");  // id -G always lists the primary group: nothing else
  CHECK(rank_exec({"--user", kNobody, "--groups", "100,4242", "--", "/usr/bin/id", "-G"}).out ==
        "65534 100 4242\n");
  // Without --groups the group database decides; root's group 0 must be gone either way.
  ran = rank_exec({"--user", kNobody, "--", "/usr/bin/id", "-G"});
  CHECK(ran.status == 0);
  CHECK((" " + ran.out).find(" 0 ") == std::string::npos);
  CHECK((" " + ran.out).find(" 0\n") == std::string::npos);
  // Real, effective and saved ids all moved: the program cannot become root again.
  ran = rank_exec({"--user", kNobody, "--", "/bin/sh", "-c",
                   "grep -E '^(Uid|Gid):' /proc/self/status | tr -s '\\t' ' '"});
  CHECK(ran.out == "Uid: 65534 65534 65534 65534\nGid: 65534 65534 65534 65534\n");
}

TEST_CASE("lattice-rank-exec --describe: passwd's home and shell, and the groups to set") {
  // The same checks as a switch, and nothing run.
  auto ran = rank_exec({"--describe", "--user", "65534:65534:wrongname"});
  CHECK(ran.status == 127);
  CHECK(ran.err == "lattice-rank-exec: uid 65534 is 'nobody' on this node, not 'wrongname'\n");
  CHECK(ran.out.empty());
  if (!root()) return;
  ran = rank_exec({"--describe", "--user", kNobody, "--groups", "100,4242"});
  CHECK(ran.status == 0);
  CHECK(ran.err.empty());
  CHECK(ran.out == "home=/nonexistent\nshell=/usr/sbin/nologin\ngroups=100,4242\n");
  CHECK(rank_exec({"--describe", "--user", kNobody, "--groups", ""}).out ==
        "home=/nonexistent\nshell=/usr/sbin/nologin\ngroups=\n");
  // Without --groups: what initgroups would set, the same list the switch gives the program.
  auto described = rank_exec({"--describe", "--user", kNobody}).out;
  auto switched = rank_exec({"--user", kNobody, "--", "/usr/bin/id", "-G"}).out;  // "G G ...\n"
  std::string listed = described.substr(described.find("groups=") + 7);
  for (auto& c : listed)
    if (c == ',') c = ' ';
  CHECK(listed == switched);
}

TEST_CASE("lattice-rank-exec: HOME, USER, LOGNAME and SHELL come from passwd") {
  if (!root()) return;
  auto ran = rank_exec({"--user", kNobody, "--", "/usr/bin/env"});
  CHECK(ran.status == 0);
  std::map<std::string, std::string> env;
  for (size_t start = 0, nl; (nl = ran.out.find('\n', start)) != std::string::npos;
       start = nl + 1) {
    std::string line = ran.out.substr(start, nl - start);
    env[line.substr(0, line.find('='))] = line.substr(line.find('=') + 1);
  }
  CHECK(env["HOME"] == "/nonexistent");  // nobody's passwd entry, not the inherited /root
  CHECK(env["USER"] == "nobody");
  CHECK(env["LOGNAME"] == "nobody");
  CHECK(env["SHELL"] == "/usr/sbin/nologin");
  CHECK(env["PATH"] == "/usr/bin:/bin");
}

TEST_CASE("lattice-rank-exec: --chdir happens as the job's user") {
  if (!root()) return;
  std::string dir = "/tmp/lattice-rank-exec-test-XXXXXX";
  REQUIRE(::mkdtemp(dir.data()));
  REQUIRE(::chmod(dir.c_str(), 0700) == 0);  // root's own: nobody may not enter
  auto ran = rank_exec({"--user", kNobody, "--chdir", dir, "--", "/bin/pwd"});
  ::rmdir(dir.c_str());
  CHECK(ran.status == 127);
  CHECK(ran.out.empty());
  CHECK(ran.err ==
        "lattice-rank-exec: cannot change to directory '" + dir + "': Permission denied\n");
  ran = rank_exec({"--user", kNobody, "--chdir", "/tmp", "--", "/bin/pwd"});
  CHECK(ran.status == 0);
  CHECK(ran.out == "/tmp\n");
}

TEST_CASE("lattice-rank-exec: without root only the current user passes") {
  if (!root()) return;
  // The outer exec makes the inner one run as nobody.
  auto ran = rank_exec(
      {"--user", kNobody, "--", LATTICE_TEST_RANK_EXEC, "--user", "0:0:root", "--", "/bin/true"});
  CHECK(ran.status == 127);
  CHECK(ran.err == "lattice-rank-exec: running as uid 65534, cannot start a process as uid 0\n");
  ran = rank_exec({"--user", kNobody, "--", LATTICE_TEST_RANK_EXEC, "--user", kNobody, "--",
                   "/bin/sh", "-c", "id -u; echo $HOME"});
  CHECK(ran.status == 0);
  CHECK(ran.out == "65534\n/nonexistent\n");
}

// The kernel clears the parent-death signal when the effective ids change: rank-exec must
// arm it again after switching, or a rank outlives its agent. We adopt the orphaned rank
// (child subreaper) to see how it ended.
TEST_CASE("lattice-rank-exec: the rank still dies with its agent after switching user") {
  if (!root()) return;
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  pid_t agent = ::fork();
  REQUIRE(agent >= 0);
  if (agent == 0) {  // the agent: spawns the rank through rank-exec and waits to be killed
    std::string agent_pid = "LATTICE_AGENT_PID=" + std::to_string(::getpid());
    if (::fork() == 0) {
      ::dup2(pipe_fds[1], 1);
      const char* argv[] = {
          LATTICE_TEST_RANK_EXEC,   "--user", kNobody.c_str(), "--", "/bin/sh", "-c",
          "echo $$; exec sleep 30", nullptr};
      const char* envp[] = {"PATH=/usr/bin:/bin", agent_pid.c_str(), nullptr};
      ::execve(argv[0], const_cast<char**>(argv), const_cast<char**>(envp));
      ::_exit(126);
    }
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);  // only the rank holds the write end: its exit is our EOF
    ::pause();
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string line;
  char c;
  while (::read(pipe_fds[0], &c, 1) == 1 && c != '\n') line += c;
  ::close(pipe_fds[0]);
  REQUIRE(::kill(agent, SIGKILL) == 0);
  REQUIRE(::waitpid(agent, nullptr, 0) == agent);
  REQUIRE_MESSAGE(!line.empty(), "the rank never started");
  pid_t rank = static_cast<pid_t>(std::stol(line));

  int status = 0;
  pid_t reaped = 0;
  for (int i = 0; i < 100 && reaped == 0; ++i) {
    reaped = ::waitpid(rank, &status, WNOHANG);
    if (reaped == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (reaped == 0) {  // the guard was lost: clean up, then fail
    ::kill(rank, SIGKILL);
    ::waitpid(rank, &status, 0);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  CHECK(reaped == rank);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}

}  // namespace
}  // namespace lattice::proc::test
