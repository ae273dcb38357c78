// Containment on this machine, for real: each mode that works here keeps a double-forked,
// setsid'd child in the launch's group, finds it there, and kills it; an allocation does the
// same for all its launches, and its limits are in the cgroups its processes are in. Run as
// root (as CI runs); a mode or a limit this machine cannot offer is said and skipped, never
// faked.
#include "proc/containment.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "proc/kernel_files.hpp"

namespace lattice::proc {
namespace {

// Joins `group` as a child the agent starts does (net/child_start): false if it cannot.
bool join(const ProcessGroup& group) {
  if (group.join_fd() >= 0 && ::write(group.join_fd(), "0", 1) != 1) return false;
  for (int fd : group.extra_join_fds())
    if (::write(fd, "0", 1) != 1) return false;
  return true;
}

// A child in `group` that leaves a grandchild behind in a session of its own and exits.
// `also`: a second marker (the allocation's), or empty.
int start_stray(ProcessGroup& group, const std::string& marker, const std::string& also = "") {
  int ready[2];
  REQUIRE(::pipe2(ready, O_CLOEXEC) == 0);  // the exec closes the grandchild's end
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (!join(group)) _exit(3);
    ::putenv(const_cast<char*>(marker.c_str()));
    if (!also.empty()) ::putenv(const_cast<char*>(also.c_str()));
    if (::fork() == 0) {
      ::setsid();
      ::close(ready[0]);
      ::execl("/bin/sleep", "sleep", "300", static_cast<char*>(nullptr));
      _exit(4);
    }
    _exit(0);
  }
  ::close(ready[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  char c;
  (void)::read(ready[0], &c, 1);  // EOF once the grandchild has exec'd
  ::close(ready[0]);
  return status;
}

bool wait_empty(ProcessGroup& group) {
  for (int i = 0; i < 500; ++i) {
    // Strays come back to this process once a subreaper test has made it one: reap them.
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (group.members().empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void exercise(ContainmentMode mode) {
  auto containment = Containment::choose(mode);
  if (!containment) {
    MESSAGE("not on this machine: ", containment.error().message);
    return;
  }
  auto& chosen = *containment.value();
  CHECK(chosen.mode() == mode);
  MESSAGE(chosen.describe());
  std::string marker = "LATTICE_LAUNCH_ID=unit-" + std::to_string(::getpid());
  auto group = chosen.make_group(marker);
  REQUIRE(group);
  CHECK((*group)->members().empty());
  REQUIRE(start_stray(**group, marker) == 0);
  auto members = (*group)->members();
  REQUIRE(members.size() == 1);
  (*group)->signal(SIGKILL);
  CHECK(wait_empty(**group));
  // The subreaper adopted the stray: reap it, as the agent's orphan reaper does.
  if (mode == ContainmentMode::subreaper) ::waitpid(members[0], nullptr, 0);
}

TEST_CASE("cgroup v2: a stray joins the launch's group and dies with it") {
  exercise(ContainmentMode::cgroup2);
}
TEST_CASE("cgroup v1: a stray joins the launch's group and dies with it") {
  exercise(ContainmentMode::cgroup1);
}
TEST_CASE("subreaper: a stray comes back to this process and is found by its environment") {
  exercise(ContainmentMode::subreaper);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string out = text.str();
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string parent_of(const std::string& dir) { return dir.substr(0, dir.rfind('/')); }

std::unique_ptr<Containment> chosen_or_skip(ContainmentMode mode) {
  auto containment = Containment::choose(mode);
  if (!containment) {
    MESSAGE("not on this machine: ", containment.error().message);
    return nullptr;
  }
  MESSAGE(containment.value()->describe());
  return std::move(containment.value());
}

const std::string kAllocMarker = "LATTICE_ALLOC_ID=unit-" + std::to_string(::getpid());

void exercise_allocation(ContainmentMode mode) {
  auto chosen = chosen_or_skip(mode);
  if (!chosen) return;
  auto alloc = chosen->make_allocation(kAllocMarker, {});
  REQUIRE(alloc);
  CHECK((*alloc)->limits_note() == "no limits asked for");
  std::string marker_a = "LATTICE_LAUNCH_ID=unit-a", marker_b = "LATTICE_LAUNCH_ID=unit-b";
  auto a = (*alloc)->make_group(marker_a);
  auto b = (*alloc)->make_group(marker_b);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(start_stray(**a, marker_a, kAllocMarker) == 0);
  REQUIRE(start_stray(**b, marker_b, kAllocMarker) == 0);
  CHECK((*a)->members().size() == 1);
  CHECK((*b)->members().size() == 1);
  CHECK((*alloc)->members().size() == 2);
  (*alloc)->signal(SIGKILL);
  CHECK(wait_empty(**alloc));
  CHECK(wait_empty(**a));
  CHECK(wait_empty(**b));
  if (mode == ContainmentMode::subreaper) return;
  std::string dir = (*alloc)->describe();
  CHECK(dir.find("/alloc.") != std::string::npos);
  CHECK(parent_of((*a)->describe()) == dir);
  a->reset();
  b->reset();
  alloc->reset();
  CHECK(::access(dir.c_str(), F_OK) != 0);
}

TEST_CASE("cgroup v2: an allocation holds the strays of two launches and kills them together") {
  exercise_allocation(ContainmentMode::cgroup2);
}
TEST_CASE("cgroup v1: an allocation holds the strays of two launches and kills them together") {
  exercise_allocation(ContainmentMode::cgroup1);
}
TEST_CASE("subreaper: an allocation finds the strays of two launches by its marker") {
  exercise_allocation(ContainmentMode::subreaper);
}

// The directory of `pid`'s cgroup in the hierarchy that has `controller` (v2: empty).
std::string cgroup_of(int pid, const std::string& controller) {
  auto mounts = cgroup_mounts(read_text("/proc/self/mountinfo"));
  for (const auto& m : cgroup_memberships(read_text("/proc/" + std::to_string(pid) + "/cgroup"))) {
    bool v2 = controller.empty();
    if (v2 != m.controllers.empty()) continue;
    if (!v2 &&
        std::find(m.controllers.begin(), m.controllers.end(), controller) == m.controllers.end())
      continue;
    for (const auto& mount : mounts)
      if ((mount.version == 2) == v2 && mount.controllers == m.controllers)
        return m.path == "/" ? mount.path : mount.path + m.path;
  }
  return "";
}

// A child in `group` that touches `bytes` of memory and exits 0; its wait status.
int touch_memory(ProcessGroup& group, size_t bytes) {
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (!join(group)) _exit(3);
    char* p = static_cast<char*>(std::malloc(bytes));
    if (!p) _exit(4);
    for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
    _exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return status;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

void exercise_limits(ContainmentMode mode) {
  auto chosen = chosen_or_skip(mode);
  if (!chosen) return;
  GroupLimits limits;
  limits.cpus = {0};
  limits.memory_bytes = uint64_t{64} << 20;
  auto alloc = chosen->make_allocation(kAllocMarker, limits);
  REQUIRE_MESSAGE(alloc, (alloc ? "" : alloc.error().message));
  std::string note = (*alloc)->limits_note();
  MESSAGE("limits: ", note);
  std::string marker = "LATTICE_LAUNCH_ID=unit-limits";
  auto launch = (*alloc)->make_group(marker);
  REQUIRE(launch);
  REQUIRE(start_stray(**launch, marker, kAllocMarker) == 0);
  auto members = (*launch)->members();
  REQUIRE(members.size() == 1);
  const int pid = members[0];

  // Where the limits are, by the cgroups the stray is in.
  const bool v1_memory = contains(note, "memory 64 MiB: cgroup v1");
  const bool v2_memory = contains(note, "memory 64 MiB: cgroup v2");
  if (v1_memory)
    CHECK(read_text(cgroup_of(pid, "memory") + "/memory.limit_in_bytes") == "67108864");
  else if (v2_memory)
    CHECK(read_text(parent_of(cgroup_of(pid, "")) + "/memory.max") == "67108864");
  else
    MESSAGE("memory limit not enforced here: not checked");
  if (contains(note, "cpus 0: cgroup v1"))
    CHECK(read_text(cgroup_of(pid, "cpuset") + "/cpuset.cpus") == "0");
  else if (contains(note, "cpus 0: cgroup v2"))
    CHECK(read_text(parent_of(cgroup_of(pid, "")) + "/cpuset.cpus") == "0");
  else
    MESSAGE("cpu limit not enforced here: not checked");
  if (!contains(note, "cpus 0: not enforced"))
    CHECK(
        contains(read_text("/proc/" + std::to_string(pid) + "/status"), "Cpus_allowed_list:\t0\n"));
  // The stray's cgroup in the tracking hierarchy is its launch's, inside the allocation's.
  const std::string tracked = cgroup_of(pid, mode == ContainmentMode::cgroup2 ? "" : "pids");
  CHECK(tracked == (*launch)->describe());
  CHECK(contains((*alloc)->describe(), parent_of(tracked)));

  if (v1_memory || v2_memory) {  // 200 MiB touched in 64 MiB: the kernel's OOM killer ends it
    int status = touch_memory(**launch, size_t{200} << 20);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    CHECK(touch_memory(**launch, size_t{16} << 20) == 0);  // within the limit: runs
  }
  (*alloc)->signal(SIGKILL);
  CHECK(wait_empty(**alloc));
  std::string dirs = (*alloc)->describe();
  launch->reset();
  alloc->reset();
  chosen.reset();
  // Every cgroup it made, in every hierarchy, and the agent's subtrees there, are gone.
  std::stringstream list(dirs);
  for (std::string dir; std::getline(list, dir, ',');) {
    if (dir.front() == ' ') dir.erase(0, 1);
    CHECK_MESSAGE(::access(dir.c_str(), F_OK) != 0, dir);
    CHECK_MESSAGE(::access(parent_of(dir).c_str(), F_OK) != 0, parent_of(dir));
  }
}

TEST_CASE("cgroup v2: an allocation's memory and CPU limits hold for the processes in it") {
  exercise_limits(ContainmentMode::cgroup2);
}
TEST_CASE("cgroup v1: an allocation's memory and CPU limits hold for the processes in it") {
  exercise_limits(ContainmentMode::cgroup1);
}

TEST_CASE("subreaper: an allocation's limits are said not to be enforced") {
  auto chosen = chosen_or_skip(ContainmentMode::subreaper);
  if (!chosen) return;
  GroupLimits limits;
  limits.cpus = {0, 1};
  limits.memory_bytes = uint64_t{2} << 30;
  auto alloc = chosen->make_allocation(kAllocMarker, limits);
  REQUIRE(alloc);
  CHECK((*alloc)->limits_note() ==
        "memory 2 GiB: not enforced: no cgroup: containment is by child subreaper; cpus 0-1: not "
        "enforced: no cgroup: containment is by child subreaper");
}

void exercise_cpus_refused(ContainmentMode mode) {
  auto chosen = chosen_or_skip(mode);
  if (!chosen) return;
  GroupLimits limits;
  limits.cpus = {1000};
  auto alloc = chosen->make_allocation(kAllocMarker, limits);
  MESSAGE((alloc ? (*alloc)->limits_note() : alloc.error().message));
  if (alloc && contains((*alloc)->limits_note(), "not enforced")) return;  // no cpuset here
  REQUIRE(!alloc);
  CHECK(contains(alloc.error().message, "cannot limit the allocation to cpus 1000: "));
}

TEST_CASE("cgroup v2: CPUs outside the agent's cpuset are an error") {
  exercise_cpus_refused(ContainmentMode::cgroup2);
}
TEST_CASE("cgroup v1: CPUs outside the agent's cpuset are an error") {
  exercise_cpus_refused(ContainmentMode::cgroup1);
}

// An emptied launch group outside allocations is kept for the next launch outside them; one
// inside an allocation for the allocation's next launch only, so no launch outside it lands in
// its cgroups.
void exercise_no_reuse(ContainmentMode mode) {
  auto chosen = chosen_or_skip(mode);
  if (!chosen) return;
  std::string outside;
  {
    auto group = chosen->make_group("LATTICE_LAUNCH_ID=unit-out");
    REQUIRE(group);
    outside = (*group)->describe();
  }
  {
    auto again = chosen->make_group("LATTICE_LAUNCH_ID=unit-again");
    REQUIRE(again);
    CHECK((*again)->describe() == outside);  // the spare, reused
  }
  auto alloc = chosen->make_allocation(kAllocMarker, {});
  REQUIRE(alloc);
  std::string inside;
  {
    auto group = (*alloc)->make_group("LATTICE_LAUNCH_ID=unit-in");
    REQUIRE(group);
    inside = (*group)->describe();
  }
  {
    auto again = (*alloc)->make_group("LATTICE_LAUNCH_ID=unit-in-again");
    REQUIRE(again);
    CHECK((*again)->describe() == inside);  // the allocation's own spare, reused in it
  }
  auto first = chosen->make_group("LATTICE_LAUNCH_ID=unit-1");
  auto second = chosen->make_group("LATTICE_LAUNCH_ID=unit-2");
  REQUIRE(first);
  REQUIRE(second);
  for (const auto& group : {(*first)->describe(), (*second)->describe()}) {
    CHECK(group != inside);
    CHECK(!contains(group, "/alloc."));
  }
  alloc->reset();
  CHECK(::access(inside.c_str(), F_OK) != 0);  // its spare goes with it
}

TEST_CASE("cgroup v2: a launch group inside an allocation is not reused outside it") {
  exercise_no_reuse(ContainmentMode::cgroup2);
}
TEST_CASE("cgroup v1: a launch group inside an allocation is not reused outside it") {
  exercise_no_reuse(ContainmentMode::cgroup1);
}

// What a dead agent left: a launch inside an allocation in the tracking hierarchy, and the
// allocation's cgroups in the limit hierarchies, with a process in them all it can join.
void exercise_leftovers(ContainmentMode mode) {
  auto chosen = chosen_or_skip(mode);
  if (!chosen) return;
  GroupLimits limits;
  limits.memory_bytes = uint64_t{64} << 20;
  auto alloc = chosen->make_allocation(kAllocMarker, limits);
  REQUIRE(alloc);
  pid_t sleeper = ::fork();
  REQUIRE(sleeper >= 0);
  if (sleeper == 0) {
    ::execl("/bin/sleep", "sleep", "300", static_cast<char*>(nullptr));
    _exit(4);
  }
  std::vector<std::string> agents;  // the dead agent's subtrees, one per hierarchy
  std::stringstream list((*alloc)->describe());
  for (std::string dir; std::getline(list, dir, ',');) {
    if (dir.front() == ' ') dir.erase(0, 1);
    std::string agent = parent_of(parent_of(dir)) + "/lattice-agentd.999999999";
    std::string fake = agent + "/alloc.unit";
    REQUIRE(::mkdir(agent.c_str(), 0755) == 0);
    REQUIRE(::mkdir(fake.c_str(), 0755) == 0);
    if (agents.empty()) {  // the tracking hierarchy: the process is in a launch of it
      fake += "/launch.unit";
      REQUIRE(::mkdir(fake.c_str(), 0755) == 0);
    }
    if (!contains(dir, "cpuset")) {  // (a v1 cpuset cgroup takes no process before its CPUs)
      std::ofstream procs(fake + "/cgroup.procs");
      procs << sleeper << std::flush;
      CHECK_MESSAGE(procs.good(), fake);
    }
    agents.push_back(agent);
  }
  CHECK(chosen->remove_leftovers() >= 1);
  int status = 0;
  CHECK(::waitpid(sleeper, &status, 0) == sleeper);
  CHECK(WIFSIGNALED(status));
  for (const auto& agent : agents) CHECK_MESSAGE(::access(agent.c_str(), F_OK) != 0, agent);
  CHECK(::access((*alloc)->describe().substr(0, (*alloc)->describe().find(',')).c_str(), F_OK) ==
        0);  // this agent's own is left alone
}

TEST_CASE("cgroup v2: a dead agent's allocations and their launches are killed and removed") {
  exercise_leftovers(ContainmentMode::cgroup2);
}
TEST_CASE("cgroup v1: a dead agent's allocations and their launches are killed and removed") {
  exercise_leftovers(ContainmentMode::cgroup1);
}

// A launch's own memory limit (--mem): what goes past it is killed, the kill is counted for
// that launch alone, and its cgroups go with it; inside an allocation, below the allocation's,
// whose limit holds too. Such a group is never kept for another launch.
void exercise_launch_memory(ContainmentMode mode, bool in_allocation) {
  auto chosen = chosen_or_skip(mode);
  if (!chosen) return;
  std::unique_ptr<AllocationGroup> alloc;
  if (in_allocation) {
    GroupLimits whole;
    whole.memory_bytes = uint64_t{256} << 20;
    auto made = chosen->make_allocation(kAllocMarker, whole);
    REQUIRE_MESSAGE(made, (made ? "" : made.error().message));
    alloc = std::move(made.value());
  }
  GroupLimits limits;
  limits.memory_bytes = uint64_t{64} << 20;
  const std::string marker = "LATTICE_LAUNCH_ID=unit-mem";
  auto launch = alloc ? alloc->make_group(marker, limits) : chosen->make_group(marker, limits);
  REQUIRE_MESSAGE(launch, (launch ? "" : launch.error().message));
  const std::string note = (*launch)->limits_note();
  MESSAGE("launch limits: ", note);
  if ((*launch)->limits_unenforced()) {
    CHECK(contains(note, "memory 64 MiB: not enforced: "));
    return;
  }
  CHECK(contains(note, "memory 64 MiB: cgroup v"));
  auto counted = (*launch)->oom_kills();
  REQUIRE(counted);
  CHECK(*counted == 0);

  REQUIRE(start_stray(**launch, marker, alloc ? kAllocMarker : "") == 0);
  auto members = (*launch)->members();
  REQUIRE(members.size() == 1);
  const bool v1 = contains(note, "cgroup v1 memory");
  const std::string memory_cgroup = cgroup_of(members[0], v1 ? "memory" : "");
  CHECK(read_text(memory_cgroup + (v1 ? "/memory.limit_in_bytes" : "/memory.max")) == "67108864");
  if (alloc) CHECK(contains(alloc->describe(), parent_of(memory_cgroup)));  // nested in it
  (*launch)->signal(SIGKILL);
  CHECK(wait_empty(**launch));

  CHECK(touch_memory(**launch, size_t{16} << 20) == 0);  // within the limit: runs
  int status = touch_memory(**launch, size_t{200} << 20);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  CHECK((*launch)->oom_kills() == uint64_t{1});
  // A launch beside it has no part of that count.
  auto other = alloc ? alloc->make_group("LATTICE_LAUNCH_ID=unit-other")
                     : chosen->make_group("LATTICE_LAUNCH_ID=unit-other");
  REQUIRE(other);
  CHECK((*other)->oom_kills().value_or(0) == 0);
  CHECK((*other)->limits_note() == "no limits asked for");
  CHECK_FALSE((*other)->limits_unenforced());

  const std::string dirs = (*launch)->describe();
  launch->reset();
  std::stringstream list(dirs);
  for (std::string dir; std::getline(list, dir, ',');) {
    if (dir.front() == ' ') dir.erase(0, 1);
    CHECK_MESSAGE(::access(dir.c_str(), F_OK) != 0, dir);  // removed, not kept as a spare
  }
}

TEST_CASE("cgroup v2: a launch's own memory limit kills what goes past it, and says so") {
  exercise_launch_memory(ContainmentMode::cgroup2, false);
}
TEST_CASE("cgroup v1: a launch's own memory limit kills what goes past it, and says so") {
  exercise_launch_memory(ContainmentMode::cgroup1, false);
}
TEST_CASE("cgroup v2: a launch's memory limit inside an allocation's") {
  exercise_launch_memory(ContainmentMode::cgroup2, true);
}
TEST_CASE("cgroup v1: a launch's memory limit inside an allocation's") {
  exercise_launch_memory(ContainmentMode::cgroup1, true);
}

TEST_CASE("subreaper: a launch's memory limit is said not to be enforced") {
  auto chosen = chosen_or_skip(ContainmentMode::subreaper);
  if (!chosen) return;
  GroupLimits limits;
  limits.memory_bytes = uint64_t{64} << 20;
  auto launch = chosen->make_group("LATTICE_LAUNCH_ID=unit-sub", limits);
  REQUIRE(launch);
  CHECK((*launch)->limits_unenforced());
  CHECK((*launch)->limits_note() ==
        "memory 64 MiB: not enforced: no cgroup: containment is by child subreaper");
  CHECK(!(*launch)->oom_kills());
  auto plain = chosen->make_group("LATTICE_LAUNCH_ID=unit-sub2");
  REQUIRE(plain);
  CHECK_FALSE((*plain)->limits_unenforced());
}

TEST_CASE("containment modes by name") {
  CHECK(parse_containment_mode("cgroup1") == ContainmentMode::cgroup1);
  CHECK(!parse_containment_mode("cgroups"));
  CHECK(containment_mode_name(ContainmentMode::automatic) == "auto");
}

}  // namespace
}  // namespace lattice::proc
