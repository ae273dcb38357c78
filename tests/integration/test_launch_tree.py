"""Relayed launches (lattice launch --launch tree): the launcher links to the head agent only, and
the request goes down the fence tree from agent to agent while answers, output, exits and ends
come up it. Seven real agents on 127.0.0.1-7 with fanout 2 make a tree of three levels:
n1 -> n2, n3; n2 -> n4, n5; n3 -> n6, n7 (two ranks each in block layout: n4 runs ranks 6-7, n7
ranks 12-13). Each case checks what a user sees under srun: output, labels, exit statuses,
stdin to a rank deep in the tree, signals, and what a lost relay or head costs."""
import os
import re
import signal
import tempfile
import time

from harness import (SANITIZED, check, expect_status, prog, run_cases, wait_marks, wait_until,
                     writers_blocked)
from test_security_links import rogue

NODES = 7


def agents(c, count=NODES):
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"]) for i in range(count)]


def tree_args(nodes, *rest):
    """Named agents (a relayed launch needs every node id) and a binary tree."""
    named = ",".join(f"{a.node_id}={a.address}" for a in nodes)
    return ["--agents", named, "--launch", "tree", "--fanout", "2", *rest]


def accepted_from(agent):
    """Who the agent's log says its launch came from (its last launch)."""
    found = re.findall(r"accepted from (\S+ \S+),", agent.log_text())
    return found[-1] if found else None


def mpich_through_the_tree(c):
    nodes = agents(c)
    r = c.run_launch(tree_args(nodes, "-n", "14", "-l", "-v", prog("mpi_check")), timeout=120)
    expect_status(r, 0)
    ok = [l for l in r.out.splitlines() if l.endswith("ok") or " ok" in l]
    check(len(ok) == 14, f"expected 14 ok lines\n{r.describe()}")
    check(all(re.match(r"^\d+: ", l) for l in r.out.splitlines() if l),
          f"unlabelled output\n{r.describe()}")
    # One link from the launcher: the head's. Each other node's request came from its parent.
    check(accepted_from(nodes[0]).startswith("launcher"), f"n1: {accepted_from(nodes[0])}")
    for child, parent in ((1, 0), (2, 0), (3, 1), (4, 1), (5, 2), (6, 2)):
        got = accepted_from(nodes[child])
        check(got == f"agent n{parent + 1}", f"n{child + 1}'s launch came from {got}")
    c.check_clean(r)
    # The launch's state is gone from every agent: the next one runs.
    again = c.run_launch(tree_args(nodes, "-n", "7", prog("mpi_check")), timeout=120)
    expect_status(again, 0)


def wide_tree(c):
    """The default fanout (8): the head relays to eight children, and one of them to the
    tenth node. (Each copy of a received request counts against its traversal limit: one copy
    per child would run out at eight.)"""
    nodes = agents(c, 10)
    named = ",".join(f"{a.node_id}={a.address}" for a in nodes)
    r = c.run_launch(["--agents", named, "--launch", "tree", "-n", "20", prog("mpi_check")],
                     timeout=120)
    expect_status(r, 0)
    check(r.out.count("ok") == 20, f"expected 20 ok lines\n{r.describe()}")
    check(accepted_from(nodes[9]) == "agent n2", f"n10's came from {accepted_from(nodes[9])}")
    c.check_clean(r)


def exit_status_from_a_leaf(c):
    nodes = agents(c)
    script = 'if [ "$PMI_RANK" = 13 ]; then exit 7; fi; sleep 30'
    r = c.run_launch(tree_args(nodes, "-n", "14", "sh", "-c", script), timeout=60)
    check(r.code == 7, f"expected the job's status 7 (rank 13's)\n{r.describe()}")
    check(any("rank 13" in l and "n7" in l and "7" in l for l in r.err.splitlines()),
          f"no line naming rank 13 on n7\n{r.describe()}")
    # Every rank's status reached the launcher through the tree: none is unknown.
    summary = [l for l in r.err.splitlines() if "exit statuses" in l]
    check(summary and "unknown" not in summary[0] and "no exit status" not in summary[0],
          f"exit statuses incomplete\n{r.describe()}")
    c.check_clean(r)


