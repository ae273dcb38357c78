// A rank's PMIx_Spawn as its node sends it up (spawn_request.hpp).
#include "agent/spawn_request.hpp"

#include <doctest/doctest.h>

using namespace lattice;
using namespace lattice::agent;

TEST_CASE("argv[0] goes, reserved and malformed variables go, hosts are joined without repeats") {
  pmix::SpawnCall call;
  call.rank = 2;
  call.workdir = "";
  pmix::SpawnApp a;
  a.cmd = "/bin/child";
  a.argv = {"/bin/child", "one", "two"};
  a.env = {"OMPI_PARENT_PORT=1.0:42",
           "PMIX_SERVER_URI=x",
           "LATTICE_NODE=y",
           "PMI_FD=3",
           "FI_CXI_X=1",
           "novalue",
           "=empty",
           "OMPI_MCA_btl=self"};
  a.maxprocs = 3;
  a.cwd = "/work";
  a.hosts = {"n1", "n2"};
  a.hostfile = "/home/u/hosts";
  pmix::SpawnApp b;
  b.cmd = "/bin/other";
  b.argv = {"/bin/other"};
  b.maxprocs = 1;
  b.hosts = {"n2", "n3"};
  b.hostfile = "/home/u/hosts";
  call.apps = {a, b};
  auto r = spawn_request("L", call);
  CHECK(r.launch_id == "L");
  CHECK(r.rank == 2);
  REQUIRE(r.apps.size() == 2);
  CHECK(r.apps[0].entrypoint == "/bin/child");
  CHECK(r.apps[0].args == std::vector<std::string>{"one", "two"});
  CHECK(r.apps[0].env == wire::EnvList{{"OMPI_PARENT_PORT", "1.0:42"}, {"OMPI_MCA_btl", "self"}});
  CHECK(r.apps[0].size == 3);
  CHECK(r.apps[1].args.empty());
  CHECK(r.workdir == "/work");  // the first app's, with no job-level PMIX_WDIR
  CHECK(r.hosts == std::vector<std::string>{"n1", "n2", "n3"});
  CHECK(r.hostfiles == std::vector<std::string>{"/home/u/hosts"});
}
