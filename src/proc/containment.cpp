// Containment: a cgroup per launch under the agent's own subtree of one hierarchy,
// <hierarchy root><agent's cgroup>/lattice-agentd.<pid>/launch.<random>, or inside an
// allocation's, .../alloc.<random>/launch.<random> (the names say nothing of the launch:
// cgroup trees and /proc/PID/cgroup are world-readable), or the agent as child subreaper.
#include "proc/containment.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <set>

#include "base/log.hpp"
#include "base/strings.hpp"
#include "proc/cgroup_files.hpp"
#include "proc/cgroup_limits.hpp"
#include "proc/kernel_files.hpp"

namespace lattice::proc {
namespace {

std::string why() { return std::strerror(errno); }

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

// Removes the cgroup `dir`, whose processes are gone (its owner waited for that); a dying one
// may hold it a moment.
void remove_cgroup(const std::string& dir, GroupKeeper* keeper) {
  if (::rmdir(dir.c_str()) == 0) return;
  if (errno == EBUSY && keeper)
    keeper->remove_later(dir);
  else
    LAT_LOG(warn, "contain", "cannot remove ", dir, ": ", why());
}

// A launch cgroup's open files: cgroup.procs, the directory (v2 only: to clone into), and the
// cgroup.procs of the v1 limit cgroups it joins too: its own (with limits of its own: `limits`
// says which) and its allocation's in the other hierarchies (copies).
struct CgroupFds {
  int procs = -1;
  int dir = -1;
  std::vector<int> extra;
};

// "oom_kill N" of memory.events (v2) or memory.oom_control (v1); nullopt when it cannot be read.
std::optional<uint64_t> read_oom_kills(const std::string& file) {
  if (file.empty()) return std::nullopt;
  auto text = read_file(file);
  return text ? parse_oom_kills(*text) : std::nullopt;
}

class CgroupGroup final : public ProcessGroup {
 public:
  // `keeper` null: removed when destroyed (a spare, at its keeper's end); else its keeper may
  // keep it for the next launch: the agent's for launches outside allocations, an allocation
  // for its own (so none is reused outside the allocation it was made in), unless it has limits
  // of its own (`limits`, whose v1 cgroups it removes too). `oom_file`: where the kernel counts
  // its processes' OOM kills (read_oom_kills), or empty.
  CgroupGroup(std::string dir, CgroupFds fds, bool has_kill, GroupKeeper* keeper,
              AppliedLimits limits = {}, std::string oom_file = "")
      : dir_(std::move(dir)),
        fds_(std::move(fds)),
        has_kill_(has_kill),
        keeper_(keeper),
        limits_(std::move(limits)),
        oom_file_(std::move(oom_file)) {}
  ~CgroupGroup() override {
    // Not after cgroup.kill: the kernel then kills every child cloned into it (seen on 6.18).
    if (keeper_ && !killed_ && limits_.cgroups.empty() && limits_.note.empty() && fds_.procs >= 0 &&
        members().empty() && keeper_->keep(*this))
      return;
    if (fds_.procs < 0) return;  // given to another
    ::close(fds_.procs);
    if (fds_.dir >= 0) ::close(fds_.dir);
    for (int fd : fds_.extra) ::close(fd);  // (its own limit cgroups' among them)
    remove_cgroup(dir_, keeper_);
    for (const auto& cgroup : limits_.cgroups) remove_cgroup(cgroup.dir, keeper_);
  }
  int join_fd() const override { return fds_.procs; }
  int clone_into_fd() const override { return fds_.dir; }
  std::vector<int> extra_join_fds() const override { return fds_.extra; }
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
  std::string describe() const override {
    std::string out = dir_;
    for (const auto& cgroup : limits_.cgroups) out += cat(", ", cgroup.dir);
    return out;
  }
  std::string limits_note() const override {
    return limits_.note.empty() ? "no limits asked for" : limits_.note;
  }
  bool limits_unenforced() const override { return limits_.unenforced; }
  std::optional<uint64_t> oom_kills() const override { return read_oom_kills(oom_file_); }
  // Hands the cgroup and its fds to a new owner; this one then lets go of nothing. (Only a
  // group without limits of its own is kept, so there are none to hand over.)
  std::unique_ptr<CgroupGroup> take(GroupKeeper* keeper) {
    auto out =
        std::make_unique<CgroupGroup>(dir_, fds_, has_kill_, keeper, AppliedLimits{}, oom_file_);
    fds_ = CgroupFds{};
    return out;
  }

