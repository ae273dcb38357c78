/* KVS helpers for the PMI-2 test client (see pmi2_kvs.h). Values are deterministic functions of
 * (rank, round, position), so a value delivered under the wrong key or truncated is caught. */
#define _GNU_SOURCE
#include "pmi2_kvs.h"

#include <slurm/pmi2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog_common.h"

/* Timing samples per gather key: 64 x (up to 10 digits + ',') stays below PMI2_MAX_VALLEN. */
#define SAMPLES_PER_KEY 64
#define KEY_LEN 64

void kvs_put(const char* key, const char* value) {
  int rc = PMI2_KVS_Put(key, value);
  if (rc != PMI2_SUCCESS) prog_fail("PMI2_KVS_Put(%s) returned %d", key, rc);
}

void kvs_fence(void) {
  int rc = PMI2_KVS_Fence();
  if (rc != PMI2_SUCCESS) prog_fail("PMI2_KVS_Fence returned %d", rc);
}

static void kvs_get(const char* key, int src, char* value, int* len) {
  int rc = PMI2_KVS_Get(NULL, src, key, value, PMI2_MAX_VALLEN, len);
  if (rc != PMI2_SUCCESS) prog_fail("PMI2_KVS_Get(%s) returned %d", key, rc);
}

void kvs_expect(const char* key, int src, const char* want, size_t len) {
  char got[PMI2_MAX_VALLEN];
  int got_len = -1;
  kvs_get(key, src, got, &got_len);
  if (got_len < 0 || (size_t)got_len != len || memcmp(got, want, len) != 0)
    prog_fail("PMI2_KVS_Get(%s): got %d bytes '%.60s', expected %zu bytes '%.60s'", key, got_len,
              got, len, want);
}

static void fill_value(char* buf, int len, int rank, int round) {
  int n = snprintf(buf, (size_t)len + 1, "r%d.%d.", rank, round);
  for (int i = n < len ? n : len; i < len; ++i)
    buf[i] = (char)('a' + (rank * 7 + round * 3 + i) % 26);
  buf[len] = '\0';
}

void kvs_round(int rank, int size, const char* prefix, int round, int len) {
  char key[KEY_LEN], value[PMI2_MAX_VALLEN];
  snprintf(key, sizeof key, "%s%d-%d", prefix, round, rank);
  fill_value(value, len, rank, round);
  kvs_put(key, value);
  kvs_fence();
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    snprintf(key, sizeof key, "%s%d-%d", prefix, round, r);
    fill_value(value, len, r, round);
    kvs_expect(key, r, value, (size_t)len);
  }
}

/* Publishes this rank's samples in keys "<tag><rank>-<chunk>" as comma-separated microseconds. */
static void put_samples(const char* tag, int rank, const long long* samples, int rounds) {
  char key[KEY_LEN], value[PMI2_MAX_VALLEN];
  for (int c = 0; c * SAMPLES_PER_KEY < rounds; ++c) {
    size_t used = 0;
    for (int i = c * SAMPLES_PER_KEY; i < rounds && i < (c + 1) * SAMPLES_PER_KEY; ++i)
      used += (size_t)snprintf(value + used, sizeof value - used, "%s%lld", used ? "," : "",
                               samples[i]);
    snprintf(key, sizeof key, "%s%d-%d", tag, rank, c);
    kvs_put(key, value);
  }
}

/* Folds rank r's samples into latest[] (the slowest rank defines a round's time) and, unless
 * NULL, earliest[]. */
static void merge_samples(const char* tag, int r, int rounds, long long* latest,
                          long long* earliest) {
  char key[KEY_LEN], value[PMI2_MAX_VALLEN];
  for (int c = 0; c * SAMPLES_PER_KEY < rounds; ++c) {
    int len = 0;
    snprintf(key, sizeof key, "%s%d-%d", tag, r, c);
    kvs_get(key, r, value, &len);
    char* p = value;
    for (int i = c * SAMPLES_PER_KEY; i < rounds && i < (c + 1) * SAMPLES_PER_KEY; ++i) {
      char* end = NULL;
      long long v = strtoll(p, &end, 10);
      if (end == p) prog_fail("timing key %s is malformed: '%.60s'", key, value);
      if (v > latest[i]) latest[i] = v;
      if (earliest && v < earliest[i]) earliest[i] = v;
      p = *end == ',' ? end + 1 : end;
    }
  }
}

void kvs_bench(int rank, int size, int rounds, int len) {
  long long* samples = calloc((size_t)rounds, sizeof *samples);
  if (!samples) prog_fail("out of memory");
  for (int round = 0; round < rounds; ++round) {
    long long t0 = prog_now_us();
    kvs_round(rank, size, "b", round, len);
    samples[round] = prog_now_us() - t0;
  }
  put_samples("t", rank, samples, rounds);
  kvs_fence();
  if (rank == 0) {
    for (int r = 1; r < size; ++r) merge_samples("t", r, rounds, samples, NULL);
    prog_sort(samples, rounds);
    printf("pmi2 bench: ranks=%d rounds=%d size=%d p50_us=%lld p99_us=%lld max_us=%lld\n", size,
           rounds, len, prog_percentile(samples, rounds, 50), prog_percentile(samples, rounds, 99),
           samples[rounds - 1]);
  }
  free(samples);
}

static void fence_bench_key(char* key, int round, int rank, int k) {
  snprintf(key, KEY_LEN, "f%d-%d-%d", round, rank, k);
}

void kvs_fence_bench(int rank, int size, const struct fence_bench* b) {
  int rounds = b->rounds;
  long long* in = calloc((size_t)rounds, sizeof *in);
  long long* out = calloc((size_t)rounds, sizeof *out);
  long long* first_out = calloc((size_t)rounds, sizeof *first_out);
  if (!in || !out || !first_out) prog_fail("out of memory");
  char key[KEY_LEN], value[PMI2_MAX_VALLEN];
  for (int round = 0; round < rounds; ++round) {
    kvs_fence(); /* everyone starts the round together */
    for (int k = 0; k < b->keys; ++k) {
      fence_bench_key(key, round, rank, b->same_key ? 0 : k);
      fill_value(value, b->len, rank, round);
      kvs_put(key, value);
    }
    if (rank == 0 && b->late_ms > 0) prog_sleep_ms(b->late_ms);
    in[round] = prog_now_us();
    kvs_fence();
    if (b->then_get) {
      int next = (rank + 1) % size;
      fence_bench_key(key, round, next, 0);
      fill_value(value, b->len, next, round);
      kvs_expect(key, next, value, (size_t)b->len);
    }
    out[round] = first_out[round] = prog_now_us();
  }
  put_samples("i", rank, in, rounds);
  put_samples("o", rank, out, rounds);
  kvs_fence();
  if (rank == 0) {
    for (int r = 1; r < size; ++r) {
      merge_samples("i", r, rounds, in, NULL);
      merge_samples("o", r, rounds, out, first_out);
    }
    long long left_early = 0; /* first out before last in */
    for (int i = 0; i < rounds; ++i) {
      if (in[i] - first_out[i] > left_early) left_early = in[i] - first_out[i];
      out[i] -= in[i]; /* last out - last in */
    }
    prog_sort(out, rounds);
    printf(
        "pmi2 fence: ranks=%d rounds=%d size=%d keys=%d p50_us=%lld p99_us=%lld max_us=%lld "
        "left_before_last_in_us=%lld\n",
        size, rounds, b->len, b->keys, prog_percentile(out, rounds, 50),
        prog_percentile(out, rounds, 99), out[rounds - 1], left_early);
  }
  free(in);
  free(out);
  free(first_out);
}
