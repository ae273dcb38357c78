/* A PMIx client (OpenPMIx) for events and job control across nodes (test_pmix_events.py):
 *   pmix_events notify RANGE     every rank registers for a test event; rank 0 raises it with
 *                                RANGE (local, namespace, session, global, custom: the last rank
 *                                only); each rank that gets it prints "rank R got event from rank
 *                                S value V"; a rank that must not get it waits for the others.
 *   pmix_events fault DEAD       every rank registers for PMIX_ERR_PROC_ABORTED; rank DEAD exits 3
 *                                after a fence; the others wait for the event, print "rank R saw
 *                                rank D end (exit C)" and finish 0.
 *   pmix_events kill             rank 0 kills the last rank with PMIx_Job_control (its own rank 0
 *                                waits for the event of that end) and prints the status; the last
 *                                rank waits to be killed.
 *   pmix_events hold FILE        every rank waits for FILE to exist, then prints "rank R held".
 *   pmix_events listen FILE      as hold, registered for the test event and PMIX_ERR_PROC_ABORTED
 *                                (another launch's must never reach it): "rank R heard N events".
 *   pmix_events killns NSPACE    rank 0 asks PMIx_Job_control to kill NSPACE's rank 0 (another
 *                                launch's) and prints the answer.
 *   pmix_events refuse           rank 0 asks what Lattice refuses (and for a heartbeat monitor),
 *                                and prints each answer.
 * A wait gives up after 60 s (the test then fails on the missing line, never hangs). */
#define _GNU_SOURCE
#include <pmix.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prog_common.h"

#define TEST_EVENT (PMIX_EXTERNAL_ERR_BASE - 17)
#define WAIT_US (60LL * 1000 * 1000)

static pmix_proc_t me;
static int size;
static volatile int events_seen;

static void registered(pmix_status_t status, size_t ref, void* cbdata) {
  (void)ref;
  *(volatile int*)cbdata = status == PMIX_SUCCESS ? 1 : -1;
}

static void handler(size_t id, pmix_status_t status, const pmix_proc_t* source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
  (void)id, (void)results, (void)nresults;
  if (status == TEST_EVENT) {
    int value = -1;
    for (size_t n = 0; n < ninfo; ++n)
      if (!strcmp(info[n].key, "lattice.test.value")) value = info[n].value.data.integer;
    printf("rank %u got event from rank %u value %d\n", me.rank, source->rank, value);
  } else {
    int dead = -1, code = -1;
    for (size_t n = 0; n < ninfo; ++n) {
      if (PMIX_CHECK_KEY(&info[n], PMIX_EVENT_AFFECTED_PROC))
        dead = (int)info[n].value.data.proc->rank;
      if (PMIX_CHECK_KEY(&info[n], PMIX_EXIT_CODE)) code = info[n].value.data.integer;
    }
    printf("rank %u saw rank %d end (exit %d) status %s\n", me.rank, dead, code,
           PMIx_Error_string(status));
  }
  fflush(stdout);
  __sync_fetch_and_add(&events_seen, 1);
  if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void register_for(pmix_status_t code) {
  volatile int done = 0;
  PMIx_Register_event_handler(&code, 1, NULL, 0, handler, registered, (void*)&done);
  long long start = prog_now_us();
  while (!done && prog_now_us() - start < WAIT_US) usleep(1000);
  if (done != 1) prog_fail("PMIx_Register_event_handler failed");
}

static bool wait_events(int count) {
  long long start = prog_now_us();
  while (events_seen < count && prog_now_us() - start < WAIT_US) usleep(1000);
  return events_seen >= count;
}

static void fence(void) {
  pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
  if (rc != PMIX_SUCCESS) prog_fail("PMIx_Fence: %s", PMIx_Error_string(rc));
}

static pmix_data_range_t range_of(const char* name) {
  if (!strcmp(name, "local")) return PMIX_RANGE_LOCAL;
  if (!strcmp(name, "namespace")) return PMIX_RANGE_NAMESPACE;
  if (!strcmp(name, "session")) return PMIX_RANGE_SESSION;
  if (!strcmp(name, "global")) return PMIX_RANGE_GLOBAL;
  if (!strcmp(name, "custom")) return PMIX_RANGE_CUSTOM;
  prog_fail("unknown range %s", name);
}

/* The ranks on this node, from the job data libpmix holds. */
static bool on_my_node(pmix_rank_t rank) {
  pmix_value_t* val = NULL;
  pmix_proc_t wild;
  PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
  if (PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &val) != PMIX_SUCCESS || !val)
    prog_fail("no PMIX_LOCAL_PEERS");
  bool found = false;
  char* peers = strdup(val->data.string);
  for (char* tok = strtok(peers, ","); tok; tok = strtok(NULL, ","))
    if ((pmix_rank_t)atoi(tok) == rank) found = true;
  free(peers);
  PMIX_VALUE_RELEASE(val);
  return found;
}

