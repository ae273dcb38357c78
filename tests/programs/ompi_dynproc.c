/* Open MPI program for dynamic processes through Lattice's PMIx tier (4 ranks, 2 per agent).
 *   names:   each rank publishes "lattice-svc-<rank>" (its MPI_Open_port), looks up the service
 *            of the rank two above it (on the other agent), finds that a name taken cannot be
 *            published again, unpublishes, and finds its own name gone.
 *   connect: rank 0 publishes a port, rank 3 looks it up; they MPI_Comm_accept/connect over
 *            COMM_SELF (one rank per agent), trade a message and MPI_Comm_disconnect.
 *   wait:    rank 0 looks up (PMIx_Lookup, PMIX_WAIT) a name rank 3 publishes a second later,
 *            then a name nobody publishes: with PMIX_TIMEOUT 1 s, then with no timeout (the
 *            launch's fence timeout caps it); each must fail, not hang.
 *   straggle: every rank calls PMIx_Connect over all of them, rank 3 only after 4 s: with a
 *            fence timeout under that, each agent's ranks fail waiting for the other agent's,
 *            and each rank prints what its PMIx_Connect returned.
 * Each rank prints "<mode> ok <rank>" when all it checked held; a mismatch exits 1. */
#include <mpi.h>
#include <pmix.h>
#include <stdio.h>
#include <string.h>

#include "prog_common.h"

static void names(int rank, int size) {
  char port[MPI_MAX_PORT_NAME], found[MPI_MAX_PORT_NAME], service[64];
  if (MPI_Open_port(MPI_INFO_NULL, port) != MPI_SUCCESS) prog_fail("MPI_Open_port");
  snprintf(service, sizeof service, "lattice-svc-%d", rank);
  if (MPI_Publish_name(service, MPI_INFO_NULL, port) != MPI_SUCCESS)
    prog_fail("publish %s", service);
  MPI_Barrier(MPI_COMM_WORLD);
  int peer = (rank + 2) % size;
  char peer_service[64];
  snprintf(peer_service, sizeof peer_service, "lattice-svc-%d", peer);
  if (MPI_Lookup_name(peer_service, MPI_INFO_NULL, found) != MPI_SUCCESS)
    prog_fail("lookup of %s failed", peer_service);
  /* The peer's port, as the peer opened it: gathered to compare. */
  char all[4][MPI_MAX_PORT_NAME];
  MPI_Allgather(port, MPI_MAX_PORT_NAME, MPI_CHAR, all, MPI_MAX_PORT_NAME, MPI_CHAR,
                MPI_COMM_WORLD);
  if (strcmp(found, all[peer]) != 0)
    prog_fail("%s: '%s', not '%s'", peer_service, found, all[peer]);
  if (MPI_Publish_name(peer_service, MPI_INFO_NULL, port) == MPI_SUCCESS)
    prog_fail("%s was published a second time", peer_service);
  MPI_Barrier(MPI_COMM_WORLD);
  if (MPI_Unpublish_name(service, MPI_INFO_NULL, port) != MPI_SUCCESS) prog_fail("unpublish");
  MPI_Barrier(MPI_COMM_WORLD);
  if (MPI_Lookup_name(service, MPI_INFO_NULL, found) == MPI_SUCCESS)
    prog_fail("%s found after its unpublish", service);
  MPI_Close_port(port);
}

