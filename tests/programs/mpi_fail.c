/* MPICH failure programs, one per mode: rank 1 fails in the named way while every other rank waits
 * in a collective that can only end when the launcher tears the job down. Needs at least 2 ranks.
 *   exit-before-init  rank 1 exits 3 before MPI_Init (Hydra hangs here: the others wait forever)
 *   abort             rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7) after MPI_Init
 *   self-kill         rank 1 raises SIGKILL after MPI_Init
 *   pmi-garbage       rank 1 writes a non-PMI line to PMI_FD before anything else, then waits */
#define _GNU_SOURCE
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prog_common.h"

#define FAILING_RANK 1
#define EXIT_BEFORE_INIT_STATUS 3
#define ABORT_STATUS 7

static const char garbage[] = "this is not PMI\n";

/* Rank 1 of pmi-garbage: the agent should answer with an error or close the fd, then end the
 * job. Whatever comes back is echoed; afterwards the rank waits to be killed, so a launcher that
 * does not end the job is caught by the test's time cap rather than by a clean exit here. */
static void send_garbage_and_wait(void) {
  int fd = prog_env_int("PMI_FD", -1);
  if (fd < 0) prog_fail("pmi-garbage: PMI_FD is not set");
  if (write(fd, garbage, strlen(garbage)) != (ssize_t)strlen(garbage))
    prog_fail("pmi-garbage: write to PMI_FD %d failed", fd);
  char buf[512];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0)
    fprintf(stderr, "mpi_fail: rank 1: agent answered: %.*s\n", (int)n, buf);
  for (;;) pause();
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: mpi_fail exit-before-init|abort|self-kill|pmi-garbage\n");
    return 2;
  }
  const char* mode = argv[1];
  int env_rank = prog_env_int("PMI_RANK", -1);
  prog_set_identity("mpi_fail", env_rank);
  int known = !strcmp(mode, "exit-before-init") || !strcmp(mode, "abort") ||
              !strcmp(mode, "self-kill") || !strcmp(mode, "pmi-garbage");
  if (!known) prog_fail("unknown mode '%s'", mode);
  if (env_rank == FAILING_RANK && !strcmp(mode, "pmi-garbage")) send_garbage_and_wait();
  if (env_rank == FAILING_RANK && !strcmp(mode, "exit-before-init")) {
    fprintf(stderr, "mpi_fail: rank 1 exits %d before MPI_Init\n", EXIT_BEFORE_INIT_STATUS);
    exit(EXIT_BEFORE_INIT_STATUS);
  }

  int rank = -1, size = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size <= FAILING_RANK) prog_fail("needs at least %d ranks, got %d", FAILING_RANK + 1, size);
  if (rank == FAILING_RANK && !strcmp(mode, "abort")) {
    fprintf(stderr, "mpi_fail: rank 1 calls MPI_Abort(%d)\n", ABORT_STATUS);
    MPI_Abort(MPI_COMM_WORLD, ABORT_STATUS);
  }
  if (rank == FAILING_RANK && !strcmp(mode, "self-kill")) {
    fprintf(stderr, "mpi_fail: rank 1 raises SIGKILL\n");
    raise(SIGKILL);
  }
  /* Every other rank (and rank 1 if its failure returned) blocks here until the job is torn down.
   */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  prog_fail("mode %s: the barrier completed although rank %d failed", mode, FAILING_RANK);
}
