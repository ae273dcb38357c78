// --export: what of the launcher's environment reaches ranks, and --env laid over it.
#include "launcher/export_env.hpp"

#include <doctest/doctest.h>

using namespace lattice::launcher;

namespace {
const std::vector<std::string> kEnviron = {"HOME=/home/u",
                                           "OMP_NUM_THREADS=4",
                                           "OMP_PROC_BIND=close",
                                           "PATH=/usr/bin",
                                           "LD_LIBRARY_PATH=/opt/lib",
                                           "PMI_RANK=3",
                                           "LATTICE_KEY_FILE=/etc/k",
                                           "FI_CXI_X=1",
                                           "BASH_FUNC_f%%=() { :; }",
                                           "SLURM_JOB_ID=9"};

bool has(const EnvList& env, const std::string& name, const std::string& value) {
  for (auto& [n, v] : env)
    if (n == name) return v == value;
  return false;
}
bool has_name(const EnvList& env, const std::string& name) {
  for (auto& kv : env)
    if (kv.first == name) return true;
  return false;
}
}  // namespace

TEST_CASE("ALL exports everything but the launch's own names and shell functions") {
  auto e = export_environment("ALL", kEnviron, false);
  REQUIRE(e);
  CHECK(has(e->env, "OMP_NUM_THREADS", "4"));
  CHECK(has(e->env, "LD_LIBRARY_PATH", "/opt/lib"));
  CHECK(has(e->env, "SLURM_JOB_ID", "9"));
  for (auto name : {"PMI_RANK", "LATTICE_KEY_FILE", "FI_CXI_X", "BASH_FUNC_f%%"})
    CHECK_FALSE(has_name(e->env, name));
  CHECK(e->dropped_loader.empty());
}

TEST_CASE("a root job loses loader variables, and says which") {
  auto e = export_environment("ALL", kEnviron, true);
  REQUIRE(e);
  CHECK_FALSE(has_name(e->env, "LD_LIBRARY_PATH"));
  CHECK(e->dropped_loader == std::vector<std::string>{"LD_LIBRARY_PATH"});
}

TEST_CASE("NONE, lists with wildcards, and assignments") {
  auto none = export_environment("NONE", kEnviron, false);
  REQUIRE(none);
  CHECK(none->env.empty());
  auto list = export_environment("OMP_*,HOM?,FOO=bar", kEnviron, false);
  REQUIRE(list);
  CHECK(list->env == EnvList{{"FOO", "bar"},
                             {"HOME", "/home/u"},
                             {"OMP_NUM_THREADS", "4"},
                             {"OMP_PROC_BIND", "close"}});
  auto all_plus = export_environment("ALL,OMP_NUM_THREADS=8", kEnviron, false);
  REQUIRE(all_plus);
  CHECK(has(all_plus->env, "OMP_NUM_THREADS", "8"));
  CHECK_FALSE(export_environment("NONE,FOO", kEnviron, false));
  CHECK_FALSE(export_environment("1BAD=x", kEnviron, false));
  CHECK_FALSE(export_environment("A,,B", kEnviron, false));
  auto reserved = export_environment("PMI_RANK=1", kEnviron, false);
  REQUIRE_FALSE(reserved);
  CHECK(reserved.error().message == "--export: PMI_RANK is reserved for the launch");
  CHECK(export_environment("LD_PRELOAD=/x.so", kEnviron, false));
  auto loader = export_environment("LD_PRELOAD=/x.so", kEnviron, true);
  REQUIRE_FALSE(loader);
  CHECK(loader.error().message.find("running as root") != std::string::npos);
}
