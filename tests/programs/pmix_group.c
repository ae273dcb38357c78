/* A PMIx client for groups (RFC0003), 4 ranks over 2 agents (2 each):
 *   every rank constructs group "lattice-all" of the whole namespace, asking for a context id
 *   (PMIX_GROUP_ASSIGN_CONTEXT_ID), and prints "group all ctx N"; ranks 0 and 2 (one per agent)
 *   then construct "lattice-pair" of the two of them and print "group pair ctx N"; each member
 *   destructs its groups and prints "group destructed R". A failure exits 1. */
#include <pmix.h>
#include <stdio.h>
#include <string.h>

#include "prog_common.h"

static size_t construct(const char* name, const pmix_proc_t* procs, size_t nprocs) {
  pmix_info_t directive;
  bool assign = true;
  PMIX_INFO_LOAD(&directive, PMIX_GROUP_ASSIGN_CONTEXT_ID, &assign, PMIX_BOOL);
  pmix_info_t* results = NULL;
  size_t nresults = 0;
  pmix_status_t rc = PMIx_Group_construct(name, procs, nprocs, &directive, 1, &results, &nresults);
  PMIX_INFO_DESTRUCT(&directive);
  if (rc != PMIX_SUCCESS) prog_fail("PMIx_Group_construct(%s): %s", name, PMIx_Error_string(rc));
  size_t ctx = 0;
  for (size_t i = 0; i < nresults; ++i)
    if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID))
      PMIX_VALUE_GET_NUMBER(rc, &results[i].value, ctx, size_t);
  if (results) PMIX_INFO_FREE(results, nresults);
  if (ctx == 0) prog_fail("group %s has no context id", name);
  return ctx;
}

static void destruct(const char* name) {
  pmix_status_t rc = PMIx_Group_destruct(name, NULL, 0);
  if (rc != PMIX_SUCCESS) prog_fail("PMIx_Group_destruct(%s): %s", name, PMIx_Error_string(rc));
}

int main(void) {
  pmix_proc_t me;
  prog_set_identity("pmix_group", -1);
  if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) prog_fail("PMIx_Init failed");
  prog_set_identity("pmix_group", (int)me.rank);
  pmix_proc_t all;
  PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
  printf("group all ctx %zu\n", construct("lattice-all", &all, 1));
  fflush(stdout);
  if (me.rank == 0 || me.rank == 2) {
    pmix_proc_t pair[2];
    PMIX_LOAD_PROCID(&pair[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&pair[1], me.nspace, 2);
    printf("group pair ctx %zu\n", construct("lattice-pair", pair, 2));
    fflush(stdout);
    destruct("lattice-pair");
  }
  destruct("lattice-all");
  printf("group destructed %u\n", me.rank);
  fflush(stdout);
  if (PMIx_Finalize(NULL, 0) != PMIX_SUCCESS) prog_fail("PMIx_Finalize failed");
  return 0;
}
