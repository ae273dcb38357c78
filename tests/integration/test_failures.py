"""Failing jobs end by themselves, with the failing rank's status, one stderr line naming the rank,
the node and the reason, and no rank left running. The launch cap (harness.LAUNCH_TIMEOUT) only
keeps a hang from stalling the suite; the cases assert behaviour, not speed."""
import os

from harness import check, expect_failure_line, expect_status, prog, run_cases

RANKS = "4"


def ended(result):
    check(result.code is not None, f"the launch did not end by itself\n{result.describe()}")


def exit_before_init(c):
    r = c.run_launch(["-n", RANKS, prog("mpi_fail"), "exit-before-init"])
    ended(r)
    expect_status(r, 3)
    expect_failure_line(r, "rank 1", "n1", "status 3")
    c.check_clean(r)


def mpi_abort(c):
    r = c.run_launch(["-n", RANKS, prog("mpi_fail"), "abort"])
    ended(r)
    expect_status(r, 7)
    expect_failure_line(r, "rank 1", "n1", "abort", "7")
    c.check_clean(r)


def pmi2_abort(c):
    r = c.run_launch(["-n", RANKS, prog("pmi2_client"), "--abort"])
    ended(r)
    check(r.code != 0, f"PMI2_Abort must fail the launch\n{r.describe()}")
    expect_failure_line(r, "rank 1", "n1", "abort")
    c.check_clean(r)


def self_kill(c):
    r = c.run_launch(["-n", RANKS, prog("mpi_fail"), "self-kill"])
    ended(r)
    expect_status(r, 128 + 9)
    expect_failure_line(r, "rank 1", "n1", "SIGKILL")
    c.check_clean(r)


def pmi_garbage(c):
    agent = c.start_agent("n1")
    r = c.run_launch(["--agents", agent.address, "-n", "2", prog("mpi_fail"), "pmi-garbage"])
    ended(r)
    check(r.code != 0, f"garbage on PMI_FD must fail the launch\n{r.describe()}")
    expect_failure_line(r, "rank 1", "n1", "PMI")
    check(agent.alive(), f"the agent died on a rank's garbage\n{agent.log()}")
    c.check_clean(r)
    again = c.run_launch(["--agents", agent.address, "-n", "2", prog("mpi_check")])
    expect_status(again, 0)
    check(agent.alive(), f"the agent died after the next launch\n{agent.log()}")
    c.check_clean(again)


def missing_program(c):
    missing = os.path.join(c.dir, "no-such-program")
    r = c.run_launch(["-n", "2", missing])
    ended(r)
    check(r.code != 0, f"a missing program must fail the launch\n{r.describe()}")
    check("no-such-program" in r.err, f"stderr does not name the program\n{r.describe()}")
    check(f"{missing}: not found" in r.err, f"stderr does not say it is absent\n{r.describe()}")
    # One that is there but may not run is told apart from one that is absent.
    plain = os.path.join(c.dir, "not-executable")
    with open(plain, "w") as f:
        f.write("#!/bin/sh\n")
    os.chmod(plain, 0o644)
    r = c.run_launch(["-n", "2", plain])
    ended(r)
    check(r.code != 0 and f"{plain} is not executable (mode 0644)" in r.err,
          f"a program that may not run is not said so\n{r.describe()}")
    bare = c.run_launch(["-n", "1", "no-such-program-anywhere"])
    check(bare.code != 0 and "not found on PATH" in bare.err,
          f"a bare name not on PATH is not said so\n{bare.describe()}")
    c.check_clean(r)


if __name__ == "__main__":
    run_cases([
        ("exit_before_init", exit_before_init),
        ("mpi_abort", mpi_abort),
        ("pmi2_abort", pmi2_abort),
        ("self_kill", self_kill),
        ("pmi_garbage_against_running_agent", pmi_garbage),
        ("missing_program", missing_program),
    ])
