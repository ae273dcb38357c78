// --pmi auto's choice on one node from what each app's program links.
#include "agent/wire_up_choice.hpp"

#include <doctest/doctest.h>

using namespace lattice;
using namespace lattice::agent;
using proc::MpiWireUp;

namespace {

AppProgram app(const char* name, MpiWireUp need, const char* why, bool local = true) {
  return AppProgram{name, local, true, proc::ProgramMpi{need, why}};
}

TEST_CASE("auto: one kind of program gets its wire-up alone") {
  auto ompi = choose_wire_up({app("./ring", MpiWireUp::pmix, "links libmpi.so.40 (Open MPI)")});
  REQUIRE(ompi.ok());
  CHECK(ompi->pmix);
  CHECK(!ompi->pmi);
  CHECK(ompi->pmix_required_by == "'./ring' links libmpi.so.40 (Open MPI)");
  auto mpich = choose_wire_up({app("./a", MpiWireUp::pmi, "links libmpich.so.12 (MPICH)"),
                               app("./b", MpiWireUp::pmi, "links libmpich.so.12 (MPICH)")});
  REQUIRE(mpich.ok());
  CHECK(mpich->pmi);
  CHECK(!mpich->pmix);
  CHECK(mpich->apps == std::vector<MpiWireUp>{MpiWireUp::pmi, MpiWireUp::pmi});
}

TEST_CASE("auto: what cannot be told gets both, and needs neither") {
  auto script = choose_wire_up({app("run.sh", MpiWireUp::unknown, "a script (#!)")});
  REQUIRE(script.ok());
  CHECK(script->pmi);
  CHECK(script->pmix);
  CHECK(script->pmix_required_by.empty());
  // Beside an MPICH program: both servers here, each app's ranks get theirs.
  auto mixed = choose_wire_up({app("./a", MpiWireUp::pmi, "links libmpich.so.12 (MPICH)"),
                               app("python3", MpiWireUp::unknown, "links no MPI library")});
  REQUIRE(mixed.ok());
  CHECK(mixed->apps == std::vector<MpiWireUp>{MpiWireUp::pmi, MpiWireUp::unknown});
  CHECK(mixed->pmi);
  CHECK(mixed->pmix);
}

TEST_CASE("auto: apps without ranks here count only for the refusal") {
  auto here = choose_wire_up({app("./a", MpiWireUp::pmi, "links libmpich.so.12 (MPICH)"),
                              app("./b", MpiWireUp::unknown, "a script (#!)", false)});
  REQUIRE(here.ok());
  CHECK(here->pmi);
  CHECK(!here->pmix);
  AppProgram missing{"./elsewhere", false, false, {}};
  auto absent =
      choose_wire_up({app("./a", MpiWireUp::pmix, "links libmpi.so.40 (Open MPI)"), missing});
  REQUIRE(absent.ok());
  CHECK(absent->apps[1] == MpiWireUp::unknown);
}

TEST_CASE("auto: an MPMD mix of Open MPI and MPICH is refused, both named") {
  auto mix =
      choose_wire_up({app("./ompi", MpiWireUp::pmix, "links libmpi.so.40 (Open MPI)"),
                      app("./mpich", MpiWireUp::pmi, "links libmpich.so.12 (MPICH)", false)});
  REQUIRE(!mix.ok());
  CHECK(mix.error().message ==
        "'./ompi' links libmpi.so.40 (Open MPI) and needs PMIx; './mpich' links libmpich.so.12 "
        "(MPICH) and needs PMI-1/PMI-2: one launch cannot mix them (--pmi auto); launch them "
        "separately");
}

}  // namespace
