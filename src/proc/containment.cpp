// Containment: a cgroup per launch under the agent's own subtree of one hierarchy,
// <hierarchy root><agent's cgroup>/lattice-agentd.<pid>/launch.<random> (the names say nothing
// of the launch: cgroup trees and /proc/PID/cgroup are world-readable), or the agent as child
// subreaper.
#include "proc/containment.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "base/log.hpp"
#include "base/strings.hpp"
#include "proc/kernel_files.hpp"

namespace lattice::proc {
namespace {

// cgroup.procs of a launch, /proc/PID/environ: far beyond any real one.
constexpr size_t kMaxFileBytes = size_t{16} << 20;
// A dead agent's processes get this long to die before their groups are given up on.
constexpr int kLeftoverWaitMs = 2000;
constexpr const char* kAgentPrefix = "lattice-agentd.";

std::string why() { return std::strerror(errno); }

Result<std::string> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(cat("cannot read ", path, ": ", why()));
  std::string out;
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 && out.size() < kMaxFileBytes)
    out.append(buf, static_cast<size_t>(n));
  int saved = errno;
  ::close(fd);
  if (n < 0) return make_error(cat("cannot read ", path, ": ", std::strerror(saved)));
  return out;
}

Status write_file(const std::string& path, std::string_view text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return make_error(cat("cannot open ", path, ": ", why()));
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int saved = errno;
  ::close(fd);
  if (!ok) return make_error(cat("cannot write ", path, ": ", std::strerror(saved)));
  return {};
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::string random_name() {
  unsigned char bytes[8] = {};
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
    for (auto& b : bytes) b = static_cast<unsigned char>(std::rand());
  return to_hex(std::string_view(reinterpret_cast<char*>(bytes), sizeof bytes));
}

// An agent with this pid is running (a reused pid that is not an agent does not count).
bool agent_alive(int pid) {
  auto comm = read_file(cat("/proc/", pid, "/comm"));
  return comm && starts_with(*comm, "lattice-agentd");
}

std::vector<std::string> subdirectories(const std::string& dir, std::string_view prefix) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_type == DT_DIR && e->d_name[0] != '.' && starts_with(e->d_name, prefix))
        out.emplace_back(e->d_name);
    ::closedir(d);
  }
  return out;
}

// --- cgroups ---

class CgroupGroup;
// What becomes of an emptied group. Kept for the next launch rather than removed: making and
// removing cgroups takes the kernel's global cgroup lock, which every clone into a cgroup
// waits for too. Removed later when a dying process still holds it: never waited for on the
// agent's loop.
class GroupKeeper {
 public:
  virtual bool keep(CgroupGroup& emptied) = 0;
  virtual void remove_later(std::string dir) = 0;

 protected:
  ~GroupKeeper() = default;
};

class CgroupGroup final : public ProcessGroup {
 public:
  // `keeper` null: removed when destroyed (the agent's spare, at its end).
  CgroupGroup(std::string dir, int procs_fd, int dir_fd, bool has_kill, GroupKeeper* keeper)
      : dir_(std::move(dir)),
        procs_fd_(procs_fd),
        dir_fd_(dir_fd),
        has_kill_(has_kill),
        keeper_(keeper) {}
  ~CgroupGroup() override {
    // Not after cgroup.kill: the kernel then kills every child cloned into it (seen on 6.18).
    if (keeper_ && !killed_ && procs_fd_ >= 0 && members().empty() && keeper_->keep(*this)) return;
    if (procs_fd_ < 0) return;  // given to another
    ::close(procs_fd_);
    if (dir_fd_ >= 0) ::close(dir_fd_);
    // Its processes are gone (the launch waited for that); a dying one may hold it a moment.
    if (::rmdir(dir_.c_str()) == 0) return;
    if (errno == EBUSY && keeper_)
      keeper_->remove_later(dir_);
    else
      LAT_LOG(warn, "contain", "cannot remove ", dir_, ": ", why());
  }
  int join_fd() const override { return procs_fd_; }
  int clone_into_fd() const override { return dir_fd_; }
  std::vector<int> members() const override {
    auto text = read_file(dir_ + "/cgroup.procs");
    return text ? parse_pids(*text) : std::vector<int>{};
  }
  void signal(int signum) override {
    if (signum == SIGKILL && has_kill_ && write_file(dir_ + "/cgroup.kill", "1")) {
      killed_ = true;
      return;
    }
    for (int pid : members()) ::kill(pid, signum);
  }
  std::string describe() const override { return dir_; }
  // Hands the cgroup and its fds to a new owner; this one then lets go of nothing.
  std::unique_ptr<CgroupGroup> take(GroupKeeper* keeper) {
    auto out = std::make_unique<CgroupGroup>(dir_, procs_fd_, dir_fd_, has_kill_, keeper);
    procs_fd_ = dir_fd_ = -1;
    return out;
  }

