#include "proc/kernel_files.hpp"

#include <algorithm>

#include "base/strings.hpp"

namespace lattice::proc {
namespace {

std::vector<std::string_view> fields(std::string_view line, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t end = line.find(sep, start);
    out.push_back(line.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(std::string_view s) {
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && octal(s[i + 1]) && octal(s[i + 2]) && octal(s[i + 3])) {
      out +=
          static_cast<char>(((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) | (s[i + 3] - '0'));
      i += 3;
      continue;
    }
    out += s[i];
  }
  return out;
}

// Options of a v1 mount that are not controllers.
bool is_controller(std::string_view option) {
  static constexpr std::string_view kNot[] = {"rw",
                                              "ro",
                                              "nosuid",
                                              "nodev",
                                              "noexec",
                                              "relatime",
                                              "noatime",
                                              "clone_children",
                                              "xattr",
                                              "nsdelegate",
                                              "memory_recursiveprot",
                                              "favordynmods"};
  for (auto n : kNot)
    if (option == n) return false;
  return !option.empty() && option.find("release_agent=") != 0 && option.find("cpuset_v2") != 0;
}

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  for (auto f : fields(s, ',')) out.emplace_back(f);
  return out;
}

}  // namespace

std::vector<CgroupMount> cgroup_mounts(std::string_view mountinfo) {
  std::vector<CgroupMount> out;
  for (auto line : fields(mountinfo, '\n')) {
    // ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
    auto f = fields(line, ' ');
    size_t dash = 0;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (dash < 6 || dash + 3 >= f.size()) continue;
    std::string_view fstype = f[dash + 1];
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    if (f[3] != "/") continue;
    CgroupMount m;
    m.device = std::string(f[2]);
    m.path = unescape(f[4]);
    m.version = fstype == "cgroup2" ? 2 : 1;
    if (m.version == 1)
      for (auto option : fields(f[dash + 3], ','))
        if (is_controller(option)) m.controllers.emplace_back(option);
    if (m.path.empty() || m.path[0] != '/') continue;
    auto same_path = std::find_if(out.begin(), out.end(),
                                  [&](const CgroupMount& o) { return o.path == m.path; });
    if (same_path != out.end())
      *same_path = std::move(m);
    else if (std::none_of(out.begin(), out.end(),
                          [&](const CgroupMount& o) { return o.device == m.device; }))
      out.push_back(std::move(m));
  }
  return out;
}

std::vector<CgroupMembership> cgroup_memberships(std::string_view proc_cgroup) {
  std::vector<CgroupMembership> out;
  for (auto line : fields(proc_cgroup, '\n')) {
    size_t a = line.find(':');
    if (a == std::string_view::npos) continue;
    size_t b = line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    auto id = parse_int(line.substr(0, a));
    std::string_view path = line.substr(b + 1);
    if (!id || *id < 0 || *id > 0x3fffffff || path.empty() || path[0] != '/') continue;
    CgroupMembership m;
    m.hierarchy = static_cast<int>(*id);
    m.controllers = split_list(line.substr(a + 1, b - a - 1));
    m.path = std::string(path);
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<int> parse_pids(std::string_view text) {
  std::vector<int> out;
  for (auto line : fields(text, '\n'))
    for (auto word : fields(line, ' ')) {
      auto pid = parse_int(word);
      if (pid && *pid > 0 && *pid <= 0x3fffffff) out.push_back(static_cast<int>(*pid));
    }
  return out;
}

int parse_stat_ppid(std::string_view stat) {
  size_t close = stat.rfind(')');
  if (close == std::string_view::npos || close + 2 > stat.size()) return -1;
  auto f = fields(stat.substr(close + 2), ' ');  // STATE PPID ...
  if (f.size() < 2) return -1;
  auto ppid = parse_int(f[1]);
  return ppid && *ppid >= 0 && *ppid <= 0x3fffffff ? static_cast<int>(*ppid) : -1;
}

bool environ_has(std::string_view environ, std::string_view entry) {
  for (auto e : fields(environ, '\0'))
    if (e == entry) return true;
  return false;
}

std::optional<uint64_t> parse_oom_kills(std::string_view text) {
  for (auto line : fields(text, '\n')) {
    auto f = fields(line, ' ');
    if (f.size() != 2 || f[0] != "oom_kill") continue;
    auto n = parse_int(f[1]);
    if (n && *n >= 0) return static_cast<uint64_t>(*n);
  }
  return std::nullopt;
}

}  // namespace lattice::proc
