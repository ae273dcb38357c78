// Process::spawn with real children (/bin/sh): captured output, exit statuses, group kills that
// reach grandchildren, inherited fds, failures without leaks, and the lattice-rank-exec helper.
#include "net/process.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/fd.hpp"
#include "net_test_support.hpp"

namespace lattice::net {
namespace {

using test::run_until;

// A spawned child with both outputs collected until EOF and its exit recorded.
struct Child {
  std::unique_ptr<Process> process;
  std::unique_ptr<Stream> out_stream, err_stream;
  std::string out, err;
  int open_streams = 0;
  bool exited = false;
  ExitInfo info;

  bool done() const { return exited && open_streams == 0; }
};

SpawnSpec shell(const std::string& script) {
  SpawnSpec spec;
  spec.file = "/bin/sh";
  spec.argv = {"sh", "-c", script};
  spec.env = {"PATH=/usr/bin:/bin"};
  return spec;
}

void collect(Child& c, std::unique_ptr<Stream> stream, std::string& into,
             std::unique_ptr<Stream>& slot) {
  if (!stream) return;
  ++c.open_streams;
  stream->start([&into](std::string_view s) { into.append(s); },
                [&c](const Error&) { --c.open_streams; });
  slot = std::move(stream);
}

std::unique_ptr<Child> spawn(Loop& loop, const SpawnSpec& spec) {
  auto c = std::make_unique<Child>();
  Child* raw = c.get();
  auto p = Process::spawn(loop, spec, [raw](ExitInfo info) {
    raw->exited = true;
    raw->info = info;
  });
  REQUIRE_MESSAGE(p.ok(), (p.ok() ? "" : p.error().message));
  c->process = std::move(p.value());
  collect(*c, c->process->take_stdout(), c->out, c->out_stream);
  collect(*c, c->process->take_stderr(), c->err, c->err_stream);
  return c;
}

TEST_CASE("spawn captures stdout and stderr and reports the exit status") {
  Loop loop;
  auto c = spawn(loop, shell("echo out; echo err >&2; exit 3"));
  CHECK(c->process->pid() > 0);
  REQUIRE(run_until(loop, [&] { return c->done(); }));
  CHECK(c->out == "out\n");
  CHECK(c->err == "err\n");
  CHECK(c->info.exit_status == 3);
  CHECK(c->info.term_signal == 0);
  CHECK(c->process->exited());
  CHECK(c->process->kill_group(SIGKILL) == 0);  // no-op after exit
}

TEST_CASE("the environment, cwd and stdin of the child are the spec's") {
  Loop loop;
  test::TempDir dir;
  SpawnSpec spec = shell("echo \"$FOO|$HOME|$(pwd)\"; cat; echo end");
  spec.env = {"FOO=bar", "PATH=/usr/bin:/bin"};
  spec.cwd = dir.path();
  auto c = spawn(loop, spec);
  REQUIRE(run_until(loop, [&] { return c->done(); }));
  CHECK(c->out == "bar||" + dir.path() + "\nend\n");  // no HOME: the env was replaced
}

TEST_CASE("stdin_pipe: what the parent writes reaches the child, and its end is the child's EOF") {
  Loop loop;
  SpawnSpec spec = shell("cat; echo eof");
  spec.stdin_pipe = true;
  auto c = spawn(loop, spec);
  auto in = c->process->take_stdin();
  REQUIRE(in);
  in->write("line one\n");
  in->end("line two\n");
  REQUIRE(run_until(loop, [&] { return c->done(); }));
  CHECK(c->out == "line one\nline two\neof\n");
  CHECK(c->info.exit_status == 0);
}

TEST_CASE("kill_group(SIGKILL) ends the child with term_signal 9") {
  Loop loop;
  auto c = spawn(loop, shell("echo started; exec sleep 100"));
  REQUIRE(run_until(loop, [&] { return c->out == "started\n"; }));
  CHECK(c->process->kill_group(SIGKILL) == 0);
  REQUIRE(run_until(loop, [&] { return c->done(); }));
  CHECK(c->info.term_signal == SIGKILL);
}

TEST_CASE("kill_group reaches a grandchild in the child's process group") {
  Loop loop;
  // The background sleep holds stdout open: EOF proves every holder died.
  auto c = spawn(loop, shell("sleep 100 & echo $!; wait"));
  REQUIRE(run_until(loop, [&] { return c->out.find('\n') != std::string::npos; }));
  int grandchild = std::stoi(c->out);
  CHECK(::getpgid(grandchild) == c->process->pid());  // new_session: the child leads its group
  CHECK(c->process->kill_group(SIGKILL) == 0);
  REQUIRE(run_until(loop, [&] { return c->done(); }));
  CHECK(c->info.term_signal == SIGKILL);
}

TEST_CASE("a missing binary is an Error value and leaves no handle behind") {
  Loop loop;
  int baseline = test::live_handles(loop);
  bool exit_called = false;
  SpawnSpec spec = shell("true");
  spec.file = "/nonexistent/lattice-no-such-binary";
  auto p = Process::spawn(loop, spec, [&](ExitInfo) { exit_called = true; });
  REQUIRE(!p.ok());
  CHECK(p.error().message.find("cannot execute '/nonexistent/lattice-no-such-binary'") == 0);
  CHECK(p.error().message.find("no such file") != std::string::npos);
  CHECK(test::live_handles(loop) == baseline);
  CHECK(loop.run() == 0);  // nothing keeps the loop alive
  CHECK(!exit_called);

  SpawnSpec empty;
  CHECK(!Process::spawn(loop, empty, [](ExitInfo) {}).ok());
}

TEST_CASE("inherit_fds puts a socketpair end at fd 3 in the child") {
  Loop loop;
  auto pair = make_socketpair();
  REQUIRE(pair.ok());
  auto [parent, child_end] = std::move(pair.value());
  SpawnSpec spec = shell("echo hi >&3");
  spec.inherit_fds = {child_end.get()};
  auto c = spawn(loop, spec);
  child_end.reset();  // or EOF never arrives
  auto stream = Stream::open_fd(loop, std::move(parent));
  REQUIRE(stream.ok());
  std::string got;
  bool eof = false;
  (*stream)->start([&](std::string_view s) { got.append(s); },
                   [&](const Error& why) { eof = why.kind == ErrorKind::eof; });
  REQUIRE(run_until(loop, [&] { return c->done() && eof; }));
  CHECK(got == "hi\n");
  CHECK(c->info.exit_status == 0);
}

TEST_CASE("a channel is a socketpair at fd 3 (before inherit_fds) that sees the child's EOF") {
  Loop loop;
  auto pair = make_socketpair();
  REQUIRE(pair.ok());
  auto [parent, extra] = std::move(pair.value());
  SpawnSpec spec = shell("echo to-channel >&3; echo to-extra >&4");
  spec.channel = true;
  spec.inherit_fds = {extra.get()};
  auto c = spawn(loop, spec);
  extra.reset();
  auto channel = c->process->take_channel();
  REQUIRE(channel);
  CHECK(!c->process->take_channel());  // taken once
  std::string got, got_extra;
  bool eof = false;
  channel->start([&](std::string_view s) { got.append(s); },
                 [&](const Error& why) { eof = why.kind == ErrorKind::eof; });
  auto other = Stream::open_fd(loop, std::move(parent));
  REQUIRE(other.ok());
  (*other)->start([&](std::string_view s) { got_extra.append(s); }, [](const Error&) {});
  // EOF on the channel proves the parent kept no copy of the child's end.
  REQUIRE(run_until(loop, [&] { return c->done() && eof && !got_extra.empty(); }));
  CHECK(got == "to-channel\n");
  CHECK(got_extra == "to-extra\n");
}

TEST_CASE("uncaptured output is inherited, not piped") {
  Loop loop;
  SpawnSpec spec = shell("exit 0");
  spec.capture_stdout = false;
  spec.capture_stderr = false;
  auto c = spawn(loop, spec);
  CHECK(!c->out_stream);
  CHECK(!c->err_stream);
  REQUIRE(run_until(loop, [&] { return c->done(); }));
}

TEST_CASE("destroying the owner inside on_exit is safe") {
  Loop loop;
  std::unique_ptr<Process> owner;
  int calls = 0;
  SpawnSpec spec = shell("exit 0");
  spec.capture_stdout = spec.capture_stderr = false;
  auto p = Process::spawn(loop, spec, [&](ExitInfo) {
    ++calls;
    owner.reset();
  });
  REQUIRE(p.ok());
  owner = std::move(p.value());
  loop.run();
  CHECK(calls == 1);
  CHECK(!owner);
}

// Our child stays in /proc (running, then a zombie) until it is waited for: gone means reaped.
bool reaped(int pid) { return ::access(("/proc/" + std::to_string(pid)).c_str(), F_OK) != 0; }

TEST_CASE(
    "a Process destroyed while its child runs gets no exit callback, and the child is reaped") {
  Loop loop;
  bool exit_called = false;
  SpawnSpec spec = shell("exec sleep 100");
  spec.capture_stdout = spec.capture_stderr = false;
  auto p = Process::spawn(loop, spec, [&](ExitInfo) { exit_called = true; });
  REQUIRE(p.ok());
  int pid = (*p)->pid();
  p.value().reset();
  CHECK(loop.run() == 0);  // the abandoned child does not keep the loop alive
  REQUIRE(::kill(pid, SIGKILL) == 0);
  REQUIRE(run_until(loop, [&] { return reaped(pid); }));
  CHECK(!exit_called);
}

TEST_CASE("the child binds to the spec's CPUs before the exec") {
  Loop loop;
  cpu_set_t ours;
  REQUIRE(::sched_getaffinity(0, sizeof ours, &ours) == 0);
  int first = 0;
  while (!CPU_ISSET(first, &ours)) ++first;
  SpawnSpec spec = shell("grep Cpus_allowed_list /proc/self/status");
  spec.cpus = {first};
  auto c = spawn(loop, spec);
  REQUIRE(run_until(loop, [&] { return c->done(); }));
  CHECK(c->out == "Cpus_allowed_list:\t" + std::to_string(first) + "\n");
}

TEST_CASE("sched_batch: the child runs under SCHED_BATCH from before its exec") {
  Loop loop;
  SpawnSpec spec = shell("awk '/^policy/ { print $3 }' /proc/self/sched");
  spec.sched_batch = true;
  auto batch = spawn(loop, spec);
  REQUIRE(run_until(loop, [&] { return batch->done(); }));
  CHECK(batch->out == std::to_string(SCHED_BATCH) + "\n");
  spec.sched_batch = false;
  auto normal = spawn(loop, spec);
  REQUIRE(run_until(loop, [&] { return normal->done(); }));
  CHECK(normal->out == std::to_string(SCHED_OTHER) + "\n");
}

TEST_CASE("the child starts with default signal handling and nothing blocked") {
  Loop loop;
  // Ours: SIGPIPE ignored (as in the agent) and SIGUSR2 blocked; neither may reach the child.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  REQUIRE(::sigaction(SIGPIPE, &ignore, &old) == 0);
  sigset_t usr2, old_mask;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  REQUIRE(::pthread_sigmask(SIG_BLOCK, &usr2, &old_mask) == 0);
  auto c = spawn(loop, shell("grep -E '^Sig(Blk|Ign)' /proc/self/status; kill -PIPE $$"));
  REQUIRE(run_until(loop, [&] { return c->done(); }));
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::sigaction(SIGPIPE, &old, nullptr);
  CHECK(c->out.find("SigBlk:\t0000000000000000\n") != std::string::npos);
  CHECK(c->info.term_signal == SIGPIPE);
}

TEST_CASE("inherited fds land in order even when their numbers collide with the targets") {
  Loop loop;
  // Two pipes whose write ends are passed crosswise: the one at fd 4 here becomes the child's
  // fd 3 and the other the child's fd 4, which a naive dup2 order would clobber.
  int a[2], b[2];
  REQUIRE(::pipe2(a, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(b, O_CLOEXEC) == 0);
  UniqueFd ar(a[0]), aw(a[1]), br(b[0]), bw(b[1]);
  SpawnSpec spec = shell("echo A >&3; echo B >&4");
  spec.capture_stdout = spec.capture_stderr = false;
  spec.inherit_fds = {aw.get(), bw.get()};
  auto c = spawn(loop, spec);
  REQUIRE(run_until(loop, [&] { return c->done(); }));
  aw.reset();
  bw.reset();
  char buf[8] = {};
  CHECK(::read(ar.get(), buf, sizeof buf) == 2);
  CHECK(std::string(buf) == "A\n");
  char buf2[8] = {};
  CHECK(::read(br.get(), buf2, sizeof buf2) == 2);
  CHECK(std::string(buf2) == "B\n");
}

TEST_CASE("the child writes \"0\" to each extra cgroup.procs fd before it runs") {
  Loop loop;
  // Pipes stand in for cgroup.procs files: what the child writes to each is read back.
  int a[2], b[2];
  REQUIRE(::pipe2(a, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(b, O_CLOEXEC) == 0);
  UniqueFd ar(a[0]), aw(a[1]), br(b[0]), bw(b[1]);
  SpawnSpec spec = shell("exit 0");
  spec.extra_cgroup_procs_fds = {aw.get(), bw.get()};
  auto c = spawn(loop, spec);
  REQUIRE(run_until(loop, [&] { return c->done(); }));
  aw.reset();
  bw.reset();
  char buf[4] = {};
  CHECK(::read(ar.get(), buf, sizeof buf) == 1);
  CHECK(buf[0] == '0');
  CHECK(::read(br.get(), buf, sizeof buf) == 1);
  CHECK(buf[0] == '0');
}

TEST_CASE("an extra cgroup.procs fd the child cannot write to is an Error value") {
  Loop loop;
  UniqueFd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  SpawnSpec spec = shell("echo ran");
  spec.extra_cgroup_procs_fds = {null_fd.get()};
  auto p = Process::spawn(loop, spec, [](ExitInfo) {});
  REQUIRE(!p.ok());
  CHECK(p.error().message == "cannot join the allocation's cgroup: bad file descriptor");
  CHECK(loop.run() == 0);
}

TEST_CASE("a working directory that cannot be entered is an Error value, and nothing runs") {
  Loop loop;
  int baseline = test::live_handles(loop);
  SpawnSpec spec = shell("echo ran");
  spec.cwd = "/nonexistent/lattice-no-such-dir";
  auto p = Process::spawn(loop, spec, [](ExitInfo) {});
  REQUIRE(!p.ok());
  CHECK(p.error().message ==
        "cannot change to directory '/nonexistent/lattice-no-such-dir': no such file or directory");
  CHECK(test::live_handles(loop) == baseline);
  CHECK(loop.run() == 0);
}

TEST_CASE("a root parent starts the child as another user: ids, groups, then the cwd as them") {
  if (::geteuid() != 0) return;  // only root can switch
  Loop loop;
  SpawnSpec spec = shell("id -u; id -g; id -G; pwd");
  spec.user = ChildUser{65534, 65534, {65534, 100}};
  spec.cwd = "/";
  auto c = spawn(loop, spec);
  REQUIRE(run_until(loop, [&] { return c->done(); }));
  CHECK(c->info.exit_status == 0);
  CHECK(c->out == "65534\n65534\n65534 100\n/\n");

  // A directory only root may enter is refused to the switched child, and nothing runs.
  char dir[] = "/tmp/lattice-child-user-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);  // mode 0700, owned by root
  SpawnSpec denied = shell("echo ran");
  denied.user = ChildUser{65534, 65534, {}};
  denied.cwd = dir;
  auto p = Process::spawn(loop, denied, [](ExitInfo) {});
  ::rmdir(dir);
  REQUIRE(!p.ok());
  CHECK(p.error().message ==
        std::string("cannot change to directory '") + dir + "': permission denied");
}

// Whether a `sleep` spawned with SIGKILL as its parent-death signal (as `user`, if given) dies
// when its parent does.
bool dies_with_its_parent(const std::optional<ChildUser>& user) {
  // A go-between process spawns `sleep` with SIGKILL as its parent-death signal, reports the
  // pid and exits: the sleep must die with it.
  int report[2];
  if (::pipe(report) != 0) return false;
  pid_t between = ::fork();
  if (between < 0) return false;
  if (between == 0) {
    Loop loop;
    SpawnSpec spec = shell("exec sleep 100");
    spec.capture_stdout = spec.capture_stderr = false;
    spec.parent_death_signal = SIGKILL;
    spec.user = user;
    auto p = Process::spawn(loop, spec, [](ExitInfo) {});
    int pid = p.ok() ? (*p)->pid() : -1;
    (void)!::write(report[1], &pid, sizeof pid);
    ::_exit(0);
  }
  ::close(report[1]);
  int pid = -1;
  if (::read(report[0], &pid, sizeof pid) != static_cast<ssize_t>(sizeof pid)) pid = -1;
  ::close(report[0]);
  if (pid <= 0) return false;
  ::waitpid(between, nullptr, 0);
  // Gone, or a zombie left for init to reap: either way no longer sleeping.
  auto dead = [pid] {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    return line.substr(line.rfind(')') + 2, 1) == "Z";
  };
  bool died = false;
  for (int i = 0; i < 200 && !died; ++i) {
    died = dead();
    if (!died) ::usleep(10000);
  }
  if (!died) ::kill(pid, SIGKILL);
  return died;
}

TEST_CASE("a parent-death signal kills the child when its parent dies") {
  CHECK(dies_with_its_parent(std::nullopt));
}

TEST_CASE("a child switched to another user keeps its parent-death signal") {
  // The kernel clears the signal when the ids change: it must be set after the switch.
  if (::geteuid() == 0) CHECK(dies_with_its_parent(ChildUser{65534, 65534, {}}));
}

// ---- lattice-rank-exec ----

SpawnSpec rank_exec(const std::vector<std::string>& args, const std::string& agent_pid) {
  SpawnSpec spec;
  spec.file = LATTICE_TEST_RANK_EXEC;
  spec.argv = {spec.file};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = {"PATH=/usr/bin:/bin"};
  if (!agent_pid.empty()) spec.env.push_back("LATTICE_AGENT_PID=" + agent_pid);
  return spec;
}

TEST_CASE("lattice-rank-exec runs the program without LATTICE_AGENT_PID in its environment") {
  Loop loop;
  auto c = spawn(loop, rank_exec({"sh", "-c", "echo \"[$LATTICE_AGENT_PID]\"; exit 5"},
                                 std::to_string(::getpid())));
  REQUIRE(run_until(loop, [&] { return c->done(); }));
  CHECK(c->out == "[]\n");
  CHECK(c->info.exit_status == 5);
}

TEST_CASE("lattice-rank-exec exits 127 when its agent is already gone") {
  Loop loop;
  auto c = spawn(loop, rank_exec({"sh", "-c", "echo ran"}, "1"));  // pid 1 is not our parent
  REQUIRE(run_until(loop, [&] { return c->done(); }));
  CHECK(c->out.empty());
  CHECK(c->info.exit_status == 127);
}

TEST_CASE(
    "lattice-rank-exec explains a program it cannot execute: 127 missing, 126 not executable") {
  Loop loop;
  test::TempDir dir;
  std::string plain = dir.path() + "/not-executable";
  std::ofstream(plain) << "#!/bin/sh\n";
  REQUIRE(::chmod(plain.c_str(), 0644) == 0);
  std::string self = std::to_string(::getpid());

  auto missing = spawn(loop, rank_exec({"lattice-no-such-program"}, self));
  auto denied = spawn(loop, rank_exec({plain}, self));
  REQUIRE(run_until(loop, [&] { return missing->done() && denied->done(); }));
  CHECK(missing->info.exit_status == 127);
  CHECK(missing->err.find("lattice-rank-exec: cannot execute 'lattice-no-such-program'") == 0);
  if (::geteuid() != 0) {  // root may execute anything with an x bit; 0644 has none anyway
    CHECK(denied->info.exit_status == 126);
  }
  CHECK(denied->err.find("cannot execute '" + plain + "'") != std::string::npos);
}

}  // namespace
}  // namespace lattice::net
