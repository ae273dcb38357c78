"""Several real agents, each its own process on its own loopback address, and jobs spread across
them: the fence tree between agents (block, cyclic, uneven layouts; chains and stars), Slurm
libpmi2 rounds and PMIX_Ring across nodes, and the failures that must end a launch everywhere:
a rank killed on one node, an agent killed while its ranks wait in a fence, a fence timeout with
its straggler report. After each fault the surviving agents serve the next launch. Links between
agents are held (heartbeated) only while a launch needs them; idle agents fall silent. And
lattice-api's single-request form of the launch request, one per node, through a real MPI job."""
import os
import re
import signal
import subprocess
import tempfile
import time

from harness import (AGENTD, LATTICE, ROGUE, CaseSkipped, check, describe_pids, expect_mpmd,
                     expect_status, in_fence, mpmd_args, past_init, processes_with_env, prog, run_cases,
                     test_user, wait_marks, wait_ranks, wait_until)


def agents(c, count):
    """`count` agents on 127.0.0.1, 127.0.0.2, ...: one address per node."""
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"]) for i in range(count)]


def addresses(nodes):
    return ",".join(a.address for a in nodes)


def ok(c, result, expect_lines, needle):
    expect_status(result, 0)
    lines = [l for l in result.out.splitlines() if needle in l]
    check(len(lines) == expect_lines, f"expected {expect_lines} '{needle}' lines, got {len(lines)}"
                                      f"\n{result.describe()}")
    c.check_clean(result)


def mpich_block(c):
    nodes = agents(c, 4)
    r = c.run_launch(["--agents", addresses(nodes), "-n", "16", prog("mpi_check")], timeout=120)
    ok(c, r, 16, "ok")


def mpich_cyclic(c):
    nodes = agents(c, 4)
    r = c.run_launch(["--agents", addresses(nodes), "-n", "16", "--distribution", "cyclic",
                      prog("mpi_check")], timeout=120)
    ok(c, r, 16, "ok")


def mpich_uneven(c):
    nodes = agents(c, 4)
    r = c.run_launch(["--agents", addresses(nodes), "-N", "4", "-n", "10", prog("mpi_check")],
                     timeout=120)
    ok(c, r, 10, "ok")


def mpich_local_mode(c):
    r = c.run_launch(["-N", "4", "-n", "8", "-l", prog("mpi_check")], timeout=120)
    ok(c, r, 8, "ok")
    check(all(l.split(":")[0].isdigit() for l in r.out.splitlines() if l),
          f"unlabelled output\n{r.describe()}")


def pmi2_rounds_and_ring(c):
    nodes = agents(c, 4)
    for fanout in ("1", "2", "3"):  # a chain, a binary tree, a star
        r = c.run_launch(["--agents", addresses(nodes), "-n", "8", "--fanout", fanout,
                          prog("pmi2_client"), "--rounds", "3"])
        ok(c, r, 8, "ok")


def stores_in_chunks(c):
    """Stores of several fence chunks (48 ranks x 1000 B against 16 KiB chunks), through a chain
    (each middle agent forwards chunks as they arrive) and a star: every rank gets every value."""
    nodes = agents(c, 3)
    for fanout in ("1", "3"):
        r = c.run_launch(["--agents", addresses(nodes), "-n", "48", "--fanout", fanout,
                          prog("pmi2_client"), "--bench", "2", "--size", "1000"], timeout=120)
        ok(c, r, 1, "pmi2 bench: ranks=48 rounds=2 size=1000")


def find_rank(c, rank, timeout=30):
    """Pid of the live process of `rank` (its rank program, not the exec helper) in this case."""
    entry = f"PMI_RANK={rank}"
    def pids():
        return [p for p in c.survivors() if p in processes_with_env(entry)]
    wait_until(lambda: pids(), timeout)
    found = pids()
    check(found, f"rank {rank} never started")
    return found[0]


