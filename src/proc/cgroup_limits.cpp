#include "proc/cgroup_limits.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/log.hpp"
#include "base/strings.hpp"
#include "proc/cgroup_files.hpp"

namespace lattice::proc {
namespace {

using Controller = CgroupLimits::Controller;
using Settings = std::vector<std::pair<std::string, std::string>>;  // file, value

std::string why() { return std::strerror(errno); }

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

bool offers(const std::string& controllers, const std::string& name) {
  auto words = split(trimmed(controllers), ' ');
  return std::find(words.begin(), words.end(), name) != words.end();
}

// A v1 cpuset cgroup's CPUs and memory nodes start empty, and nothing can join it, or a cgroup
// below it take any, until they are set: the agent's subtree takes all of its parent's.
Status copy_cpuset(const std::string& from, const std::string& to) {
  for (const char* file : {"cpuset.cpus", "cpuset.mems"}) {
    auto value = read_file(cat(from, '/', file));
    if (!value) return value.error();
    auto wrote = write_file(cat(to, '/', file), trimmed(*value));
    if (!wrote) return wrote;
  }
  return {};
}

Controller find_controller(const std::string& name, const std::vector<CgroupMount>& mounts,
                           const std::vector<CgroupMembership>& mine, const CgroupMount& tracking,
                           const std::string& tracking_base) {
  Controller c;
  c.name = name;
  if (tracking.version == 2) {
    auto offered = read_file(tracking_base + "/cgroup.controllers");
    if (offered && offers(*offered, name)) {
      c.version = 2;
      return c;
    }
  }
  const CgroupMount* mount = nullptr;
  for (const auto& m : mounts)
    if (m.version == 1 && std::count(m.controllers.begin(), m.controllers.end(), name)) mount = &m;
  if (!mount) {
    c.why_not = tracking.version == 2
                    ? cat("no ", name, " controller in cgroup v2 (", tracking_base,
                          "/cgroup.controllers) and none mounted as v1")
                    : cat("no ", name, " controller mounted as cgroup v1");
    return c;
  }
  // Launches are cgroups below the allocation there: a v1 cpuset or memory cgroup below
  // another would need settings of its own.
  if (mount->path == tracking.path) {
    c.why_not =
        cat("the ", name, " controller is in ", mount->path, ", where launches are tracked");
    return c;
  }
  auto tree = make_subtree(*mount, mine);
  if (!tree) {
    c.why_not = tree.error().message;
    return c;
  }
  if (name == "cpuset") {
    if (auto copied = copy_cpuset(tree->root, tree->base); !copied) {
      c.why_not = copied.error().message;
      ::rmdir(tree->base.c_str());
      return c;
    }
  }
  c.version = 1;
  c.base = tree->base;
  c.parent = tree->root;
  return c;
}

// <parent>/<name> with `settings` written, before anything joins it. In a hierarchy that has the
// cpuset controller too (mounted with memory), it first takes its parent's CPUs and memory nodes.
Result<LimitCgroup> make_limit_cgroup(const std::string& parent, const std::string& name,
                                      const Settings& settings) {
  std::string dir = cat(parent, '/', name);
  if (::mkdir(dir.c_str(), 0755) != 0) return make_error(cat("cannot create ", dir, ": ", why()));
  if (exists(dir + "/cpuset.cpus"))
    if (auto copied = copy_cpuset(parent, dir); !copied) {
      ::rmdir(dir.c_str());
      return copied.error();
    }
  for (const auto& [file, value] : settings)
    if (auto wrote = write_file(cat(dir, '/', file), value); !wrote) {
      ::rmdir(dir.c_str());
      return wrote.error();
    }
  int fd = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    std::string error = cat("cannot open ", dir, "/cgroup.procs: ", why());
    ::rmdir(dir.c_str());
    return make_error(error);
  }
  return LimitCgroup{dir, fd};
}

// In v2 a controller reaches the allocation's cgroup once the agent's subtree passes it down.
Status enable(const std::string& base, const std::string& controller) {
  return write_file(base + "/cgroup.subtree_control", "+" + controller);
}

// Writes `settings` into the v2 cgroup `dir`.
Status write_all(const std::string& dir, const Settings& settings) {
  for (const auto& [file, value] : settings)
    if (auto wrote = write_file(cat(dir, '/', file), value); !wrote) return wrote;
  return {};
}

// Where a group's cgroup goes in the v1 hierarchy of `c`: below its allocation's there, if it
// has one, else in the agent's subtree.
std::string v1_parent(const Controller& c, const std::vector<LimitCgroup>& within) {
  for (const auto& cgroup : within)
    if (starts_with(cgroup.dir, c.base + "/")) return cgroup.dir;
  return c.base;
}

void discard(const std::vector<LimitCgroup>& cgroups) {
  for (const auto& cgroup : cgroups) {
    ::close(cgroup.procs_fd);
    ::rmdir(cgroup.dir.c_str());
  }
}

std::string how(const Controller& c) {
  if (c.version == 2) return cat(c.name, " by cgroup v2");
  if (c.version == 1) return cat(c.name, " by cgroup v1 (", c.base, ")");
  return cat(c.name, " not enforced (", c.why_not, ")");
}

}  // namespace

