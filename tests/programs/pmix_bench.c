/* A PMIx client (OpenPMIx) that times the PMIx tier's fence the way Open MPI's wire-up uses it:
 *   pmix_bench --bench ROUNDS [--size B]     times fence -> get-all; rank 0 prints p50/p99
 * It puts one value (a B-byte string naming the rank) under PMIX_GLOBAL and commits it once;
 * each round then fences with PMIX_COLLECT_DATA and gets and checks every other rank's value.
 * That is PMIx's model: libpmix sends every key a rank ever committed in each fence, and clients
 * keep what they fetched, so a new key per round would time a store growing by B bytes per rank
 * and round, and rewriting one key would read stale copies. A round's time is the fence
 * plus the gets (put and commit only hand the value to the local server, one-way), and the job's
 * time for a round is its slowest rank's: the ranks publish their samples through PMIx and rank 0
 * merges them. Rank 0 prints, as pmi2_client --bench does,
 * "pmix bench: ranks=N rounds=R size=B p50_us=X p99_us=Y max_us=Z". */
#define _GNU_SOURCE
#include <pmix.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog_common.h"

#define DEFAULT_BENCH_SIZE 64
#define SAMPLES_KEY "bench-samples"
#define VALUE_KEY "bench-value"

struct options {
  int bench_rounds;
  int size; /* value length */
};

struct job {
  pmix_proc_t me;
  int size;
};

static struct options parse_options(int argc, char** argv) {
  struct options o = {0, DEFAULT_BENCH_SIZE};
  for (int i = 1; i < argc; ++i) {
    const char* next = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--bench")) {
      o.bench_rounds = prog_parse_positive("--bench", next), ++i;
    } else if (!strcmp(argv[i], "--size")) {
      o.size = prog_parse_positive("--size", next), ++i;
    } else {
      prog_fail("unknown argument '%s' (see the comment at the top of pmix_bench.c)", argv[i]);
    }
  }
  if (o.bench_rounds == 0) prog_fail("--bench ROUNDS is required");
  return o;
}

static void check(pmix_status_t rc, const char* what) {
  if (rc != PMIX_SUCCESS) prog_fail("%s returned %s", what, PMIx_Error_string(rc));
}

static void init_job(struct job* j) {
  check(PMIx_Init(&j->me, NULL, 0), "PMIx_Init");
  prog_set_identity("pmix_bench", (int)j->me.rank);
  pmix_proc_t wildcard;
  PMIX_LOAD_PROCID(&wildcard, j->me.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t* v = NULL;
  check(PMIx_Get(&wildcard, PMIX_JOB_SIZE, NULL, 0, &v), "PMIx_Get(" PMIX_JOB_SIZE ")");
  if (v->type != PMIX_UINT32 || v->data.uint32 <= j->me.rank)
    prog_fail("job size (type %d) does not hold rank %u", v->type, j->me.rank);
  j->size = (int)v->data.uint32;
  PMIX_VALUE_RELEASE(v);
}

static void put(const char* key, const pmix_value_t* value) {
  check(PMIx_Put(PMIX_GLOBAL, key, (pmix_value_t*)value), "PMIx_Put");
  check(PMIx_Commit(), "PMIx_Commit");
}

static void fence_collect(void) {
  pmix_info_t info;
  bool collect = true;
  PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  check(PMIx_Fence(NULL, 0, &info, 1), "PMIx_Fence");
  PMIX_INFO_DESTRUCT(&info);
}

/* Rank `rank`'s value of key, which must be of the given type; release with PMIX_VALUE_RELEASE. */
static pmix_value_t* get(const struct job* j, int rank, const char* key, pmix_data_type_t type) {
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, j->me.nspace, (pmix_rank_t)rank);
  pmix_value_t* v = NULL;
  pmix_status_t rc = PMIx_Get(&proc, key, NULL, 0, &v);
  if (rc != PMIX_SUCCESS)
    prog_fail("PMIx_Get(%s) of rank %d returned %s", key, rank, PMIx_Error_string(rc));
  if (v->type != type)
    prog_fail("PMIx_Get(%s) of rank %d: type %d, expected %d", key, rank, v->type, type);
  return v;
}

/* Rank `rank`'s value: a deterministic string, so a value delivered under the wrong key or
 * truncated is caught. */
static void fill_value(char* buf, int len, int rank) {
  int n = snprintf(buf, (size_t)len + 1, "r%d.", rank);
  for (int i = n < len ? n : len; i < len; ++i) buf[i] = (char)('a' + (rank * 7 + i) % 26);
  buf[len] = '\0';
}

/* One round (see the top of the file); returns the microseconds of its fence and gets. */
static long long timed_round(const struct job* j, int len, char* value) {
  long long t0 = prog_now_us();
  fence_collect();
  for (int r = 0; r < j->size; ++r) {
    if (r == (int)j->me.rank) continue;
    pmix_value_t* got = get(j, r, VALUE_KEY, PMIX_STRING);
    fill_value(value, len, r);
    if (strcmp(got->data.string, value) != 0)
      prog_fail("rank %d's %s is '%.60s', expected '%.60s'", r, VALUE_KEY, got->data.string, value);
    PMIX_VALUE_RELEASE(got);
  }
  return prog_now_us() - t0;
}

/* Publishes this rank's samples; after a fence rank 0 folds every rank's into worst[]. */
static void gather_worst(const struct job* j, long long* worst, int rounds) {
  size_t bytes = (size_t)rounds * sizeof *worst;
  pmix_value_t mine = {.type = PMIX_BYTE_OBJECT};
  mine.data.bo.bytes = (char*)worst;
  mine.data.bo.size = bytes;
  put(SAMPLES_KEY, &mine);
  fence_collect();
  if (j->me.rank != 0) return;
  for (int r = 1; r < j->size; ++r) {
    pmix_value_t* got = get(j, r, SAMPLES_KEY, PMIX_BYTE_OBJECT);
    if (got->data.bo.size != bytes)
      prog_fail("rank %d's samples are %zu bytes, expected %zu", r, got->data.bo.size, bytes);
    const long long* theirs = (const long long*)got->data.bo.bytes;
    for (int i = 0; i < rounds; ++i)
      if (theirs[i] > worst[i]) worst[i] = theirs[i];
    PMIX_VALUE_RELEASE(got);
  }
}

static void run_bench(const struct job* j, const struct options* o) {
  long long* samples = calloc((size_t)o->bench_rounds, sizeof *samples);
  char* value = malloc((size_t)o->size + 1);
  if (!samples || !value) prog_fail("out of memory");
  fill_value(value, o->size, (int)j->me.rank);
  pmix_value_t mine = {.type = PMIX_STRING, .data.string = value};
  put(VALUE_KEY, &mine);
  for (int round = 0; round < o->bench_rounds; ++round)
    samples[round] = timed_round(j, o->size, value);
  gather_worst(j, samples, o->bench_rounds);
  if (j->me.rank == 0) {
    prog_sort(samples, o->bench_rounds);
    printf("pmix bench: ranks=%d rounds=%d size=%d p50_us=%lld p99_us=%lld max_us=%lld\n", j->size,
           o->bench_rounds, o->size, prog_percentile(samples, o->bench_rounds, 50),
           prog_percentile(samples, o->bench_rounds, 99), samples[o->bench_rounds - 1]);
  }
  free(value);
  free(samples);
}

int main(int argc, char** argv) {
  prog_set_identity("pmix_bench", -1);
  struct options o = parse_options(argc, argv);
  struct job j;
  init_job(&j);
  run_bench(&j, &o);
  fflush(stdout);
  check(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
  return 0;
}
