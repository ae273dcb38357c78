/* MPICH program for multi-node fault tests: every rank wires up (MPI_Init, whose PMI fences span
 * all nodes) and then holds, so that a test can kill a rank or an agent mid-job.
 *   mpi_hold hold SECONDS     every rank: MPI_Init, Barrier, sleep SECONDS, Barrier, Finalize
 *   mpi_hold no-fence RANK    RANK never calls MPI_Init (so never enters a PMI fence); the others
 *                             wait for it in MPI_Init's first fence
 * Each rank prints "rank R pid P ready" once it is past MPI_Init (for `hold`), and with
 * MPI_HOLD_MARKS=DIR also makes the file DIR/R then, for a test to wait on. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prog_common.h"

int main(int argc, char** argv) {
  prog_set_identity("mpi_hold", -1);
  if (argc != 3) prog_fail("usage: mpi_hold hold SECONDS | no-fence RANK");
  int env_rank = prog_env_int("PMI_RANK", -1);
  int value = prog_parse_positive(argv[1], argv[2]);
  if (!strcmp(argv[1], "no-fence")) {
    if (env_rank == value) {
      sleep(3600);
      return 0;
    }
  } else if (strcmp(argv[1], "hold") != 0) {
    prog_fail("unknown mode '%s'", argv[1]);
  }
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  prog_set_identity("mpi_hold", rank);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d pid %d ready\n", rank, (int)getpid());
  fflush(stdout);
  const char* marks = getenv("MPI_HOLD_MARKS");
  if (marks) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%d", marks, rank);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
  }
  sleep((unsigned)value);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
