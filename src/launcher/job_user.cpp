// Name service lookups (passwd, group) happen once, here, before the loop runs.
#include "launcher/job_user.hpp"

#include <pwd.h>
#include <unistd.h>

#include "base/strings.hpp"
#include "proc/own_user.hpp"

namespace lattice::launcher {

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
  auto groups = proc::login_groups(pw->pw_name, pw->pw_gid);
  if (!groups) return groups.error();
  // The primary gid travels on its own.
  for (uint32_t g : groups.value())
    if (g != pw->pw_gid) user.groups.push_back(g);
  return user;
}

}  // namespace lattice::launcher
