#include "proc/user_description.hpp"

#include <algorithm>

#include "base/strings.hpp"

namespace lattice::proc {
namespace {

// The value of the line "KEY=VALUE\n" at the front of `text`, which then moves past it.
Result<std::string_view> take_line(std::string_view& text, std::string_view key) {
  size_t end = text.find('\n');
  if (end == std::string_view::npos)
    return make_error(cat("the user's description ends before its ", key, " line"));
  std::string_view line = text.substr(0, end);
  text.remove_prefix(end + 1);
  if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != '=')
    return make_error(cat("the user's description has no ", key, " line where one belongs"));
  std::string_view value = line.substr(key.size() + 1);
  if (value.find('\0') != std::string_view::npos)
    return make_error(cat("the user's ", key, " holds a NUL byte"));
  return value;
}

// "G1,G2,...": decimal ids below 2^32 - 1 (set*id read that one as "unchanged"); "" is none.
Result<std::vector<uint32_t>> parse_groups(std::string_view list) {
  std::vector<uint32_t> groups;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view id = list.substr(0, comma);
    uint64_t value = 0;
    if (id.empty() || id.size() > 10)
      return make_error(cat("the user's groups hold '", id, "', not a group id"));
    for (char c : id) {
      if (c < '0' || c > '9')
        return make_error(cat("the user's groups hold '", id, "', not a group id"));
      value = value * 10 + static_cast<uint64_t>(c - '0');
    }
    if (value >= UINT32_MAX) return make_error(cat("the user's groups hold ", id));
    if (groups.size() == kMaxGroups)
      return make_error(cat("the user has more than ", kMaxGroups, " groups"));
    groups.push_back(static_cast<uint32_t>(value));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
    if (list.empty()) return make_error("the user's groups end with a comma");
  }
  return groups;
}

}  // namespace

Result<ProcessUser> parse_user_description(std::string_view text, uint32_t uid, uint32_t gid,
                                           std::string name) {
  if (text.size() > kMaxUserDescriptionBytes)
    return make_error(cat("the user's description is over ", kMaxUserDescriptionBytes, " bytes"));
  auto home = take_line(text, "home");
  if (!home) return home.error();
  auto shell = take_line(text, "shell");
  if (!shell) return shell.error();
  auto group_list = take_line(text, "groups");
  if (!group_list) return group_list.error();
  if (!text.empty()) return make_error("the user's description goes on after its groups");
  auto groups = parse_groups(*group_list);
  if (!groups) return groups.error();
  ProcessUser user;
  user.uid = uid;
  user.gid = gid;
  user.name = std::move(name);
  user.home = std::string(*home);
  user.shell = std::string(*shell);
  user.groups = std::move(groups.value());
  std::sort(user.groups.begin(), user.groups.end());  // as ProcessUser keeps them
  user.groups.erase(std::unique(user.groups.begin(), user.groups.end()), user.groups.end());
  return user;
}

}  // namespace lattice::proc
