#include "proc/cgroup_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::proc {
namespace {

// cgroup.procs of a launch, /proc/PID/environ: far beyond any real one.
constexpr size_t kMaxFileBytes = size_t{16} << 20;
// A dead agent's processes get this long to die before their groups are given up on.
constexpr int kLeftoverWaitMs = 2000;

std::string why() { return std::strerror(errno); }

// An agent with this pid is running (a reused pid that is not an agent does not count).
bool agent_alive(int pid) {
  auto comm = read_file(cat("/proc/", pid, "/comm"));
  return comm && starts_with(*comm, "lattice-agentd");
}

std::vector<int> own_pids(const std::string& dir) {
  auto text = read_file(dir + "/cgroup.procs");
  return text ? parse_pids(*text) : std::vector<int>{};
}

// Kills what is in `dir` and below and removes them, children first. Returns the number killed.
int clear_tree(const std::string& dir) {
  int killed = 0;
  for (const auto& sub : subdirectories(dir, "")) killed += clear_tree(cat(dir, '/', sub));
  auto pids = own_pids(dir);
  killed += static_cast<int>(pids.size());
  if (!pids.empty())
    LAT_LOG(warn, "contain", "killing ", pids.size(), " processes left in ", dir,
            " by an agent that did not end cleanly");
  for (int waited = 0; waited < kLeftoverWaitMs; waited += 20) {
    for (int p : pids) ::kill(p, SIGKILL);
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return killed;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pids = own_pids(dir);
  }
  LAT_LOG(warn, "contain", "cannot remove ", dir, ": ", why());
  return killed;
}

}  // namespace

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

std::vector<int> tree_pids(const std::string& dir) {
  std::vector<int> out = own_pids(dir);
  for (const auto& sub : subdirectories(dir, "")) {
    auto below = tree_pids(cat(dir, '/', sub));
    out.insert(out.end(), below.begin(), below.end());
  }
  return out;
}

Result<AgentSubtree> make_subtree(const CgroupMount& mount,
                                  const std::vector<CgroupMembership>& mine) {
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
  return AgentSubtree{root, base};
}

int remove_dead_agents(const std::string& root) {
  int killed = 0;
  for (const auto& name : subdirectories(root, kAgentPrefix)) {
    auto pid = parse_int(std::string_view(name).substr(std::strlen(kAgentPrefix)));
    if (!pid || *pid == ::getpid() || agent_alive(static_cast<int>(*pid))) continue;
    killed += clear_tree(cat(root, '/', name));
  }
  return killed;
}

}  // namespace lattice::proc
