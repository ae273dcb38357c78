#include "pmix/spawn_apps.hpp"

#include <cstring>

#include "base/strings.hpp"

namespace lattice::pmix {
namespace {

constexpr size_t kMaxApps = 64;
constexpr size_t kMaxList = 4096;  // argv, env and info entries of one app

// A NULL-terminated array of strings, or an error beyond kMaxList entries.
Result<std::vector<std::string>> strings_of(char** list) {
  std::vector<std::string> out;
  for (size_t i = 0; list && list[i]; ++i) {
    if (i == kMaxList) return make_error("too many entries");
    out.emplace_back(list[i]);
  }
  return out;
}

const char* string_info(const pmix_info_t& info, const char* key) {
  if (!PMIX_CHECK_KEY(&info, key) || info.value.type != PMIX_STRING) return nullptr;
  return info.value.data.string;
}

}  // namespace

Result<SpawnCall> spawn_call(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                             size_t napps) {
  if (napps == 0 || napps > kMaxApps || ninfo > kMaxList) return make_error("too many apps");
  SpawnCall call;
  for (size_t i = 0; i < ninfo; ++i)
    if (const char* wdir = string_info(job_info[i], PMIX_WDIR)) call.workdir = wdir;
  for (size_t a = 0; a < napps; ++a) {
    const pmix_app_t& in = apps[a];
    SpawnApp app;
    app.cmd = in.cmd ? in.cmd : "";
    auto argv = strings_of(in.argv);
    auto env = strings_of(in.env);
    if (!argv || !env || in.ninfo > kMaxList) return make_error("an app too large");
    app.argv = std::move(argv.value());
    app.env = std::move(env.value());
    app.cwd = in.cwd ? in.cwd : "";
    app.maxprocs = in.maxprocs;
    for (size_t i = 0; i < in.ninfo; ++i) {
      if (const char* hosts = string_info(in.info[i], PMIX_HOST))
        for (auto& h : split(hosts, ','))
          if (!h.empty()) app.hosts.push_back(h);
      if (const char* wdir = string_info(in.info[i], PMIX_WDIR)) app.cwd = wdir;
      if (const char* file = string_info(in.info[i], PMIX_HOSTFILE)) app.hostfile = file;
      // Children run on the launch's own nodes: there is no node to add.
      if (PMIX_CHECK_KEY(&in.info[i], PMIX_ADD_HOST) ||
          PMIX_CHECK_KEY(&in.info[i], PMIX_ADD_HOSTFILE))
        call.refused = cat(in.info[i].key,
                           " (MPI_Info \"add-host\", \"add-hostfile\"): children run on the "
                           "launch's own nodes; name them with \"host\" or \"hostfile\"");
    }
    call.apps.push_back(std::move(app));
  }
  return call;
}

}  // namespace lattice::pmix