def slow_reader_through_relays(c):
    """Ranks deep in the tree write faster than the launcher's stdout is read: the launcher stops
    reading the head, each relay stops reading its children once its own way up is full, and the
    leaves stop reading their ranks' pipes, so every relay's memory stays bounded and every byte
    arrives."""
    nodes = agents(c)
    before = [a.memory("VmRSS") for a in nodes]
    size = 32 << 20  # per writing rank: 6 (n4), 12 and 13 (n7)
    script = (f'case "$PMI_RANK" in 6|12|13) head -c {size} /dev/zero | tr "\\0" x; echo;; '
              f'*) echo quiet;; esac')
    p = c.start_launch(tree_args(nodes, "-n", "14", "/bin/sh", "-c", script))
    started = time.monotonic()
    # Nobody reads the launcher's stdout meanwhile: once the three writers are held up, every
    # buffer on the way is as full as it gets.
    check(writers_blocked("tr \\0 x", 3), "the ranks' output never backed up")
    grown = [a.memory("VmRSS") - b for a, b in zip(nodes, before)]
    r = c.finish_launch(p, ["sh"], started, 180)
    expect_status(r, 0)
    check(r.out.count("x") == 3 * size and r.out.count("quiet") == 11,
          f"{r.out.count('x')} bytes of output, not {3 * size}\n{r.describe()}")
    if not SANITIZED:  # ASan's quarantine keeps what passed through: its RSS says nothing
        check(max(grown) < 24 << 10, f"agents grew by {grown} KiB holding output")
    c.check_clean(r)


def stdin_to_a_deep_rank(c):
    nodes = agents(c)
    script = 'if [ "$PMI_RANK" = 12 ]; then tr a-z A-Z; fi'
    r = c.run_launch(tree_args(nodes, "-n", "14", "-i", "12", "sh", "-c", script),
                     input="down the tree\nand back\n", timeout=60)
    expect_status(r, 0)
    check(r.out == "DOWN THE TREE\nAND BACK\n", f"stdin did not reach rank 12\n{r.describe()}")
    r = c.run_launch(tree_args(nodes, "-n", "7", "-i", "all", "-l", "head", "-n", "1"),
                     input="abc\n", timeout=60)
    expect_status(r, 0)
    check(sorted(r.out.splitlines()) == sorted(f"{i}: abc" for i in range(7)),
          f"-i all did not reach every rank\n{r.describe()}")
    c.check_clean(r)


def signal_reaches_every_node(c):
    nodes = agents(c)
    up = os.path.join(c.dir, "up")
    os.mkdir(up)
    script = f'trap "echo got-term; exit 0" TERM; touch {up}/$PMI_RANK; while :; do sleep 0.1; done'
    p = c.start_launch(tree_args(nodes, "-n", "7", "-l", "sh", "-c", script))
    started = time.monotonic()
    check(wait_marks(up, 7), "the ranks did not all set their traps")
    os.killpg(p.pid, signal.SIGTERM)
    r = c.finish_launch(p, ["sh"], started, 60)
    got = sorted(l for l in r.out.splitlines() if "got-term" in l)
    check(got == sorted(f"{i}: got-term" for i in range(7)),
          f"SIGTERM did not reach every rank once\n{r.describe()}")
    c.check_clean(r)


