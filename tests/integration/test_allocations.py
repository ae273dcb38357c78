"""Allocations, against real agents run as root on 127.0.0.1, .2, .3: `lattice alloc` (a key
holder) starts one for the test's victim user on its nodes and runs a batch step there as that
user; inside it `lattice launch` needs no key, only the agent's user door, which knows its caller
by SO_PEERCRED. Cases: MPICH launches through the door spread over the allocation's nodes, as its
user; another user refused at the door (and without the key, and at the admin socket); launches
naming the allocation on a node outside it refused by that node, by the launcher, and by the
door's agent itself (a hand-made request); nothing of an allocation outlives its end, however it
ends: its batch step's exit, its time limit (counted by each node itself), its launcher killed,
a node killed, an operator's end-allocation; its memory and CPU limits enforced; and plain
mpiexec.hydra, Open MPI's mpirun and (--slurm-compat) srun in the batch step, with no ssh."""
import json
import os
import pwd
import signal
import stat
import subprocess
import time
import uuid

from harness import (BUILD, LATTICE, ROGUE, SURVIVOR_GRACE, CaseSkipped, LaunchResult, check,
                     describe_pids, expect_status, note, processes_with_env, prog, run_cases,
                     test_user, wait_until)

# What other users run: the system's Python.
PYTHON = "/usr/bin/python3"
ALLOC_TIMEOUT = 90


def agents(c, count):
    """`count` agents on 127.0.0.1, .2, ...; the case's directory is made passable (0711) for
    the allocation's user, who reaches the agents' user doors inside it."""
    os.chmod(c.dir, 0o711)
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"]) for i in range(count)]


def agents_arg(nodes):
    return ",".join(f"{a.node_id}={a.address}" for a in nodes)


def door(agent):
    return os.path.join(agent.dir, "user.sock")


def workdir(c, user):
    """A directory of the case that `user` owns (scripts, marks, fifos)."""
    path = os.path.join(c.dir, "work")
    if not os.path.isdir(path):
        os.mkdir(path)
        os.chown(path, user.uid, user.gid)
        os.chmod(path, 0o755)
    return path


def script(c, user, name, body):
    """An executable shell script `name` in the case's work dir, readable by `user`."""
    path = os.path.join(workdir(c, user), name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)
    return path


def gate(c, user):
    """A fifo the batch step waits on (`cat GATE`) until the test opens it (release())."""
    path = os.path.join(workdir(c, user), "gate")
    os.mkfifo(path, 0o666)
    os.chmod(path, 0o666)
    return path


def release(path):
    """Lets a batch step waiting in `cat GATE` go on (EOF once we close); False if none waits."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return False
    os.close(fd)
    return True


class Alloc:
    """A `lattice alloc` of the case, in the background, with a known id."""

    def __init__(self, c, nodes, command, user=None, extra=(), key=True):
        self.c = c
        self.id = "it-" + uuid.uuid4().hex[:12]
        self.args = ["alloc", "--agents", agents_arg(nodes), *(["--key-file", c.key_file]
                                                               if key else []),
                     *(["--user", user.name] if user else []), "--id", self.id, *extra, "--",
                     *command]
        env = dict(c.case_env(), LT_TEST_TAG=c.tag, PATH=f"{BUILD}:{os.environ['PATH']}")
        self.started = time.monotonic()
        self.p = subprocess.Popen([LATTICE, *self.args], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=env, start_new_session=True, cwd="/tmp")
        c.launchers.append(self.p)

    def finish(self, timeout=ALLOC_TIMEOUT):
        try:
            out, err = self.p.communicate(timeout=timeout)
            code = self.p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)
            out, err = self.p.communicate()
            code = None
        return AllocResult(self.args, code, out, err, time.monotonic() - self.started)

    def processes(self):
        return processes_with_env(f"LATTICE_ALLOC_ID={self.id}")


class AllocResult(LaunchResult):
    def describe(self):
        return "`lattice " + super().describe()[len("`lattice launch "):]


def alloc_run(c, nodes, command, **kw):
    return Alloc(c, nodes, command, **kw).finish()


def run_as(user, args, env, timeout=60):
    """`args` run as `user` (no supplementary groups) in /tmp with exactly `env` (plus PATH)."""
    p = subprocess.run(args, user=user.uid, group=user.gid, extra_groups=[], cwd="/tmp",
                       env=dict({"PATH": "/usr/bin:/bin"}, **env), stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    return LaunchResult(args, p.returncode, p.stdout, p.stderr, 0.0)


def admin(agent, *request):
    p = subprocess.run([LATTICE, "admin", "--socket", agent.admin_socket, *request],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    return p.returncode, p.stdout + p.stderr


def expect_nothing_left(a, nodes, result=None, wait=0):
    """No process of allocation `a` alive on this machine (all the nodes) and no agent that
    still lists it. `wait`: a grace for the processes (an end the launcher did not wait for)."""
    context = f"\n{result.describe()}" if result else ""
    if wait:
        wait_until(lambda: not a.processes(), wait)
    left = a.processes()
    check(not left, f"processes of allocation {a.id} left: {describe_pids(left)}{context}")
    for agent in nodes:
        if not agent.alive():
            continue
        if wait:
            wait_until(lambda: a.id not in admin(agent, "allocations")[1], wait)
        code, text = admin(agent, "allocations")
        check(code == 0 and f"no allocations on node {agent.node_id}" in text,
              f"{agent.node_id} still lists allocation {a.id}:\n{text}{context}")


def wait_started(a, mark, what="the batch step never started"):
    def seen():
        return os.path.exists(mark) or a.p.poll() is not None
    check(wait_until(seen, 60) and os.path.exists(mark),
          f"{what}\n{a.finish(10).describe() if a.p.poll() is not None else ''}")


def waiting_batch(c, victim, extra_body=""):
    """A batch step that marks it started and waits on the case's gate: (script, mark, gate)."""
    mark = os.path.join(workdir(c, victim), "started")
    g = gate(c, victim)
    body = f"{extra_body}touch {mark}\ncat {g} >/dev/null\necho released\n"
    return script(c, victim, "wait.sh", body), mark, g


