"""Memory and exclusivity (issue 34), against real agents run as root, with launches run as the
test's victim user: --mem and --mem-per-cpu are the launch's cgroup limit on each node, which the
kernel keeps (a Python rank that touches more is killed, and the launcher says it was the
out-of-memory killer and what the limit was; under it, it runs to exit 0); where nothing can keep
it (the subreaper) the launch runs and the launcher warns; --exclusive is refused beside a running
launch, and while it runs other launches are refused, each naming the launch in the way, and its
user only to that user."""
import os
import re
import signal
import time

from harness import check, expect_status, run_cases, test_user, wait_until

# What other users run: the system's Python.
PYTHON = "/usr/bin/python3"

# Touches MIB mebibytes (every page), prints "allocated", and exits 0.
ALLOCATE = 'import sys; b = b"\\1" * (int(sys.argv[1]) << 20); print("allocated", len(b) >> 20)'

# Each rank touches MIB mebibytes and holds them until every rank of the node has: together they
# are past a limit that each alone is within. (The marks are in a directory the victim owns.)
HOLD_TOGETHER = r"""
import os, sys, time
mib, marks, ranks = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
b = b"\1" * (mib << 20)
open(os.path.join(marks, os.environ["PMI_RANK"]), "w").close()
deadline = time.monotonic() + 60
while len(os.listdir(marks)) < ranks and time.monotonic() < deadline:
    time.sleep(0.05)
print("held", len(b) >> 20)
"""


def agent_config(c, name, text):
    path = os.path.join(c.dir, name)
    with open(path, "w") as f:
        f.write(text)
    return ["--config", path]


def contained_agent(c, mode):
    agent = c.start_agent("n1", extra_args=agent_config(
        c, "agent.yaml", f"jobs:\n  containment: {mode}\n"))
    check(agent.wait_log("launches are contained by "), f"no containment said\n{agent.log()}")
    return agent


def launch(c, agent, user, *args):
    return c.run_launch(["--agents", agent.address, "--user", user.name, *args], cwd="/tmp")


def victims_dir(c, victim, name):
    os.chmod(c.dir, 0o711)
    d = os.path.join(c.dir, name)
    os.mkdir(d)
    os.chown(d, victim.uid, victim.gid)
    return d


def killed_past_the_limit(mode):
    """200 MiB touched under --mem 64M: the kernel kills the rank, and the launcher says it was
    the out-of-memory killer and what the limit was."""
    def case(c):
        victim = test_user("victim")
        agent = contained_agent(c, mode)
        r = launch(c, agent, victim, "--mem", "64M", PYTHON, "-c", ALLOCATE, "200")
        expect_status(r, 128 + signal.SIGKILL)
        check("allocated" not in r.out, f"200 MiB fit in 64 MiB\n{r.describe()}")
        check("lattice: job failed: rank 0 on n1 was killed by the out-of-memory killer: the "
              "launch's memory limit 64 MiB on that node\n" in r.err,
              f"the out-of-memory kill is not reported with its limit\n{r.describe()}")
        check("rank 0: killed by the out-of-memory killer (memory limit 64 MiB)" in r.err,
              f"the exit summary does not name the out-of-memory killer\n{r.describe()}")
        check("warning" not in r.err, f"a limit kept here is said not to be\n{r.describe()}")
        c.check_clean(r)
    return case


def node_limit_is_for_the_launch(c):
    """--mem is for all of the launch's ranks on the node together: two ranks that hold 40 MiB
    each do not fit in 64 MiB; one is killed by the out-of-memory killer, the other by the
    launch's end, which is not taken for the kernel's kill."""
    victim = test_user("victim")
    agent = contained_agent(c, "auto")
    marks = victims_dir(c, victim, "marks")
    r = launch(c, agent, victim, "--mem", "64M", "-n", "2", PYTHON, "-c", HOLD_TOGETHER, "40",
               marks, "2")
    expect_status(r, 128 + signal.SIGKILL)
    check("held" not in r.out, f"80 MiB fit in 64 MiB\n{r.describe()}")
    failed = re.search(r"lattice: job failed: rank (\d) on n1 was killed by the out-of-memory "
                       r"killer: the launch's memory limit 64 MiB on that node", r.err)
    check(failed, f"the out-of-memory kill is not the job's failure\n{r.describe()}")
    oom, other = failed.group(1), "1" if failed.group(1) == "0" else "0"
    summary = next((l for l in r.err.splitlines() if l.startswith("lattice: exit statuses:")), "")
    check(f"rank {oom}: killed by the out-of-memory killer (memory limit 64 MiB)" in summary and
          f"rank {other}: killed by signal 9 (SIGKILL)" in summary,
          f"expected rank {oom} killed by the OOM killer and rank {other} by the launch\n"
          f"{r.describe()}")
    c.check_clean(r)