def killed_mid_launch(c, nodes, victims, ranks=14, sig=signal.SIGKILL):
    """A launch of `ranks` ranks held running; once the last node has its request, the nodes
    `victims` (indices) get `sig` together (SIGSTOP: an agent gone silent, its links open).
    Returns the launch's result and its exit-status summary; the victims are killed and started
    again afterwards. The ranks are let wire up first: MPI_Init goes on after its PMI fence (UCX
    connects its ranks), and a rank that loses a peer in there fails on its own."""
    marks = tempfile.mkdtemp(dir=c.dir)
    p = c.start_launch(tree_args(nodes, "-n", str(ranks), "--env", f"MPI_HOLD_MARKS={marks}",
                                 prog("mpi_hold"), "hold", "60"))
    started = time.monotonic()
    check(wait_marks(marks, ranks), "the ranks did not all get past MPI_Init")
    # Killed "together" means none of them can act on another's loss in between: each is
    # stopped first (a stopped agent reads nothing), then all get `sig`.
    for v in victims:
        os.kill(nodes[v].proc.pid, signal.SIGSTOP)
    for v in victims:
        os.kill(nodes[v].proc.pid, sig)
    r = c.finish_launch(p, ["mpi_hold"], started, 90)
    check(r.code not in (0, None), f"the launch must fail when {victims} die\n{r.describe()}")
    summary = next((l for l in r.err.splitlines() if "exit statuses" in l), "")
    for v in victims:
        if sig != signal.SIGKILL:
            os.kill(nodes[v].proc.pid, signal.SIGKILL)
            nodes[v].proc.wait()
        nodes[v] = c.start_agent(f"n{v + 1}", ["--listen", f"127.0.0.{v + 1}:0"])
    return r, summary


def relay_killed(c):
    """n2 relays for n4 and n5. Killed, its ranks' statuses are lost with it, but n4's and n5's
    reach the launcher through the head, and every rank everywhere ends."""
    r, summary = killed_mid_launch(c, agents(c), [1])
    check(any("n2 lost" in l or "127.0.0.2" in l for l in r.err.splitlines()),
          f"no line naming the lost node\n{r.describe()}")
    # Ranks 2-3 ran on n2: unknown. Ranks 6-9 (n4, n5, below it) were reported through the head.
    check("ranks 2-3: no exit status" in summary, f"n2's ranks not reported lost\n{r.describe()}")
    check(summary.count("no exit status") == 1, f"ranks below n2 have no status\n{r.describe()}")
    c.check_clean(r)


def head_killed(c):
    r, summary = killed_mid_launch(c, agents(c), [0])
    check("n1 lost" in r.err, f"the head's loss is not named\n{r.describe()}")
    # The launcher reached the others directly: only the head's ranks have no status.
    check("ranks 0-1: no exit status" in summary and summary.count("no exit status") == 1,
          f"the other nodes' statuses are missing\n{r.describe()}")
    # Every rank on every other node ends too: the tree passes the loss down.
    c.check_clean(r)


def relays_killed_above_relays(c):
    """Ten nodes, fanout 2: n1 -> n2, n3; n2 -> n4, n5; n4 -> n8, n9; n5 -> n10; one rank each.
    n2 killed: n4 and n5 lose their way up and relay for n8-n10 straight to the head. n2 and n4
    killed together: nobody that watched n4 is left, so n8 and n9 report it lost themselves."""
    nodes = agents(c, 10)
    r, summary = killed_mid_launch(c, nodes, [1], ranks=10)
    check("rank 1: no exit status" in summary and summary.count("no exit status") == 1,
          f"the statuses of the nodes below n2 did not all come up\n{r.describe()}")
    c.check_clean(r)
    r, summary = killed_mid_launch(c, nodes, [1, 3], ranks=10)
    check(summary.count("no exit status") == 1 and re.search(r"ranks? 1,3: no exit status", summary),
          f"only n2's and n4's ranks should have no status\n{r.describe()}")
    c.check_clean(r)


def relay_gone_silent(c):
    """n2 stops (SIGSTOP: no error on any link, as a node that hangs or loses power). The head
    finds it lost by its heartbeats and aborts every node; n4 and n5, which have not noticed,
    send their exits and ends up to n2 and also straight to the head, so they arrive."""
    nodes = agents(c, 10)
    r, summary = killed_mid_launch(c, nodes, [1], ranks=10, sig=signal.SIGSTOP)
    check("n2 lost" in r.err, f"the silent relay is not named\n{r.describe()}")
    check("rank 1: no exit status" in summary and summary.count("no exit status") == 1,
          f"the statuses of the nodes below n2 did not all come up\n{r.describe()}")
    c.check_clean(r)


