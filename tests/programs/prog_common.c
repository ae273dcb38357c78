/* Helpers shared by the real-client test programs (see prog_common.h). Plain C and libc only, so
 * the MPICH programs and the Slurm libpmi2 programs can both link it. */
#define _GNU_SOURCE
#include "prog_common.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char* prog_name = "program";
static int prog_rank = -1;

void prog_set_identity(const char* name, int rank) {
  prog_name = name;
  prog_rank = rank;
}

void prog_fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (prog_rank >= 0)
    fprintf(stderr, "%s: rank %d: ", prog_name, prog_rank);
  else
    fprintf(stderr, "%s: ", prog_name);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  fflush(stdout);
  exit(PROG_CHECK_FAILED);
}

static int parse_int(const char* text, long min, int* out) {
  char* end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min || v > INT_MAX) return 0;
  *out = (int)v;
  return 1;
}

int prog_env_int(const char* name, int fallback) {
  const char* text = getenv(name);
  int v;
  if (text == NULL) return fallback;
  if (!parse_int(text, INT_MIN, &v)) prog_fail("environment %s='%s' is not an integer", name, text);
  return v;
}

int prog_env_int_any(const char* const names[], int fallback, const char** which) {
  *which = names[0];
  for (; *names != NULL; ++names) {
    if (getenv(*names) == NULL) continue;
    *which = *names;
    return prog_env_int(*names, fallback);
  }
  return fallback;
}

static int parse_option(const char* option, const char* text, int min) {
  int v;
  if (text == NULL || !parse_int(text, min, &v))
    prog_fail("%s expects an integer >= %d, got '%s'", option, min, text ? text : "(nothing)");
  return v;
}

int prog_parse_positive(const char* option, const char* text) {
  return parse_option(option, text, 1);
}

int prog_parse_count(const char* option, const char* text) { return parse_option(option, text, 0); }

long long prog_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

void prog_sleep_ms(int ms) {
  struct timespec left = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

static int compare_samples(const void* a, const void* b) {
  long long x = *(const long long*)a, y = *(const long long*)b;
  return (x > y) - (x < y);
}

void prog_sort(long long* samples, int n) {
  qsort(samples, (size_t)n, sizeof *samples, compare_samples);
}

long long prog_percentile(const long long* sorted, int n, int pct) {
  int idx = (pct * n + 99) / 100 - 1;
  return sorted[idx < 0 ? 0 : idx];
}
