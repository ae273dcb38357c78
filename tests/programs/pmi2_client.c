/* A real PMI-2 client (Slurm's libpmi2) that checks every answer the server gives: job id, process
 * mapping against the launcher's environment, node attributes, KVS rounds, PMIX_Ring. Modes:
 *   pmi2_client [--rounds N] [--hydra]       checks; each rank prints "pmi2 rank R/N ok"
 *   pmi2_client --bench ROUNDS [--size B]    times put -> fence -> get-all; rank 0 prints p50/p99
 *   pmi2_client --fence-bench ROUNDS [--size B] [--keys K [--same-key]] [--then-get]
 *               [--late-ms D]                times the fence alone (last rank in -> last rank out;
 *                                            ranks on one host). K puts per rank per round (1 by
 *                                            default, 0 for empty fences; all of one key with
 *                                            --same-key); --then-get: the fence and a get of the
 *                                            next rank's key; --late-ms: rank 0 enters each timed
 *                                            fence D ms late. Rank 0 prints p50/p99 and how long
 *                                            before the last rank entered a fence any rank left it
 *                                            (0 for a barrier)
 *   pmi2_client --abort                      rank 1 calls PMI2_Abort after init, the others fence
 *   pmi2_client --namepub                    rank 0 publishes a name, the last rank looks it up;
 *                                            unknown and unpublished names must fail at once
 *   pmi2_client --appnum A                   checks also that PMI2_Init's appnum is A (MPMD)
 * Hydra (MPICH 4.0.2) answers neither the "ring" command nor the universeSize attribute: --hydra
 * skips those two checks, so the program can be checked under mpiexec.hydra too. --size must stay
 * below PMI2_MAX_VALLEN (1024 counts the NUL; Hydra cuts a 1024-byte value to 1023). */
#define _GNU_SOURCE
#include <slurm/pmi2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmi2_kvs.h"
#include "pmi2_mapping.h"
#include "prog_common.h"

#define ABORTING_RANK 1
#define NODE_ATTR_KEY "lattice-test-leader"
#define DEFAULT_ROUNDS 2
/* Default value length of the check rounds: long enough to cross a few PMI-2 fields. */
#define CHECK_VALUE_LEN 48
#define DEFAULT_BENCH_SIZE 64

struct options {
  int rounds;       /* check rounds of put -> fence -> get */
  int bench_rounds; /* 0: check mode */
  int fence_only;   /* --fence-bench: time the fence alone */
  int size;         /* value length in bench mode */
  int keys;         /* --keys: puts per rank per round of --fence-bench */
  int same_key;     /* --same-key: those puts all name one key */
  int then_get;     /* --then-get: time the fence and a get of the next rank's key */
  int late_ms;      /* --late-ms: rank 0 enters each timed fence this late */
  int hydra;
  int abort_mode;
  int namepub_mode;
  int appnum; /* expected app number; -1: not checked */
};

struct job {
  int rank, size, local_rank, local_size, leader, nnodes, appnum;
  char jobid[PMI2_MAX_VALLEN];
};

static const char* const local_rank_vars[] = {"LATTICE_LOCAL_RANK", "MPI_LOCALRANKID", NULL};
static const char* const local_size_vars[] = {"LATTICE_LOCAL_SIZE", "MPI_LOCALNRANKS", NULL};
static const char* const nnodes_vars[] = {"LATTICE_NNODES", NULL};

static struct options parse_options(int argc, char** argv) {
  struct options o = {
      .rounds = DEFAULT_ROUNDS, .size = DEFAULT_BENCH_SIZE, .appnum = -1, .keys = 1};
  for (int i = 1; i < argc; ++i) {
    const char* next = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--rounds")) {
      o.rounds = prog_parse_positive("--rounds", next), ++i;
    } else if (!strcmp(argv[i], "--bench") || !strcmp(argv[i], "--fence-bench")) {
      o.fence_only = !strcmp(argv[i], "--fence-bench");
      o.bench_rounds = prog_parse_positive(argv[i], next), ++i;
    } else if (!strcmp(argv[i], "--same-key")) {
      o.same_key = 1;
    } else if (!strcmp(argv[i], "--then-get")) {
      o.then_get = 1;
    } else if (!strcmp(argv[i], "--late-ms")) {
      o.late_ms = prog_parse_positive("--late-ms", next), ++i;
    } else if (!strcmp(argv[i], "--keys")) {
      o.keys = prog_parse_count("--keys", next), ++i;
    } else if (!strcmp(argv[i], "--size")) {
      o.size = prog_parse_positive("--size", next), ++i;
    } else if (!strcmp(argv[i], "--hydra")) {
      o.hydra = 1;
    } else if (!strcmp(argv[i], "--abort")) {
      o.abort_mode = 1;
    } else if (!strcmp(argv[i], "--appnum")) {
      o.appnum = prog_parse_count("--appnum", next), ++i;
    } else if (!strcmp(argv[i], "--namepub")) {
      o.namepub_mode = 1;
    } else {
      prog_fail("unknown argument '%s' (see the comment at the top of pmi2_client.c)", argv[i]);
    }
  }
  if (o.then_get && o.keys == 0) prog_fail("--then-get needs a key to get (--keys 0 puts none)");
  if (o.size >= PMI2_MAX_VALLEN)
    prog_fail("--size must be below %d (PMI2_MAX_VALLEN)", PMI2_MAX_VALLEN);
  return o;
}

