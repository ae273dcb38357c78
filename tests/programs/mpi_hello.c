/* MPICH hello: the smallest real MPI program, for the demo and the end-to-end benchmark. It checks
 * only that MPI_Init and MPI_Finalize succeed (MPICH aborts by itself when they do not). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int rank = 0, size = 0, len = 0;
  char host[MPI_MAX_PROCESSOR_NAME];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Get_processor_name(host, &len);
  printf("hello from rank %d of %d on %s\n", rank, size, host);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
