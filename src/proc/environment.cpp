// rank_environment: one sorted map, filled in precedence order (PATH default, the request's
// variables, the launch's own), so later keys win and none is duplicated. check_request_env
// holds the rules for what a request may set.
#include "proc/environment.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <map>

#include "base/hostlist.hpp"
#include "base/strings.hpp"

namespace lattice::proc {
namespace {

// The hooks a root job is not given unless the operator allows them, by who reads them. What
// each does is in docs/security.md; patterns cover a family's future members too.
struct Hook {
  const char* pattern;  // fnmatch(3)
  std::string_view of;  // whose hook it is
};
constexpr Hook kHooks[] = {
    // Every dynamically linked program: the loader, and those of glibc's unsecvars.h that load
    // code or data (gconv modules, locales, catalogs, resolver and zone files, tunables) or
    // name a file it writes (MALLOC_TRACE). Resolver options and TMPDIR do neither.
    {"LD_*", "the dynamic loader"},
    {"GCONV_PATH", "glibc"},
    {"GETCONF_DIR", "glibc"},
    {"GLIBC_TUNABLES", "glibc"},
    {"HOSTALIASES", "glibc"},
    {"LOCPATH", "glibc"},
    {"MALLOC_TRACE", "glibc"},
    {"NIS_PATH", "glibc"},
    {"NLSPATH", "glibc"},
    {"RESOLV_HOST_CONF", "glibc"},
    {"TZDIR", "glibc"},
    // Shells: files they source, options and traces that run code, where they look for
    // functions and directories, how they split words, commands they run on their own.
    {"BASH_*", "bash"},
    {"BASHOPTS", "bash"},
    {"SHELLOPTS", "bash"},
    {"PROMPT_COMMAND", "bash"},
    {"GLOBIGNORE", "bash"},
    {"ENV", "shells"},
    {"PS4", "shells"},
    {"CDPATH", "shells"},
    {"IFS", "shells"},
    {"FPATH", "ksh and zsh"},
    {"ZDOTDIR", "zsh"},
    {"NULLCMD", "zsh"},
    {"READNULLCMD", "zsh"},
    // Interpreters: startup files, module paths and extra options of every script they run.
    {"PYTHON*", "Python"},
    {"PERL5*", "Perl"},
    {"PERLLIB", "Perl"},
    {"PERLIO_DEBUG", "Perl"},
    {"RUBYOPT", "Ruby"},
    {"RUBYLIB", "Ruby"},
    {"GEM_HOME", "Ruby"},
    {"GEM_PATH", "Ruby"},
    {"NODE_OPTIONS", "Node.js"},
    {"NODE_PATH", "Node.js"},
    {"NODE_REPL_EXTERNAL_MODULE", "Node.js"},
    {"JAVA_TOOL_OPTIONS", "Java"},
    {"_JAVA_OPTIONS", "Java"},
    {"JDK_JAVA_OPTIONS", "Java"},
    {"CLASSPATH", "Java"},
    {"LUA_INIT*", "Lua"},
    {"LUA_PATH*", "Lua"},
    {"LUA_CPATH*", "Lua"},
    {"TCLLIBPATH", "Tcl"},
    {"TCL_LIBRARY", "Tcl"},
    {"TK_LIBRARY", "Tk"},
    {"PHPRC", "PHP"},
    {"PHP_INI_SCAN_DIR", "PHP"},
    {"R_PROFILE*", "R"},
    {"R_ENVIRON*", "R"},
    {"R_LIBS*", "R"},
    {"JULIA_DEPOT_PATH", "Julia"},
    {"JULIA_LOAD_PATH", "Julia"},
    {"JULIA_PROJECT", "Julia"},
    {"GUILE_LOAD*", "Guile"},
    // Libraries that load plugins, or configuration naming code, for any program linked to
    // them (MPI programs above all), and terminal descriptions.
    {"OPENSSL_CONF", "OpenSSL"},
    {"OPENSSL_ENGINES", "OpenSSL"},
    {"OPENSSL_MODULES", "OpenSSL"},
    {"KRB5_CONFIG", "Kerberos"},
    {"FI_PROVIDER_PATH", "libfabric"},
    {"OMPI_MCA_mca_*", "Open MPI"},
    {"PMIX_MCA_mca_*", "OpenPMIx"},  // only PMIx setup data sets PMIX_* (agent/launch_spec.cpp)
    {"OPAL_*", "Open MPI"},
    {"HWLOC_PLUGINS_PATH", "hwloc"},
    {"OMP_TOOL_LIBRARIES", "OpenMP"},
    {"TERMINFO*", "ncurses"},
    {"TERMCAP", "ncurses"},
    {"TERMPATH", "ncurses"},
    // Tools scripts run: git's variables name repositories (whose hooks run), configuration
    // and commands; XDG configuration directories hold files that name commands.
    {"GIT_*", "git"},
    {"XDG_CONFIG_*", "programs' configuration"},
};

// Members of a hook family known to be inert (a switch or a number, never code or a file),
// common enough in users' environments that leaving them out would only be noise.
constexpr std::string_view kInertInFamilies[] = {"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE",
                                                 "PYTHONHASHSEED", "PYTHONNOUSERSITE",
                                                 "PYTHONUTF8"};

bool matches(const char* pattern, const std::string& name) {
  return ::fnmatch(pattern, name.c_str(), 0) == 0;
}

// glibc loads locale data from a locale name that is an absolute path, and a zone file from
// TZ's path (tzcode's leading ':' aside): a value naming a file outside the zone directory and
// /etc/localtime, or climbing out of them, is a hook; plain names are not.
bool names_a_file(std::string_view name, std::string_view value) {
  if (name == "LANG" || name == "LANGUAGE" || starts_with(name, "LC_"))
    return value.find('/') != std::string_view::npos;
  if (name != "TZ") return false;
  if (starts_with(value, ":")) value.remove_prefix(1);
  if (starts_with(value, "/") && !starts_with(value, "/usr/share/zoneinfo/") &&
      value != "/etc/localtime")
    return true;
  for (const auto& element : split(value, '/'))
    if (element == "..") return true;
  return false;
}

bool valid_env_name(std::string_view name) {
  auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (name.empty() || !letter(name[0])) return false;
  for (char c : name)
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

// What Open MPI 4.1 ranks find under its own mpirun besides libpmix's variables: without
// schizo=^orte they would look for an orted; the session and shared-memory files go to the
// launch's private directory, so two nodes simulated on one host never share them. Beside PMI
// (`both`) only libpmix's and schizo: a script given both may run mpirun, which takes
// OMPI_COMM_WORLD_* for its own job's ("does not support recursive calls") and hands its
// OMPI_MCA_* to the ranks it starts on every node (this node's directories, which there are
// another node's or none). Open MPI's ranks learn their place from libpmix; their session and
// shared-memory files go where Open MPI puts them by default (per host).
void add_open_mpi(const RankEnvInput& in, std::map<std::string, std::string>& env) {
  for (const auto& entry : in.pmix_env) {
    auto eq = entry.find('=');
    if (eq != std::string::npos && eq > 0) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  env["OMPI_MCA_schizo"] = "^orte";
  if (in.wireup == RankEnvInput::Wireup::both) return;
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

std::string_view root_env_hook(std::string_view name, std::string_view value) {
  for (std::string_view inert : kInertInFamilies)
    if (name == inert) return "";
  std::string n(name);
  for (const Hook& hook : kHooks)
    if (matches(hook.pattern, n)) return hook.of;
  return names_a_file(name, value) ? "glibc" : "";
}

std::string EnvRules::hook_refusal(std::string_view name, std::string_view value) const {
  if (!root_job) return "";
  std::string_view of = root_env_hook(name, value);
  if (of.empty()) return "";
  std::string n(name);
  for (const auto& pattern : root_allowed)
    if (matches(pattern.c_str(), n)) return "";
  return cat("environment variable ", name, " may not be set for a job running as root: a hook of ",
             of, " (an agent's security.allow_root_job_env may allow it)");
}

namespace {

Status check_name(const std::string& name) {
  if (!valid_env_name(name))
    return make_error(cat("environment variable name '", name,
                          "' is not valid: letters, digits and _, not starting with a digit"));
  if (reserved_env_name(name))
    return make_error(cat("environment variable ", name, " is reserved for the launch"));
  return {};
}

}  // namespace

Status check_request_env(const EnvList& env, const EnvRules& rules) {
  for (const auto& [name, value] : env) {
    if (auto checked = check_name(name); !checked) return checked;
    if (std::string refusal = rules.hook_refusal(name, value); !refusal.empty())
      return make_error(std::move(refusal));
  }
  return {};
}

Result<std::vector<std::string>> leave_out_hooks(EnvList& env, const EnvRules& rules) {
  std::vector<std::string> left_out;
  EnvList kept;
  for (auto& [name, value] : env) {
    if (auto checked = check_name(name); !checked) return checked.error();
    if (rules.hook_refusal(name, value).empty())
      kept.emplace_back(std::move(name), std::move(value));
    else
      left_out.push_back(std::move(name));
  }
  env = std::move(kept);
  return left_out;
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

std::string slurm_tasks_per_node(const std::vector<int>& counts) {
  std::string out;
  for (size_t i = 0; i < counts.size();) {
    size_t run = 1;
    while (i + run < counts.size() && counts[i + run] == counts[i]) ++run;
    out += cat(out.empty() ? "" : ",", counts[i], run > 1 ? cat("(x", run, ")") : "");
    i += run;
  }
  return out;
}

std::vector<std::string> rank_environment(const RankEnvInput& in) {
  std::map<std::string, std::string> env;  // later writes win; sorted output is deterministic
  env["PATH"] = kDefaultPath;
  // OpenMP's threads fill a rank's CPUs, as under srun -c; a value the user gave wins.
  if (in.cpus_per_task > 0) env["OMP_NUM_THREADS"] = std::to_string(in.cpus_per_task);
  // The caller checked these; a name that slipped through must still not corrupt the block
  // or shadow the launch's own variables.
  for (const auto& [name, value] : in.user_env)
    if (valid_env_name(name) && !reserved_env_name(name)) env[name] = value;

  using Wireup = RankEnvInput::Wireup;
  if (in.wireup == Wireup::pmix || in.wireup == Wireup::both) add_open_mpi(in, env);
  if (in.wireup == Wireup::pmi || in.wireup == Wireup::both) {
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
  if (!in.allocation_id.empty()) env["LATTICE_ALLOC_ID"] = in.allocation_id;
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
    // The job is the allocation the launch runs in (or the launch itself); the launch is its
    // step 0, of one CPU a task unless -c says more.
    const std::string& job = in.allocation_id.empty() ? in.launch_id : in.allocation_id;
    for (const char* name : {"SLURM_JOB_ID", "SLURM_JOBID"}) env[name] = job;
    for (const char* name : {"SLURM_STEP_ID", "SLURM_STEPID"}) env[name] = "0";
    env["SLURM_STEP_NUM_NODES"] = std::to_string(in.nnodes);
    env["SLURM_STEP_NODELIST"] = in.slurm_nodelist;
    env["SLURM_CPUS_PER_TASK"] = std::to_string(std::max(in.cpus_per_task, 1));
    for (const char* name : {"SLURM_TASKS_PER_NODE", "SLURM_STEP_TASKS_PER_NODE"})
      env[name] = std::string(in.slurm_tasks_per_node);
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