static void check_env(const char* const names[], int got, const char* what) {
  const char* var = NULL;
  int want = prog_env_int_any(names, -1, &var);
  if (want >= 0 && want != got)
    prog_fail("%s is %d by the process mapping, %s says %d", what, got, var, want);
}

static void init_job(struct job* j) {
  int spawned = -1;
  j->appnum = -1;
  int rc = PMI2_Init(&spawned, &j->size, &j->rank, &j->appnum);
  if (rc != PMI2_SUCCESS) prog_fail("PMI2_Init returned %d", rc);
  prog_set_identity("pmi2_client", j->rank);
  if (spawned != 0) prog_fail("PMI2_Init says spawned=%d, expected 0", spawned);
  if (j->size < 1 || j->rank < 0 || j->rank >= j->size)
    prog_fail("PMI2_Init gave rank %d of size %d", j->rank, j->size);
  int env_rank = prog_env_int("PMI_RANK", -1), env_size = prog_env_int("PMI_SIZE", -1);
  if (env_rank >= 0 && env_rank != j->rank)
    prog_fail("PMI2_Init rank %d, PMI_RANK says %d", j->rank, env_rank);
  if (env_size >= 0 && env_size != j->size)
    prog_fail("PMI2_Init size %d, PMI_SIZE says %d", j->size, env_size);
  rc = PMI2_Job_GetId(j->jobid, sizeof j->jobid);
  if (rc != PMI2_SUCCESS || j->jobid[0] == '\0')
    prog_fail("PMI2_Job_GetId returned %d, id '%s'", rc, j->jobid);
}

static void get_job_attr(const char* key, char* value) {
  int found = 0;
  int rc = PMI2_Info_GetJobAttr(key, value, PMI2_MAX_VALLEN, &found);
  if (rc != PMI2_SUCCESS || !found)
    prog_fail("PMI2_Info_GetJobAttr(%s) returned %d, found=%d", key, rc, found);
}

/* Reads the process mapping and universe size; derives this rank's node-local facts and checks
 * them against what the launcher exported. */
static void check_job_attrs(struct job* j, int hydra) {
  char value[PMI2_MAX_VALLEN];
  get_job_attr("PMI_process_mapping", value);
  int* node_of = calloc((size_t)j->size, sizeof *node_of);
  if (!node_of) prog_fail("out of memory");
  const char* err = mapping_decode(value, j->size, node_of);
  if (err) prog_fail("PMI_process_mapping '%s': %s", value, err);
  int me = node_of[j->rank], max_node = 0;
  j->local_rank = j->local_size = 0;
  j->leader = -1;
  for (int r = 0; r < j->size; ++r) {
    if (node_of[r] > max_node) max_node = node_of[r];
    if (node_of[r] != me) continue;
    if (j->leader < 0) j->leader = r;
    if (r < j->rank) ++j->local_rank;
    ++j->local_size;
  }
  j->nnodes = max_node + 1;
  free(node_of);
  check_env(local_rank_vars, j->local_rank, "local rank");
  check_env(local_size_vars, j->local_size, "local size");
  check_env(nnodes_vars, j->nnodes, "node count");

  if (hydra) return;
  get_job_attr("universeSize", value);
  char* end = NULL;
  long universe = strtol(value, &end, 10);
  if (end == value || *end != '\0' || universe < j->size)
    prog_fail("universeSize '%s' is not a number >= %d", value, j->size);
}

/* Local rank 0 publishes its rank as a node attribute; every rank waits for it. */
static void check_node_attr(const struct job* j) {
  char want[32], got[PMI2_MAX_VALLEN] = "";
  snprintf(want, sizeof want, "leader-%d", j->leader);
  if (j->local_rank == 0) {
    int rc = PMI2_Info_PutNodeAttr(NODE_ATTR_KEY, want);
    if (rc != PMI2_SUCCESS) prog_fail("PMI2_Info_PutNodeAttr returned %d", rc);
  }
  int found = 0;
  int rc = PMI2_Info_GetNodeAttr(NODE_ATTR_KEY, got, sizeof got, &found, 1);
  if (rc != PMI2_SUCCESS || !found)
    prog_fail("PMI2_Info_GetNodeAttr(wait) returned %d, found=%d", rc, found);
  if (strcmp(got, want) != 0) prog_fail("node attribute is '%s', expected '%s'", got, want);
}

/* PMIX_Ring, then a KVS exchange keyed by ring position that proves left/right are the values of
 * the ring neighbours (the ring order need not be the rank order). */