def user_launch_in_allocation(c):
    victim = test_user("victim")
    nodes = agents(c, 2)
    mode = stat.S_IMODE(os.stat(c.key_file).st_mode)
    check(os.stat(c.key_file).st_uid == 0 and mode & 0o077 == 0,
          f"the cluster key is not root's only: {oct(mode)}")
    work = workdir(c, victim)
    probe = ('echo "where $PMI_RANK $(id -un) $LATTICE_LOCAL_RANK/$LATTICE_LOCAL_SIZE '
             '$LATTICE_USER_SOCKET"; exec ' + prog("mpi_hello"))
    body = (f"env > {work}/batch.env\n"
            f"id -un > {work}/batch.user\n"
            f"{LATTICE} launch -N 2 -n 4 -l /bin/sh -c '{probe}' || exit 11\n"
            "echo ===one-node===\n"
            f"{LATTICE} launch -N 1 -n 2 -l /bin/sh -c '{probe}' || exit 12\n")
    batch = script(c, victim, "batch.sh", body)
    a = Alloc(c, nodes, [batch], user=victim)
    r = a.finish()
    expect_status(r, 0)
    two, _, one = r.out.partition("===one-node===")
    check(one, f"the batch step did not get to its second launch\n{r.describe()}")
    for rank in range(4):
        node = nodes[rank // 2]
        want = f"{rank}: where {rank} {victim.name} {rank % 2}/2 {door(node)}"
        check(want in two.splitlines(), f"-N 2: missing '{want}' (rank {rank} as {victim.name} "
                                        f"on {node.node_id})\n{r.describe()}")
        check(f"{rank}: hello from rank {rank} of 4 " in two,
              f"-N 2: rank {rank} of 4 did not wire up\n{r.describe()}")
    for rank in range(2):
        want = f"{rank}: where {rank} {victim.name} {rank}/2 {door(nodes[0])}"
        check(want in one.splitlines(), f"-N 1: missing '{want}' (both ranks on n1)"
                                        f"\n{r.describe()}")
        check(f"{rank}: hello from rank {rank} of 2 " in one,
              f"-N 1: rank {rank} of 2 did not wire up\n{r.describe()}")
    check(door(nodes[1]) not in one, f"-N 1 used the second node\n{r.describe()}")
    with open(os.path.join(work, "batch.user")) as f:
        check(f.read().strip() == victim.name, "the batch step did not run as the victim")
    with open(os.path.join(work, "batch.env")) as f:
        env = dict(l.split("=", 1) for l in f.read().splitlines() if "=" in l)
    for name, value in (("LATTICE_ALLOC_ID", a.id), ("LATTICE_NODELIST", "n1,n2"),
                        ("LATTICE_NNODES", "2"), ("LATTICE_USER_SOCKET", door(nodes[0]))):
        check(env.get(name) == value, f"the batch step has {name}={env.get(name)!r}, not {value!r}")
    pmi = sorted(n for n in env if n.startswith("PMI_"))
    check(not pmi, f"the batch step got PMI variables: {pmi}")
    expect_nothing_left(a, nodes, r)
    c.check_clean(r)


def door_options(c):
    """Through the user door every option works as with the key: Open MPI through PMIx, stdin,
    MPMD, output files, a failing rank's status."""
    victim = test_user("victim")
    nodes = agents(c, 2)
    work = workdir(c, victim)
    pmix = os.path.exists(prog("ompi_check"))  # (not in a build without libpmix)
    if not pmix:
        note("no Open MPI programs in this build: the PMIx launch is left out")
    body = (f"cd {work}\n"
            + (f"{LATTICE} launch -N 2 -n 4 --pmi pmix {prog('ompi_check')} || exit 51\n"
               if pmix else "")
            + f"echo 'line from stdin' | {LATTICE} launch -N 2 -n 2 -l cat || exit 52\n"
            f"{LATTICE} launch -N 2 -n 1 {prog('mpi_hello')} : -n 2 {prog('mpi_hello')} "
            "|| exit 53\n"
            f"{LATTICE} launch -N 2 -n 2 -o out-%t.txt /bin/sh -c 'echo out $PMI_RANK' "
            "|| exit 54\n"
            f"{LATTICE} launch -N 2 -n 2 /bin/sh -c 'exit 3'; echo \"failing status $?\"\n")
    a = Alloc(c, nodes, [script(c, victim, "options.sh", body)], user=victim)
    r = a.finish(120)
    expect_status(r, 0)
    if pmix:
        expect_spread(r.out, "--pmi pmix", r)
    check("0: line from stdin" in r.out.splitlines(), f"stdin did not reach rank 0\n{r.describe()}")
    for rank in range(3):
        check(f"hello from rank {rank} of 3 " in r.out, f"MPMD: rank {rank} of 3 missing\n"
                                                       f"{r.describe()}")
    for rank in range(2):
        with open(os.path.join(work, f"out-{rank}.txt")) as f:
            check(f.read() == f"out {rank}\n", f"-o: out-{rank}.txt\n{r.describe()}")
    check("failing status 3" in r.out and "exited with status 3" in r.err,
          f"a failing rank's status is not the launch's\n{r.describe()}")
    expect_nothing_left(a, nodes, r)
    c.check_clean(r)


# Run by a hostile user against a user door: holds 260 links (the agent closes those beyond
# its 256 per uid), then sends a frame whose header claims 5 MiB (beyond the door's 4 MiB);
# prints how many links were closed and whether the big frame's link was.
DOOR_FLOOD = """
import socket, struct, sys, time
path = sys.argv[1]
links = []
for _ in range(260):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    links.append(s)
time.sleep(1.5)
closed = 0
accepted = []
for s in links:
    s.setblocking(False)
    try:
        if s.recv(1) == b"":
            closed += 1
            continue
    except BlockingIOError:
        pass
    accepted.append(s)
# The big frame goes on a link the agent accepted (a new one might find the slots still full).
big = accepted[0]
big.setblocking(True)
big.sendall(struct.pack("<II", 0, (5 << 20) // 8) + b"\\0" * 4096)
big.settimeout(10)
try:
    cut = big.recv(1) == b""
except (socket.timeout, ConnectionResetError):
    cut = isinstance(sys.exc_info()[1], ConnectionResetError)
print("closed", closed, "big-frame-cut", cut)
"""


def door_bounds(c):
    """A hostile local user on the user door: links beyond its 256 are closed at once, a frame
    beyond 4 MiB ends its link before it is read, and the agent serves the allocation's own
    user meanwhile."""
    victim, hostile = test_user("victim"), test_user("hostile")
    nodes = agents(c, 1)
    batch, mark, g = waiting_batch(c, victim)
    a = Alloc(c, nodes, [batch], user=victim)
    wait_started(a, mark)
    r = run_as(hostile, [PYTHON, "-c", DOOR_FLOOD, door(nodes[0])], {}, timeout=60)
    check(r.code == 0 and "closed 4 big-frame-cut True" in r.out,
          f"the door's bounds did not hold\n{r.describe()}\n{nodes[0].log()}")
    # The client saw its links end; the agent's log lines may come a moment after.
    check(nodes[0].wait_log(
        f"refused uid {hostile.uid} on the user door: 256 of its links open (at most 256)"),
          f"the refusal is not logged with the uid\n{nodes[0].log()}")
    check(wait_until(lambda: "exceeds the limit of 4194304" in nodes[0].log_text() or
                     "(limit 4194304)" in nodes[0].log_text(), 10),
          f"the big frame's end is not logged\n{nodes[0].log()}")
    check(nodes[0].alive(), "the agent died")
    # The allocation's own user still gets through.
    ok = run_as(victim, [LATTICE, "launch", "--alloc", a.id, "-n", "1", "/bin/true"],
                {"LATTICE_USER_SOCKET": door(nodes[0])})
    expect_status(ok, 0)
    release(g)
    r = a.finish()
    expect_status(r, 0)
    expect_nothing_left(a, nodes, r)
    c.check_clean(r)


def hostile_user_refused(c):
    victim, hostile = test_user("victim"), test_user("hostile")
    nodes = agents(c, 2)
    batch, mark, g = waiting_batch(c, victim)
    a = Alloc(c, nodes, [batch], user=victim)
    wait_started(a, mark)
    knock = [LATTICE, "launch", "--alloc", a.id, "-n", "1", "/bin/true"]
    r = run_as(hostile, knock, {"LATTICE_USER_SOCKET": door(nodes[0])})
    check(r.code not in (0, None), f"the hostile user launched in the victim's allocation"
                                   f"\n{r.describe()}")
    check(f"no allocation '{a.id}' is running on n1" in r.err,
          f"no clear refusal\n{r.describe()}")
    for secret in (victim.name, str(victim.uid), nodes[1].node_id, "127.0.0.2"):
        check(secret not in r.err, f"the refusal tells another user '{secret}'\n{r.describe()}")
    check(nodes[0].wait_log(f"allocation '{a.id}' asked about by user {hostile.uid} refused"),
          f"n1 did not log the refusal with the caller's uid\n{nodes[0].log()}")
    # Through the same door and with the same command, the allocation's own user gets in.
    ok = run_as(victim, knock, {"LATTICE_USER_SOCKET": door(nodes[0])})
    expect_status(ok, 0)
    # The hostile user's hand-made request (past the launcher's own check) is refused by the
    # door's agent too, and starts nothing.
    rogue = run_as(hostile, [ROGUE, "--door", door(nodes[0]), "door-launch", a.id,
                             agents_arg(nodes), "/bin/true"], {})
    check("reply: error:" in rogue.out and f"user {hostile.uid} refused" in rogue.out,
          f"the agent took a hostile request on its door\n{rogue.describe()}")
    check(victim.name not in rogue.out, f"the agent's refusal names the owner\n{rogue.describe()}")
    # Nor may it signal the victim's launches through the door (the batch step's, by its id).
    batch_pid = next((p for p in a.processes() if open(f"/proc/{p}/comm").read().strip() == "cat"),
                     None)
    check(batch_pid, f"the batch step's cat is not running: {describe_pids(a.processes())}")
    with open(f"/proc/{batch_pid}/environ", "rb") as f:
        launch_id = dict(e.decode().split("=", 1) for e in f.read().split(b"\0")
                         if b"=" in e)["LATTICE_LAUNCH_ID"]
    for who in (hostile, victim):  # not even its own user: only its launcher signals it
        rogue = run_as(who, [ROGUE, "--door", door(nodes[0]), "door-signal", launch_id, "9"], {})
        check("reply: error:" in rogue.out and "only the launch's own launcher" in rogue.out,
              f"{who.name} signalled the batch step through the door\n{rogue.describe()}")
    # The key, `lattice alloc` without it, the admin socket: all closed to the hostile user.
    read = hostile.run(lambda: open(c.key_file, "rb").read())
    check("PermissionError" in read, f"the hostile user read the cluster key: {read[:60]}")
    for key_args in (["--key-file", c.key_file], []):
        r = run_as(hostile, [LATTICE, "alloc", "--agents", agents_arg(nodes), *key_args, "--",
                             "/bin/true"], {})
        check(r.code not in (0, None) and ("key" in r.err.lower()),
              f"`lattice alloc` without the key did not fail on it\n{r.describe()}")
    code, text = admin(nodes[0], "allocations")
    check(text.count("lattice-t-") == 1 and a.id in text,
          f"an allocation other than the victim's was started:\n{text}")
    for request in (["allocations"], ["status"], ["end-allocation", a.id]):
        r = run_as(hostile, [LATTICE, "admin", "--socket", nodes[0].admin_socket, *request], {})
        check(r.code not in (0, None) and a.id not in r.out + r.err,
              f"the hostile user got through the admin socket\n{r.describe()}")
    check(a.p.poll() is None and release(g), "the allocation did not outlive the attempts")
    r = a.finish()
    expect_status(r, 0)
    check("released" in r.out, f"the batch step did not run on\n{r.describe()}")
    expect_nothing_left(a, nodes, r)
    c.check_clean(r)


def nodes_outside_refused(c):
    victim = test_user("victim")
    nodes = agents(c, 3)
    batch, mark, g = waiting_batch(c, victim)
    a = Alloc(c, nodes[:2], [batch], user=victim)
    wait_started(a, mark)
    # A key holder names the allocation on n3 alone, and on n1 and n3: n3 does not hold it
    # (and n1 refuses a launch that spans a node outside it).
    r = c.run_launch(["--agents", agents_arg([nodes[2]]), "--key-file", c.key_file,
                      "--alloc", a.id, "--user", victim.name, "-n", "1", "/bin/true"], cwd="/tmp")
    check(r.code not in (0, None) and "agent n3 refused" in r.err and
          f"allocation '{a.id}' is not held by this node" in r.err,
          f"n3 did not refuse a launch in an allocation it does not hold\n{r.describe()}")
    r = c.run_launch(["--agents", agents_arg([nodes[0], nodes[2]]), "--key-file", c.key_file,
                      "--alloc", a.id, "--user", victim.name, "-N", "2", "-n", "2", "/bin/true"],
                     cwd="/tmp")
    check(r.code not in (0, None), f"a launch on n3 in allocation {a.id} ran\n{r.describe()}")
    check(f"allocation '{a.id}' is not held by this node" in r.err or
          f"node n3 is not one of allocation '{a.id}''s nodes" in r.err,
          f"the launch over n1 and n3 was not refused for n3\n{r.describe()}")
    # Through the door: more nodes than the allocation holds, refused by the launcher.
    env = {"LATTICE_ALLOC_ID": a.id, "LATTICE_USER_SOCKET": door(nodes[0])}
    r = run_as(victim, [LATTICE, "launch", "-N", "3", "-n", "3", "/bin/true"], env)
    check(r.code not in (0, None) and f"allocation {a.id} holds 2 nodes" in r.err,
          f"-N 3 in a 2-node allocation was not refused\n{r.describe()}")
    # A hand-made request on the door whose peers include n3: the agent refuses it itself.
    rogue = run_as(victim, [ROGUE, "--door", door(nodes[0]), "door-launch", a.id,
                            agents_arg([nodes[0], nodes[2]]), "/bin/true"], {})
    check(f"node n3 is not one of allocation '{a.id}'" in rogue.out,
          f"the door's agent did not refuse peers outside the allocation\n{rogue.describe()}")
    # Nor may its peers make the door's node another (n2 first: this agent as node 'n2').
    rogue = run_as(victim, [ROGUE, "--door", door(nodes[0]), "door-launch", a.id,
                            agents_arg([nodes[1], nodes[0]]), "/bin/true"], {})
    check("reply: error:" in rogue.out and "addresses this agent as node 'n2'" in rogue.out,
          f"the door's agent took a request naming it n2\n{rogue.describe()}")
    # The same request with the allocation's own nodes is taken (the tool is sound).
    rogue = run_as(victim, [ROGUE, "--door", door(nodes[0]), "door-launch", a.id,
                            agents_arg(nodes[:2]), "/bin/true"], {})
    check("reply: ok" in rogue.out, f"a sound door request was refused\n{rogue.describe()}")
    check(f"no allocations on node n3" in admin(nodes[2], "allocations")[1], "n3 holds it")
    check(release(g), "the batch step no longer waits")
    r = a.finish()
    expect_status(r, 0)
    expect_nothing_left(a, nodes, r)
    c.check_clean(r)


def end_leaves_nothing(c):
    victim = test_user("victim")
    nodes = agents(c, 2)
    work = workdir(c, victim)
    g = gate(c, victim)
    # Strays of a door launch on both nodes (which its own end sweeps), a door launch still
    # running on both nodes when the batch step exits, and the batch step's own strays: a
    # daemon in a session of its own and a double-forked child.
    body = (f"{LATTICE} launch -N 2 -n 2 -l /bin/sh -c "
            "'setsid sleep 1000 </dev/null >/dev/null 2>&1 & (sleep 1001 </dev/null >/dev/null "
            "2>&1 &) ; echo strays' || exit 11\n"
            f"{LATTICE} launch -N 2 -n 2 /bin/sleep 1002 </dev/null >/dev/null 2>&1 &\n"
            "setsid sleep 1003 </dev/null >/dev/null 2>&1 &\n"
            "(sleep 1004 </dev/null >/dev/null 2>&1 &)\n"
            f"touch {work}/started\n"
            f"cat {g} >/dev/null\n"
            "exit 0\n")
    a = Alloc(c, nodes, [script(c, victim, "strays.sh", body)], user=victim, extra=["-v"])
    wait_started(a, os.path.join(work, "started"))

    def sleeps():
        out = set()
        for pid in a.processes():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if argv[0].endswith(b"sleep") and len(argv) > 1:
                out.add(argv[1].decode())
        return out
    # 1002 on both nodes: two ranks; 1003 and 1004 from the batch step.
    check(wait_until(lambda: {"1002", "1003", "1004"} <= sleeps(), 30),
          f"the allocation's processes did not all start: sleeps {sorted(sleeps())}")
    check(release(g), "the batch step no longer waits")
    r = a.finish()
    expect_status(r, 0)
    check(r.out.count("strays") == 2, f"the first door launch did not run\n{r.describe()}")
    # Gone once `lattice alloc` returned: each node confirmed its group empty before.
    expect_nothing_left(a, nodes, r)
    for agent in nodes:
        check(f"{a.id}: ended (its batch step ended" in agent.log_text(),
              f"{agent.node_id} did not log the end\n{agent.log()}")
    c.check_clean(r)


def time_limit(c):
    victim = test_user("victim")
    nodes = agents(c, 2)
    work = workdir(c, victim)
    body = f"touch {work}/started\nsleep 60\necho 'not ended'\n"
    a = Alloc(c, nodes, [script(c, victim, "long.sh", body)], user=victim, extra=["-t", "0:03"])
    wait_started(a, os.path.join(work, "started"))
    # Held still, the launcher can tell no node to end it: each counts the limit itself.
    os.kill(a.p.pid, signal.SIGSTOP)
    try:
        for agent in nodes:
            waited = time.monotonic()
            check(agent.wait_log(f"{a.id}: ending: its time limit (", 30),
                  f"{agent.node_id} did not end the allocation at its time limit (waited "
                  f"{time.monotonic() - waited:.1f} s)\n{agent.log()}")
    finally:
        os.kill(a.p.pid, signal.SIGCONT)
    r = a.finish()
    expect_status(r, 124)
    check(f"lattice alloc: allocation {a.id} ended: its time limit (3 s) was reached" in r.err
          and "not ended" not in r.out, f"no time limit reported\n{r.describe()}")
    expect_nothing_left(a, nodes, r)
    c.check_clean(r)


def time_limit_unheld(c):
    """The same limit with nothing held: `lattice alloc` says so, exits 124."""
    victim = test_user("victim")
    nodes = agents(c, 2)
    a = Alloc(c, nodes, ["/bin/sleep", "60"], user=victim, extra=["-t", "0:03"])
    r = a.finish()
    expect_status(r, 124)
    check(f"lattice alloc: allocation {a.id} ended: " in r.err and "time limit" in r.err,
          f"the end at the time limit is not reported\n{r.describe()}")
    expect_nothing_left(a, nodes, r)
    c.check_clean(r)


def launcher_killed(c):
    victim = test_user("victim")
    nodes = agents(c, 2)
    # A door launch on both nodes too: n2 has processes of the allocation to end as well.
    body = f"{LATTICE} launch -N 2 -n 2 /bin/sleep 1000 </dev/null >/dev/null 2>&1 &\n"
    batch, mark, g = waiting_batch(c, victim, extra_body=body)
    a = Alloc(c, nodes, [batch], user=victim)
    wait_started(a, mark)
    check(wait_until(lambda: len(a.processes()) >= 4, 30),
          f"the door launch did not start: {describe_pids(a.processes())}")
    os.kill(a.p.pid, signal.SIGKILL)
    a.p.communicate()
    for agent in nodes:
        check(agent.wait_log(f"{a.id}: ending: the link that started it was lost", 30),
              f"{agent.node_id} did not end the allocation when its launcher died\n{agent.log()}")
        check(agent.wait_log(f"{a.id}: ended (", 30), f"{agent.node_id} never drained it"
                                                       f"\n{agent.log()}")
    expect_nothing_left(a, nodes, wait=SURVIVOR_GRACE)
    c.check_clean()


def node_killed(c):
    victim = test_user("victim")
    nodes = agents(c, 2)
    batch, mark, g = waiting_batch(c, victim)
    a = Alloc(c, nodes, [batch], user=victim)
    wait_started(a, mark)
    os.kill(nodes[1].proc.pid, signal.SIGKILL)
    nodes[1].proc.wait()
    r = a.finish()
    check(r.code not in (0, None), f"the allocation survived the loss of n2\n{r.describe()}")
    check(any("n2" in l and "lost" in l for l in r.err.splitlines()),
          f"no line reporting n2 lost\n{r.describe()}")
    check("released" not in r.out, f"the batch step ran on\n{r.describe()}")
    expect_nothing_left(a, nodes[:1], r)
    check(nodes[0].wait_log(f"{a.id}: ended ("), f"n1 never ended it\n{nodes[0].log()}")
    c.check_clean(r)


def admin_end(c):
    victim = test_user("victim")
    nodes = agents(c, 2)
    batch, mark, g = waiting_batch(c, victim)
    a = Alloc(c, nodes, [batch], user=victim)
    wait_started(a, mark)
    for index, agent in enumerate(nodes):
        code, text = admin(agent, "allocations")
        row = [l for l in text.splitlines() if l.strip().startswith(a.id)]
        check(code == 0 and row and f"{victim.name} ({victim.uid})" in row[0] and
              f"{index}/2" in row[0] and "running" in row[0],
              f"{agent.node_id} does not list the allocation with its user:\n{text}")
    code, text = admin(nodes[0], "end-allocation", a.id)
    check(code == 0 and f"allocation {a.id} is ending" in text, f"end-allocation: {text}")
    code, text = admin(nodes[0], "end-allocation", "no-such-allocation")
    check(code != 0 and "no allocation 'no-such-allocation'" in text,
          f"end-allocation of an unknown id: {text}")
    r = a.finish()
    check(r.code not in (0, None), f"an allocation ended by an operator exited 0\n{r.describe()}")
    check(f"lattice alloc: allocation {a.id} ended: ended by an operator" in r.err,
          f"the operator's end is not reported\n{r.describe()}")
    check("released" not in r.out, f"the batch step ran on\n{r.describe()}")
    expect_nothing_left(a, nodes, r)
    c.check_clean(r)


def drain(c):
    """`lattice admin drain REASON` on n2: a new launch over n1 and n2, and a new allocation,
    are refused with the node and the reason; the allocation that was running goes on, and so
    does a launch its batch step starts after the drain; `undrain` accepts new work again."""
    victim = test_user("victim")
    nodes = agents(c, 2)
    work = workdir(c, victim)
    batch = script(c, victim, "drain.sh",
                   f"touch {work}/started\ncat {work}/gate >/dev/null\n"
                   f"{LATTICE} launch -N 2 -n 2 -l /bin/echo step || exit 11\n")
    g = gate(c, victim)
    a = Alloc(c, nodes, [batch], user=victim)
    wait_started(a, os.path.join(work, "started"))
    code, text = admin(nodes[1], "drain", "disk", "swap")
    check(code == 0 and "draining: new launches and allocations are refused (disk swap)" in text,
          text)
    code, text = admin(nodes[1], "status")
    check(code == 0 and "\ndraining: disk swap\n" in text, text)
    check(nodes[1].wait_log("drained by an operator: disk swap"), nodes[1].log())
    r = c.run_launch(["--agents", agents_arg(nodes), "-N", "2", "-n", "2", "/bin/true"])
    check(r.code not in (0, None) and "node n2 is draining: disk swap" in r.err, r.describe())
    refused = alloc_run(c, nodes, ["/bin/true"], user=victim)
    check(refused.code not in (0, None) and "node n2 is draining: disk swap" in refused.err,
          refused.describe())
    check(release(g), "the batch step was not waiting")
    done = a.finish()
    expect_status(done, 0)
    check("0: step" in done.out and "1: step" in done.out, done.describe())
    code, text = admin(nodes[1], "undrain")
    check(code == 0 and "no longer draining" in text, text)
    r = c.run_launch(["--agents", agents_arg(nodes), "-N", "2", "-n", "2", "/bin/true"])
    expect_status(r, 0)
    c.check_clean(r)


def limits(c):
    victim = test_user("victim")
    nodes = agents(c, 2)
    work = workdir(c, victim)
    # Stays under the limit (its own interpreter and 16 MiB) and says where it may run.
    fits = script(c, victim, "fits.sh",
                  f"grep Cpus_allowed_list /proc/self/status\n"
                  f"{PYTHON} -c 'b = b\"\\1\" * (16 << 20); print(\"fits\", len(b))'\n"
                  f"touch {work}/started\n"
                  f"cat {work}/gate >/dev/null\n")
    g = gate(c, victim)
    a = Alloc(c, nodes, [fits], user=victim, extra=["--mem", "64M", "--cpus-per-node", "1"])
    wait_started(a, os.path.join(work, "started"))
    code, text = admin(nodes[0], "allocations")
    row = next((l for l in text.splitlines() if l.strip().startswith(a.id)), "")
    note(f"limits on n1: {row.split('running', 1)[-1].strip()}")
    check("memory 64" in row and "CPU" in row.upper(), f"no limits listed:\n{text}")
    check(release(g), "the batch step no longer waits")
    r = a.finish()
    expect_status(r, 0)
    allowed = [l.split(":", 1)[1].strip() for l in r.out.splitlines()
               if l.startswith("Cpus_allowed_list")]
    check("fits 16777216" in r.out, f"16 MiB did not fit in 64 MiB\n{r.describe()}")
    limits_note = row.split("running", 1)[-1]
    memory_note, _, cpus_note = limits_note.partition("; cpus ")
    if "not enforced" not in cpus_note:
        check(allowed and "," not in allowed[0] and "-" not in allowed[0],
              f"--cpus-per-node 1: the batch step may run on {allowed}\n{r.describe()}")
    if "not enforced" in memory_note:
        raise CaseSkipped(f"no memory controller here: {memory_note.strip()}")
    # 200 MiB, every page touched, in a 64 MiB allocation: killed.
    big = script(c, victim, "big.sh", f"{PYTHON} -c 'b = b\"\\1\" * (200 << 20); "
                                      "print(\"allocated\", len(b))'\n")
    b = Alloc(c, nodes, [big], user=victim, extra=["--mem", "64M", "--cpus-per-node", "1"])
    r = b.finish()
    check(r.code not in (0, None) and "allocated" not in r.out,
          f"200 MiB fit in a 64 MiB allocation\n{r.describe()}")
    note(f"200 MiB in 64 MiB: exit {r.code}: {r.err.strip().splitlines()[:1]}")
    expect_nothing_left(b, nodes, r)
    c.check_clean(r)


def fake_ssh(c, user):
    """A directory whose `ssh` records that it was called and fails: (directory, marker)."""
    d = os.path.join(workdir(c, user), "fake-bin")
    os.makedirs(d, exist_ok=True)
    marker = os.path.join(workdir(c, user), "ssh-was-called")
    with open(os.path.join(d, "ssh"), "w") as f:
        f.write(f'#!/bin/sh\necho "$@" >> {marker}\nexit 255\n')
    os.chmod(os.path.join(d, "ssh"), 0o755)
    os.chmod(d, 0o755)
    return d, marker


def expect_no_ssh(marker, r):
    if os.path.exists(marker):
        with open(marker) as f:
            check(False, f"ssh was called with: {f.read()}\n{r.describe()}")


def expect_spread(text, label, r):
    """4 ranks of mpi_check/ompi_check, 2 on each node."""
    lines = [l for l in text.splitlines() if " ok " in l]
    check(len(lines) == 4, f"{label}: expected 4 ok lines\n{r.describe()}")
    check(all("2 on this node" in l for l in lines), f"{label}: not 2 ranks per node\n{r.describe()}")


def mpi_launchers_in_batch(c):
    """Plain mpiexec.hydra and Open MPI's mpirun in the batch step place their processes on the
    allocation's nodes through the agents, as its user, with no ssh."""
    victim = test_user("victim")
    nodes = agents(c, 2)
    fake, marker = fake_ssh(c, victim)
    ompi = os.path.exists(prog("ompi_check"))  # (not in a build without libpmix)
    if not ompi:
        note("no Open MPI programs in this build: mpirun is left out")
    # (The case's TMPDIR, which `lattice alloc` exported, is not the victim's to write in.)
    body = (f"export PATH={fake}:$PATH\nunset TMPDIR\n"
            f"mpiexec.hydra -n 4 {prog('mpi_check')} || exit 21\n"
            "echo ===ompi===\n"
            + (f"mpirun -np 4 {prog('ompi_check')} || exit 22\n" if ompi else ""))
    a = Alloc(c, nodes, [script(c, victim, "mpi.sh", body)], user=victim)
    r = a.finish(180)
    expect_no_ssh(marker, r)
    expect_status(r, 0)
    hydra, _, ompi_out = r.out.partition("===ompi===")
    expect_spread(hydra, "mpiexec.hydra", r)
    if ompi:
        expect_spread(ompi_out, "mpirun", r)
    expect_nothing_left(a, nodes, r)
    c.check_clean(r)


def srun_in_batch(c):
    """With --slurm-compat, `srun` in the batch step is lattice-srun, and SLURM_* describe the
    allocation."""
    victim = test_user("victim")
    nodes = agents(c, 2)
    fake, marker = fake_ssh(c, victim)
    work = workdir(c, victim)
    body = (f"export PATH={fake}:$PATH\n"
            f"readlink -f \"$(command -v srun)\" > {work}/srun.path\n"
            f"env > {work}/batch.env\n"
            f"srun -N 2 -n 4 -l {prog('mpi_check')} || exit 31\n")
    a = Alloc(c, nodes, [script(c, victim, "srun.sh", body)], user=victim,
              extra=["--slurm-compat"])
    r = a.finish(120)
    expect_no_ssh(marker, r)
    expect_status(r, 0)
    expect_spread(r.out, "srun", r)
    with open(os.path.join(work, "srun.path")) as f:
        check(f.read().strip() == os.path.realpath(os.path.join(BUILD, "lattice-srun")),
              f"srun in the batch step is not lattice-srun\n{r.describe()}")
    with open(os.path.join(work, "batch.env")) as f:
        env = dict(l.split("=", 1) for l in f.read().splitlines() if "=" in l)
    for name, value in (("SLURM_JOB_ID", a.id), ("SLURM_JOB_NODELIST", "n[1-2]"),
                        ("SLURM_NNODES", "2"), ("SLURM_JOB_NUM_NODES", "2"),
                        ("SLURM_JOB_USER", victim.name)):
        check(env.get(name) == value, f"the batch step has {name}={env.get(name)!r}, not {value!r}")
    expect_nothing_left(a, nodes, r)
    c.check_clean(r)


def cxi_for_allocation(c):
    """One CXI service for the allocation's life: made when it starts, given to every launch in
    it (two here), deleted when it ends, however it ends (its batch step's exit, its time
    limit); the key in no log."""
    from test_fabric import PRINT_VARS, FabricManager
    victim = test_user("victim")
    fm = FabricManager(c)
    nodes = [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0", "--log-level", "debug"])
             for i in range(2)]
    os.chmod(c.dir, 0o711)
    os.chmod(fm.token_file, 0o600)
    body = "".join(f"{LATTICE} launch -N 2 -n 2 /bin/sh -c '{PRINT_VARS}' || exit 4{i}\n"
                   for i in range(2))
    a = Alloc(c, nodes, [script(c, victim, "cxi.sh", body)], user=victim, extra=fm.args())
    r = a.finish()
    expect_status(r, 0)
    made = [x for x in fm.calls() if x["method"] == "POST" and x["status"] == 201]
    check(len(made) == 1, f"not one service for the allocation: {fm.calls()}\n{r.describe()}")
    check(json.loads(made[0]["body"])["allocation_id"] == a.id, f"POST: {made[0]}")
    lines = [l for l in r.out.splitlines() if l.startswith("cxi ")]
    check(len(lines) == 4, f"expected 2 launches of 2 ranks' variables\n{r.describe()}")
    keys = {dict(kv.split("=", 1) for kv in l.split()[2:])["FI_CXI_AUTH_KEY"] for l in lines}
    vnis = {dict(kv.split("=", 1) for kv in l.split()[2:])["FI_CXI_DEFAULT_VNI"] for l in lines}
    check(len(keys) == 1 and "" not in keys and vnis == {"77"},
          f"the launches did not share the allocation's service\n{r.describe()}")
    fm.expect_deleted(r)
    key = keys.pop()
    for text, what in [(r.err, "lattice alloc's stderr"),
                       *[(n.log_text(), n.node_id + " log") for n in nodes]]:
        check(key not in text and key.upper() not in text, f"the key appears in the {what}")
    # At its time limit too.
    long = script(c, victim, "long.sh", "sleep 60\n")
    b = Alloc(c, nodes, [long], user=victim, extra=[*fm.args(), "-t", "0:02"])
    r = b.finish()
    expect_status(r, 124)
    fm.expect_deleted(r)
    expect_nothing_left(b, nodes, r)
    c.check_clean(r)


CASES = [
    ("user_launch_in_allocation", user_launch_in_allocation),
    ("door_options", door_options),
    ("hostile_user_refused", hostile_user_refused),
    ("door_bounds", door_bounds),
    ("nodes_outside_refused", nodes_outside_refused),
    ("end_leaves_nothing", end_leaves_nothing),
    ("time_limit", time_limit),
    ("time_limit_unheld", time_limit_unheld),
    ("launcher_killed", launcher_killed),
    ("node_killed", node_killed),
    ("admin_end", admin_end),
    ("drain", drain),
    ("limits", limits),
    ("mpi_launchers_in_batch", mpi_launchers_in_batch),
    ("srun_in_batch", srun_in_batch),
    ("cxi_for_allocation", cxi_for_allocation),
]

if __name__ == "__main__":
    run_cases(CASES)
