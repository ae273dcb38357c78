// How a rank ended, as a job status and as words: "exited with status 3", "killed by signal 9
// (SIGKILL)". A signal maps to 128+N, as shells and srun report it.
#pragma once

#include <string>

namespace lattice::proc {

struct ExitStatus {
  int code = 0;
  int signal = 0;  // 0: exited normally with `code`
};

int job_exit_code(ExitStatus status);
std::string describe(ExitStatus status);
std::string signal_name(int signum);  // "SIGKILL"; "signal 77" for unknown numbers
// A signal as users name it: "USR1", "SIGUSR1" (any case) or a number from 1 to 64; 0: none.
int signal_number(const std::string& name);

}  // namespace lattice::proc