 private:
  std::string dir_;
  int procs_fd_;
  int dir_fd_;  // v2 only
  bool has_kill_;
  bool killed_ = false;  // cgroup.kill was written
  GroupKeeper* keeper_;
};

class CgroupContainment final : public Containment, private GroupKeeper {
 public:
  CgroupContainment(ContainmentMode mode, std::string root, std::string base, std::string notes)
      : mode_(mode), root_(std::move(root)), base_(std::move(base)), notes_(std::move(notes)) {}
  ~CgroupContainment() override {
    spare_.reset();
    remove_busy();
    for (const auto& dir : busy_) LAT_LOG(warn, "contain", "cannot remove ", dir, ": busy");
    ::rmdir(base_.c_str());
  }

  ContainmentMode mode() const override { return mode_; }
  std::string describe() const override {
    return cat(mode_ == ContainmentMode::cgroup2 ? "cgroup v2" : "cgroup v1",
               ", a cgroup per launch under ", base_, notes_);
  }
  // An emptied group is kept for the next launch (one at most), so that launches after the
  // first make and remove no cgroup.
  Result<std::unique_ptr<ProcessGroup>> make_group(const std::string&) override {
    remove_busy();
    if (spare_) {
      std::unique_ptr<ProcessGroup> reused = spare_->take(this);
      spare_.reset();
      return reused;
    }
    std::string dir = cat(base_, "/launch.", random_name());
    if (::mkdir(dir.c_str(), 0755) != 0) return make_error(cat("cannot create ", dir, ": ", why()));
    int fd = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      std::string error = cat("cannot open ", dir, "/cgroup.procs: ", why());
      ::rmdir(dir.c_str());
      return make_error(error);
    }
    int dir_fd = mode_ == ContainmentMode::cgroup2
                     ? ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                     : -1;  // (without it, children join by cgroup.procs)
    return std::unique_ptr<ProcessGroup>(
        new CgroupGroup(dir, fd, dir_fd, exists(dir + "/cgroup.kill"), this));
  }
  int remove_leftovers() override {
    int killed = 0;
    for (const auto& name : subdirectories(root_, kAgentPrefix)) {
      auto pid = parse_int(std::string_view(name).substr(std::strlen(kAgentPrefix)));
      if (!pid || *pid == ::getpid() || agent_alive(static_cast<int>(*pid))) continue;
      std::string dir = cat(root_, '/', name);
      for (const auto& launch : subdirectories(dir, "launch.")) {
        std::string group = cat(dir, '/', launch);
        auto text = read_file(group + "/cgroup.procs");
        auto pids = text ? parse_pids(*text) : std::vector<int>{};
        killed += static_cast<int>(pids.size());
        if (!pids.empty())
          LAT_LOG(warn, "contain", "killing ", pids.size(), " processes left in ", group,
                  " by an agent that did not end cleanly");
        for (int waited = 0; waited < kLeftoverWaitMs; waited += 20) {
          for (int p : pids) ::kill(p, SIGKILL);
          if (::rmdir(group.c_str()) == 0 || errno == ENOENT) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          text = read_file(group + "/cgroup.procs");
          pids = text ? parse_pids(*text) : std::vector<int>{};
        }
      }
      if (::rmdir(dir.c_str()) != 0 && errno != ENOENT)
        LAT_LOG(warn, "contain", "cannot remove ", dir, ": ", why());
    }
    return killed;
  }

 private:
  bool keep(CgroupGroup& emptied) override {
    if (spare_) return false;
    spare_ = emptied.take(nullptr);  // (removed when the agent ends, if no launch takes it)
    return true;
  }
  void remove_later(std::string dir) override { busy_.push_back(std::move(dir)); }
  // Groups that were busy when emptied: tried again before each new one, and at the end.
  void remove_busy() {
    busy_.erase(std::remove_if(busy_.begin(), busy_.end(),
                               [](const std::string& dir) {
                                 return ::rmdir(dir.c_str()) == 0 || errno == ENOENT;
                               }),
                busy_.end());
  }

  ContainmentMode mode_;
  std::string root_, base_, notes_;
  std::unique_ptr<CgroupGroup> spare_;
  std::vector<std::string> busy_;
};

