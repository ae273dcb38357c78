/* An OpenMP MPI program, as users of srun -c run them: each rank reports how many threads
 * OpenMP gives it (omp_get_max_threads, and the team a parallel region really gets) and the
 * CPUs it may run on (sched_getaffinity), after MPI_Init. With --threads N and --cpus N it
 * checks them itself and exits 1 on a mismatch. Output, one line per rank:
 *   rank R of S threads T team T2 cpus 0,1 */
#define _GNU_SOURCE
#include <mpi.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "prog_common.h"

int main(int argc, char** argv) {
  int rank = -1, size = 0, expect_threads = 0, expect_cpus = 0;
  prog_set_identity("mpi_omp", -1);
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && strcmp(argv[i], "--threads") == 0)
      expect_threads = prog_parse_positive("--threads", argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--cpus") == 0)
      expect_cpus = prog_parse_positive("--cpus", argv[++i]);
    else
      prog_fail("usage: mpi_omp [--threads N] [--cpus N]");
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  prog_set_identity("mpi_omp", rank);

  int threads = omp_get_max_threads(), team = 0;
#pragma omp parallel
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) prog_fail("sched_getaffinity failed");
  char cpus[4096] = "";
  size_t used = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && used + 8 < sizeof cpus; ++cpu)
    if (CPU_ISSET(cpu, &set))
      used += (size_t)snprintf(cpus + used, sizeof cpus - used, "%s%d", used ? "," : "", cpu);
  printf("rank %d of %d threads %d team %d cpus %s\n", rank, size, threads, team, cpus);
  fflush(stdout);
  if (expect_threads && (threads != expect_threads || team != expect_threads))
    prog_fail("OpenMP gives %d threads (a team of %d), not %d", threads, team, expect_threads);
  if (expect_cpus && CPU_COUNT(&set) != expect_cpus)
    prog_fail("may run on %d CPUs (%s), not %d", CPU_COUNT(&set), cpus, expect_cpus);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
