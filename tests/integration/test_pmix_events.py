"""PMIx events and job control across agents (docs/pmi-wire.md §7, events), with a PMIx client
program (pmix_events) run as an unprivileged test user over two standalone agents: an event raised by a
rank reaches the ranks of the other node as its range says; a rank's abnormal end is announced
(PMIX_ERR_PROC_ABORTED naming it) to the survivors on both nodes, who go on under -K0 and hear
of it before they are killed otherwise; PMIx_Job_control kills a rank on the other node;
directives Lattice does not carry out are refused at once, never left hanging."""
import os
import re
import shutil
import time

from harness import (check, expect_failure_line, expect_status, prog, run_cases, test_user,
                     wait_until)

# 4 ranks over 2 agents, in blocks: ranks 0-1 on n1, 2-3 on n2.
RANKS = 4


def agents(c, count=2):
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0", "--log-level", "debug"])
            for i in range(count)]


def launch(c, nodes, args, extra=(), role="victim", background=False):
    """pmix_events ARGS as the `role` test user, from a copy it can read (background: the
    launcher's Popen)."""
    user = test_user(role)
    os.chmod(c.dir, 0o711)
    bin_dir = os.path.join(c.dir, "bin")
    if not os.path.isdir(bin_dir):
        os.makedirs(bin_dir)
        os.chmod(bin_dir, 0o755)
        shutil.copy(prog("pmix_events"), os.path.join(bin_dir, "pmix_events"))
        os.chmod(os.path.join(bin_dir, "pmix_events"), 0o755)
    command = ["--agents", ",".join(a.address for a in nodes), "--user", user.name, "--pmi", "pmix",
               "-n", str(RANKS), *extra, os.path.join(bin_dir, "pmix_events"), *args]
    if background:
        return c.start_launch(command, cwd="/tmp")
    return c.run_launch(command, timeout=150, cwd="/tmp")


def got(result, rank):
    return f"rank {rank} got event from rank 0 value 42" in result.out


def notify_namespace(c):
    """A rank's event of range namespace reaches every other rank, on both nodes."""
    nodes = agents(c)
    r = launch(c, nodes, ["notify", "namespace"])
    expect_status(r, 0)
    check("rank 0 notify SUCCESS" in r.out, r.describe())
    for rank in range(1, RANKS):
        check(got(r, rank), f"rank {rank} did not get the event\n{r.describe()}")
    c.check_clean(r)


def notify_global_and_session(c):
    nodes = agents(c)
    for scope in ("global", "session"):
        r = launch(c, nodes, ["notify", scope])
        expect_status(r, 0)
        for rank in range(1, RANKS):
            check(got(r, rank), f"{scope}: rank {rank} did not get the event\n{r.describe()}")


def notify_local(c):
    """Range local: rank 0's node only (rank 1); the other node's ranks never see it."""
    nodes = agents(c)
    r = launch(c, nodes, ["notify", "local"])
    expect_status(r, 0)
    check(got(r, 1), r.describe())
    check(not got(r, 2) and not got(r, 3) and "out of range" not in r.out, r.describe())


def notify_custom(c):
    """A custom range naming the last rank (on the other node) reaches it and nobody else."""
    nodes = agents(c)
    r = launch(c, nodes, ["notify", "custom"])
    expect_status(r, 0)
    check(got(r, RANKS - 1), r.describe())
    check(not got(r, 1) and not got(r, 2) and "out of range" not in r.out, r.describe())


def survivors_go_on(c):
    """-K0: rank 1 exits 3; every other rank, on both nodes, hears of it and finishes; the launch
    reports the exit at its end."""
    nodes = agents(c)
    r = launch(c, nodes, ["fault", "1"], ["-K0"])
    check(r.code != 0 and r.code is not None, r.describe())
    for rank in (0, 2, 3):
        check(f"rank {rank} saw rank 1 end (exit 3)" in r.out,
              f"rank {rank} did not hear of rank 1's end\n{r.describe()}")
        check(f"rank {rank} goes on" in r.out, r.describe())
    expect_failure_line(r, "rank 1", "3")
    c.check_clean(r)


def heard_before_kill(c):
    """Kill-on-bad-exit (the default): the ranks of the other node hear of rank 1's end before
    the launch kills them."""
    nodes = agents(c)
    r = launch(c, nodes, ["fault", "1"])
    expect_status(r, 3)
    for rank in (2, 3):
        check(f"rank {rank} saw rank 1 end (exit 3)" in r.out,
              f"rank {rank} was killed before it heard of rank 1's end\n{r.describe()}")
    c.check_clean(r)