std::string limits_not_enforced(const GroupLimits& limits, const std::string& why) {
  std::vector<std::string> notes;
  if (limits.memory_bytes)
    notes.push_back(cat("memory ", size_text(limits.memory_bytes), ": not enforced: ", why));
  if (!limits.cpus.empty())
    notes.push_back(cat("cpus ", compress_ranges(limits.cpus), ": not enforced: ", why));
  return notes.empty() ? "no limits asked for" : join(notes, "; ");
}

std::unique_ptr<CgroupLimits> CgroupLimits::probe(const std::vector<CgroupMount>& mounts,
                                                  const std::vector<CgroupMembership>& mine,
                                                  const CgroupMount& tracking,
                                                  const std::string& tracking_base) {
  return std::unique_ptr<CgroupLimits>(new CgroupLimits(
      tracking_base, find_controller("memory", mounts, mine, tracking, tracking_base),
      find_controller("cpuset", mounts, mine, tracking, tracking_base)));
}

CgroupLimits::~CgroupLimits() {
  for (const Controller* c : {&memory_, &cpuset_})
    if (c->version == 1 && ::rmdir(c->base.c_str()) != 0 && errno != ENOENT)
      LAT_LOG(warn, "contain", "cannot remove ", c->base, ": ", why());
}

Result<AppliedLimits> CgroupLimits::apply(const std::string& dir, const std::string& name,
                                          const GroupLimits& limits,
                                          const std::vector<LimitCgroup>& within) {
  AppliedLimits out;
  std::vector<std::string> notes;
  if (limits.memory_bytes) {
    auto note = apply_memory(dir, name, limits.memory_bytes, within, out);
    if (!note) {
      discard(out.cgroups);
      return note.error();
    }
    notes.push_back(*note);
  }
  if (!limits.cpus.empty()) {
    auto note = apply_cpus(dir, name, limits.cpus, within, out);
    if (!note) {
      discard(out.cgroups);
      return note.error();
    }
    notes.push_back(*note);
  }
  out.note = notes.empty() ? "no limits asked for" : join(notes, "; ");
  return out;
}

Status CgroupLimits::enable_down_to(const std::string& dir, const std::string& controller) {
  std::string parent = dir.substr(0, dir.rfind('/'));
  if (parent != tracking_base_ && !starts_with(parent, tracking_base_ + "/"))
    return make_error(cat(dir, " is not below ", tracking_base_));
  std::vector<std::string> chain = {parent};
  while (chain.back() != tracking_base_)
    chain.push_back(chain.back().substr(0, chain.back().rfind('/')));
  // From the agent's subtree down: a cgroup offers its children only what its parent passed it.
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    if (auto on = enable(*it, controller); !on) return on;
  return {};
}

