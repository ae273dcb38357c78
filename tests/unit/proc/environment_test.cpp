// rank_environment built from nothing (PATH default, the request's variables, the launch's own,
// Slurm compatibility) and check_request_env's rules for what a request may set.
#include "proc/environment.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "base/wipe.hpp"

namespace lattice::proc {
namespace {

std::map<std::string, std::string> as_map(const std::vector<std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& kv : env) {
    auto eq = kv.find('=');
    REQUIRE(eq != std::string::npos);
    REQUIRE_MESSAGE(out.count(kv.substr(0, eq)) == 0, "duplicate " << kv);
    out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

RankEnvInput input() {
  RankEnvInput in;
  in.rank = 5;
  in.world_size = 8;
  in.local_rank = 1;
  in.local_size = 4;
  in.node_index = 1;
  in.nnodes = 2;
  in.pmi_fd = 3;
  in.jobid = "job-7";
  in.launch_id = "L7";
  in.allocation_id = "A1";
  in.nodelist = "n1,n2";
  in.slurm_nodelist = "n[1-2]";
  return in;
}

std::string refusal(const EnvList& env, bool root_job, std::vector<std::string> allowed = {}) {
  Status status = check_request_env(env, EnvRules{root_job, std::move(allowed)});
  return status ? "" : status.error().message;
}

const EnvRules kUserJob{false, {}};
const EnvRules kRootJob{true, {}};

TEST_CASE("PMI fd mode: a PATH default and the launch's variables, nothing else") {
  auto env = as_map(rank_environment(input()));
  const std::map<std::string, std::string> expected = {
      {"PATH", "/usr/local/bin:/usr/bin:/bin"},
      {"PMI_FD", "3"},
      {"PMI_RANK", "5"},
      {"PMI_SIZE", "8"},
      {"PMI_SPAWNED", "0"},
      {"PMI_JOBID", "job-7"},
      {"LATTICE_LAUNCH_ID", "L7"},
      {"LATTICE_ALLOC_ID", "A1"},
      {"LATTICE_NODELIST", "n1,n2"},
      {"LATTICE_NNODES", "2"},
      {"LATTICE_NPROCS", "8"},
      {"LATTICE_LOCAL_RANK", "1"},
      {"LATTICE_LOCAL_SIZE", "4"},
  };
  CHECK(env == expected);  // no HOME, no agent secrets: the agent's environment is not an input
}

TEST_CASE("PMIx mode: libpmix's variables and mpirun's OMPI_*, never PMI_*") {
  RankEnvInput in = input();
  in.wireup = RankEnvInput::Wireup::pmix;
  in.pmix_env = {"PMIX_NAMESPACE=lattice.L7", "PMIX_RANK=5", "PMIX_SERVER_URI4=tcp4://x", "junk"};
  in.session_dir = "/run/lattice/lattice-L7";
  in.user_env = {{"OMPI_COMM_WORLD_RANK", "99"}, {"OMP_NUM_THREADS", "2"}};
  auto env = as_map(rank_environment(in));
  for (const auto& entry : env) CHECK_MESSAGE(entry.first.rfind("PMI_", 0) != 0, entry.first);
  CHECK(env["PMIX_NAMESPACE"] == "lattice.L7");
  CHECK(env["PMIX_RANK"] == "5");
  CHECK(env.count("junk") == 0);  // not NAME=VALUE: dropped
  CHECK(env["OMPI_MCA_schizo"] == "^orte");
  CHECK(env["OMPI_COMM_WORLD_RANK"] == "5");  // the launch's value wins over the request's
  CHECK(env["OMPI_COMM_WORLD_SIZE"] == "8");
  CHECK(env["OMPI_COMM_WORLD_LOCAL_RANK"] == "1");
  CHECK(env["OMPI_COMM_WORLD_LOCAL_SIZE"] == "4");
  CHECK(env["OMPI_COMM_WORLD_NODE_RANK"] == "1");
  CHECK(env["OMPI_UNIVERSE_SIZE"] == "8");
  CHECK(env["OMPI_MCA_orte_tmpdir_base"] == "/run/lattice/lattice-L7");
  CHECK(env["OMPI_MCA_btl_vader_backing_directory"] == "/run/lattice/lattice-L7");
  CHECK(env["OMP_NUM_THREADS"] == "2");
  CHECK(env["LATTICE_LAUNCH_ID"] == "L7");
}

TEST_CASE(
    "both (--pmi auto, a program that cannot be told): PMI_* and PMIx, OMPI_MCA_schizo alone") {
  RankEnvInput in = input();
  in.wireup = RankEnvInput::Wireup::both;
  in.pmi_fd = 3;
  in.pmix_env = {"PMIX_NAMESPACE=lattice.L7", "PMIX_RANK=5"};
  in.session_dir = "/run/lattice/lattice-L7";
  auto env = as_map(rank_environment(in));
  CHECK(env["PMI_FD"] == "3");
  CHECK(env["PMI_RANK"] == "5");
  CHECK(env["PMI_SIZE"] == "8");
  CHECK(env["PMIX_NAMESPACE"] == "lattice.L7");
  CHECK(env["OMPI_MCA_schizo"] == "^orte");
  // mpirun, run by a script, would refuse to run beside OMPI_COMM_WORLD_* ("recursive calls")
  // and would hand this node's directories to its ranks on every node.
  for (const auto& entry : env)
    CHECK_MESSAGE((entry.first.rfind("OMPI_", 0) != 0 || entry.first == "OMPI_MCA_schizo"),
                  entry.first);
}

TEST_CASE("merge_env: the second list wins, one entry per name, sorted") {
  auto merged = merge_env({{"B", "2"}, {"A", "1"}}, {{"B", "3"}, {"C", "4"}});
  CHECK(merged ==
        std::vector<std::pair<std::string, std::string>>{{"A", "1"}, {"B", "3"}, {"C", "4"}});
}

TEST_CASE("the output is sorted by name") {
  RankEnvInput in = input();
  in.user_env = {{"ZED", "1"}, {"ALPHA", "2"}};
  auto env = rank_environment(in);
  for (size_t i = 1; i < env.size(); ++i) CHECK(env[i - 1] < env[i]);
}

TEST_CASE("PMI_PORT mode sets PMI_PORT and PMI_ID instead of PMI_FD") {
  RankEnvInput in = input();
  in.pmi_fd = -1;
  in.pmi_port = "127.0.0.1:4567";
  in.pmi_id = "1804289383";  // the rank's one-time id, not its rank number
  auto env = as_map(rank_environment(in));
  CHECK(env.at("PMI_PORT") == "127.0.0.1:4567");
  CHECK(env.at("PMI_ID") == "1804289383");
  CHECK(env.count("PMI_FD") == 0);
}

TEST_CASE("slurm_compat sets the rank's SLURM_* variables") {
  RankEnvInput in = input();
  in.slurm_compat = true;
  auto env = as_map(rank_environment(in));
  CHECK(env.at("SLURM_PROCID") == "5");
  CHECK(env.at("SLURM_NPROCS") == "8");
  CHECK(env.at("SLURM_NTASKS") == "8");
  CHECK(env.at("SLURM_LOCALID") == "1");
  CHECK(env.at("SLURM_NODEID") == "1");
  CHECK(env.at("SLURM_NNODES") == "2");
  CHECK(env.at("SLURM_NODELIST") == "n[1-2]");  // Slurm's own compressed form
  CHECK(env.at("SLURM_STEP_NUM_TASKS") == "8");
  CHECK(env.at("SLURM_JOB_ID") == "A1");  // the allocation it runs in
  CHECK(env.at("SLURM_JOBID") == "A1");
  CHECK(env.at("SLURM_STEP_ID") == "0");
  CHECK(env.at("SLURM_STEP_NUM_NODES") == "2");
  CHECK(env.at("SLURM_STEP_NODELIST") == "n[1-2]");
  CHECK(env.at("SLURM_CPUS_PER_TASK") == "1");
  in.slurm_tasks_per_node = "4(x2)";
  in.allocation_id.clear();
  env = as_map(rank_environment(in));
  CHECK(env.at("SLURM_TASKS_PER_NODE") == "4(x2)");
  CHECK(env.at("SLURM_JOB_ID") == in.launch_id);  // outside allocations: the launch
  CHECK(as_map(rank_environment(input())).count("SLURM_PROCID") == 0);
  CHECK(slurm_tasks_per_node({2, 2, 2, 1}) == "2(x3),1");
  CHECK(slurm_tasks_per_node({1, 3}) == "1,3");
  CHECK(slurm_tasks_per_node({}) == "");
  CHECK(slurm_nodelist("n1,n2") == "n[1-2]");   // Slurm's own compressed form
  CHECK(slurm_nodelist("a[1],b") == "a[1],b");  // names a host list cannot hold: as it is
}

TEST_CASE("-c: OMP_NUM_THREADS unless the user set it, and SLURM_CPUS_PER_TASK") {
  RankEnvInput in = input();
  CHECK(as_map(rank_environment(in)).count("OMP_NUM_THREADS") == 0);
  in.cpus_per_task = 4;
  in.slurm_compat = true;
  auto env = as_map(rank_environment(in));
  CHECK(env.at("OMP_NUM_THREADS") == "4");
  CHECK(env.at("SLURM_CPUS_PER_TASK") == "4");
  in.user_env.emplace_back("OMP_NUM_THREADS", "8");
  CHECK(as_map(rank_environment(in)).at("OMP_NUM_THREADS") == "8");
}

TEST_CASE("the request's variables override PATH but never the launch's own") {
  RankEnvInput in = input();
  in.slurm_compat = true;
  in.user_env = {{"PATH", "/opt/mpi/bin:/usr/bin"},
                 {"HOME", "/scratch"},
                 {"OMP_NUM_THREADS", "4"},
                 {"SLURM_PROCID", "0"},
                 {"SLURM_JOB_ID", "42"},
                 {"OMP_NUM_THREADS", "8"}};
  auto env = as_map(rank_environment(in));
  CHECK(env.at("PATH") == "/opt/mpi/bin:/usr/bin");
  CHECK(env.at("HOME") == "/scratch");
  CHECK(env.at("OMP_NUM_THREADS") == "8");  // later keys win
  CHECK(env.at("SLURM_PROCID") == "5");     // the launch's value wins
  CHECK(env.at("SLURM_JOB_ID") == "A1");
}

TEST_CASE("rank_environment still drops reserved and malformed names the caller let through") {
  RankEnvInput in = input();
  in.user_env = {
      {"PMI_RANK", "0"},   {"PMIX_RANK", "0"}, {"PMI_DEBUG", "1"}, {"LATTICE_NPROCS", "1"},
      {"FI_CXI_VNI", "9"}, {"BAD=NAME", "x"},  {"", "empty"}};
  auto env = as_map(rank_environment(in));
  CHECK(env.at("PMI_RANK") == "5");
  CHECK(env.at("LATTICE_NPROCS") == "8");
  CHECK(env.count("PMIX_RANK") == 0);  // never beside PMI_SIZE (docs/pmi-wire.md T4)
  CHECK(env.count("PMI_DEBUG") == 0);
  CHECK(env.count("FI_CXI_VNI") == 0);
  CHECK(env.count("BAD") == 0);
  CHECK(env.count("BAD=NAME") == 0);
  CHECK(env.count("") == 0);
}

TEST_CASE("reserved names") {
  for (const char* name : {"PMI_RANK", "PMI_", "PMIX_NAMESPACE", "LATTICE_TRACE", "FI_CXI_VNI"})
    CHECK_MESSAGE(reserved_env_name(name), name);
  for (const char* name : {"PMI", "PMIXED", "LATTICE", "FI_PROVIDER", "SLURM_JOB_ID", "pmi_rank"})
    CHECK_MESSAGE(!reserved_env_name(name), name);
}

TEST_CASE("hooks: the loader's, glibc's, shells', interpreters' and plugin loaders', by family") {
  const std::pair<const char*, const char*> hooks[] = {
      {"LD_PRELOAD", "the dynamic loader"},
      {"LD_LIBRARY_PATH", "the dynamic loader"},
      {"LD_ANYTHING_NEW", "the dynamic loader"},
      {"GCONV_PATH", "glibc"},
      {"GLIBC_TUNABLES", "glibc"},
      {"LOCPATH", "glibc"},
      {"MALLOC_TRACE", "glibc"},
      {"TZDIR", "glibc"},
      {"BASH_ENV", "bash"},
      {"BASH_LOADABLES_PATH", "bash"},
      {"SHELLOPTS", "bash"},
      {"ENV", "shells"},
      {"PS4", "shells"},
      {"IFS", "shells"},
      {"CDPATH", "shells"},
      {"ZDOTDIR", "zsh"},
      {"PYTHONPATH", "Python"},
      {"PYTHONSTARTUP", "Python"},
      {"PYTHONHOME", "Python"},
      {"PYTHONWARNINGS", "Python"},
      {"PERL5LIB", "Perl"},
      {"PERL5OPT", "Perl"},
      {"PERLLIB", "Perl"},
      {"RUBYOPT", "Ruby"},
      {"NODE_OPTIONS", "Node.js"},
      {"JAVA_TOOL_OPTIONS", "Java"},
      {"_JAVA_OPTIONS", "Java"},
      {"LUA_INIT", "Lua"},
      {"LUA_INIT_5_4", "Lua"},
      {"TCLLIBPATH", "Tcl"},
      {"R_PROFILE_USER", "R"},
      {"OPENSSL_CONF", "OpenSSL"},
      {"FI_PROVIDER_PATH", "libfabric"},
      {"OMPI_MCA_mca_base_component_path", "Open MPI"},
      {"OPAL_PREFIX", "Open MPI"},
      {"HWLOC_PLUGINS_PATH", "hwloc"},
      {"OMP_TOOL_LIBRARIES", "OpenMP"},
      {"GIT_SSH_COMMAND", "git"},
      {"GIT_CONFIG_GLOBAL", "git"},
      {"XDG_CONFIG_HOME", "programs' configuration"},
  };
  for (const auto& hook : hooks)
    CHECK_MESSAGE(root_env_hook(hook.first, "x") == hook.second, hook.first);
  // Inert: what the families do not reach, and names that only look alike.
  for (const char* name : {"PATH",
                           "HOME",
                           "TMPDIR",
                           "OMP_NUM_THREADS",
                           "OMPI_MCA_btl",
                           "OMPI_ALLOW_RUN_AS_ROOT",
                           "MPIR_CVAR_ASYNC_PROGRESS",
                           "FI_PROVIDER",
                           "UCX_TLS",
                           "SLURM_JOB_ID",
                           "LD",
                           "OLD_PATH",
                           "ld_preload",
                           "BASH",
                           "MY_PYTHONPATH",
                           "NODE_RANK",
                           "JULIA_NUM_THREADS",
                           "TERM",
                           "GCONV_PATH_X",
                           "ENVIRONMENT",
                           "LUA",
                           "XDG_RUNTIME_DIR",
                           "PYTHONUNBUFFERED",
                           "PYTHONDONTWRITEBYTECODE",
                           "PYTHONHASHSEED"})
    CHECK_MESSAGE(root_env_hook(name, "/opt/x") == "", name);
}

TEST_CASE("hooks by value: LANG, LC_* and TZ naming a file") {
  CHECK(root_env_hook("LANG", "C.UTF-8") == "");
  CHECK(root_env_hook("LC_ALL", "en_US.UTF-8") == "");
  CHECK(root_env_hook("LANGUAGE", "en_US:en") == "");
  CHECK(root_env_hook("LANG", "/home/mallory/locale") == "glibc");
  CHECK(root_env_hook("LC_CTYPE", "/tmp/x") == "glibc");
  CHECK(root_env_hook("TZ", "Europe/Paris") == "");
  CHECK(root_env_hook("TZ", ":/etc/localtime") == "");
  CHECK(root_env_hook("TZ", ":/etc/shadow") == "glibc");
  CHECK(root_env_hook("TZ", "/usr/share/zoneinfo/UTC") == "");
  CHECK(root_env_hook("TZ", "UTC0") == "");
  CHECK(root_env_hook("TZ", "/home/mallory/zone") == "glibc");
  CHECK(root_env_hook("TZ", "../../home/mallory/zone") == "glibc");
  CHECK(root_env_hook("TZ", "/usr/share/zoneinfo/../../../tmp/z") == "glibc");
}

TEST_CASE("check_request_env accepts ordinary variables for any job") {
  const EnvList env = {
      {"PATH", "/opt/bin"}, {"OMP_NUM_THREADS", "4"}, {"_x9", ""}, {"SLURM_JOB_ID", "1"}};
  CHECK(check_request_env(env, kUserJob));
  CHECK(check_request_env(env, kRootJob));
  CHECK(check_request_env({}, kRootJob));
}

TEST_CASE("check_request_env refuses reserved names") {
  CHECK(refusal({{"OMP_NUM_THREADS", "4"}, {"PMI_RANK", "0"}}, false) ==
        "environment variable PMI_RANK is reserved for the launch");
  CHECK(refusal({{"PMIX_RANK", "0"}}, false) ==
        "environment variable PMIX_RANK is reserved for the launch");
  CHECK(refusal({{"LATTICE_NPROCS", "1"}}, false) ==
        "environment variable LATTICE_NPROCS is reserved for the launch");
  CHECK(refusal({{"FI_CXI_VNI", "1"}}, true) ==
        "environment variable FI_CXI_VNI is reserved for the launch");
  // No allowance reaches the launch's own names.
  CHECK(refusal({{"PMI_RANK", "0"}}, true, {"*"}) ==
        "environment variable PMI_RANK is reserved for the launch");
}

TEST_CASE("check_request_env refuses hooks for root jobs only, unless allowed") {
  CHECK(refusal({{"LD_PRELOAD", "/tmp/x.so"}}, true) ==
        "environment variable LD_PRELOAD may not be set for a job running as root: a hook of the "
        "dynamic loader (an agent's security.allow_root_job_env may allow it)");
  CHECK(refusal({{"OMP_NUM_THREADS", "4"}, {"BASH_ENV", "/tmp/x"}}, true) ==
        "environment variable BASH_ENV may not be set for a job running as root: a hook of bash "
        "(an agent's security.allow_root_job_env may allow it)");
  for (const char* name : {"ENV", "PYTHONPATH", "PERL5LIB", "GCONV_PATH"})
    CHECK_MESSAGE(
        refusal({{name, "/tmp/x"}}, true)
                .find(std::string("environment variable ") + name + " may not be set") == 0,
        name);
  CHECK(check_request_env({{"LD_PRELOAD", "/tmp/x.so"}, {"BASH_ENV", "/tmp/x"}}, kUserJob));
  // The operator's names and patterns let those hooks through, and only those.
  CHECK(refusal({{"BASH_ENV", "/etc/job.sh"}, {"PYTHONPATH", "/opt/py"}}, true,
                {"BASH_ENV", "PYTHON*"}) == "");
  CHECK(refusal({{"PYTHONPATH", "/opt/py"}, {"PERL5LIB", "/x"}}, true, {"BASH_ENV", "PYTHON*"})
            .find("environment variable PERL5LIB may not be set") == 0);
  CHECK(refusal({{"LANG", "/tmp/locale"}}, true).find("a hook of glibc") != std::string::npos);
  CHECK(refusal({{"LANG", "/tmp/locale"}}, true, {"LANG"}) == "");
}

TEST_CASE("leave_out_hooks takes a root job's hooks out and names them; other jobs keep all") {
  const EnvList exported = {{"BASH_ENV", "/tmp/a"},
                            {"HOME", "/root"},
                            {"LD_LIBRARY_PATH", "/opt/lib"},
                            {"OMP_NUM_THREADS", "4"},
                            {"PYTHONPATH", "/tmp/py"}};
  EnvList env = exported;
  auto left_out = leave_out_hooks(env, kRootJob);
  REQUIRE(left_out);
  CHECK(*left_out == std::vector<std::string>{"BASH_ENV", "LD_LIBRARY_PATH", "PYTHONPATH"});
  CHECK(env == EnvList{{"HOME", "/root"}, {"OMP_NUM_THREADS", "4"}});

  env = exported;
  left_out = leave_out_hooks(env, EnvRules{true, {"LD_*"}});
  REQUIRE(left_out);
  CHECK(*left_out == std::vector<std::string>{"BASH_ENV", "PYTHONPATH"});
  CHECK(env.size() == 3);

  env = exported;
  left_out = leave_out_hooks(env, kUserJob);
  REQUIRE(left_out);
  CHECK(left_out->empty());
  CHECK(env == exported);

  // Names no request may carry are still errors, not left out.
  env = {{"PMI_RANK", "1"}};
  CHECK_FALSE(leave_out_hooks(env, kRootJob));
  env = {{"BAD NAME", "1"}};
  CHECK_FALSE(leave_out_hooks(env, kUserJob));
}

TEST_CASE("check_request_env refuses malformed names") {
  for (const char* name : {"", "1ABC", "BAD=NAME", "A-B", "A B", "Ä"})
    CHECK_MESSAGE(refusal({{name, "x"}}, false) ==
                      std::string("environment variable name '") + name +
                          "' is not valid: letters, digits and _, not starting with a digit",
                  name);
}

}  // namespace
}  // namespace lattice::proc

namespace lattice::proc {

TEST_CASE("CXI credentials: the five variables, the launch's over the user's, in name order") {
  RankEnvInput in = input();
  in.user_env = {{"FI_PROVIDER", "tcp"}, {"SLINGSHOT_VNIS", "1"}, {"FI_A", "x"}, {"FI_CXI", "y"}};
  in.cxi = RankEnvInput::Cxi{1234, 77, "00aa11bb"};
  auto block = rank_environment(in);
  auto env = as_map(block);
  CHECK(env["FI_PROVIDER"] == "cxi");
  CHECK(env["FI_CXI_DEFAULT_VNI"] == "1234");
  CHECK(env["FI_CXI_AUTH_KEY"] == "00aa11bb");
  CHECK(env["SLINGSHOT_VNIS"] == "1234");
  CHECK(env["SLINGSHOT_SVC_IDS"] == "77");
  CHECK(env["FI_A"] == "x");
  std::vector<std::string> names;
  for (const auto& kv : block) names.push_back(kv.substr(0, kv.find('=')));
  CHECK(std::is_sorted(names.begin(), names.end()));
  // Without credentials, none of them (a user's FI_PROVIDER stays the user's).
  in.cxi.reset();
  auto plain = as_map(rank_environment(in));
  CHECK(plain.count("FI_CXI_AUTH_KEY") == 0);
  CHECK(plain["FI_PROVIDER"] == "tcp");

  lattice::wipe(block);
  for (const auto& kv : block) CHECK(kv.find_first_not_of('\0') == std::string::npos);
}

}  // namespace lattice::proc