 private:
  std::string dir_;
  CgroupFds fds_;
  bool has_kill_;
  bool killed_ = false;  // cgroup.kill was written
  GroupKeeper* keeper_;
  AppliedLimits limits_;  // its own (note empty: none asked for)
  std::string oom_file_;
};

// Copies of an allocation's v1 cgroup.procs fds, for one of its launches (which may outlive it),
// except in the hierarchies where the launch has a cgroup of its own (`own`, below the
// allocation's there): a process is in one cgroup of each hierarchy.
Result<std::vector<int>> copy_fds(const std::vector<LimitCgroup>& cgroups,
                                  const std::vector<LimitCgroup>& own) {
  std::vector<int> out;
  for (const auto& cgroup : cgroups) {
    if (std::any_of(own.begin(), own.end(), [&](const LimitCgroup& mine) {
          return starts_with(mine.dir, cgroup.dir + "/");
        }))
      continue;
    int fd = ::fcntl(cgroup.procs_fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
      std::string error = cat("cannot copy the fd of ", cgroup.dir, "/cgroup.procs: ", why());
      for (int made : out) ::close(made);
      return make_error(error);
    }
    out.push_back(fd);
  }
  return out;
}

// A new launch cgroup below `parent`, with `limits` of its own (set by `controllers`, inside
// those of its allocation); `allocation`: the v1 limit cgroups of the allocation it is in (and
// then it is in one), null outside allocations.
Result<std::unique_ptr<ProcessGroup>> make_launch_cgroup(const std::string& parent,
                                                         ContainmentMode mode, GroupKeeper* keeper,
                                                         const std::vector<LimitCgroup>* allocation,
                                                         const GroupLimits& limits,
                                                         CgroupLimits& controllers) {
  std::string name = "launch." + random_name();
  std::string dir = cat(parent, '/', name);
  if (::mkdir(dir.c_str(), 0755) != 0) return make_error(cat("cannot create ", dir, ": ", why()));
  CgroupFds fds;
  fds.procs = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  if (fds.procs < 0) {
    std::string error = cat("cannot open ", dir, "/cgroup.procs: ", why());
    ::rmdir(dir.c_str());
    return make_error(error);
  }
  AppliedLimits own;
  if (!limits.empty()) {
    auto applied =
        controllers.apply(dir, name, limits, allocation ? *allocation : std::vector<LimitCgroup>{});
    if (!applied) {
      ::close(fds.procs);
      ::rmdir(dir.c_str());
      return applied.error();
    }
    own = std::move(*applied);
  }
  if (allocation) {
    auto extra = copy_fds(*allocation, own.cgroups);
    if (!extra) {
      ::close(fds.procs);
      for (const auto& cgroup : own.cgroups) {
        ::close(cgroup.procs_fd);
        ::rmdir(cgroup.dir.c_str());
      }
      ::rmdir(dir.c_str());
      return extra.error();
    }
    fds.extra = std::move(*extra);
  }
  for (const auto& cgroup : own.cgroups) fds.extra.push_back(cgroup.procs_fd);
  if (mode == ContainmentMode::cgroup2)  // (without it, children join by cgroup.procs)
    fds.dir = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  // v2 counts OOM kills in every cgroup the memory controller reaches (memory.events); v1 only
  // in a memory cgroup of the launch's own.
  std::string oom_file = !own.oom_file.empty()              ? own.oom_file
                         : mode == ContainmentMode::cgroup2 ? dir + "/memory.events"
                                                            : "";
  return std::unique_ptr<ProcessGroup>(new CgroupGroup(dir, std::move(fds),
                                                       exists(dir + "/cgroup.kill"), keeper,
                                                       std::move(own), std::move(oom_file)));
}

// An allocation: a cgroup in the tracking hierarchy with its launches' below it, and its
// cgroups in the v1 hierarchies that keep its limits, which its processes join too. Like the
// agent, it keeps an emptied launch cgroup for its next launch; its launches' groups must not
// outlive it (the agent lets an allocation go only after its launches).
class CgroupAllocation final : public AllocationGroup, private GroupKeeper {
 public:
  CgroupAllocation(std::string dir, ContainmentMode mode, GroupKeeper& keeper,
                   CgroupLimits& controllers, AppliedLimits limits)
      : dir_(std::move(dir)),
        mode_(mode),
        has_kill_(exists(dir_ + "/cgroup.kill")),
        keeper_(keeper),
        controllers_(controllers),
        limits_(std::move(limits)) {}
  ~CgroupAllocation() override {
    spare_.reset();
    for (const auto& cgroup : limits_.cgroups) {
      ::close(cgroup.procs_fd);
      remove_cgroup(cgroup.dir, &keeper_);
    }
    remove_cgroup(dir_, &keeper_);  // (after its launches' cgroups, if they are still there)
  }
  int join_fd() const override { return -1; }
  std::vector<int> members() const override { return tree_pids(dir_); }
  void signal(int signum) override {
    // cgroup.kill reaches the cgroups below it too.
    if (signum == SIGKILL && has_kill_ && write_file(dir_ + "/cgroup.kill", "1")) return;
    for (int pid : members()) ::kill(pid, signum);
  }
  std::string describe() const override {
    std::string out = dir_;
    for (const auto& cgroup : limits_.cgroups) out += cat(", ", cgroup.dir);
    return out;
  }
  Result<std::unique_ptr<ProcessGroup>> make_group(const std::string&,
                                                   const GroupLimits& limits) override {
    if (spare_ && limits.empty()) {
      std::unique_ptr<ProcessGroup> reused = spare_->take(this);
      spare_.reset();
      return reused;
    }
    return make_launch_cgroup(dir_, mode_, this, &limits_.cgroups, limits, controllers_);
  }
  std::string limits_note() const override { return limits_.note; }
  bool limits_unenforced() const override { return limits_.unenforced; }

