/* A hostile local user's PMIx client, for the shared-node tests: given a running launch's PMIx
 * variables (PMIX_NAMESPACE, PMIX_RANK, PMIX_SERVER_URI*, ...), it calls PMIx_Init as that rank
 * and, if let in, reads the job's size and a rank's committed key, puts a poisoned value and
 * enters the job's fence. Prints one line per step ("init: ...", "job size: ...", ...). */
#include <pmix.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  pmix_proc_t me;
  pmix_status_t rc = PMIx_Init(&me, NULL, 0);
  if (rc != PMIX_SUCCESS) {
    printf("init: refused (%s)\n", PMIx_Error_string(rc));
    return 1;
  }
  printf("init: in as rank %u of %s\n", me.rank, me.nspace);
  fflush(stdout);
  pmix_proc_t job;
  PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t* v = NULL;
  rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v);
  if (rc == PMIX_SUCCESS && v) printf("job size: %u\n", v->data.uint32);
  else printf("job size: %s\n", PMIx_Error_string(rc));
  fflush(stdout);
  pmix_value_t poison;
  PMIX_VALUE_LOAD(&poison, "attacker", PMIX_STRING);
  rc = PMIx_Put(PMIX_GLOBAL, "lattice-test-poison", &poison);
  if (rc == PMIX_SUCCESS) rc = PMIx_Commit();
  printf("put: %s\n", PMIx_Error_string(rc));
  fflush(stdout);
  rc = PMIx_Fence(&job, 1, NULL, 0);
  printf("fence: %s\n", PMIx_Error_string(rc));
  PMIx_Finalize(NULL, 0);
  return 0;
}