// The agent's own subtree in `mount`, made (or why not).
Result<std::pair<std::string, std::string>> make_subtree(
    const CgroupMount& mount, const std::vector<CgroupMembership>& mine) {
  const CgroupMembership* own = nullptr;
  for (const auto& m : mine) {
    bool match = mount.version == 2 ? m.hierarchy == 0 && m.controllers.empty()
                                    : !m.controllers.empty() && m.controllers == mount.controllers;
    if (match) own = &m;
  }
  if (!own) return make_error(cat("this process is in no cgroup of ", mount.path));
  std::string root = own->path == "/" ? mount.path : mount.path + own->path;
  std::string base = cat(root, '/', kAgentPrefix, ::getpid());
  if (::mkdir(base.c_str(), 0755) != 0 && errno != EEXIST)
    return make_error(cat("cannot create ", base, ": ", why()));
  // Joining needs cgroup.procs to take writes; mkdir alone can succeed where it does not.
  if (::access((base + "/cgroup.procs").c_str(), W_OK) != 0) {
    std::string error = cat(base, "/cgroup.procs is not writable: ", why());
    ::rmdir(base.c_str());
    return make_error(error);
  }
  return std::make_pair(root, base);
}

// The v1 hierarchy to track with: pids (it can also cap forks), then freezer, then systemd's
// named one, then any.
const CgroupMount* pick_v1(const std::vector<CgroupMount>& mounts) {
  for (std::string_view want : {"pids", "freezer", "name=systemd"})
    for (const auto& m : mounts)
      if (m.version == 1 && m.controllers.size() == 1 && m.controllers[0] == want) return &m;
  for (const auto& m : mounts)
    if (m.version == 1) return &m;
  return nullptr;
}

// --- the subreaper ---

// The kernel's list of a process's children (CONFIG_PROC_CHILDREN), one file per thread.
bool children_lists() { return exists(cat("/proc/self/task/", ::gettid(), "/children")); }

// Every process below `ancestor`, walked down the kernel's children lists: as many reads as the
// agent has descendants (a scan of all of /proc per look cost a 256-agent fan-out on one host
// seven times its time). A child that forks while its parent is read may be missed by one look;
// the sweep looks again until nothing is left.
std::vector<int> descendants_by_lists(int ancestor) {
  std::vector<int> out, todo = {ancestor};
  std::set<int> seen = {ancestor};
  while (!todo.empty()) {
    int parent = todo.back();
    todo.pop_back();
    std::string tasks = cat("/proc/", parent, "/task");
    for (const auto& tid : subdirectories(tasks, "")) {
      auto text = read_file(cat(tasks, '/', tid, "/children"));
      if (!text) continue;
      for (int pid : parse_pids(*text))
        if (seen.insert(pid).second) {
          out.push_back(pid);
          todo.push_back(pid);
        }
    }
  }
  return out;
}

// The same from every process's parent in /proc/PID/stat, where the kernel keeps no lists.
std::vector<int> descendants_by_scan(int ancestor) {
  std::multimap<int, int> children;  // ppid -> pid
  if (DIR* d = ::opendir("/proc")) {
    while (dirent* e = ::readdir(d)) {
      auto pid = parse_int(e->d_name);
      if (!pid || *pid <= 0) continue;
      auto stat = read_file(cat("/proc/", *pid, "/stat"));
      if (stat) children.emplace(parse_stat_ppid(*stat), static_cast<int>(*pid));
    }
    ::closedir(d);
  }
  std::vector<int> out, todo = {ancestor};
  std::set<int> seen = {ancestor};
  while (!todo.empty()) {
    int parent = todo.back();
    todo.pop_back();
    auto [from, to] = children.equal_range(parent);
    for (auto it = from; it != to; ++it)
      if (seen.insert(it->second).second) {
        out.push_back(it->second);
        todo.push_back(it->second);
      }
  }
  return out;
}

