// rank_environment: scrubbing of the agent's PMI_*/PMIX_*/SLURM_* variables, the launch's own
// variables, Slurm compatibility, and the precedence of the user's --env values.
#include "proc/environment.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

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
  return in;
}

const std::vector<std::string> kAgentEnv = {
    "PATH=/usr/bin",         "HOME=/home/u", "PMI_RANK=99",     "PMI_FD=9",
    "PMIX_NAMESPACE=slurm",  "PMIX_RANK=0",  "SLURM_JOB_ID=42", "SLURM_PROCID=77",
    "LATTICE_AGENT_PID=123", "EQUALS=a=b",   "=junk",           "no-equals-sign",
};

TEST_CASE("PMI fd mode: launch variables set, agent PMI_*/PMIX_*/SLURM_* scrubbed") {
  auto env = as_map(rank_environment(kAgentEnv, input()));
  CHECK(env.at("PATH") == "/usr/bin");
  CHECK(env.at("HOME") == "/home/u");
  CHECK(env.at("EQUALS") == "a=b");
  CHECK(env.at("PMI_FD") == "3");
  CHECK(env.count("PMI_PORT") == 0);
  CHECK(env.count("PMI_ID") == 0);
  CHECK(env.at("PMI_RANK") == "5");
  CHECK(env.at("PMI_SIZE") == "8");
  CHECK(env.at("PMI_SPAWNED") == "0");
  CHECK(env.at("PMI_JOBID") == "job-7");
  CHECK(env.at("LATTICE_LAUNCH_ID") == "L7");
  CHECK(env.at("LATTICE_ALLOC_ID") == "A1");
  CHECK(env.at("LATTICE_NODELIST") == "n1,n2");
  CHECK(env.at("LATTICE_NNODES") == "2");
  CHECK(env.at("LATTICE_NPROCS") == "8");
  CHECK(env.at("LATTICE_LOCAL_RANK") == "1");
  CHECK(env.at("LATTICE_LOCAL_SIZE") == "4");
  CHECK(env.count("LATTICE_AGENT_PID") == 0);
  for (const auto& [name, value] : env) {
    CHECK_MESSAGE(name.rfind("PMIX_", 0) != 0, name);  // never beside PMI_SIZE (T4)
    CHECK_MESSAGE(name.rfind("SLURM_", 0) != 0, name);
  }
  CHECK(env.count("") == 0);
  CHECK(env.count("no-equals-sign") == 0);
}

TEST_CASE("PMI_PORT mode sets PMI_PORT and PMI_ID instead of PMI_FD") {
  RankEnvInput in = input();
  in.pmi_fd = -1;
  in.pmi_port = "127.0.0.1:4567";
  auto env = as_map(rank_environment(kAgentEnv, in));
  CHECK(env.at("PMI_PORT") == "127.0.0.1:4567");
  CHECK(env.at("PMI_ID") == "5");
  CHECK(env.count("PMI_FD") == 0);
}

TEST_CASE("slurm_compat keeps the agent's SLURM_* and sets the rank's own") {
  RankEnvInput in = input();
  in.slurm_compat = true;
  auto env = as_map(rank_environment(kAgentEnv, in));
  CHECK(env.at("SLURM_JOB_ID") == "42");
  CHECK(env.at("SLURM_PROCID") == "5");  // the launch's value, not the agent's 77
  CHECK(env.at("SLURM_NPROCS") == "8");
  CHECK(env.at("SLURM_NTASKS") == "8");
  CHECK(env.at("SLURM_LOCALID") == "1");
  CHECK(env.at("SLURM_NODEID") == "1");
  CHECK(env.at("SLURM_NODELIST") == "n1,n2");
  CHECK(env.at("SLURM_STEP_NUM_TASKS") == "8");
  CHECK(env.count("PMIX_NAMESPACE") == 0);
}

TEST_CASE("user --env overrides the agent but never the launch's own variables") {
  RankEnvInput in = input();
  in.slurm_compat = true;
  in.user_env = {{"HOME", "/scratch"},
                 {"OMP_NUM_THREADS", "4"},
                 {"PMI_RANK", "0"},
                 {"PMIX_RANK", "0"},
                 {"LATTICE_NPROCS", "1"},
                 {"SLURM_PROCID", "0"},
                 {"OMP_NUM_THREADS", "8"},
                 {"BAD=NAME", "x"},
                 {"PMI_DEBUG", "1"},
                 {"LATTICE_TRACE", "1"},
                 {"", "empty"}};
  auto env = as_map(rank_environment(kAgentEnv, in));
  CHECK(env.at("HOME") == "/scratch");
  CHECK(env.at("OMP_NUM_THREADS") == "8");  // later keys win
  CHECK(env.at("PMI_RANK") == "5");
  CHECK(env.count("PMIX_RANK") == 0);
  CHECK(env.at("LATTICE_NPROCS") == "8");
  CHECK(env.at("SLURM_PROCID") == "5");
  CHECK(env.at("PMI_DEBUG") == "1");  // not one of the launch's: the user's value passes
  CHECK(env.at("LATTICE_TRACE") == "1");
  CHECK(env.count("BAD") == 0);
  CHECK(env.count("") == 0);
}

TEST_CASE("the agent's duplicate keys collapse to the last one") {
  auto env = as_map(rank_environment({"A=1", "A=2"}, input()));
  CHECK(env.at("A") == "2");
}

}  // namespace
}  // namespace lattice::proc
