#include "agent/wire_up_choice.hpp"

#include "base/strings.hpp"

namespace lattice::agent {

const char* wire_up_name(proc::MpiWireUp need) {
  switch (need) {
    case proc::MpiWireUp::pmi:
      return "PMI-1/PMI-2";
    case proc::MpiWireUp::pmix:
      return "PMIx";
    case proc::MpiWireUp::unknown:
      break;
  }
  return "PMI-1/PMI-2 and PMIx";
}

Result<WireUpChoice> choose_wire_up(const std::vector<AppProgram>& apps) {
  const AppProgram* pmi = nullptr;
  const AppProgram* pmix = nullptr;
  for (const auto& app : apps) {
    if (!app.found) continue;
    if (app.mpi.need == proc::MpiWireUp::pmi && !pmi) pmi = &app;
    if (app.mpi.need == proc::MpiWireUp::pmix && !pmix) pmix = &app;
  }
  if (pmi && pmix)
    return make_error(cat("'", pmix->name, "' ", pmix->mpi.why, " and needs PMIx; '", pmi->name,
                          "' ", pmi->mpi.why,
                          " and needs PMI-1/PMI-2: one launch cannot mix "
                          "them (--pmi auto); launch them separately"));
  WireUpChoice choice;
  for (const auto& app : apps) {
    auto need = app.found ? app.mpi.need : proc::MpiWireUp::unknown;
    choice.apps.push_back(need);
    if (!app.local) continue;
    choice.pmi = choice.pmi || need != proc::MpiWireUp::pmix;
    choice.pmix = choice.pmix || need != proc::MpiWireUp::pmi;
    if (need == proc::MpiWireUp::pmix && choice.pmix_required_by.empty())
      choice.pmix_required_by = cat("'", app.name, "' ", app.mpi.why);
  }
  return choice;
}

}  // namespace lattice::agent
