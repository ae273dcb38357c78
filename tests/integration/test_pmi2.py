"""Slurm's libpmi2 client (PMI-2) through `lattice launch` in local mode: job attributes, node
attributes, KVS rounds, PMIX_Ring, and the benchmark mode the bench script relies on."""
import re

from harness import check, expect_status, prog, run_cases


def pmi2_checks(n, rounds):
    def case(c):
        r = c.run_launch(["-n", str(n), "-l", prog("pmi2_client"), "--rounds", str(rounds)])
        expect_status(r, 0)
        for rank in range(n):
            want = rf"^{rank}: pmi2 rank {rank}/{n} ok .*{rounds} rounds, ring, appnum 0\)$"
            check(re.search(want, r.out, re.M), f"no ok line from rank {rank}\n{r.describe()}")
        c.check_clean(r)
    return case


def pmi2_bench(c):
    """Both benchmark modes the bench script relies on: the round, and the fence alone (over 2
    local agents, so its samples cross the tree)."""
    r = c.run_launch(["-n", "4", prog("pmi2_client"), "--bench", "5", "--size", "1000"])
    expect_status(r, 0)
    check(re.search(r"pmi2 bench: ranks=4 rounds=5 size=1000 p50_us=\d+ p99_us=\d+", r.out),
          f"no p50/p99 line\n{r.describe()}")
    c.check_clean(r)
    r = c.run_launch(["-N", "2", "-n", "4", prog("pmi2_client"), "--fence-bench", "5", "--keys", "3"])
    expect_status(r, 0)
    check(re.search(r"pmi2 fence: ranks=4 rounds=5 size=64 keys=3 p50_us=\d+ p99_us=\d+", r.out),
          f"no fence p50/p99 line\n{r.describe()}")
    c.check_clean(r)


def pmi2_fence_is_a_barrier(c):
    """No rank leaves a fence before the last rank has entered it, even when that rank comes
    100 ms late (Hydra's PMI-2 fence answers each rank at once: there the late rank's peers
    leave 100 ms before it enters). Causal, not timed: the ranks read one monotonic clock."""
    r = c.run_launch(["-N", "2", "-n", "4", prog("pmi2_client"), "--fence-bench", "3",
                      "--late-ms", "100", "--then-get"])
    expect_status(r, 0)
    m = re.search(r"pmi2 fence: ranks=4 rounds=3 .* left_before_last_in_us=(\d+)", r.out)
    check(m, f"no fence line\n{r.describe()}")
    check(m.group(1) == "0", f"a rank left a fence {m.group(1)} us before the last entered\n"
          f"{r.describe()}")
    c.check_clean(r)


if __name__ == "__main__":
    run_cases([
        ("pmi2_n4_two_rounds_ring", pmi2_checks(4, 2)),
        ("pmi2_n1_singleton_ring", pmi2_checks(1, 2)),
        ("pmi2_n3_five_rounds", pmi2_checks(3, 5)),
        ("pmi2_bench_n4", pmi2_bench),
        ("pmi2_fence_is_a_barrier", pmi2_fence_is_a_barrier),
    ])
