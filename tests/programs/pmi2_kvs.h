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

/* Times the fence alone on its critical path, `rounds` times: each round a synchronising fence,
 * `keys` puts of `len` bytes (of `keys` distinct keys, or all of one key when `same_key`: the same
 * PMI traffic with one key to carry, so the fence's cost per key can be told from the puts'),
 * then the timed fence; the round's time is the last rank out minus the
 * last rank in (absolute CLOCK_MONOTONIC microseconds: every rank must be on one host, as with
 * agents on loopback addresses). Rank 0 prints
 * "pmi2 fence: ranks=N rounds=R size=B keys=K p50_us=X p99_us=Y max_us=Z". */
void kvs_fence_bench(int rank, int size, int rounds, int len, int keys, int same_key);

#endif
