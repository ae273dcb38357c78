/* MPI name publishing across a launch's nodes (MPI_Publish_name, MPI_Lookup_name,
 * MPI_Unpublish_name over PMI): rank 0 publishes, the last rank (on another node in a multi-node
 * launch) looks the name up; an unknown name, a second publish and a lookup after unpublish must
 * fail at once rather than hang. Every rank prints "namepub ok" at the end. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "prog_common.h"

#define SERVICE "lattice-test-service"
#define PORT "lattice-test-port-42"

static void expect_fail(int rc, const char* what) {
  if (rc == MPI_SUCCESS) prog_fail("%s succeeded, expected an error", what);
  printf("%s failed as expected\n", what);
}

int main(int argc, char** argv) {
  int rank = -1, size = 0;
  prog_set_identity("mpi_namepub", -1);
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) prog_fail("MPI_Init failed");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  prog_set_identity("mpi_namepub", rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int last = size - 1;
  char port[MPI_MAX_PORT_NAME];

  if (rank == 0 && MPI_Publish_name(SERVICE, MPI_INFO_NULL, PORT) != MPI_SUCCESS)
    prog_fail("MPI_Publish_name failed");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == last) {
    if (MPI_Lookup_name(SERVICE, MPI_INFO_NULL, port) != MPI_SUCCESS)
      prog_fail("MPI_Lookup_name of a published name failed");
    if (strcmp(port, PORT) != 0) prog_fail("looked up '%s', expected '%s'", port, PORT);
    printf("lookup found %s\n", port);
    expect_fail(MPI_Lookup_name("lattice-no-such-service", MPI_INFO_NULL, port), "unknown lookup");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    expect_fail(MPI_Publish_name(SERVICE, MPI_INFO_NULL, PORT), "second publish");
    if (MPI_Unpublish_name(SERVICE, MPI_INFO_NULL, PORT) != MPI_SUCCESS)
      prog_fail("MPI_Unpublish_name failed");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == last)
    expect_fail(MPI_Lookup_name(SERVICE, MPI_INFO_NULL, port), "lookup after unpublish");
  MPI_Finalize();
  printf("namepub ok\n");
  return 0;
}
