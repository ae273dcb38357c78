// lattice-srun: Slurm's `srun` command line -> `lattice launch`'s, so a job script written for
// Slurm runs unchanged inside a Lattice allocation. Pure: translation and validation only, so
// every mapping and every refusal is unit-tested; srun_main.cpp execs the result.
#pragma once

#include <string>
#include <vector>

#include "base/result.hpp"

namespace lattice::launcher {

// srun's arguments (argv after the program name) -> `lattice launch`'s (after "launch"): always
// --slurm-compat, the options mapped, then "--" and the program with its arguments untouched.
// Values are attached (--chdir=DIR), so one that looks like an option or like "--" stays a value.
// An srun option lattice cannot honour is an error naming it and why, never silently dropped;
// the result is also checked by parse_launch_options, so values lattice would refuse (a bad
// -n, an unknown --output pattern) fail here, before anything is exec'd.
Result<std::vector<std::string>> translate_srun(const std::vector<std::string>& srun_args);

extern const char* const kSrunUsage;

}  // namespace lattice::launcher