def under_the_limit(c):
    """Within --mem, and within --mem-per-cpu times the node's ranks, ranks run to exit 0; the
    per-CPU limit is per rank's CPU: 100 MiB under --mem-per-cpu 32M is killed."""
    victim = test_user("victim")
    agent = contained_agent(c, "auto")
    r = launch(c, agent, victim, "--mem", "64M", PYTHON, "-c", ALLOCATE, "16")
    expect_status(r, 0)
    check("allocated 16" in r.out, f"16 MiB did not fit in 64 MiB\n{r.describe()}")
    marks = victims_dir(c, victim, "marks")
    r = launch(c, agent, victim, "--mem-per-cpu", "48M", "-n", "2", PYTHON, "-c", HOLD_TOGETHER,
               "16", marks, "2")
    expect_status(r, 0)
    check(r.out.count("held 16") == 2, f"2 x 16 MiB did not fit in 2 x 48 MiB\n{r.describe()}")
    r = launch(c, agent, victim, "--mem-per-cpu", "32M", PYTHON, "-c", ALLOCATE, "100")
    expect_status(r, 128 + signal.SIGKILL)
    check("the launch's memory limit 32 MiB on that node" in r.err,
          f"--mem-per-cpu 32M for one rank is not a 32 MiB limit\n{r.describe()}")
    c.check_clean(r)


def unenforced_warns(c):
    """Where nothing keeps the limit (launches contained by the agent as subreaper) the launch
    runs, as under srun where nothing enforces memory, and the launcher warns once."""
    victim = test_user("victim")
    agent = contained_agent(c, "subreaper")
    r = launch(c, agent, victim, "--mem", "64M", PYTHON, "-c", ALLOCATE, "16")
    expect_status(r, 0)
    check("allocated 16" in r.out, f"the launch did not run\n{r.describe()}")
    warning = ("lattice: warning: n1: memory 64 MiB: not enforced: no cgroup: containment is by "
               "child subreaper\n")
    check(r.err.count(warning) == 1, f"no warning that the limit is not kept\n{r.describe()}")
    plain = launch(c, agent, victim, PYTHON, "-c", ALLOCATE, "1")
    expect_status(plain, 0)
    check("warning" not in plain.err, f"a launch without --mem was warned\n{plain.describe()}")
    c.check_clean(r)


def running_launch(c, agent, user, *args):
    """A launch that runs until stopped: (Popen, its launch id)."""
    full = ["--agents", agent.address, "--user", user.name, *args, "/bin/sleep", "300"]
    p = c.start_launch(full, cwd="/tmp")
    check(wait_until(lambda: c.survivors(), 30), "the running launch never started")
    with open(f"/proc/{c.survivors()[0]}/environ", "rb") as f:
        env = dict(e.decode().split("=", 1) for e in f.read().split(b"\0") if b"=" in e)
    return p, env["LATTICE_LAUNCH_ID"], full


def stop(c, p, args):
    os.killpg(p.pid, signal.SIGTERM)
    r = c.finish_launch(p, args, time.monotonic(), 60)
    check(r.code is not None, f"the running launch did not stop\n{r.describe()}")
    return r


def refused(r, *needles):
    check(r.code not in (0, None) and all(n in r.err for n in needles),
          f"expected a refusal saying {list(needles)}\n{r.describe()}")


def exclusive_refused_beside_a_launch(c):
    """--exclusive where another launch runs: refused, naming it (and its user to that user)."""
    victim, hostile = test_user("victim"), test_user("hostile")
    agent = c.start_agent("n1")
    p, held, args = running_launch(c, agent, victim)
    r = launch(c, agent, victim, "--exclusive", "/bin/true")
    refused(r, f"agent n1 refused the launch: --exclusive: node n1 already runs launch {held} "
               f"(user {victim.name})")
    r = launch(c, agent, hostile, "--exclusive", "/bin/true")
    refused(r, f"--exclusive: node n1 already runs launch {held} (another user's)")
    check(victim.name not in r.err, f"another user was told whose launch it is\n{r.describe()}")
    stop(c, p, args)
    c.check_clean()
    r = launch(c, agent, victim, "--exclusive", "/bin/true")
    expect_status(r, 0)  # once it has ended


def exclusive_holds_the_node(c):
    """While an --exclusive launch runs, every other launch is refused, naming it; after it,
    launches run again."""
    victim, hostile = test_user("victim"), test_user("hostile")
    agent = c.start_agent("n1")
    p, held, args = running_launch(c, agent, victim, "--exclusive")
    r = launch(c, agent, victim, "/bin/true")
    refused(r, f"agent n1 refused the launch: node n1 is held by launch {held} (user "
               f"{victim.name}, --exclusive): no other launch starts there until it ends")
    r = launch(c, agent, hostile, "/bin/true")
    refused(r, f"node n1 is held by launch {held} (another user's, --exclusive)")
    check(victim.name not in r.err, f"another user was told whose launch it is\n{r.describe()}")
    r = launch(c, agent, victim, "--exclusive", "/bin/true")
    refused(r, f"node n1 is held by launch {held}")
    stop(c, p, args)
    c.check_clean()
    r = launch(c, agent, hostile, "/bin/true")
    expect_status(r, 0)  # once it has ended


CASES = [
    ("killed_past_the_limit_cgroup2", killed_past_the_limit("cgroup2")),
    ("killed_past_the_limit_cgroup1", killed_past_the_limit("cgroup1")),
    ("node_limit_is_for_the_launch", node_limit_is_for_the_launch),
    ("under_the_limit", under_the_limit),
    ("unenforced_warns", unenforced_warns),
    ("exclusive_refused_beside_a_launch", exclusive_refused_beside_a_launch),
    ("exclusive_holds_the_node", exclusive_holds_the_node),
]

if __name__ == "__main__":
    run_cases(CASES)
