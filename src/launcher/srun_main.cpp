// lattice-srun: Slurm's srun for job scripts run in a Lattice allocation (a site may install it
// as `srun`). Translates srun's options (srun_front.hpp) and execs `lattice launch` in its
// place, so signals, output and the exit status are the launch's own, with nothing in between.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/paths.hpp"
#include "lattice_version.h"
#include "launcher/srun_front.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "--usage")) {
    std::fputs(lattice::launcher::kSrunUsage, stdout);
    return 0;
  }
  if (!args.empty() && (args[0] == "--version" || args[0] == "-V")) {
    std::printf("lattice-srun (lattice %s)\n", LATTICE_VERSION);
    return 0;
  }
  auto translated = lattice::launcher::translate_srun(args);
  if (!translated) {
    // srun's status for a bad command line is 1 (its error_exit), not lattice launch's 2.
    std::fprintf(stderr, "lattice-srun: %s\n", translated.error().message.c_str());
    return 1;
  }
  const std::string lattice = lattice::find_sibling("lattice", LATTICE_BINDIR);
  std::vector<std::string> command{"lattice", "launch"};
  command.insert(command.end(), translated->begin(), translated->end());
  std::vector<char*> exec_argv;
  for (auto& arg : command) exec_argv.push_back(arg.data());
  exec_argv.push_back(nullptr);
  ::execv(lattice.c_str(), exec_argv.data());
  std::fprintf(stderr, "lattice-srun: cannot run %s: %s\n", lattice.c_str(), std::strerror(errno));
  return 1;
}
