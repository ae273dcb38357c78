#include "proc/own_user.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "base/strings.hpp"

namespace lattice::proc {
namespace {

std::vector<uint32_t> sorted(std::vector<uint32_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace

Result<ProcessUser> own_user() {
  ProcessUser self;
  self.uid = ::geteuid();
  self.gid = ::getegid();
  struct passwd entry, *pw = nullptr;
  std::vector<char> buf(16384);
  int rc = ::getpwuid_r(self.uid, &entry, buf.data(), buf.size(), &pw);
  if (rc != 0) return make_error(cat("cannot look up uid ", self.uid, ": ", std::strerror(rc)));
  if (!pw) return make_error(cat("uid ", self.uid, " is not in passwd"));
  self.name = pw->pw_name;
  self.home = pw->pw_dir;
  self.shell = pw->pw_shell;

  int n = ::getgroups(0, nullptr);
  if (n < 0) return make_error(cat("getgroups: ", std::strerror(errno)));
  std::vector<gid_t> list(static_cast<size_t>(n));
  n = ::getgroups(n, list.data());
  if (n < 0) return make_error(cat("getgroups: ", std::strerror(errno)));
  self.groups = sorted({list.begin(), list.begin() + n});
  auto login = login_groups(pw->pw_name, self.gid);
  if (!login) return login.error();
  self.login_groups = sorted(std::move(login.value()));
  return self;
}

Result<std::vector<uint32_t>> login_groups(const char* name, uint32_t gid) {
  // getgrouplist's answer can grow between two calls; a few tries settle it.
  int count = 32;
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::vector<gid_t> list(static_cast<size_t>(count));
    int n = count;
    if (::getgrouplist(name, gid, list.data(), &n) >= 0)
      return std::vector<uint32_t>(list.begin(), list.begin() + n);
    count = n > count ? n : count * 2;
  }
  return make_error(cat("cannot list the groups of user ", name));
}

bool runs_as(const ProcessUser& self, uint32_t uid, uint32_t gid, const std::string& name,
             const std::optional<std::vector<uint32_t>>& groups) {
  if (uid != self.uid || gid != self.gid || name != self.name) return false;
  if (self.uid != 0) return true;  // not root: the helper would not touch the groups either
  return sorted(groups ? *groups : self.login_groups) == self.groups;
}

void set_user_variables(std::vector<std::string>& env, const ProcessUser& self) {
  std::vector<std::pair<std::string_view, std::string>> vars = {
      {"HOME=", self.home}, {"USER=", self.name}, {"LOGNAME=", self.name}};
  if (!self.shell.empty()) vars.emplace_back("SHELL=", self.shell);
  env.erase(std::remove_if(env.begin(), env.end(),
                           [&](const std::string& entry) {
                             return std::any_of(vars.begin(), vars.end(), [&](const auto& var) {
                               return starts_with(entry, var.first);
                             });
                           }),
            env.end());
  for (const auto& [prefix, value] : vars) env.push_back(cat(prefix, value));
}

}  // namespace lattice::proc
