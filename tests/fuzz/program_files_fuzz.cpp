// libFuzzer target: the program files of an MPMD launch, srun's --multi-prog file
// (parse_multi_prog) and mpiexec's -configfile (parse_configfile), and mpiexec's -f host file
// (hostfile_nodelist). Any text is refused with an error or gives apps that run exactly the
// ranks asked for, each app a program and at least one rank.
// Input: a first byte (-n for --multi-prog: 0..63), then the file's text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "launcher/node_choice.hpp"
#include "launcher/program_files.hpp"

namespace {

using namespace lattice::launcher;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "program_files: %s\n", what);
  std::abort();
}

void check_apps(const std::vector<App>& apps) {
  require(!apps.empty(), "apps");
  for (const auto& app : apps) require(!app.program.empty(), "a program per app");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int ntasks = data[0] % 64;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (auto apps = parse_multi_prog(text, ntasks)) {
    check_apps(*apps);
    int ranks = 0;
    for (const auto& app : *apps) {
      require(app.ntasks >= 1, "every --multi-prog app has ranks");
      ranks += app.ntasks;
    }
    require(ntasks == 0 || ranks == ntasks, "--multi-prog runs -n ranks");
  }
  if (auto apps = parse_configfile(text)) {
    check_apps(*apps);
    long ranks = 0;
    for (const auto& app : *apps) ranks += app.segment_ranks();
    require(ranks <= (1 << 20), "-configfile within the ranks a launch takes");
  }
  if (auto list = hostfile_nodelist(text)) {
    require(!list->empty(), "-f names a node");
    std::vector<std::string> ids = {"n1", "n2"};
    (void)choose_nodes(ids, *list, "");
  }
  return 0;
}