Result<std::string> CgroupLimits::apply_memory(const std::string& dir, const std::string& name,
                                               uint64_t bytes,
                                               const std::vector<LimitCgroup>& within,
                                               AppliedLimits& made) {
  std::string what = cat("memory ", size_text(bytes));
  auto failed = [&](const Error& e) {
    return make_error(cat("cannot limit the memory to ", size_text(bytes), ": ", e.message));
  };
  // No swap either, where the kernel counts it: the limit is what the group may hold, as on
  // nodes without swap.
  if (memory_.version == 2) {
    if (auto on = enable_down_to(dir, "memory"); !on) return failed(on.error());
    bool swap = exists(dir + "/memory.swap.max");
    Settings settings = {{"memory.max", std::to_string(bytes)}};
    if (swap) settings.emplace_back("memory.swap.max", "0");
    if (auto wrote = write_all(dir, settings); !wrote) return failed(wrote.error());
    return cat(what, ": cgroup v2 memory controller (memory.max", swap ? ", memory.swap.max 0" : "",
               ")");
  }
  if (memory_.version == 1) {
    std::string parent = v1_parent(memory_, within);
    // (memsw, memory and swap together, may not be set below the memory limit: it comes after.)
    bool swap = exists(parent + "/memory.memsw.limit_in_bytes");
    Settings settings = {{"memory.limit_in_bytes", std::to_string(bytes)}};
    if (swap) settings.emplace_back("memory.memsw.limit_in_bytes", std::to_string(bytes));
    auto cgroup = make_limit_cgroup(parent, name, settings);
    if (!cgroup) return failed(cgroup.error());
    made.cgroups.push_back(*cgroup);
    made.oom_file = cgroup->dir + "/memory.oom_control";
    return cat(what, ": cgroup v1 memory controller (memory.limit_in_bytes",
               swap ? ", memory.memsw.limit_in_bytes" : "", ")");
  }
  made.unenforced = true;
  return cat(what, ": not enforced: ", memory_.why_not);
}

Result<std::string> CgroupLimits::apply_cpus(const std::string& dir, const std::string& name,
                                             const std::vector<int>& cpus,
                                             const std::vector<LimitCgroup>& within,
                                             AppliedLimits& made) {
  std::string list = compress_ranges(cpus);
  std::string what = cat("cpus ", list);
  // Whose CPUs the group's must be among, for the message when they are not.
  auto failed = [&](const Error& e, const std::string& parent_cpus) {
    auto held = read_file(parent_cpus);
    return make_error(cat("cannot limit the allocation to cpus ", list, ": ", e.message,
                          held ? cat(" (the agent's cpuset holds ", trimmed(*held), ")") : ""));
  };
  if (cpuset_.version == 2) {
    std::string parent = tracking_base_ + "/cpuset.cpus.effective";
    if (auto on = enable_down_to(dir, "cpuset"); !on) return failed(on.error(), parent);
    if (auto wrote = write_file(dir + "/cpuset.cpus", list); !wrote)
      return failed(wrote.error(), parent);
    // v2 takes CPUs the parent lacks, and runs the cgroup on the parent's instead.
    auto effective = read_file(dir + "/cpuset.cpus.effective");
    if (!effective || trimmed(*effective) != list)
      return failed(make_error(cat("the cgroup would run on ",
                                   effective ? trimmed(*effective) : "other CPUs")),
                    parent);
    return cat(what, ": cgroup v2 cpuset (cpuset.cpus)");
  }
  if (cpuset_.version == 1) {
    std::string within_dir = v1_parent(cpuset_, within);
    std::string parent = within_dir + "/cpuset.cpus";
    auto mems = read_file(within_dir + "/cpuset.mems");
    if (!mems) return failed(mems.error(), parent);
    Settings settings = {{"cpuset.mems", trimmed(*mems)}, {"cpuset.cpus", list}};
    std::string own = cat(within_dir, '/', name);
    if (!made.cgroups.empty() && made.cgroups.back().dir == own) {  // cpuset with memory: one
      if (auto wrote = write_all(own, settings); !wrote) return failed(wrote.error(), parent);
      return cat(what, ": cgroup v1 cpuset");
    }
    auto cgroup = make_limit_cgroup(within_dir, name, settings);
    if (!cgroup) return failed(cgroup.error(), parent);
    made.cgroups.push_back(*cgroup);
    return cat(what, ": cgroup v1 cpuset");
  }
  made.unenforced = true;
  return cat(what, ": not enforced: ", cpuset_.why_not);
}

int CgroupLimits::remove_leftovers() {
  int killed = 0;
  for (const Controller* c : {&memory_, &cpuset_})
    if (c->version == 1) killed += remove_dead_agents(c->parent);
  return killed;
}

std::string CgroupLimits::describe() const {
  return cat("; allocation limits: ", how(memory_), ", ", how(cpuset_));
}

}  // namespace lattice::proc
