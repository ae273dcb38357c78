/* A PMIx client that spawns (PMIx_Spawn, what MPI_Comm_spawn calls underneath):
 *   pmix_spawn N [HOST]    rank 0 spawns N copies of this program as "pmix_spawn child" (on node
 *                          HOST only, given), prints the children's namespace, and every rank
 *                          then finalizes
 *   pmix_spawn child       prints "child R/S on HOST of NSPACE parent PNSPACE:PRANK" (its node's
 *                          name and PMIX_PARENT_ID, as the child's libpmix has them) and
 *                          "child R env TOKEN" (SPAWN_TOKEN from its environment) */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prog_common.h"

static int child(void) {
  pmix_proc_t me;
  if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) prog_fail("PMIx_Init failed");
  prog_set_identity("pmix_spawn child", (int)me.rank);
  pmix_proc_t wildcard;
  PMIX_LOAD_PROCID(&wildcard, me.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t* value = NULL;
  unsigned size = 0;
  if (PMIx_Get(&wildcard, PMIX_JOB_SIZE, NULL, 0, &value) == PMIX_SUCCESS) {
    size = value->data.uint32;
    PMIX_VALUE_RELEASE(value);
  }
  char parent[PMIX_MAX_NSLEN + 32] = "none";
  if (PMIx_Get(&me, PMIX_PARENT_ID, NULL, 0, &value) == PMIX_SUCCESS ||
      PMIx_Get(&wildcard, PMIX_PARENT_ID, NULL, 0, &value) == PMIX_SUCCESS) {
    if (value->type == PMIX_PROC)
      snprintf(parent, sizeof parent, "%s:%u", value->data.proc->nspace, value->data.proc->rank);
    PMIX_VALUE_RELEASE(value);
  }
  char host[256] = "unknown";
  if (PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &value) == PMIX_SUCCESS) {
    if (value->type == PMIX_STRING) snprintf(host, sizeof host, "%s", value->data.string);
    PMIX_VALUE_RELEASE(value);
  }
  const char* token = getenv("SPAWN_TOKEN");
  printf("child %u/%u on %s of %s parent %s\n", me.rank, size, host, me.nspace, parent);
  printf("child %u env %s\n", me.rank, token ? token : "(unset)");
  fflush(stdout);
  PMIx_Finalize(NULL, 0);
  return 0;
}

int main(int argc, char** argv) {
  prog_set_identity("pmix_spawn", -1);
  if (argc >= 2 && !strcmp(argv[1], "child")) return child();
  if (argc < 2) prog_fail("usage: pmix_spawn N [HOST] | pmix_spawn child");
  int n = prog_parse_positive("N", argv[1]);
  pmix_proc_t me;
  if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) prog_fail("PMIx_Init failed");
  prog_set_identity("pmix_spawn", (int)me.rank);
  int rc = 0;
  if (me.rank == 0) {
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) prog_fail("readlink /proc/self/exe");
    self[len] = '\0';
    char* args[] = {self, "child", NULL};
    char* env[] = {"SPAWN_TOKEN=from-parent", NULL};
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup(self);
    PMIX_ARGV_COPY(app.argv, args);
    PMIX_ARGV_COPY(app.env, env);
    app.maxprocs = n;
    if (argc >= 3) {
      PMIX_INFO_CREATE(app.info, 1);
      app.ninfo = 1;
      PMIX_INFO_LOAD(&app.info[0], PMIX_HOST, argv[2], PMIX_STRING);
    }
    pmix_nspace_t child_ns;
    pmix_status_t st = PMIx_Spawn(NULL, 0, &app, 1, child_ns);
    if (st == PMIX_SUCCESS) {
      printf("spawned %d into %s\n", n, child_ns);
    } else {
      printf("spawn failed: %s\n", PMIx_Error_string(st));
      rc = 3;
    }
    fflush(stdout);
    PMIX_APP_DESTRUCT(&app);
  }
  PMIx_Finalize(NULL, 0);
  return rc;
}
