// A rank's environment, built from nothing: never the agent's own (it would leak the agent's
// secrets and HOME into every rank). A PATH default, then the request's variables (checked by
// check_request_env), then the launch's own PMI_*, LATTICE_* and (slurm_compat) SLURM_*, which
// win. HOME, USER, LOGNAME and SHELL come from passwd in lattice-rank-exec, not from here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.hpp"

namespace lattice::proc {

// The PATH ranks get when the request sets none (without one a rank cannot run `sh -c` or a bare
// program name); the agent looks programs up on the same.
inline constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

// Names a launch request may not set: PMI_*, PMIX_*, LATTICE_*, FI_CXI_* (the launch's own).
bool reserved_env_name(std::string_view name);

using EnvList = std::vector<std::pair<std::string, std::string>>;

// A job running as root gets every variable but the hooks (docs/security.md, "A root job's
// environment"): those that make a layer any program may run through without naming it (the
// dynamic loader and glibc, shells, interpreters, libraries that load plugins or
// configuration) run code, or read or write files, chosen by whoever set them. Hooks are known
// by name or by family (LD_*, PYTHON*, ...), LANG, LC_* and TZ also by a value naming a file.
// Whose hook `name=value` is ("shells", "Python", ...), or "" when it is none.
std::string_view root_env_hook(std::string_view name, std::string_view value);

// What a request's variables are judged by.
struct EnvRules {
  bool root_job = false;
  // Hooks a root job may still be given: names and fnmatch(3) patterns (the agent's
  // security.allow_root_job_env).
  std::vector<std::string> root_allowed;
  // Why `name=value` may not reach this job as a hook, or "".
  std::string hook_refusal(std::string_view name, std::string_view value) const;
};

// Variables given explicitly (--env, --export NAME=VALUE): each a valid name
// ([A-Za-z_][A-Za-z0-9_]*), not reserved, and no hook a root job may not have. The error names
// the first bad variable and why.
Status check_request_env(const EnvList& env, const EnvRules& rules);

// Variables --export took from the launcher's environment: checked as check_request_env does,
// except that hooks are taken out of `env` rather than refused. Their names, in order.
Result<std::vector<std::string>> leave_out_hooks(EnvList& env, const EnvRules& rules);

struct RankEnvInput {
  int rank = 0, world_size = 0, local_rank = 0, local_size = 0, node_index = 0, nnodes = 0;
  // How the process wires up: PMI-1/2 (PMI_*); PMIx, with no PMI_* at all (PMI_SIZE beside
  // PMIX_NAMESPACE misleads clients) but `pmix_env` (libpmix's setup_fork) and what Open MPI's
  // mpirun would set; or not at all (a command run through the escape hatch, which is no rank:
  // neither PMI_* nor the rank's own LATTICE_LOCAL_*). `both` (--pmi auto, for a program that
  // could not be classified) breaks that rule on purpose: whichever its library speaks works;
  // of Open MPI's, only schizo (mpirun in a script would misread the others: environment.cpp).
  enum class Wireup { pmi, pmix, both, none };
  Wireup wireup = Wireup::pmi;
  std::vector<std::string> pmix_env;  // "NAME=VALUE"
  std::string session_dir;            // the launch's private directory on this node (PMIx)
  int pmi_fd = -1;                    // -1: PMI_PORT mode
  std::string pmi_port;               // "127.0.0.1:PORT" in PMI_PORT mode, with
  std::string pmi_id;  // the rank's one-time secret PMI_ID (a decimal int: MPICH atoi()s it)
  std::string jobid, launch_id, allocation_id;
  // LATTICE_NODELIST, node ids comma-separated, and (slurm_compat) SLURM_NODELIST, the same as
  // slurm_nodelist() writes it: each made once per launch, not once per rank.
  std::string_view nodelist, slurm_nodelist;
  std::string_view slurm_tasks_per_node;  // SLURM_TASKS_PER_NODE (slurm_tasks_per_node())
  bool slurm_compat = false;
  // -c: OpenMP gets as many threads (OMP_NUM_THREADS, unless user_env sets it); 0: not given.
  int cpus_per_task = 0;
  std::vector<std::pair<std::string, std::string>> user_env;  // passed check_request_env
  // The launch's own further variables (the escape hatch's), winning over user_env.
  std::vector<std::pair<std::string, std::string>> launch_env;
  // Slingshot CXI credentials, exported as libfabric's CXI provider and Slurm's and Flux's
  // Slingshot support name them. The key's hex goes into the block once, with no copy left
  // behind in ordinary memory but the block itself (lattice::wipe after the spawn).
  struct Cxi {
    uint32_t vni = 0;
    uint32_t svc_id = 0;
    std::string_view auth_key_hex;
  };
  std::optional<Cxi> cxi;
};

// `base` with `over`'s values laid over it (over wins), sorted by name, each name once: the
// environment --export harvested (RFC0029's setup data) under the request's explicit --env.
std::vector<std::pair<std::string, std::string>> merge_env(
    const std::vector<std::pair<std::string, std::string>>& base,
    const std::vector<std::pair<std::string, std::string>>& over);

// "NAME=VALUE" strings sorted by name, each name once.
std::vector<std::string> rank_environment(const RankEnvInput& in);

// SLURM_NODELIST in Slurm's own form (n[1-256]), which its tools expand; the list as it is
// when its names do not fit that form.
std::string slurm_nodelist(std::string_view nodelist);
// Each node's rank count, in order, as Slurm writes SLURM_TASKS_PER_NODE: runs of equal counts
// as "N(xK)" ("2(x3),1").
std::string slurm_tasks_per_node(const std::vector<int>& counts);

}  // namespace lattice::proc
