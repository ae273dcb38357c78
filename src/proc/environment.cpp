// rank_environment: one sorted map, filled in precedence order (PATH default, the request's
// variables, the launch's own), so later keys win and none is duplicated. check_request_env
// holds the rules for what a request may set.
#include "proc/environment.hpp"

#include <algorithm>
#include <map>

#include "base/hostlist.hpp"
#include "base/strings.hpp"

namespace lattice::proc {
namespace {

// From glibc's unsecvars.h, those that load code or data (modules, locales, catalogs, resolver
// and zone files) or steer the loader; MALLOC_TRACE, TMPDIR and resolver options do neither.
constexpr std::string_view kLoaderNames[] = {"GCONV_PATH",       "GETCONF_DIR", "GLIBC_TUNABLES",
                                             "HOSTALIASES",      "LOCPATH",     "NLSPATH",
                                             "RESOLV_HOST_CONF", "TZDIR"};

bool valid_env_name(std::string_view name) {
  auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (name.empty() || !letter(name[0])) return false;
  for (char c : name)
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

// What Open MPI 4.1 ranks find under its own mpirun besides libpmix's variables: without
// schizo=^orte they would look for an orted; the session and shared-memory files go to the
// launch's private directory, so two nodes simulated on one host never share them.
void add_open_mpi(const RankEnvInput& in, std::map<std::string, std::string>& env) {
  for (const auto& entry : in.pmix_env) {
    auto eq = entry.find('=');
    if (eq != std::string::npos && eq > 0) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  env["OMPI_MCA_schizo"] = "^orte";
  env["OMPI_MCA_orte_tmpdir_base"] = in.session_dir;
  env["OMPI_MCA_btl_vader_backing_directory"] = in.session_dir;
  env["OMPI_COMM_WORLD_RANK"] = std::to_string(in.rank);
  env["OMPI_COMM_WORLD_SIZE"] = std::to_string(in.world_size);
  env["OMPI_COMM_WORLD_LOCAL_RANK"] = std::to_string(in.local_rank);
  env["OMPI_COMM_WORLD_LOCAL_SIZE"] = std::to_string(in.local_size);
  env["OMPI_COMM_WORLD_NODE_RANK"] = std::to_string(in.local_rank);
  env["OMPI_UNIVERSE_SIZE"] = std::to_string(in.world_size);
}

}  // namespace

// PMI_*/PMIX_* would confuse the rank's PMI client (docs/pmi-wire.md T4: PMIX_* beside PMI_SIZE
// makes MPICH abort); LATTICE_* and FI_CXI_* describe the launch itself.
bool reserved_env_name(std::string_view name) {
  return starts_with(name, "PMI_") || starts_with(name, "PMIX_") || starts_with(name, "LATTICE_") ||
         starts_with(name, "FI_CXI_");
}

bool loader_env_name(std::string_view name) {
  if (starts_with(name, "LD_")) return true;
  for (std::string_view loader : kLoaderNames)
    if (name == loader) return true;
  return false;
}

Status check_request_env(const std::vector<std::pair<std::string, std::string>>& env,
                         bool root_job) {
  for (const auto& [name, value] : env) {
    if (!valid_env_name(name))
      return make_error(cat("environment variable name '", name,
                            "' is not valid: letters, digits and _, not starting with a digit"));
    if (reserved_env_name(name))
      return make_error(cat("environment variable ", name, " is reserved for the launch"));
    if (root_job && loader_env_name(name))
      return make_error(
          cat("environment variable ", name, " may not be set for a job running as root"));
  }
  return {};
}

std::vector<std::pair<std::string, std::string>> merge_env(
    const std::vector<std::pair<std::string, std::string>>& base,
    const std::vector<std::pair<std::string, std::string>>& over) {
  std::map<std::string, std::string> merged(base.begin(), base.end());
  for (const auto& [name, value] : over) merged[name] = value;
  return {merged.begin(), merged.end()};
}

std::string slurm_nodelist(std::string_view nodelist) {
  return compress_hostlist(split(nodelist, ',')).value_or(std::string(nodelist));
}

std::vector<std::string> rank_environment(const RankEnvInput& in) {
  std::map<std::string, std::string> env;  // later writes win; sorted output is deterministic
  env["PATH"] = kDefaultPath;
  // The caller checked these; a name that slipped through must still not corrupt the block
  // or shadow the launch's own variables.
  for (const auto& [name, value] : in.user_env)
    if (valid_env_name(name) && !reserved_env_name(name)) env[name] = value;

  if (in.wireup == RankEnvInput::Wireup::pmix) {
    add_open_mpi(in, env);
  } else if (in.wireup == RankEnvInput::Wireup::pmi) {
    if (in.pmi_fd >= 0) {
      env["PMI_FD"] = std::to_string(in.pmi_fd);
    } else {
      env["PMI_PORT"] = in.pmi_port;
      env["PMI_ID"] = in.pmi_id;
    }
    env["PMI_RANK"] = std::to_string(in.rank);
    env["PMI_SIZE"] = std::to_string(in.world_size);
    env["PMI_SPAWNED"] = "0";
    env["PMI_JOBID"] = in.jobid;
  }
  env["LATTICE_LAUNCH_ID"] = in.launch_id;
  env["LATTICE_ALLOC_ID"] = in.allocation_id;
  env["LATTICE_NODELIST"] = std::string(in.nodelist);
  env["LATTICE_NNODES"] = std::to_string(in.nnodes);
  env["LATTICE_NPROCS"] = std::to_string(in.world_size);
  if (in.wireup != RankEnvInput::Wireup::none) {
    env["LATTICE_LOCAL_RANK"] = std::to_string(in.local_rank);
    env["LATTICE_LOCAL_SIZE"] = std::to_string(in.local_size);
  }
  for (const auto& [name, value] : in.launch_env) env[name] = value;
  if (in.slurm_compat && in.wireup != RankEnvInput::Wireup::none) {
    env["SLURM_PROCID"] = std::to_string(in.rank);
    env["SLURM_NPROCS"] = std::to_string(in.world_size);
    env["SLURM_NTASKS"] = std::to_string(in.world_size);
    env["SLURM_LOCALID"] = std::to_string(in.local_rank);
    env["SLURM_NODEID"] = std::to_string(in.node_index);
    env["SLURM_NNODES"] = std::to_string(in.nnodes);
    env["SLURM_NODELIST"] = in.slurm_nodelist;
    env["SLURM_STEP_NUM_TASKS"] = std::to_string(in.world_size);
  }

  if (in.cxi) {
    env["FI_PROVIDER"] = "cxi";
    env["FI_CXI_DEFAULT_VNI"] = std::to_string(in.cxi->vni);
    env["SLINGSHOT_VNIS"] = std::to_string(in.cxi->vni);
    env["SLINGSHOT_SVC_IDS"] = std::to_string(in.cxi->svc_id);
  }

  std::vector<std::string> out;
  out.reserve(env.size() + 1);
  for (const auto& [name, value] : env) out.push_back(cat(name, '=', value));
  if (in.cxi) {
    // Built in place, in one allocation, so no reallocation leaves a copy of the key behind.
    constexpr std::string_view kName = "FI_CXI_AUTH_KEY=";
    std::string key;
    key.reserve(kName.size() + in.cxi->auth_key_hex.size());
    key.append(kName).append(in.cxi->auth_key_hex);
    auto at = std::lower_bound(out.begin(), out.end(), std::string_view("FI_CXI_AUTH_KEY"),
                               [](const std::string& entry, std::string_view name) {
                                 return std::string_view(entry).substr(0, entry.find('=')) < name;
                               });
    out.insert(at, std::move(key));  // moves strings around, never their characters
  }
  return out;
}

}  // namespace lattice::proc
