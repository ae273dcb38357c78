"""Open MPI's dynamic processes through the PMIx tier (docs/pmi-wire.md §7.9), with a real Open
MPI 4.1 program (tests/programs/ompi_dynproc.c) on 2 standalone agents (127.0.0.1, 127.0.0.2),
2 ranks each, the job run as an unprivileged test user: MPI_Publish_name / MPI_Lookup_name /
MPI_Unpublish_name served by the launch head's name service across agents;
MPI_Comm_accept / MPI_Comm_connect between ranks on different agents (Open MPI's first-read
exchange of names, PMIx_Connect as a collective at the head, MPI_Comm_disconnect's fence over
two procs); a PMIx lookup that waits for a later publish, and one that waits for a name nobody
publishes and fails at its timeout, or at the launch's fence timeout, never hangs."""
import os
import shutil

from harness import check, expect_status, prog, run_cases, test_user


def agents(c, count):
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"]) for i in range(count)]


def program_for(c, name):
    """A copy of the test program the job's user can run (the build tree may be private)."""
    os.chmod(c.dir, 0o711)
    bin_dir = os.path.join(c.dir, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    os.chmod(bin_dir, 0o755)
    path = os.path.join(bin_dir, name)
    shutil.copy(prog(name), path)
    os.chmod(path, 0o755)
    return path


def run_mode(c, mode, extra=(), timeout=120):
    nodes = agents(c, 2)
    user = test_user("victim")
    r = c.run_launch(["--agents", ",".join(a.address for a in nodes), "--user", user.name,
                      "--pmi", "pmix", "-n", "4", *extra, program_for(c, "ompi_dynproc"), mode],
                     timeout=timeout, cwd="/tmp")
    return r, nodes


def expect_all_ok(c, r, mode):
    expect_status(r, 0)
    for rank in range(4):
        check(f"{mode} ok {rank}" in r.out, f"rank {rank} did not finish {mode}\n{r.describe()}")
    c.check_clean(r)


def names(c):
    """Each rank publishes a service and finds the one published on the other agent; a taken
    name is refused; an unpublished one is gone."""
    r, _ = run_mode(c, "names")
    expect_all_ok(c, r, "names")


def accept_connect(c):
    """Rank 0 (on n1) accepts, rank 3 (on n2) connects: an intercommunicator across agents,
    a message each way, MPI_Comm_disconnect."""
    r, nodes = run_mode(c, "connect")
    expect_all_ok(c, r, "connect")
    check("refused" not in r.err and "not supported" not in r.err, r.describe())


def waiting_lookups(c):
    """A waiting lookup finds a name published later on the other agent; one for a name nobody
    publishes fails at PMIX_TIMEOUT (1 s), and without a timeout at the launch's fence timeout
    (3 s here): an error, not a hang, and the job ends normally."""
    r, _ = run_mode(c, "wait", ["--fence-timeout", "3"])
    expect_all_ok(c, r, "wait")
    check("lookup with timeout: NOT-FOUND" in r.out, r.describe())
    check("lookup capped: NOT-FOUND" in r.out, r.describe())


def straggler(c):
    """A PMIx_Connect whose participants on one agent come late: each agent's ranks fail at the
    fence timeout (2 s) naming the agent that never entered, on their own stderr, and go on."""
    r, _ = run_mode(c, "straggle", ["--fence-timeout", "2", "-l"])
    expect_all_ok(c, r, "straggle")
    for rank in range(4):
        check(f"straggle connect {rank}: " in r.out, r.describe())
        other = "n2" if rank < 2 else "n1"
        check(f"{rank}: lattice: PMIx_Connect timed out waiting for node(s) {other}"
              in r.err, f"rank {rank}'s notice\n{r.describe()}")


CASES = [
    ("names", names),
    ("accept_connect", accept_connect),
    ("waiting_lookups", waiting_lookups),
    ("straggler", straggler),
]

if __name__ == "__main__":
    run_cases(CASES)
