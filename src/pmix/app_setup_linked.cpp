// RFC0029 inside lattice-pmix.so (app_setup.hpp): the launcher's side, PMIx_server_setup_
// application's answer taken apart, and the agents' side, what PMIx_server_setup_local_support
// gets, built by libpmix from the variables the agent checked (it never unpacks request bytes).
#include <pmix.h>
#include <pmix_server.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "base/strings.hpp"
#include "pmix/app_setup.hpp"
#include "pmix/app_setup_info.hpp"

namespace lattice::pmix {

namespace {

struct Answer {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  Result<AppSetupAnswer> result = make_error("no answer");
};

void setup_answered(pmix_status_t status, pmix_info_t info[], size_t ninfo, void* cbdata,
                    pmix_op_cbfunc_t release, void* release_data) {
  auto* answer = static_cast<Answer*>(cbdata);
  AppSetupAnswer out;
  for (size_t i = 0; status == PMIX_SUCCESS && i < ninfo; ++i) {
    std::string key(info[i].key, strnlen(info[i].key, PMIX_MAX_KEYLEN));
    const pmix_value_t& v = info[i].value;
    if (key != kSetEnvarKey || v.type != PMIX_ENVAR || !v.data.envar.envar) {
      out.left_out.push_back(std::move(key));
      continue;
    }
    const pmix_envar_t& e = v.data.envar;
    out.entries.push_back({key, {{e.envar, e.value ? e.value : "", e.separator}}});
  }
  if (release) release(PMIX_SUCCESS, release_data);
  std::lock_guard<std::mutex> lock(answer->mutex);
  if (status != PMIX_SUCCESS)
    answer->result = make_error(cat("PMIx_server_setup_application: ", PMIx_Error_string(status)));
  else
    answer->result = std::move(out);
  answer->done = true;
  answer->cv.notify_all();
}

}  // namespace

Result<AppSetupAnswer> setup_application_linked(const AppSetupAsk& ask) {
  static pmix_server_module_t module{};  // this server serves no client
  pmix_info_t init[2];
  PMIX_INFO_LOAD(&init[0], PMIX_SERVER_TMPDIR, ask.tmpdir.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&init[1], PMIX_SYSTEM_TMPDIR, ask.tmpdir.c_str(), PMIX_STRING);
  // libpmix loads this machine's topology at init (half its cost here), which a server that
  // serves no client does not need: hwloc makes a one-core one instead, for the init only.
  const bool topology_given = std::getenv("HWLOC_SYNTHETIC") || std::getenv("HWLOC_XMLFILE");
  if (!topology_given) ::setenv("HWLOC_SYNTHETIC", "pack:1 core:1 pu:1", 1);
  pmix_status_t rc = PMIx_server_init(&module, init, 2);
  if (!topology_given) ::unsetenv("HWLOC_SYNTHETIC");
  for (auto& i : init) PMIX_INFO_DESTRUCT(&i);
  if (rc != PMIX_SUCCESS) return make_error(cat("PMIx_server_init: ", PMIx_Error_string(rc)));

  // Every variable its plugins harvest, and the fabric's keys (PMIX_SETUP_APP_ALL).
  pmix_info_t info[2];
  bool all = true;
  PMIX_INFO_LOAD(&info[0], PMIX_SETUP_APP_ALL, &all, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[1], PMIX_USERID, &ask.uid, PMIX_UINT32);
  Answer answer;
  rc = PMIx_server_setup_application(ask.nspace.c_str(), info, 2, setup_answered, &answer);
  if (rc == PMIX_SUCCESS) {
    std::unique_lock<std::mutex> lock(answer.mutex);
    answer.cv.wait(lock, [&] { return answer.done; });
  } else {
    answer.result = make_error(cat("PMIx_server_setup_application: ", PMIx_Error_string(rc)));
  }
  for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
  PMIx_server_finalize();
  return std::move(answer.result);
}

Result<std::shared_ptr<SetupInfo>> local_support_info(const std::vector<SetupEntry>& entries) {
  auto out = std::make_shared<SetupInfo>(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& entry = entries[i];
    if (entry.key != kSetEnvarKey || entry.envars.size() != 1)
      return make_error(
          cat("PMIx setup data under '", entry.key, "', which Lattice does not carry"));
    const auto& e = entry.envars.front();
    pmix_envar_t envar;
    PMIX_ENVAR_CONSTRUCT(&envar);
    PMIX_ENVAR_LOAD(&envar, const_cast<char*>(e.name.c_str()), const_cast<char*>(e.value.c_str()),
                    e.separator);
    PMIX_INFO_LOAD(&out->info()[i], kSetEnvarKey, &envar, PMIX_ENVAR);
    PMIX_ENVAR_DESTRUCT(&envar);
  }
  return out;
}

}  // namespace lattice::pmix