static void connect(int rank, int size) {
  char port[MPI_MAX_PORT_NAME] = "";
  MPI_Comm inter;
  if (rank == 0) {
    if (MPI_Open_port(MPI_INFO_NULL, port) != MPI_SUCCESS) prog_fail("MPI_Open_port");
    if (MPI_Publish_name("lattice-dynproc", MPI_INFO_NULL, port) != MPI_SUCCESS)
      prog_fail("publish");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    if (MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter) != MPI_SUCCESS)
      prog_fail("accept");
  } else if (rank == size - 1) {
    if (MPI_Lookup_name("lattice-dynproc", MPI_INFO_NULL, port) != MPI_SUCCESS) prog_fail("lookup");
    if (MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter) != MPI_SUCCESS)
      prog_fail("connect");
  }
  if (rank == 0 || rank == size - 1) {
    int remote = -1, value = rank == 0 ? 4242 : 0;
    MPI_Comm_remote_size(inter, &remote);
    if (remote != 1) prog_fail("remote size %d", remote);
    if (rank == 0) {
      MPI_Send(&value, 1, MPI_INT, 0, 7, inter);
      MPI_Recv(&value, 1, MPI_INT, 0, 8, inter, MPI_STATUS_IGNORE);
      if (value != 4243) prog_fail("reply %d", value);
    } else {
      MPI_Recv(&value, 1, MPI_INT, 0, 7, inter, MPI_STATUS_IGNORE);
      if (value != 4242) prog_fail("message %d", value);
      value += 1;
      MPI_Send(&value, 1, MPI_INT, 0, 8, inter);
    }
    if (MPI_Comm_disconnect(&inter) != MPI_SUCCESS) prog_fail("disconnect");
  }
  if (rank == 0) {
    MPI_Unpublish_name("lattice-dynproc", MPI_INFO_NULL, port);
    MPI_Close_port(port);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static pmix_status_t waiting_lookup(const char* key, int timeout_s, char* value, size_t size) {
  pmix_pdata_t pdata;
  PMIX_PDATA_CONSTRUCT(&pdata);
  PMIX_LOAD_KEY(pdata.key, key);
  pmix_info_t info[2];
  bool wait = true;
  PMIX_INFO_LOAD(&info[0], PMIX_WAIT, &wait, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout_s, PMIX_INT);
  pmix_status_t rc = PMIx_Lookup(&pdata, 1, info, timeout_s > 0 ? 2 : 1);
  if (rc == PMIX_SUCCESS && pdata.value.type == PMIX_STRING)
    snprintf(value, size, "%s", pdata.value.data.string);
  PMIX_PDATA_DESTRUCT(&pdata);
  return rc;
}

static void wait_mode(int rank, int size) {
  pmix_proc_t me;
  if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) prog_fail("PMIx_Init");
  if (rank == size - 1) {
    prog_sleep_ms(1000);
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, "lattice-late", "published late", PMIX_STRING);
    pmix_status_t rc = PMIx_Publish(&info, 1);
    if (rc != PMIX_SUCCESS) prog_fail("publish: %s", PMIx_Error_string(rc));
  }
  if (rank == 0) {
    char value[64] = "";
    pmix_status_t rc = waiting_lookup("lattice-late", 30, value, sizeof value);
    if (rc != PMIX_SUCCESS || strcmp(value, "published late") != 0)
      prog_fail("waiting lookup: %s, '%s'", PMIx_Error_string(rc), value);
    rc = waiting_lookup("lattice-never", 1, value, sizeof value);
    printf("lookup with timeout: %s\n", PMIx_Error_string(rc));
    if (rc == PMIX_SUCCESS) prog_fail("found a name nobody published");
    rc = waiting_lookup("lattice-never", 0, value, sizeof value);
    printf("lookup capped: %s\n", PMIx_Error_string(rc));
    if (rc == PMIX_SUCCESS) prog_fail("found a name nobody published");
    fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  PMIx_Finalize(NULL, 0);
}

static void straggle_mode(int rank) {
  pmix_proc_t me, all;
  if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) prog_fail("PMIx_Init");
  PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
  if (rank == 3) prog_sleep_ms(4000);
  pmix_status_t rc = PMIx_Connect(&all, 1, NULL, 0);
  printf("straggle connect %d: %s\n", rank, PMIx_Error_string(rc));
  fflush(stdout);
  if (rc == PMIX_SUCCESS) prog_fail("a connect with a straggler succeeded");
  MPI_Barrier(MPI_COMM_WORLD);
  PMIx_Finalize(NULL, 0);
}

int main(int argc, char** argv) {
  int rank = -1, size = 0;
  prog_set_identity("ompi_dynproc", -1);
  if (argc != 2) prog_fail("usage: ompi_dynproc names|connect|wait|straggle");
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) prog_fail("MPI_Init failed");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  prog_set_identity("ompi_dynproc", rank);
  if (size != 4) prog_fail("needs 4 ranks, has %d", size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  if (strcmp(argv[1], "names") == 0)
    names(rank, size);
  else if (strcmp(argv[1], "connect") == 0)
    connect(rank, size);
  else if (strcmp(argv[1], "wait") == 0)
    wait_mode(rank, size);
  else if (strcmp(argv[1], "straggle") == 0)
    straggle_mode(rank);
  else
    prog_fail("unknown mode %s", argv[1]);
  printf("%s ok %d\n", argv[1], rank);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