 private:
  bool keep(CgroupGroup& emptied) override {
    if (spare_) return false;
    spare_ = emptied.take(nullptr);
    return true;
  }
  void remove_later(std::string dir) override { keeper_.remove_later(std::move(dir)); }

  std::string dir_;
  ContainmentMode mode_;
  bool has_kill_;
  GroupKeeper& keeper_;
  CgroupLimits& controllers_;  // the containment's: outlives it
  AppliedLimits limits_;
  std::unique_ptr<CgroupGroup> spare_;  // an emptied launch cgroup of its own, for the next
};

class CgroupContainment final : public Containment, private GroupKeeper {
 public:
  CgroupContainment(ContainmentMode mode, std::string root, std::string base, std::string notes,
                    std::unique_ptr<CgroupLimits> limits)
      : mode_(mode),
        root_(std::move(root)),
        base_(std::move(base)),
        notes_(std::move(notes)),
        limits_(std::move(limits)) {}
  ~CgroupContainment() override {
    spare_.reset();
    remove_busy();
    for (const auto& dir : busy_) LAT_LOG(warn, "contain", "cannot remove ", dir, ": busy");
    ::rmdir(base_.c_str());
  }

  ContainmentMode mode() const override { return mode_; }
  std::string describe() const override {
    return cat(mode_ == ContainmentMode::cgroup2 ? "cgroup v2" : "cgroup v1",
               ", a cgroup per launch under ", base_, limits_->describe(), notes_);
  }
  // An emptied group without limits is kept for the next launch without any (one at most), so
  // that launches after the first make and remove no cgroup.
  Result<std::unique_ptr<ProcessGroup>> make_group(const std::string&,
                                                   const GroupLimits& limits) override {
    remove_busy();
    if (spare_ && limits.empty()) {
      std::unique_ptr<ProcessGroup> reused = spare_->take(this);
      spare_.reset();
      return reused;
    }
    return make_launch_cgroup(base_, mode_, this, nullptr, limits, *limits_);
  }
  Result<std::unique_ptr<AllocationGroup>> make_allocation(const std::string&,
                                                           const GroupLimits& limits) override {
    remove_busy();
    std::string name = "alloc." + random_name();
    std::string dir = cat(base_, '/', name);
    if (::mkdir(dir.c_str(), 0755) != 0) return make_error(cat("cannot create ", dir, ": ", why()));
    auto applied = limits_->apply(dir, name, limits);
    if (!applied) {
      ::rmdir(dir.c_str());
      return applied.error();
    }
    return std::unique_ptr<AllocationGroup>(
        new CgroupAllocation(dir, mode_, *this, *limits_, std::move(*applied)));
  }
  int remove_leftovers() override {
    return remove_dead_agents(root_) + limits_->remove_leftovers();
  }

