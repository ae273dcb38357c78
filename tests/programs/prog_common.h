/* Small helpers shared by the real-client test programs: failing loudly, reading the launcher's
 * environment, and a monotonic clock. Every program exits 1 through prog_fail() on a mismatch, so
 * an integration test can tell "the check failed" from a crash or a signal. */
#ifndef LATTICE_TEST_PROG_COMMON_H
#define LATTICE_TEST_PROG_COMMON_H

/* Exit status of a program whose own check failed (distinct from the failure programs' codes). */
#define PROG_CHECK_FAILED 1

/* Names the program and rank in every message; set once at start, rank when known (-1 before). */
void prog_set_identity(const char* name, int rank);

/* Prints "NAME: rank R: MESSAGE" to stderr and exits PROG_CHECK_FAILED. */
void prog_fail(const char* fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* The integer value of environment variable NAME, or fallback when unset; fails on garbage. */
int prog_env_int(const char* name, int fallback);

/* The first of several environment variables that is set (launchers name the same fact
 * differently: LATTICE_LOCAL_SIZE, MPI_LOCALNRANKS for Hydra), or fallback; *which names the
 * variable used (names[0] when none is set). */
int prog_env_int_any(const char* const names[], int fallback, const char** which);

/* A positive integer command-line value; fails with the option's name otherwise. */
int prog_parse_positive(const char* option, const char* text);

/* The same for a value that may also be 0. */
int prog_parse_count(const char* option, const char* text);

/* Sorts n samples ascending. */
void prog_sort(long long* samples, int n);

/* Nearest-rank percentile (pct in 1..100) of n sorted samples. */
long long prog_percentile(const long long* sorted, int n, int pct);

/* Monotonic time in microseconds. */
long long prog_now_us(void);

/* Sleeps ms milliseconds, resuming after signals. */
void prog_sleep_ms(int ms);

#endif