def kill_rank_on_node2(c):
    nodes = agents(c, 3)
    # Ranks 2-3 run on node n2 (block layout, 2 per node); every rank past MPI_Init first.
    p, started = held_launch(c, nodes, "hold", "60")
    os.kill(find_rank(c, 3), signal.SIGKILL)
    r = c.finish_launch(p, ["mpi_hold"], started, 60)
    check(r.code == 128 + 9, f"expected 137 (rank 3 killed)\n{r.describe()}")
    check(any("rank 3" in l and "n2" in l and "SIGKILL" in l for l in r.err.splitlines()),
          f"no line naming rank 3 on n2 and SIGKILL\n{r.describe()}")
    c.check_clean(r)
    again = c.run_launch(["--agents", addresses(nodes), "-n", "6", prog("mpi_check")])
    ok(c, again, 6, "ok")


def held_launch(c, nodes, mode, value):
    """6 ranks over the agents running mpi_hold; returns once every rank is past MPI_Init
    ("hold"), or every rank but the one that never fences waits in MPI_Init's fence. Past
    MPI_Init is its return, not its PMI fence: after the fence UCX still connects the ranks,
    and a rank that loses a peer in there fails on its own."""
    marks = tempfile.mkdtemp(dir=c.dir)
    p = c.start_launch(["--agents", addresses(nodes), "-n", "6", "--env",
                        f"MPI_HOLD_MARKS={marks}", prog("mpi_hold"), mode, value])
    started = time.monotonic()
    if mode == "hold":
        check(wait_marks(marks, 6), "the ranks did not all get past MPI_Init")
    else:
        check(wait_ranks(nodes, 5, in_fence), "the ranks did not all wait in MPI_Init's fence")
    return p, started


def kill_agent_in_fence(c):
    nodes = agents(c, 3)
    # Rank 1 never fences, so every other rank waits in MPI_Init's fence, on every node.
    p, started = held_launch(c, nodes, "no-fence", "1")
    os.kill(nodes[2].proc.pid, signal.SIGKILL)
    r = c.finish_launch(p, ["mpi_hold"], started, 60)
    check(r.code not in (0, None), f"the launch must fail when n3 dies\n{r.describe()}")
    # Named by the launcher (n3) or by a peer agent (the address given to --agents), whichever
    # noticed first.
    check(any("node n3 lost" in l or "node 127.0.0.3 lost" in l for l in r.err.splitlines()),
          f"no line naming the lost node\n{r.describe()}")
    # A SIGKILLed agent cannot remove its PMI socket; its next start does.
    nodes[2] = c.start_agent("n3", ["--listen", "127.0.0.3:0"])
    c.check_clean(r)
    survivors = nodes[:2]
    check(all(a.alive() for a in survivors), "a surviving agent died")
    again = c.run_launch(["--agents", addresses(survivors), "-n", "4", prog("mpi_check")])
    ok(c, again, 4, "ok")


def agent_restarted(c):
    """An agent killed under running ranks and started again, as systemd's Restart= would: the
    launch ends everywhere with the node's loss. Its ranks die with it (their parent-death
    signal), but what they started in the background outlives them; the new agent kills that (a
    cgroup per launch keeps it; by child subreaper it went to init with its agent's death, and
    nothing tells it apart any more: said, skipped)."""
    victim = test_user("victim")
    os.chmod(c.dir, 0o711)
    nodes = agents(c, 2)
    args = ["--agents", addresses(nodes), "--user", victim.name, "-N", "2", "-n", "4", "/bin/sh",
            "-c", "sleep 300 & wait"]
    p = c.start_launch(args, cwd="/tmp")
    started = time.monotonic()
    check(wait_until(lambda: len(c.survivors()) == 8, 30), "the 4 ranks never ran")
    os.kill(nodes[1].proc.pid, signal.SIGKILL)
    nodes[1].proc.wait()
    r = c.finish_launch(p, args, started, 60)
    check(r.code not in (0, None), f"the launch outlived n2's agent\n{r.describe()}")
    check(any("n2" in l and "lost" in l for l in r.err.splitlines()), f"n2 lost?\n{r.describe()}")
    # Left: the background sleeps of n2's two ranks.
    check(wait_until(lambda: len(c.survivors()) == 2, 30),
          f"not only n2's background processes are left: {describe_pids(c.survivors())}")
    nodes[1] = c.start_agent("n2", ["--listen", "127.0.0.2:0"])
    if "contained by child subreaper" in nodes[1].log_text():
        raise CaseSkipped("containment by child subreaper: a dead agent's orphans are init's")
    check(wait_until(lambda: not c.survivors(), 10),
          f"left behind: {describe_pids(c.survivors())}")
    check(nodes[1].wait_log("killed 2 processes left by an agent before this one"), nodes[1].log())
    c.check_clean(r)
    again = c.run_launch(["--agents", addresses(nodes), "-n", "4", prog("mpi_check")])
    ok(c, again, 4, "ok")