 private:
  bool keep(CgroupGroup& emptied) override {
    if (spare_) return false;
    spare_ = emptied.take(nullptr);  // (removed when the agent ends, if no launch takes it)
    return true;
  }
  void remove_later(std::string dir) override { busy_.push_back(std::move(dir)); }
  // Groups that were busy when emptied: tried again before each new one, and at the end.
  // Deepest first: an allocation's cgroup only goes once its launches' have.
  void remove_busy() {
    std::sort(busy_.begin(), busy_.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    busy_.erase(std::remove_if(busy_.begin(), busy_.end(),
                               [](const std::string& dir) {
                                 return ::rmdir(dir.c_str()) == 0 || errno == ENOENT;
                               }),
                busy_.end());
  }

  ContainmentMode mode_;
  std::string root_, base_, notes_;
  std::unique_ptr<CgroupLimits> limits_;
  std::unique_ptr<CgroupGroup> spare_;
  std::vector<std::string> busy_;
};

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

// This process's descendants whose environment holds `marker`.
std::vector<int> marked_descendants(const std::string& marker, bool lists) {
  std::vector<int> out;
  const int self = ::getpid();
  for (int pid : lists ? descendants_by_lists(self) : descendants_by_scan(self)) {
    auto env = read_file(cat("/proc/", pid, "/environ"));
    if (env && environ_has(*env, marker)) out.push_back(pid);
  }
  return out;
}

// Nothing but a cgroup could hold a group's limits (a launch's CPU binding still applies to its
// ranks).
std::string subreaper_note(const GroupLimits& limits) {
  return limits_not_enforced(limits, "no cgroup: containment is by child subreaper");
}

class SubreaperGroup final : public ProcessGroup {
 public:
  SubreaperGroup(std::string marker, bool lists, const GroupLimits& limits)
      : marker_(std::move(marker)),
        lists_(lists),
        note_(subreaper_note(limits)),
        unenforced_(!limits.empty()) {}
  int join_fd() const override { return -1; }
  std::vector<int> members() const override { return marked_descendants(marker_, lists_); }
  void signal(int signum) override {
    for (int pid : members()) ::kill(pid, signum);
  }
  std::string describe() const override { return "(subreaper)"; }
  std::string limits_note() const override { return note_; }
  bool limits_unenforced() const override { return unenforced_; }

 private:
  std::string marker_;
  bool lists_;
  std::string note_;
  bool unenforced_;
};

// Launches found by their marker, the allocation's processes by its own.
class SubreaperAllocation final : public AllocationGroup {
 public:
  SubreaperAllocation(std::string marker, bool lists, const GroupLimits& limits)
      : marker_(std::move(marker)),
        lists_(lists),
        note_(subreaper_note(limits)),
        unenforced_(!limits.empty()) {}
  int join_fd() const override { return -1; }
  std::vector<int> members() const override { return marked_descendants(marker_, lists_); }
  void signal(int signum) override {
    for (int pid : members()) ::kill(pid, signum);
  }
  std::string describe() const override { return "(subreaper)"; }
  Result<std::unique_ptr<ProcessGroup>> make_group(const std::string& marker,
                                                   const GroupLimits& limits) override {
    return std::unique_ptr<ProcessGroup>(new SubreaperGroup(marker, lists_, limits));
  }
  std::string limits_note() const override { return note_; }
  bool limits_unenforced() const override { return unenforced_; }

 private:
  std::string marker_;
  bool lists_;
  std::string note_;
  bool unenforced_;
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
  Result<std::unique_ptr<ProcessGroup>> make_group(const std::string& marker,
                                                   const GroupLimits& limits) override {
    return std::unique_ptr<ProcessGroup>(new SubreaperGroup(marker, lists_, limits));
  }
  Result<std::unique_ptr<AllocationGroup>> make_allocation(const std::string& marker,
                                                           const GroupLimits& limits) override {
    return std::unique_ptr<AllocationGroup>(new SubreaperAllocation(marker, lists_, limits));
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
            new CgroupContainment(tried, tree->root, tree->base, passed,
                                  CgroupLimits::probe(mounts, mine, *mount, tree->base)));
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