class SubreaperGroup final : public ProcessGroup {
 public:
  SubreaperGroup(std::string marker, bool lists) : marker_(std::move(marker)), lists_(lists) {}
  int join_fd() const override { return -1; }
  std::vector<int> members() const override {
    std::vector<int> out;
    const int self = ::getpid();
    for (int pid : lists_ ? descendants_by_lists(self) : descendants_by_scan(self)) {
      auto env = read_file(cat("/proc/", pid, "/environ"));
      if (env && environ_has(*env, marker_)) out.push_back(pid);
    }
    return out;
  }
  void signal(int signum) override {
    for (int pid : members()) ::kill(pid, signum);
  }
  std::string describe() const override { return "(subreaper)"; }

 private:
  std::string marker_;
  bool lists_;
};

class SubreaperContainment final : public Containment {
 public:
  explicit SubreaperContainment(std::string notes)
      : notes_(std::move(notes)), lists_(children_lists()) {}
  ContainmentMode mode() const override { return ContainmentMode::subreaper; }
  std::string describe() const override {
    return cat(
        "child subreaper: orphans of a launch come back to the agent and are found by "
        "their environment (a process that clears it escapes)",
        lists_ ? ""
               : "; no children lists in /proc (CONFIG_PROC_CHILDREN): all of /proc is "
                 "scanned for them",
        notes_);
  }
  Result<std::unique_ptr<ProcessGroup>> make_group(const std::string& marker) override {
    return std::unique_ptr<ProcessGroup>(new SubreaperGroup(marker, lists_));
  }
  // A dead agent's orphans went to PID 1: nothing tells them apart any more.
  int remove_leftovers() override { return 0; }

 private:
  std::string notes_;
  bool lists_;
};

}  // namespace

std::optional<ContainmentMode> parse_containment_mode(std::string_view name) {
  if (name == "auto") return ContainmentMode::automatic;
  if (name == "cgroup2") return ContainmentMode::cgroup2;
  if (name == "cgroup1") return ContainmentMode::cgroup1;
  if (name == "subreaper") return ContainmentMode::subreaper;
  return std::nullopt;
}

std::string_view containment_mode_name(ContainmentMode mode) {
  switch (mode) {
    case ContainmentMode::automatic:
      return "auto";
    case ContainmentMode::cgroup2:
      return "cgroup2";
    case ContainmentMode::cgroup1:
      return "cgroup1";
    case ContainmentMode::subreaper:
      return "subreaper";
  }
  return "auto";
}

Result<std::unique_ptr<Containment>> Containment::choose(ContainmentMode mode) {
  auto mountinfo = read_file("/proc/self/mountinfo");
  auto own = read_file("/proc/self/cgroup");
  const auto mounts = mountinfo ? cgroup_mounts(*mountinfo) : std::vector<CgroupMount>{};
  const auto mine = own ? cgroup_memberships(*own) : std::vector<CgroupMembership>{};
  std::string passed;  // why the modes tried before the chosen one were passed over

  for (ContainmentMode tried : {ContainmentMode::cgroup2, ContainmentMode::cgroup1}) {
    if (mode != ContainmentMode::automatic && mode != tried) continue;
    const CgroupMount* mount = nullptr;
    if (tried == ContainmentMode::cgroup2) {
      for (const auto& m : mounts)
        if (m.version == 2) mount = &m;
    } else {
      mount = pick_v1(mounts);
    }
    std::string name = tried == ContainmentMode::cgroup2 ? "cgroup v2" : "cgroup v1";
    Error failed = make_error(cat("no ", name, " hierarchy is mounted"));
    if (mount) {
      auto tree = make_subtree(*mount, mine);
      if (tree)
        return std::unique_ptr<Containment>(
            new CgroupContainment(tried, tree->first, tree->second, passed));
      failed = tree.error();
    }
    if (mode == tried)
      return make_error(cat("containment ", containment_mode_name(mode), ": ", failed.message));
    passed += cat("; not ", name, ": ", failed.message);
  }
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
    return make_error(cat("containment: cannot become a child subreaper: ", why()));
  return std::unique_ptr<Containment>(new SubreaperContainment(passed));
}

}  // namespace lattice::proc
