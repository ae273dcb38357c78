/* KVS helpers for the PMI-2 test client: checked put/fence/get, one verified exchange round, and
 * the timed benchmark. Every helper fails the program (prog_fail) on any unexpected answer. */
#ifndef LATTICE_TEST_PMI2_KVS_H
#define LATTICE_TEST_PMI2_KVS_H

#include <stddef.h>

void kvs_put(const char* key, const char* value);
void kvs_fence(void);

/* Gets key (owner hint src, PMI2_ID_NULL when unknown) and checks it holds want[0..len). */
void kvs_expect(const char* key, int src, const char* want, size_t len);

/* One round: put "<prefix><round>-<rank>" with a len-byte value, fence, get and check every other
 * rank's key. */
void kvs_round(int rank, int size, const char* prefix, int round, int len);

/* Times `rounds` kvs_round()s of `len` bytes; the per-round time of the job is the slowest rank's.
 * Timings are gathered through the KVS itself and rank 0 prints
 * "pmi2 bench: ranks=N rounds=R size=B p50_us=X p99_us=Y max_us=Z". */
void kvs_bench(int rank, int size, int rounds, int len);

/* What --fence-bench times (see kvs_fence_bench). */
struct fence_bench {
  int rounds, len;
  int keys;     /* puts per rank per round (0: the fences carry nothing) */
  int same_key; /* those puts all name one key: the same PMI traffic with one key to carry, so the
                   fence's cost per key can be told from the puts' */
  int then_get; /* the timed section ends with a get of a key the next rank put before the fence:
                   the earliest moment a rank can use the fence's data */
  int late_ms;  /* rank 0 enters every timed fence this much after its puts */
};

/* Times the fence on its critical path: each round a synchronising fence, the puts, then the
 * timed fence (and the get, with then_get); the round's time is the last rank out minus the
 * last rank in (absolute CLOCK_MONOTONIC microseconds: every rank must be on one host, as with
 * agents on loopback addresses). Rank 0 prints "pmi2 fence: ranks=N rounds=R size=B keys=K
 * p50_us=X p99_us=Y max_us=Z left_before_last_in_us=L", L being the most any rank left a timed
 * fence before the last rank had entered it: 0 where the fence is a barrier. */
void kvs_fence_bench(int rank, int size, const struct fence_bench* b);

#endif