static void notify(const char* range_name) {
  pmix_data_range_t range = range_of(range_name);
  register_for(TEST_EVENT);
  fence();
  pmix_rank_t last = (pmix_rank_t)size - 1;
  bool expected;
  if (range == PMIX_RANGE_LOCAL)
    expected = on_my_node(0);
  else if (range == PMIX_RANGE_CUSTOM)
    expected = me.rank == last;
  else
    expected = true;
  if (me.rank == 0) {
    pmix_info_t info[2];
    int value = 42;
    PMIX_INFO_LOAD(&info[0], "lattice.test.value", &value, PMIX_INT);
    size_t ninfo = 1;
    if (range == PMIX_RANGE_CUSTOM) {
      pmix_proc_t target;
      PMIX_LOAD_PROCID(&target, me.nspace, last);
      pmix_data_array_t array = {PMIX_PROC, 1, &target};
      PMIX_INFO_LOAD(&info[1], PMIX_EVENT_CUSTOM_RANGE, &array, PMIX_DATA_ARRAY);
      ninfo = 2;
    }
    pmix_status_t rc = PMIx_Notify_event(TEST_EVENT, &me, range, info, ninfo, NULL, NULL);
    printf("rank 0 notify %s\n", PMIx_Error_string(rc));
    fflush(stdout);
  } else if (expected) {
    if (!wait_events(1)) printf("rank %u got no event\n", me.rank);
    fflush(stdout);
  }
  /* Everybody that expects the event has it: one that was not to get it has had its chance. */
  fence();
  if (!expected && events_seen) printf("rank %u got an event out of range\n", me.rank);
}

static void fault(int dead) {
  register_for(PMIX_ERR_PROC_ABORTED);
  fence();
  if ((int)me.rank == dead) {
    printf("rank %u exits 3\n", me.rank);
    fflush(stdout);
    _exit(3);
  }
  if (!wait_events(1)) printf("rank %u saw no end\n", me.rank);
  printf("rank %u goes on\n", me.rank);
  fflush(stdout);
}

