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
  auto e = export_environment("ALL", kEnviron);
  REQUIRE(e);
  CHECK(has(e->harvested, "OMP_NUM_THREADS", "4"));
  CHECK(has(e->harvested, "LD_LIBRARY_PATH", "/opt/lib"));  // a root job's agent judges hooks
  CHECK(has(e->harvested, "SLURM_JOB_ID", "9"));
  for (auto name : {"PMI_RANK", "LATTICE_KEY_FILE", "FI_CXI_X", "BASH_FUNC_f%%"})
    CHECK_FALSE(has_name(e->harvested, name));
  CHECK(e->assigned.empty());
}

TEST_CASE("NONE, lists with wildcards, and assignments") {
  auto none = export_environment("NONE", kEnviron);
  REQUIRE(none);
  CHECK(none->harvested.empty());
  auto list = export_environment("OMP_*,HOM?,FOO=bar", kEnviron);
  REQUIRE(list);
  CHECK(list->harvested ==
        EnvList{{"HOME", "/home/u"}, {"OMP_NUM_THREADS", "4"}, {"OMP_PROC_BIND", "close"}});
  CHECK(list->assigned == EnvList{{"FOO", "bar"}});
  // An assignment is explicit: the name is not also sent as harvested; the last one wins.
  auto all_plus = export_environment("ALL,OMP_NUM_THREADS=8,OMP_NUM_THREADS=16", kEnviron);
  REQUIRE(all_plus);
  CHECK_FALSE(has_name(all_plus->harvested, "OMP_NUM_THREADS"));
  CHECK(all_plus->assigned == EnvList{{"OMP_NUM_THREADS", "16"}});
  CHECK_FALSE(export_environment("NONE,FOO", kEnviron));
  CHECK_FALSE(export_environment("1BAD=x", kEnviron));
  CHECK_FALSE(export_environment("A,,B", kEnviron));
  auto reserved = export_environment("PMI_RANK=1", kEnviron);
  REQUIRE_FALSE(reserved);
  CHECK(reserved.error().message == "--export: PMI_RANK is reserved for the launch");
  auto hook = export_environment("LD_PRELOAD=/x.so", kEnviron);
  REQUIRE(hook);
  CHECK(hook->assigned == EnvList{{"LD_PRELOAD", "/x.so"}});
}
