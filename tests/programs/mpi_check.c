/* MPI wire-up check, built for MPICH (mpi_check) and Open MPI (ompi_check): collectives,
 * point-to-point and the node-local communicator must agree with what the launcher said.
 * MPI_Comm_split_type(SHARED) follows the node map the agent served (PMI_process_mapping, or
 * PMIx's maps), so its size is checked against LATTICE_LOCAL_SIZE (MPI_LOCALNRANKS under Hydra,
 * OMPI_COMM_WORLD_LOCAL_SIZE under mpirun). */
#include <mpi.h>
#include <stdio.h>

#include "prog_common.h"

/* Tag and payload offset for the ring: any value that cannot be mistaken for a rank. */
#define RING_TAG 17
#define RING_PAYLOAD_BASE 100000

/* The innermost launcher's name first: an mpiexec.hydra or mpirun run inside a Lattice launch
 * passes the outer launch's LATTICE_* on to its own ranks. */
static const char* const local_size_vars[] = {"MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE",
                                              "LATTICE_LOCAL_SIZE", NULL};
static const char* const local_rank_vars[] = {"MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK",
                                              "LATTICE_LOCAL_RANK", NULL};
static const char* const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};

static void check_mpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) prog_fail("%s returned %d", what, rc);
}

static void check_allreduce(int rank, int size) {
  long long mine = rank, sum = -1;
  long long expected = (long long)size * (size - 1) / 2;
  check_mpi(MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  if (sum != expected) prog_fail("Allreduce sum of ranks is %lld, expected %lld", sum, expected);
}

static void check_ring(int rank, int size) {
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int out = RING_PAYLOAD_BASE + rank, in = -1;
  check_mpi(MPI_Sendrecv(&out, 1, MPI_INT, right, RING_TAG, &in, 1, MPI_INT, left, RING_TAG,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
  if (in != RING_PAYLOAD_BASE + left)
    prog_fail("ring: received %d from rank %d, expected %d", in, left, RING_PAYLOAD_BASE + left);
}

/* Returns the node-local size, checked against the launcher's environment when it gives one. */
static int check_shared_comm(int rank) {
  MPI_Comm local;
  int local_size = 0, local_rank = -1;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local),
            "MPI_Comm_split_type");
  MPI_Comm_size(local, &local_size);
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_free(&local);
  const char *size_var = NULL, *rank_var = NULL;
  int want_size = prog_env_int_any(local_size_vars, -1, &size_var);
  int want_rank = prog_env_int_any(local_rank_vars, -1, &rank_var);
  if (want_size >= 0 && local_size != want_size)
    prog_fail("shared-memory communicator has %d ranks, %s says %d", local_size, size_var,
              want_size);
  if (want_rank >= 0 && local_rank != want_rank)
    prog_fail("rank %d in the shared-memory communicator, %s says %d", local_rank, rank_var,
              want_rank);
  return local_size;
}

int main(int argc, char** argv) {
  int rank = -1, size = 0;
  prog_set_identity("mpi_check", -1);
  check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  prog_set_identity("mpi_check", rank);
  const char* size_var = NULL;
  int want_size = prog_env_int_any(size_vars, -1, &size_var);
  if (want_size >= 0 && size != want_size)
    prog_fail("MPI_COMM_WORLD has %d ranks, %s says %d", size, size_var, want_size);

  check_allreduce(rank, size);
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  check_ring(rank, size);
  int local_size = check_shared_comm(rank);

  check_mpi(MPI_Finalize(), "MPI_Finalize");
  printf("rank %d/%d ok (allreduce, barrier, ring, %d on this node)\n", rank, size, local_size);
  return 0;
}
