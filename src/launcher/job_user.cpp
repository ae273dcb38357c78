// Name service lookups (passwd, group) happen once, here, before the loop runs.
#include "launcher/job_user.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include "base/strings.hpp"

namespace lattice::launcher {
namespace {

// getgrouplist's answer can grow between two calls; a few retries settle it.
Result<std::vector<uint32_t>> groups_of(const passwd& pw) {
  int count = 32;
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::vector<gid_t> list(static_cast<size_t>(count));
    int n = count;
    if (::getgrouplist(pw.pw_name, pw.pw_gid, list.data(), &n) >= 0) {
      std::vector<uint32_t> out;
      for (int i = 0; i < n; ++i)
        if (list[static_cast<size_t>(i)] != pw.pw_gid) out.push_back(list[static_cast<size_t>(i)]);
      return out;
    }
    count = n > count ? n : count * 2;
  }
  return make_error(cat("cannot list the groups of user ", pw.pw_name));
}

}  // namespace

Result<JobUserInfo> resolve_job_user(const std::string& name_or_uid) {
  const passwd* pw = nullptr;
  if (name_or_uid.empty()) {
    pw = ::getpwuid(::getuid());
    if (!pw) return make_error(cat("the invoking uid ", ::getuid(), " has no passwd entry"));
  } else if (auto uid = parse_int(name_or_uid); uid && *uid >= 0) {
    pw = ::getpwuid(static_cast<uid_t>(*uid));
    if (!pw) return make_error(cat("--user: uid ", *uid, " has no passwd entry"));
  } else {
    pw = ::getpwnam(name_or_uid.c_str());
    if (!pw) return make_error(cat("--user: no user named '", name_or_uid, "'"));
  }
  JobUserInfo user;
  user.uid = pw->pw_uid;
  user.gid = pw->pw_gid;
  user.name = pw->pw_name;
  auto groups = groups_of(*pw);
  if (!groups) return groups.error();
  user.groups = std::move(groups.value());
  return user;
}

}  // namespace lattice::launcher
