/* lattice-rank-exec PROGRAM [ARGS...]: the agent spawns every rank through this. It asks the
 * kernel to SIGKILL it when the agent dies (PR_SET_PDEATHSIG survives exec), checks the agent
 * did not die before that took effect, and execs the rank. On failure it says why and exits
 * 127 (126 when the file is not executable), as shells do. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: lattice-rank-exec PROGRAM [ARGS...]\n");
    return 2;
  }
  const char* agent = getenv("LATTICE_AGENT_PID");
  if (agent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
      perror("lattice-rank-exec: prctl");
      return 127;
    }
    /* The agent may have died between fork and prctl: then our parent is already someone else. */
    if ((long)getppid() != atol(agent)) return 127;
    unsetenv("LATTICE_AGENT_PID");
  }
  execvp(argv[1], argv + 1);
  int err = errno;
  fprintf(stderr, "lattice-rank-exec: cannot execute '%s': %s\n", argv[1], strerror(err));
  return err == EACCES ? 126 : 127;
}