def unreachable_node(c):
    """A node whose agent is gone fails the launch at once, by name, and its rank is "not
    started": nothing of the launch ran there (before, "no exit status", as for a lost node)."""
    nodes = agents(c, 3)
    nodes[2].stop()
    r = c.run_launch(["--agents", addresses(nodes), "-N", "3", "-n", "3", "sleep", "30"])
    check(r.code == 1 and "cannot reach agent" in r.err, f"not refused at once\n{r.describe()}")
    # "rank 2: not started", or within a range when the others were never asked either.
    check(re.search(r"ranks? [0-9,-]*\b2: not started", r.err),
          f"the unreached rank is not 'not started'\n{r.describe()}")
    c.check_clean(r)


def hung_agent_detected(c):
    nodes = agents(c, 3)
    p, started = held_launch(c, nodes, "hold", "60")
    # A stopped agent keeps its connections open: only missed heartbeats give it away.
    os.kill(nodes[2].proc.pid, signal.SIGSTOP)
    try:
        r = c.finish_launch(p, ["mpi_hold"], started, 60)
    finally:
        os.kill(nodes[2].proc.pid, signal.SIGCONT)
    check(r.code not in (0, None), f"the launch must fail when n3 hangs\n{r.describe()}")
    # Named by the launcher (n3) or by a peer agent (its address), whichever noticed first.
    check(any(("n3 lost" in l or "127.0.0.3 lost" in l) and "heartbeat" in l
              for l in r.err.splitlines()),
          f"no line naming n3 lost through missed heartbeats\n{r.describe()}")
    c.check_clean(r)


def fence_timeout_stragglers(c):
    nodes = agents(c, 3)
    r = c.run_launch(["--agents", addresses(nodes), "-n", "6", "--fence-timeout", "2",
                      prog("mpi_hold"), "no-fence", "4"])
    check(r.code not in (0, None), f"a fence timeout must fail the launch\n{r.describe()}")
    check("timed out" in r.err, f"no fence timeout reported\n{r.describe()}")
    stragglers = [l for l in r.err.splitlines() if "rank 4 on n3" in l]
    check(stragglers, f"the straggler report does not name rank 4 on n3\n{r.describe()}")
    check(not any("rank 0 on" in l for l in r.err.splitlines() if "waiting" in l),
          f"a rank that entered the fence is reported as a straggler\n{r.describe()}")
    c.check_clean(r)
    again = c.run_launch(["--agents", addresses(nodes), "-n", "3", prog("mpi_check")])
    ok(c, again, 3, "ok")


def tree_lines(nodes, offsets):
    """Each agent's "node I of N, parent P, children [...]" log line (debug) since `offsets`."""
    lines = []
    for agent, offset in zip(nodes, offsets):
        found = re.findall(r": node (\d+) of \d+, parent (-?\d+), children \[([\d,]*)\]",
                           agent.log_text()[offset:])
        check(len(found) == 1, f"{agent.node_id}: {len(found)} fence tree lines\n{agent.log()}")
        lines.append(found[0])
    return lines