static void kill_last(void) {
  pmix_rank_t last = (pmix_rank_t)size - 1;
  register_for(PMIX_ERR_PROC_ABORTED);
  fence();
  if (me.rank == 0) {
    pmix_proc_t target;
    PMIX_LOAD_PROCID(&target, me.nspace, last);
    pmix_info_t directive;
    bool yes = true;
    PMIX_INFO_LOAD(&directive, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Job_control(&target, 1, &directive, 1, NULL, NULL);
    printf("rank 0 job control kill %u: %s\n", last, PMIx_Error_string(rc));
    fflush(stdout);
    if (!wait_events(1)) printf("rank 0 saw no end\n");
  } else if (me.rank == last) {
    long long start = prog_now_us();
    while (prog_now_us() - start < WAIT_US) usleep(10000);
    printf("rank %u was not killed\n", me.rank);
  }
  fflush(stdout);
}

static void say(const char* what, pmix_status_t rc) {
  printf("%s: %s\n", what, PMIx_Error_string(rc));
  fflush(stdout);
}

static void hold(const char* file) {
  fence();
  long long start = prog_now_us();
  while (access(file, F_OK) != 0 && prog_now_us() - start < WAIT_US) usleep(10000);
  printf("rank %u held\n", me.rank);
  fflush(stdout);
}

static void listen_until(const char* file) {
  register_for(TEST_EVENT);
  register_for(PMIX_ERR_PROC_ABORTED);
  hold(file);
  printf("rank %u heard %d events\n", me.rank, events_seen);
  fflush(stdout);
}

static void kill_elsewhere(const char* nspace) {
  if (me.rank != 0) return;
  pmix_proc_t target;
  pmix_info_t directive;
  bool yes = true;
  PMIX_LOAD_PROCID(&target, nspace, 0);
  PMIX_INFO_LOAD(&directive, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL);
  say("job control on another launch", PMIx_Job_control(&target, 1, &directive, 1, NULL, NULL));
}

static void refuse(void) {
  fence();
  if (me.rank != 0) return;
  pmix_proc_t target;
  pmix_info_t directive;
  bool yes = true;
  PMIX_LOAD_PROCID(&target, me.nspace, 1);
  PMIX_INFO_LOAD(&directive, PMIX_JOB_CTRL_PAUSE, &yes, PMIX_BOOL);
  say("job control pause", PMIx_Job_control(&target, 1, &directive, 1, NULL, NULL));
  PMIX_LOAD_PROCID(&target, "another.namespace", 0);
  PMIX_INFO_LOAD(&directive, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL);
  say("job control elsewhere", PMIx_Job_control(&target, 1, &directive, 1, NULL, NULL));
  PMIX_LOAD_PROCID(&target, me.nspace, (pmix_rank_t)size + 5);
  say("job control no such rank", PMIx_Job_control(&target, 1, &directive, 1, NULL, NULL));
  pmix_info_t monitor;
  PMIX_INFO_LOAD(&monitor, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
  pmix_info_t every;
  uint32_t seconds = 60;
  PMIX_INFO_LOAD(&every, PMIX_MONITOR_HEARTBEAT_TIME, &seconds, PMIX_UINT32);
  say("monitor heartbeat",
      PMIx_Process_monitor(&monitor, PMIX_MONITOR_HEARTBEAT_ALERT, &every, 1, NULL, NULL));
  const char* keys[] = {PMIX_QUERY_NAMESPACES, PMIX_QUERY_PROC_TABLE, PMIX_QUERY_SPAWN_SUPPORT,
                        PMIX_QUERY_DEBUG_SUPPORT};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k) {
    pmix_query_t query;
    PMIX_QUERY_CONSTRUCT(&query);
    pmix_status_t appended;
    PMIX_ARGV_APPEND(appended, query.keys, keys[k]);
    (void)appended;
    if (k == 1) {
      PMIX_QUERY_QUALIFIERS_CREATE(&query, 1);
      PMIX_INFO_LOAD(&query.qualifiers[0], PMIX_NSPACE, me.nspace, PMIX_STRING);
    }
    pmix_info_t* results = NULL;
    size_t nresults = 0;
    char what[128];
    snprintf(what, sizeof what, "query %s", keys[k]);
    say(what, PMIx_Query_info(&query, 1, &results, &nresults));
    for (size_t i = 0; i < nresults; ++i)
      if (results[i].value.type == PMIX_STRING)
        printf("query %s = '%s'\n", results[i].key, results[i].value.data.string);
    fflush(stdout);
    if (results) PMIX_INFO_FREE(results, nresults);
    PMIX_QUERY_DESTRUCT(&query);
  }
}

int main(int argc, char** argv) {
  prog_set_identity("pmix_events", -1);
  pmix_status_t rc = PMIx_Init(&me, NULL, 0);
  if (rc != PMIX_SUCCESS) prog_fail("PMIx_Init: %s", PMIx_Error_string(rc));
  prog_set_identity("pmix_events", (int)me.rank);
  pmix_proc_t wild;
  PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t* val = NULL;
  if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val) != PMIX_SUCCESS) prog_fail("no job size");
  size = (int)val->data.uint32;
  PMIX_VALUE_RELEASE(val);
  const char* mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "notify") && argc > 2)
    notify(argv[2]);
  else if (!strcmp(mode, "fault") && argc > 2)
    fault(atoi(argv[2]));
  else if (!strcmp(mode, "kill"))
    kill_last();
  else if (!strcmp(mode, "refuse"))
    refuse();
  else if (!strcmp(mode, "hold") && argc > 2)
    hold(argv[2]);
  else if (!strcmp(mode, "listen") && argc > 2)
    listen_until(argv[2]);
  else if (!strcmp(mode, "killns") && argc > 2)
    kill_elsewhere(argv[2]);
  else
    prog_fail(
        "usage: pmix_events notify RANGE | fault RANK | kill | hold FILE | listen FILE | "
        "killns NSPACE | refuse");
  PMIx_Finalize(NULL, 0);
  return 0;
}
