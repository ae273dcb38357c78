// The files that give an MPMD launch's programs: srun's --multi-prog file and mpiexec's
// -configfile. Pure parsers over the file's text (main reads it), each with a fuzz target.
#pragma once

#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "launcher/options.hpp"

namespace lattice::launcher {

// The most a program file may hold (main reads no more).
inline constexpr size_t kMaxProgramFileBytes = 1 << 20;

// srun's --multi-prog: lines "RANKS PROGRAM [ARGS...]", RANKS a comma list of ranks and LOW-HIGH
// ranges or '*' (every rank no other line names); in PROGRAM and ARGS %t is the rank and %o its
// offset among its line's ranks. Words split at blanks; '...' and "..." quote; '#' starts a
// comment. Every rank below `ntasks` (-n; 0: one more than the highest rank named) needs
// exactly one line. The apps: a run of neighbouring ranks with one command line each.
Result<std::vector<App>> parse_multi_prog(std::string_view text, int ntasks);

// mpiexec's -configfile: every line a segment as after ':' ("-n 2 -env K V ./a ARGS"); blank
// lines and '#' comments are skipped.
Result<std::vector<App>> parse_configfile(std::string_view text);

// Options whose programs are in a file (--multi-prog, -configfile): its apps in place of the
// command line's, each with the command line's --env and -genv (a file's -env wins).
Status use_program_file(LaunchOptions& options, std::string_view text);

}  // namespace lattice::launcher