def one_tree_per_launch(c):
    """The launch decides its fence tree and timeout for every agent: the launcher's config
    (fence.fanout 1: a chain over 4 agents), --fanout over it (3: a star). An agent's config
    naming a fanout is refused, saying where it goes now (before, agents configured 1 and 3
    built different trees, refused each other's chunks, and the launch died at the fence
    timeout)."""
    agent_config = os.path.join(c.dir, "agent.yaml")
    with open(agent_config, "w") as f:
        f.write("fence:\n  fanout: 3\n")
    p = subprocess.run([AGENTD, "--check-config", "--config", agent_config], capture_output=True,
                       text=True, timeout=30)
    check(p.returncode == 2 and "fence.fanout" in p.stderr and
          "launcher's configuration" in p.stderr, f"exit {p.returncode}: {p.stderr}")

    launcher_config = os.path.join(c.dir, "launcher.yaml")
    with open(launcher_config, "w") as f:
        f.write("fence:\n  fanout: 1\n  timeout: 2\n")
    nodes = [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0", "--log-level", "debug"])
             for i in range(4)]
    base = ["--agents", addresses(nodes), "--config", launcher_config]
    for fanout, expect in ((None, [("0", "-1", "1"), ("1", "0", "2"), ("2", "1", "3"),
                                   ("3", "2", "")]),
                           ("3", [("0", "-1", "1,2,3"), ("1", "0", ""), ("2", "0", ""),
                                  ("3", "0", "")])):
        offsets = [len(a.log_text()) for a in nodes]
        r = c.run_launch([*base, *(["--fanout", fanout] if fanout else []), "-n", "8",
                          prog("pmi2_client"), "--rounds", "2"])
        ok(c, r, 8, "ok")
        got = tree_lines(nodes, offsets)
        check(got == expect, f"fanout {fanout or 'from the launcher config'}: trees {got}, "
                             f"expected {expect}")
    # The file's fence timeout (2 s) reaches every agent: a rank that never enters ends it.
    r = c.run_launch([*base, "-n", "4", prog("mpi_hold"), "no-fence", "3"])
    check(r.code not in (0, None) and "timed out" in r.err, f"no fence timeout\n{r.describe()}")
    c.check_clean(r)


def name_publishing(c):
    """MPI_Publish_name on rank 0 (n1), MPI_Lookup_name on the last rank (n3): the names live at
    the launch's head agent; an unknown name, a second publish and a name after unpublish fail at
    once. MPICH (PMI-1) with a block layout, Slurm libpmi2 (PMI-2) with a cyclic one."""
    nodes = agents(c, 3)
    r = c.run_launch(["--agents", addresses(nodes), "-n", "6", prog("mpi_namepub")], timeout=120)
    ok(c, r, 6, "namepub ok")
    for needle in ("lookup found lattice-test-port-42", "unknown lookup failed",
                   "second publish failed", "lookup after unpublish failed"):
        check(needle in r.out, f"expected '{needle}'\n{r.describe()}")
    r = c.run_launch(["--agents", addresses(nodes), "-n", "5", "--distribution", "cyclic",
                      prog("pmi2_client"), "--namepub"], timeout=120)
    ok(c, r, 5, "pmi2 namepub ok")


def mpmd(c):
    """mpiexec's ':' form over 2 agents: 2 + 3 ranks of MPICH in one world of 5 (block: ranks 0-2
    on n1, so app 1 spans both nodes), each app with its own MPI_APPNUM, --env and argv; a third
    app cyclic; then Slurm's libpmi2 reading each rank's appnum from fullinit."""
    nodes = agents(c, 2)
    apps = [(2, "a", ["argA"]), (3, "b", ["argB", "x y"])]
    r = c.run_launch(["--agents", addresses(nodes), "-N", "2", *mpmd_args("mpi_mpmd", apps)],
                     timeout=120)
    expect_mpmd(r, apps)
    c.check_clean(r)
    apps = [(1, "one", []), (2, "two", ["2"]), (3, "three", ["3"])]
    r = c.run_launch(["--agents", addresses(nodes), "--distribution", "cyclic",
                      *mpmd_args("mpi_mpmd", apps)], timeout=120)
    expect_mpmd(r, apps)
    r = c.run_launch(["--agents", addresses(nodes), "-n", "2", prog("pmi2_client"), "--appnum", "0",
                      ":", "-n", "3", prog("pmi2_client"), "--appnum", "1"], timeout=120)
    ok(c, r, 5, "ok")
    for appnum, ranks in ((0, range(0, 2)), (1, range(2, 5))):
        for rank in ranks:
            check(any(l.startswith(f"pmi2 rank {rank}/5 ok") and l.endswith(f"appnum {appnum})")
                      for l in r.out.splitlines()), f"rank {rank}: appnum {appnum}\n{r.describe()}")
    # A program missing on the nodes refuses the launch before anything runs, and names it.
    r = c.run_launch(["--agents", addresses(nodes), "-n", "1", prog("mpi_mpmd"), ":", "-n", "1",
                      "/nonexistent/app"], timeout=60)
    check(r.code not in (0, None) and "/nonexistent/app" in r.err, r.describe())
    c.check_clean(r)