static void check_ring(const struct job* j) {
  char mine[64], left[PMI2_MAX_VALLEN] = "", right[PMI2_MAX_VALLEN] = "", key[64];
  int ring_rank = -1, ring_size = -1;
  snprintf(mine, sizeof mine, "ring-value-of-rank-%d", j->rank);
  int rc = PMIX_Ring(mine, &ring_rank, &ring_size, left, right, PMI2_MAX_VALLEN);
  if (rc != PMI2_SUCCESS) prog_fail("PMIX_Ring returned %d", rc);
  if (ring_size != j->size || ring_rank < 0 || ring_rank >= j->size)
    prog_fail("PMIX_Ring gave position %d of %d, job size %d", ring_rank, ring_size, j->size);
  snprintf(key, sizeof key, "ring-%d", ring_rank);
  kvs_put(key, mine);
  kvs_fence();
  snprintf(key, sizeof key, "ring-%d", (ring_rank + j->size - 1) % j->size);
  kvs_expect(key, -1, left, strlen(left));
  snprintf(key, sizeof key, "ring-%d", (ring_rank + 1) % j->size);
  kvs_expect(key, -1, right, strlen(right));
}

static void run_checks(struct job* j, const struct options* o) {
  check_job_attrs(j, o->hydra);
  check_node_attr(j);
  for (int round = 0; round < o->rounds; ++round)
    kvs_round(j->rank, j->size, "k", round, CHECK_VALUE_LEN);
  if (!o->hydra) check_ring(j);
  if (o->appnum >= 0 && j->appnum != o->appnum)
    prog_fail("PMI2_Init gave appnum %d, expected %d", j->appnum, o->appnum);
  printf("pmi2 rank %d/%d ok (jobid %s, node leader %d, %d rounds%s, appnum %d)\n", j->rank,
         j->size, j->jobid, j->leader, o->rounds, o->hydra ? ", no ring" : ", ring", j->appnum);
}

static void run_abort(const struct job* j) {
  if (j->size <= ABORTING_RANK) prog_fail("--abort needs at least %d ranks", ABORTING_RANK + 1);
  if (j->rank == ABORTING_RANK) {
    fprintf(stderr, "pmi2_client: rank %d calls PMI2_Abort\n", j->rank);
    PMI2_Abort(1, "test abort");
    prog_fail("PMI2_Abort returned");
  }
  kvs_fence(); /* cannot complete: rank 1 never fences */
  prog_fail("the fence completed although rank %d aborted", ABORTING_RANK);
}

#define NAMEPUB_SERVICE "lattice-pmi2-service"
#define NAMEPUB_PORT "lattice-pmi2-port-7"

static void run_namepub(const struct job* j) {
  int last = j->size - 1;
  char port[PMI2_MAX_VALLEN];
  if (j->rank == 0 && PMI2_Nameserv_publish(NAMEPUB_SERVICE, NULL, NAMEPUB_PORT) != PMI2_SUCCESS)
    prog_fail("PMI2_Nameserv_publish failed");
  kvs_fence();
  if (j->rank == last) {
    if (PMI2_Nameserv_lookup(NAMEPUB_SERVICE, NULL, port, sizeof port) != PMI2_SUCCESS)
      prog_fail("PMI2_Nameserv_lookup of a published name failed");
    if (strcmp(port, NAMEPUB_PORT) != 0)
      prog_fail("looked up '%s', expected '%s'", port, NAMEPUB_PORT);
    if (PMI2_Nameserv_lookup("lattice-no-such-service", NULL, port, sizeof port) == PMI2_SUCCESS)
      prog_fail("a lookup of an unknown name succeeded");
  }
  kvs_fence();
  if (j->rank == 0 && PMI2_Nameserv_unpublish(NAMEPUB_SERVICE, NULL) != PMI2_SUCCESS)
    prog_fail("PMI2_Nameserv_unpublish failed");
  kvs_fence();
  if (j->rank == last &&
      PMI2_Nameserv_lookup(NAMEPUB_SERVICE, NULL, port, sizeof port) == PMI2_SUCCESS)
    prog_fail("a lookup after unpublish succeeded");
  printf("pmi2 namepub ok\n");
}

int main(int argc, char** argv) {
  prog_set_identity("pmi2_client", -1);
  struct options o = parse_options(argc, argv);
  struct job j;
  init_job(&j);
  if (o.abort_mode) run_abort(&j);
  if (o.namepub_mode)
    run_namepub(&j);
  else if (o.bench_rounds > 0 && o.fence_only) {
    struct fence_bench b = {o.bench_rounds, o.size, o.keys, o.same_key, o.then_get, o.late_ms};
    kvs_fence_bench(j.rank, j.size, &b);
  } else if (o.bench_rounds > 0)
    kvs_bench(j.rank, j.size, o.bench_rounds, o.size);
  else
    run_checks(&j, &o);
  fflush(stdout);
  int rc = PMI2_Finalize();
  if (rc != PMI2_SUCCESS) prog_fail("PMI2_Finalize returned %d", rc);
  return 0;
}
