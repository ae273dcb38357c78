// libFuzzer target: lattice-srun's translation of srun's command line (translate_srun). Any argv
// is refused with an error or gives `lattice launch` arguments that begin with --slurm-compat,
// that lattice launch itself accepts, and that end with "--" and srun's program and its
// arguments, untouched.
// Input: argv, NUL-separated.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.hpp"
#include "launcher/options.hpp"
#include "launcher/srun_front.hpp"

namespace {

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "srun_front: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lattice;
  std::vector<std::string> argv =
      split(std::string_view(reinterpret_cast<const char*>(data), size), '\0');
  auto launch = launcher::translate_srun(argv);
  if (!launch) return 0;
  const std::vector<std::string>& out = *launch;
  require(!out.empty() && out.front() == "--slurm-compat", "--slurm-compat first");
  auto dashes = std::find(out.begin(), out.end(), "--");
  require(dashes != out.end() && dashes + 1 != out.end(), "a program after --");
  const auto program = static_cast<size_t>(out.end() - dashes - 1);
  require(program <= argv.size() &&
              std::equal(dashes + 1, out.end(), argv.end() - static_cast<long>(program)),
          "the program and its arguments are argv's tail, untouched");
  require(static_cast<bool>(launcher::parse_launch_options(out)), "lattice launch accepts it");
  return 0;
}