def job_control_kill(c):
    """Rank 0 kills the last rank, which runs on the other node, with PMIx_Job_control; under
    -K0 rank 0 goes on and hears of that end."""
    nodes = agents(c)
    r = launch(c, nodes, ["kill"], ["-K0"])
    check(f"rank 0 job control kill {RANKS - 1}: SUCCESS" in r.out, r.describe())
    check(f"rank 0 saw rank {RANKS - 1} end (exit 137)" in r.out, r.describe())
    check("was not killed" not in r.out, r.describe())
    expect_failure_line(r, f"rank {RANKS - 1}", "SIGKILL")
    check(any("job control from node 0: signal 9" in a.log_text() for a in nodes),
          f"the kill did not go through the rank's node\n{nodes[1].log()}")
    c.check_clean(r)


def other_launch_untouched(c):
    """A hostile user's rank names the victim's running launch in PMIx_Job_control: refused,
    and the victim's ranks live on."""
    nodes = agents(c)
    release = os.path.join(c.dir, "bin", "release")
    victim = launch(c, nodes, ["hold", release], background=True)
    accepted = re.compile(r"launch: (\S+): accepted from .* as lattice-t-victim")
    check(wait_until(lambda: accepted.search(nodes[0].log_text()), 60),
          f"the victim's launch did not start\n{nodes[0].log()}")
    launch_id = accepted.search(nodes[0].log_text()).group(1)
    r = launch(c, nodes, ["killns", f"lattice.{launch_id}"], role="hostile")
    expect_status(r, 0)
    check("job control on another launch: BAD-PARAM" in r.out, r.describe())
    check("not of the caller's launch" in r.err, r.describe())
    with open(release, "w"):
        pass
    v = c.finish_launch(victim, ["victim"], time.monotonic(), 150)
    expect_status(v, 0)
    for rank in range(RANKS):
        check(f"rank {rank} held" in v.out, v.describe())
    c.check_clean(v)


def other_launch_deaf(c):
    """Another launch's rank ending (a hostile user's job, on the same two nodes) is announced to
    its own launch only: the victim's ranks, registered for the same events, hear nothing."""
    nodes = agents(c)
    release = os.path.join(c.dir, "bin", "release")
    victim = launch(c, nodes, ["listen", release], background=True)
    check(wait_until(lambda: "accepted from" in nodes[1].log_text(), 60), nodes[1].log())
    r = launch(c, nodes, ["fault", "1"], ["-K0"], role="hostile")
    for rank in (0, 2, 3):
        check(f"rank {rank} saw rank 1 end (exit 3)" in r.out, r.describe())
    for rank in range(RANKS):
        check(f"rank {rank} goes on" in r.out or rank == 1, r.describe())
    with open(release, "w"):
        pass
    v = c.finish_launch(victim, ["victim"], time.monotonic(), 150)
    expect_status(v, 0)
    for rank in range(RANKS):
        check(f"rank {rank} heard 0 events" in v.out,
              f"the hostile launch's event reached the victim's rank {rank}\n{v.describe()}")
    c.check_clean(v)


def refusals(c):
    """What Lattice does not carry out is answered at once, and says why."""
    nodes = agents(c)
    r = launch(c, nodes, ["refuse"])
    expect_status(r, 0)
    check("job control pause: NOT-SUPPORTED" in r.out, r.describe())
    check("pmix.jctrl.pause is not supported" in r.err, r.describe())
    check("job control elsewhere: BAD-PARAM" in r.out, r.describe())
    check("not of the caller's launch" in r.err, r.describe())
    check("job control no such rank: NOT-FOUND" in r.out, r.describe())
    # Process monitoring is libpmix's own (its heartbeat and file sensors), answered at once.
    check("monitor heartbeat: SUCCESS" in r.out, r.describe())
    # libpmix does not tell its host who asks a query: what differs by asker is refused, at
    # once; the agent's capabilities, the same for all, are answered.
    for key in ("pmix.qry.ns", "pmix.qry.ptable"):
        check(f"query {key}: NOT-SUPPORTED" in r.out, r.describe())
    check("query pmix.qry.spawn: SUCCESS" in r.out, r.describe())
    check("query pmix.qry.spawn = 'pmix.host,pmix.wdir'" in r.out, r.describe())
    check("query pmix.qry.debug: SUCCESS" in r.out, r.describe())
    check("query pmix.qry.debug = ''" in r.out, r.describe())
    c.check_clean(r)


CASES = [
    ("notify_namespace", notify_namespace),
    ("notify_global_and_session", notify_global_and_session),
    ("notify_local", notify_local),
    ("notify_custom", notify_custom),
    ("survivors_go_on", survivors_go_on),
    ("heard_before_kill", heard_before_kill),
    ("job_control_kill", job_control_kill),
    ("other_launch_untouched", other_launch_untouched),
    ("other_launch_deaf", other_launch_deaf),
    ("refusals", refusals),
]

if __name__ == "__main__":
    run_cases(CASES if os.environ.get("LATTICE_PMIX", "1") == "1" else [])