def status_of(agent):
    """`lattice admin status` of one agent: (its header line, (messages out, in))."""
    p = subprocess.run([LATTICE, "admin", "status", "--socket", agent.admin_socket],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    check(p.returncode == 0, f"admin status: exit {p.returncode}\n{p.stderr}")
    head = p.stdout.splitlines()[0]
    out, inn = head.split("; messages ")[1].split(" in;")[0].split(" out, ")
    return head, (int(out), int(inn))


def idle_links_close(c):
    """A launch holds the links to its tree neighbours (heartbeated); once it ends they linger
    unheld and silent, then close; an agent without launches then sends and receives nothing.
    The next launch opens them again. (limits.idle_timeout 4 s: a 1 s linger.)"""
    config = os.path.join(c.dir, "agent.yaml")
    with open(config, "w") as f:
        f.write("limits:\n  idle_timeout: 4\n")
    nodes = [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0", "--config", config])
             for i in range(3)]
    p, started = held_launch(c, nodes, "hold", "4")
    head, _ = status_of(nodes[0])
    # The ranks are past MPI_Init's fence and in no other: nothing waits for the children.
    full = subprocess.run([LATTICE, "admin", "status", "--socket", nodes[0].admin_socket],
                          stdout=subprocess.PIPE, text=True, timeout=30).stdout
    check("fence waiting for child nodes" not in full,
          f"between fences, the head says a fence waits for its children:\n{full}")
    check("(0 held)" not in head and " 0 to peers" not in head,
          f"n1 holds no link to its fence neighbours while the launch runs: {head}")
    r = c.finish_launch(p, ["mpi_hold"], started, 60)
    expect_status(r, 0)
    quiet = "links: 0 to peers (0 held), 0 open"
    check(wait_until(lambda: all(quiet in status_of(a)[0] for a in nodes), 15),
          "links still open after the launch ended and the linger passed:\n" +
          "\n".join(status_of(a)[0] for a in nodes))
    before = [status_of(a)[1] for a in nodes]
    time.sleep(3)  # three heartbeat periods
    after = [status_of(a)[1] for a in nodes]
    check(before == after, f"idle agents exchanged messages: {before} -> {after}")
    again = c.run_launch(["--agents", addresses(nodes), "-n", "6", prog("mpi_check")], timeout=120)
    ok(c, again, 6, "ok")


def links_between(nodes):
    """The TCP connections between the agents, as (maker, listener) node indices: sockets of an
    agent's process whose peer is another agent's listening address (the acceptor's end has an
    ephemeral peer port, so each connection is counted once)."""
    listening = {a.address: i for i, a in enumerate(nodes)}
    by_pid = {a.proc.pid: i for i, a in enumerate(nodes)}
    out = subprocess.run(["ss", "-tnpH", "state", "established"], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    links = []
    for line in out.splitlines():
        fields = line.split()
        pid = re.search(r"pid=(\d+)", line)
        if len(fields) < 4 or not pid or int(pid.group(1)) not in by_pid:
            continue
        if fields[3] in listening:
            links.append((by_pid[int(pid.group(1))], listening[fields[3]]))
    return links


def one_link_per_tree_edge(c):
    """8 agents, a fence tree of fanout 2: while the launch runs, its 7 tree edges are 7 links,
    each made by the child and used both ways (before, each end made its own: 14)."""
    nodes = agents(c, 8)
    p = c.start_launch(["--agents", addresses(nodes), "--fanout", "2", "-n", "8", prog("mpi_hold"),
                        "hold", "4"])
    started = time.monotonic()
    check(wait_ranks(nodes, 8, past_init), "the ranks did not all get past MPI_Init")
    links = links_between(nodes)
    edges = sorted((i, (i - 1) // 2) for i in range(1, 8))
    check(sorted(links) == edges, f"links (maker, listener) {sorted(links)}, expected the tree's "
                                  f"edges, each made by the child: {edges}")
    for i, a in enumerate(nodes):
        degree = len([e for e in edges if i in e])
        line = status_of(a)[0]
        check(f"links: {degree} to peers ({degree} held)" in line,
              f"n{i + 1} should hold one link to each of its {degree} tree neighbours: {line}")
    r = c.finish_launch(p, ["mpi_hold"], started, 60)
    expect_status(r, 0)
    c.check_clean(r)


def seed_launch(c, nodes, index, first_rank, per_node=2):
    """lattice-test-rogue as lattice-api, started in the background: node `index`'s request in
    the seed's form (the whole peers list, tasksPerNode, firstRank, worldSize, headNodeIndex 0,
    PMI-2), with the nodeIndex and user an agent requires, for mpi_check."""
    peers = ",".join(f"{a.node_id}={a.address}" for a in nodes)
    p = subprocess.Popen(
        [ROGUE, "--key", c.key_file, "--identity", "launcher:lattice-api", "--connect",
         nodes[index].address, "--launch", "seed-form", "--env", f"LT_TEST_TAG={c.tag}",
         "seed-launch", peers, str(index), str(per_node), str(first_rank),
         str(per_node * len(nodes)), prog("mpi_check")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=c.case_env(),
        start_new_session=True)
    c.launchers.append(p)  # killed by the case's cleanup should it hang
    return p


def rogue_lines(p, timeout=120):
    try:
        return p.communicate(timeout=timeout)[0].splitlines()
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        return p.communicate()[0].splitlines() + [f"(no end within {timeout} s)"]


def seed_form_launch(c):
    """lattice-api's contract: each of 3 agents gets one request in the seed's form, 2 ranks
    per node, on its own link. Each node reports exactly its ranks' lines (the right rank and a
    world of 6, 2 ranks sharing memory on it) and exits 0, and the launch ends on every node."""
    nodes = agents(c, 3)
    rogues = [seed_launch(c, nodes, i, 2 * i) for i in range(len(nodes))]
    for i, p in enumerate(rogues):
        lines = rogue_lines(p)
        said = "\n".join(lines)
        check(lines[:2] == [f"established as agent n{i + 1}", f"accepted by n{i + 1}"],
              f"n{i + 1} did not accept the request:\n{said}\n{nodes[i].log()}")
        check(lines[-1] == f"ended node {i}",
              f"the launch did not end cleanly on n{i + 1}:\n{said}\n{nodes[i].log()}")
        ranks = (2 * i, 2 * i + 1)
        want = [f"rank {r} stdout: rank {r}/6 ok (allreduce, barrier, ring, 2 on this node)"
                for r in ranks] + [f"exit rank {r} node {i}: exited with status 0" for r in ranks]
        got = [l for l in lines[2:-1] if " stderr: " not in l]  # MPICH's own warnings, if any
        check(sorted(got) == sorted(want), f"n{i + 1} reported\n{said}\nexpected\n" +
              "\n".join(want))
    c.check_clean()


def seed_form_refused(c):
    """A seed-form request whose firstRank is not tasksPerNode x nodeIndex is refused, and says
    so; nothing starts."""
    nodes = agents(c, 2)
    lines = rogue_lines(seed_launch(c, nodes, 1, 3))
    check(lines[-1:] == ["refused: firstRank 3 does not match a block layout of 2 ranks per node "
                         "at node 1"], f"not refused as expected: {lines}")
    check(nodes[1].wait_log("refused a launch from launcher lattice-api"),
          f"n2 did not log the refusal\n{nodes[1].log()}")
    c.check_clean()


if __name__ == "__main__":
    run_cases([
        ("mpich_block", mpich_block),
        ("mpich_cyclic", mpich_cyclic),
        ("mpich_uneven", mpich_uneven),
        ("mpich_local_mode", mpich_local_mode),
        ("pmi2_rounds_and_ring", pmi2_rounds_and_ring),
        ("stores_in_chunks", stores_in_chunks),
        ("kill_rank_on_node2", kill_rank_on_node2),
        ("kill_agent_in_fence", kill_agent_in_fence),
        ("agent_restarted", agent_restarted),
        ("unreachable_node", unreachable_node),
        ("hung_agent_detected", hung_agent_detected),
        ("fence_timeout_stragglers", fence_timeout_stragglers),
        ("one_tree_per_launch", one_tree_per_launch),
        ("name_publishing", name_publishing),
        ("mpmd", mpmd),
        ("idle_links_close", idle_links_close),
        ("one_link_per_tree_edge", one_link_per_tree_edge),
        ("seed_form_launch", seed_form_launch),
        ("seed_form_refused", seed_form_refused),
    ])
