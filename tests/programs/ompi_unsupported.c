/* Open MPI program for what the PMIx tier does not serve yet: rank 0 spawns one copy of this
 * program (MPI_Comm_spawn, MPI_ERRORS_RETURN) and prints what it returned; every rank then
 * finalizes. The child (argument "child") only initialises MPI, which connects it back to its
 * parent. Under Lattice that connection is refused: the launch must fail at once, saying why,
 * not hang. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "prog_common.h"

int main(int argc, char** argv) {
  int rank = -1;
  prog_set_identity("ompi_unsupported", -1);
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) prog_fail("MPI_Init failed");
  if (argc > 1 && !strcmp(argv[1], "child")) {
    MPI_Finalize();
    return 0;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  prog_set_identity("ompi_unsupported", rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  if (rank == 0) {
    MPI_Comm child;
    int errcode = 0;
    char* args[] = {"child", NULL};
    int rc = MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &child, &errcode);
    printf("spawn %s\n", rc == MPI_SUCCESS ? "succeeded" : "failed");
    fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
