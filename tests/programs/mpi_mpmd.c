/* One program of an MPMD launch (mpiexec's ':' form): every rank prints its place in the one
 * MPI_COMM_WORLD, its MPI_APPNUM, its own arguments and the variable MPMD_TEST_APP (set per
 * program with --env), as
 *   "mpmd rank R of N appnum A app-size S env E args ARG ARG..."
 * where S is the number of ranks with the same MPI_APPNUM, counted with an Allreduce over the
 * whole world: wrong app numbers or two worlds show as a wrong S or N. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "prog_common.h"

#define MAX_APPS 16

int main(int argc, char** argv) {
  int rank = -1, size = 0, flag = 0;
  int* appnum_attr = NULL;
  prog_set_identity("mpi_mpmd", -1);
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) prog_fail("MPI_Init failed");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  prog_set_identity("mpi_mpmd", rank);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum_attr, &flag);
  if (!flag) prog_fail("MPI_APPNUM is not set");
  int appnum = *appnum_attr;
  if (appnum < 0 || appnum >= MAX_APPS) prog_fail("MPI_APPNUM %d is out of range", appnum);

  int mine[MAX_APPS] = {0}, counts[MAX_APPS] = {0};
  mine[appnum] = 1;
  MPI_Allreduce(mine, counts, MAX_APPS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

  const char* env = getenv("MPMD_TEST_APP");
  printf("mpmd rank %d of %d appnum %d app-size %d env %s args", rank, size, appnum, counts[appnum],
         env ? env : "-");
  for (int i = 1; i < argc; ++i) printf(" %s", argv[i]);
  printf("\n");
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
