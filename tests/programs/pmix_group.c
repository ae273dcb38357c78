/* A PMIx client for groups (RFC0003), 4 ranks over 2 agents (2 each):
 *   every rank constructs group "lattice-all" of the whole namespace, asking for a context id
 *   (PMIX_GROUP_ASSIGN_CONTEXT_ID), and prints "group all ctx N"; ranks 0 and 2 (one per agent)
 *   then construct "lattice-pair" of the two of them and print "group pair ctx N"; each member
 *   destructs its groups and prints "group destructed R".
 * With argument "invite", rank 0 invites every rank into group "lattice-invited" instead
 * (PMIx_Group_invite/join, which libpmix 4.2.2 builds from events with custom ranges): the others
 * wait for the invitation, join, print "joined lattice-invited led by 0", and then wait for the
 * leader's "construct complete" event, printing "invited group complete R"; the leader prints
 * "invite accepted by all" once every invitee has joined. A failure exits 1. */
#include <pmix.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

/* What the event handlers saw, for the main thread (handlers run on libpmix's thread, where a
 * blocking PMIx call would wait on itself). */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t seen_cond = PTHREAD_COND_INITIALIZER;
static int invited, completed;
static pmix_proc_t inviter;
static char invited_group[PMIX_MAX_NSLEN + 1];

static void on_group_event(size_t id, pmix_status_t status, const pmix_proc_t* source,
                           pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                           pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
  (void)id;
  (void)results;
  (void)nresults;
  pthread_mutex_lock(&seen_lock);
  for (size_t i = 0; i < ninfo; ++i)
    if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ID) && info[i].value.type == PMIX_STRING)
      snprintf(invited_group, sizeof invited_group, "%s", info[i].value.data.string);
  if (status == PMIX_GROUP_INVITED) {
    PMIX_XFER_PROCID(&inviter, source);
    invited = 1;
  } else if (status == PMIX_GROUP_CONSTRUCT_COMPLETE) {
    completed = 1;
  }
  pthread_cond_broadcast(&seen_cond);
  pthread_mutex_unlock(&seen_lock);
  if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void wait_for(const int* flag, const char* what) {
  pthread_mutex_lock(&seen_lock);
  while (!*flag) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    if (pthread_cond_timedwait(&seen_cond, &seen_lock, &until) != 0) prog_fail("no %s", what);
  }
  pthread_mutex_unlock(&seen_lock);
}

static void invite(const pmix_proc_t* me) {
  pmix_status_t codes[] = {PMIX_GROUP_INVITED, PMIX_GROUP_CONSTRUCT_COMPLETE};
  pmix_status_t rc = PMIx_Register_event_handler(codes, 2, NULL, 0, on_group_event, NULL, NULL);
  if (rc < 0) prog_fail("PMIx_Register_event_handler: %s", PMIx_Error_string(rc));
  /* Every handler is in place before the leader invites. */
  if (PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS) prog_fail("PMIx_Fence failed");
  if (me->rank == 0) {
    pmix_proc_t all[4];
    for (pmix_rank_t r = 0; r < 4; ++r) PMIX_LOAD_PROCID(&all[r], me->nspace, r);
    pmix_info_t* results = NULL;
    size_t nresults = 0;
    rc = PMIx_Group_invite("lattice-invited", all, 4, NULL, 0, &results, &nresults);
    if (rc != PMIX_SUCCESS) prog_fail("PMIx_Group_invite: %s", PMIx_Error_string(rc));
    if (results) PMIX_INFO_FREE(results, nresults);
    printf("invite accepted by all\n");
  } else {
    wait_for(&invited, "invitation");
    if (strcmp(invited_group, "lattice-invited") != 0)
      prog_fail("invited to group \"%s\"", invited_group);
    rc = PMIx_Group_join("lattice-invited", &inviter, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL);
    if (rc != PMIX_SUCCESS) prog_fail("PMIx_Group_join: %s", PMIx_Error_string(rc));
    printf("joined lattice-invited led by %u\n", inviter.rank);
    fflush(stdout);
    wait_for(&completed, "construct-complete event");
    printf("invited group complete %u\n", me->rank);
  }
  fflush(stdout);
}

int main(int argc, char** argv) {
  pmix_proc_t me;
  prog_set_identity("pmix_group", -1);
  if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) prog_fail("PMIx_Init failed");
  prog_set_identity("pmix_group", (int)me.rank);
  if (argc > 1 && strcmp(argv[1], "invite") == 0) {
    invite(&me);
    if (PMIx_Finalize(NULL, 0) != PMIX_SUCCESS) prog_fail("PMIx_Finalize failed");
    return 0;
  }
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
