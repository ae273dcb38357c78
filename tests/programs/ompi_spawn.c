/* Open MPI program for MPI_Comm_spawn: every rank of MPI_COMM_WORLD spawns N copies of this
 * program together (root 0; with a second argument, on the host it names, or with
 * "hostfile:PATH" or "add-host:HOST" that MPI_Info key instead; a failed spawn prints
 * "spawn failed" and exits 0), and parents and
 * children then talk over the intercommunicator, which needs the children to have connected back
 * to their parents and each side to reach the other's processes: an MPI_Allreduce across it, in
 * which parent r gives 100 * (r + 1) and child r gives r + 1. Each side prints the other side's
 * sum, then both disconnect and finalize. With "nested", the children together spawn 2
 * grandchildren in turn (root 0) and talk to them the same way, each child giving 10 * (r + 1):
 * each child prints "grandchildren's sum", each grandchild (a child of its own parents) its
 * parents'. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "prog_common.h"

/* An MPI_Allreduce across the intercommunicator: the other side's sum. */
static int remote_sum(MPI_Comm inter, int mine, const char* with) {
  int sum = 0;
  if (MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter) != MPI_SUCCESS)
    prog_fail("MPI_Allreduce with the %s failed", with);
  return sum;
}

static int child(const char* self, int nested) {
  MPI_Comm parent;
  int rank = -1, size = 0, parents = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  prog_set_identity("ompi_spawn child", rank);
  MPI_Comm_get_parent(&parent);
  if (parent == MPI_COMM_NULL) prog_fail("no parent");
  MPI_Comm_remote_size(parent, &parents);
  const int sum = remote_sum(parent, rank + 1, "parents");
  printf("child %d/%d: %d parents, their sum %d\n", rank, size, parents, sum);
  fflush(stdout);
  if (nested) {
    MPI_Comm inter;
    int errcodes[2];
    char* args[] = {"child", NULL};
    if (MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errcodes) !=
        MPI_SUCCESS)
      prog_fail("the nested MPI_Comm_spawn failed");
    printf("child %d: grandchildren's sum %d\n", rank,
           remote_sum(inter, 10 * (rank + 1), "grandchildren"));
    fflush(stdout);
    if (MPI_Comm_disconnect(&inter) != MPI_SUCCESS) prog_fail("MPI_Comm_disconnect failed");
  }
  if (MPI_Comm_disconnect(&parent) != MPI_SUCCESS) prog_fail("MPI_Comm_disconnect failed");
  MPI_Finalize();
  return 0;
}

int main(int argc, char** argv) {
  int rank = -1, size = 0;
  prog_set_identity("ompi_spawn", -1);
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) prog_fail("MPI_Init failed");
  if (argc > 1 && !strcmp(argv[1], "child"))
    return child(argv[0], argc > 2 && !strcmp(argv[2], "nested"));
  if (argc < 2) prog_fail("usage: ompi_spawn CHILDREN [HOST|-] [nested]");
  const int children = prog_parse_positive("CHILDREN", argv[1]);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  prog_set_identity("ompi_spawn", rank);
  MPI_Info info = MPI_INFO_NULL;
  if (argc > 2 && strcmp(argv[2], "-")) {
    const char* key = "host";
    const char* value = argv[2];
    const char* colon = strchr(argv[2], ':');
    static char named[64];
    if (colon && (size_t)(colon - argv[2]) < sizeof named) {
      memcpy(named, argv[2], (size_t)(colon - argv[2]));
      named[colon - argv[2]] = '\0';
      key = named;
      value = colon + 1;
    }
    MPI_Info_create(&info);
    MPI_Info_set(info, key, value);
  }
  char* args[] = {"child", argc > 3 ? argv[3] : NULL, NULL};
  MPI_Comm inter;
  int errcodes[64];
  if (children > 64) prog_fail("at most 64 children");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (MPI_Comm_spawn(argv[0], args, children, info, 0, MPI_COMM_WORLD, &inter, errcodes) !=
      MPI_SUCCESS) {
    printf("parent %d: spawn failed\n", rank);
    MPI_Finalize();
    return 0;
  }
  int remote = 0;
  MPI_Comm_remote_size(inter, &remote);
  const int sum = remote_sum(inter, 100 * (rank + 1), "children");
  printf("parent %d/%d: %d children, their sum %d\n", rank, size, remote, sum);
  fflush(stdout);
  if (MPI_Comm_disconnect(&inter) != MPI_SUCCESS) prog_fail("MPI_Comm_disconnect failed");
  MPI_Finalize();
  return 0;
}