def refused_below(c):
    """n2 cannot run the launch (it allows one rank per node): it starts nothing and asks
    nobody, so n4 and n5 were never asked; the launch fails at once, by name."""
    one_rank = os.path.join(c.dir, "one-rank.yaml")
    with open(one_rank, "w") as f:
        f.write("limits:\n  max_ranks_per_node: 1\n")
    nodes = [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"] +
                           (["--config", one_rank] if i == 1 else []))
             for i in range(NODES)]
    r = c.run_launch(tree_args(nodes, "-n", "14", "sleep", "30"), timeout=60)
    check(r.code == 1 and "n2 refused the launch" in r.err, f"not refused by n2\n{r.describe()}")
    check(re.search(r"\b2-3: not started", r.err) or "not started" in r.err,
          f"n2's ranks are not 'not started'\n{r.describe()}")
    c.check_clean(r)


def forged_relay_messages(c):
    """Members of the cluster (they hold the key) that are not where a relayed launch says: a
    request from anyone but a node's parent is refused; a report about a node from anyone but a
    child above it is dropped, by name; the launch runs on untouched."""
    nodes = agents(c)
    p = c.start_launch(tree_args(nodes, "-n", "14", prog("mpi_hold"), "hold", "6"))
    started = time.monotonic()
    # n4 and n7 sit in different subtrees: each is waited for (under the sanitizers n7 may
    # accept before n4 has).
    check(wait_until(lambda: all(accepted_from(nodes[i]) for i in (3, 6)), 30),
          "n4 and n7 never accepted the launch")
    launch = re.findall(r"(\S+): accepted from", nodes[3].log_text())[-1]
    ids = ",".join(a.node_id for a in nodes)
    n2, n4 = nodes[1], nodes[3]
    # n4 (index 3) takes requests from n2 alone: not from a stranger, its grandparent, or a
    # launcher going round the tree.
    for who in ("agent:intruder", "agent:n1", "launcher:lattice@rogue:1"):
        out = rogue(c, n4, who, "relayed-launch", ids, "3")
        check("reply: error" in out and "only node 1 (n2)" in out,
              f"a relayed request from {who} was not refused: {out}")
    # n5 (index 4) is a child of n2, but n4's end is not its to report; n7 is nobody's child
    # at the head, and may speak only for itself there.
    rogue(c, n2, "agent:n5", "ended", "3", launch=launch)
    rogue(c, nodes[0], "agent:n7", "lost", "1", launch=launch)
    # A launcher of another name cannot take the launch's reports.
    out = rogue(c, n4, "launcher:lattice@other:1", "abort", launch=launch)
    check("reply: error" in out, f"a stranger launcher's abort was accepted: {out}")
    r = c.finish_launch(p, ["mpi_hold"], started, 90)
    expect_status(r, 0)
    check(r.out.count("ready") == 14, f"the launch did not run untouched\n{r.describe()}")
    check("may not pass on reports about node 3" in n2.log_text(),
          "n2 did not name the forged end it dropped")
    check("may not pass on reports about node 1" in nodes[0].log_text(),
          "the head did not name the forged loss it dropped")
    c.check_clean(r)


def tree_needs_node_ids(c):
    nodes = agents(c, 2)
    r = c.run_launch(["--agents", ",".join(a.address for a in nodes), "--launch", "tree",
                      "-n", "2", "true"])
    check(r.code == 2 and "every agent's node id must be given" in r.err, r.describe())


if __name__ == "__main__":
    run_cases([
        ("mpich_through_the_tree", mpich_through_the_tree),
        ("wide_tree", wide_tree),
        ("exit_status_from_a_leaf", exit_status_from_a_leaf),
        ("slow_reader_through_relays", slow_reader_through_relays),
        ("stdin_to_a_deep_rank", stdin_to_a_deep_rank),
        ("signal_reaches_every_node", signal_reaches_every_node),
        ("relay_killed", relay_killed),
        ("head_killed", head_killed),
        ("relays_killed_above_relays", relays_killed_above_relays),
        ("relay_gone_silent", relay_gone_silent),
        ("refused_below", refused_below),
        ("forged_relay_messages", forged_relay_messages),
        ("tree_needs_node_ids", tree_needs_node_ids),
    ])
