"""A second implementation of the launcher's side of the protocol, written in Node from
docs/protocol.md alone (tests/node_client), runs launches against real agents: an MPICH job over
two agents as an unprivileged user, a rank's non-zero exit that ends the launch everywhere, and a
wrong cluster key that the handshake refuses before anything starts. It proves the document is
enough to implement the protocol; tests/node_client/test_vectors.mjs checks it against the
document's vectors first."""
import os
import shutil
import subprocess
import time

from harness import (SOURCE_ROOT, CaseFailure, LaunchResult, check, prog, run_cases, tail,
                     test_user)

CLIENT_DIR = os.path.join(SOURCE_ROOT, "tests", "node_client")
CLIENT = os.path.join(CLIENT_DIR, "launch.mjs")
NODE = shutil.which("node")


def require_client():
    if not NODE:
        raise CaseFailure("node is not installed: run scripts/install-deps")
    if not os.path.isdir(os.path.join(CLIENT_DIR, "node_modules", "libsodium-wrappers")):
        raise CaseFailure(f"{CLIENT_DIR}/node_modules is missing: run scripts/install-deps")


def agents(c, count):
    """`count` agents on 127.0.0.1, 127.0.0.2, ...: one address per node."""
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"]) for i in range(count)]


def user_key(c, user, key_file, name):
    """A copy of `key_file` the user owns (0600): the client reads its key as that user."""
    os.chmod(c.dir, 0o711)
    path = os.path.join(c.dir, name)
    shutil.copyfile(key_file, path)
    os.chown(path, user.uid, user.gid)
    os.chmod(path, 0o600)
    return path


def run_client(c, user, key_file, nodes, args, timeout=60):
    """Runs the Node client as `user` (its job's user is who runs it), from /tmp."""
    require_client()
    agent_list = ",".join(f"{a.node_id}={a.address}" for a in nodes)
    argv = ["--key-file", key_file, "--agents", agent_list, "--env", f"LT_TEST_TAG={c.tag}", *args]
    started = time.monotonic()
    p = subprocess.Popen([NODE, CLIENT, *argv], cwd="/tmp", user=user.uid, group=user.gid,
                         extra_groups=[], env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        code = p.returncode
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        code = None
    return LaunchResult(argv, code, out, err, time.monotonic() - started, "launch.mjs")


def launcher_name(result):
    """The client's handshake name, as it prints it (node-client@HOST:PID)."""
    for line in result.err.splitlines():
        if "launcher name " in line:
            return line.split("launcher name ", 1)[1].split()[0]
    raise CaseFailure(f"the client did not say its launcher name\n{result.describe()}")


def document_vectors(c):
    """The client's handshake, records and frames reproduce docs/protocol.md's test vectors."""
    require_client()
    p = subprocess.run([NODE, os.path.join(CLIENT_DIR, "test_vectors.mjs")], cwd=CLIENT_DIR,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    check(p.returncode == 0, f"test_vectors.mjs: exit {p.returncode}\n{tail(p.stdout)}")


def mpich_two_agents(c):
    """mpi_check (MPI_Init, allreduce, barrier, ring) with PMI-2, 4 ranks in blocks over 2 agents,
    launched by the Node client as the unprivileged test user."""
    victim = test_user("victim")
    nodes = agents(c, 2)
    key = user_key(c, victim, c.key_file, "victim.key")
    r = run_client(c, victim, key, nodes, ["-n", "4", "--pmi", "pmi2", prog("mpi_check")])
    check(r.code == 0, f"expected exit 0\n{r.describe()}")
    for rank in range(4):
        check(any(l.startswith(f"{rank}: rank {rank}/4 ok") for l in r.out.splitlines()),
              f"no line from rank {rank}\n{r.describe()}")
    last = r.out.rstrip().splitlines()[-1]
    check(last == "exit statuses: 0:0 1:0 2:0 3:0", f"last line {last!r}\n{r.describe()}")
    name = launcher_name(r)
    for a in nodes:
        check(a.wait_log(f"accepted from launcher {name}, 2 ranks here as {victim.name}"),
              f"{a.node_id}'s log shows no launch accepted from {name}\n{a.log()}")
        check(a.wait_log("outcome=ok"), f"{a.node_id}'s launch did not end ok\n{a.log()}")
    c.check_clean()


def rank_exits_nonzero(c):
    """Rank 2 exits 3 while the others sleep: the launch ends on both agents (the others are
    killed), the client prints every rank's status and exits non-zero."""
    victim = test_user("victim")
    nodes = agents(c, 2)
    key = user_key(c, victim, c.key_file, "victim.key")
    script = 'if [ "$PMI_RANK" = 2 ]; then exit 3; fi; sleep 60'
    r = run_client(c, victim, key, nodes, ["-n", "4", "/bin/sh", "-c", script], timeout=50)
    check(r.code == 3, f"expected exit 3, rank 2's status\n{r.describe()}")
    check(r.seconds < 40, f"the sleeping ranks were not ended\n{r.describe()}")
    last = r.out.rstrip().splitlines()[-1] if r.out.strip() else ""
    check(last.startswith("exit statuses: "), f"no status line\n{r.describe()}")
    statuses = dict(s.split(":") for s in last[len("exit statuses: "):].split())
    check(statuses.get("2") == "3", f"rank 2's status is not 3: {last}\n{r.describe()}")
    # The others were killed, or never started if the end came first.
    check(all(statuses.get(str(k), "").startswith(("signal", "notstarted")) for k in (0, 1, 3)),
          f"the other ranks were not ended: {last}\n{r.describe()}")
    for a in nodes:
        check(f"node {a.node_id} ended the launch (failed)" in r.err,
              f"no failed launchEnded from {a.node_id}\n{r.describe()}")
        check(a.wait_log("rank 2 on n2 exited with status 3"), f"{a.node_id}: why?\n{a.log()}")
    c.check_clean()


def wrong_key(c):
    """A client holding another cluster key: the agent's proof does not open (refused: key), the
    client says so and exits non-zero; no rank starts anywhere."""
    victim = test_user("victim")
    nodes = agents(c, 2)
    key = user_key(c, victim, c.make_key("other.key"), "victim.key")
    r = run_client(c, victim, key, nodes, ["-n", "2", "/bin/sh", "-c", "echo started"])
    check(r.code not in (0, None), f"expected a non-zero exit\n{r.describe()}")
    check("handshake refused (key)" in r.err, f"the refusal is not named\n{r.describe()}")
    check("started" not in r.out, f"a rank ran\n{r.describe()}")
    for a in nodes:
        # The client finds out first, at M2, and hangs up: the agent sees the handshake closed.
        check(a.wait_log("cause=closed"), f"{a.node_id} logged no refused handshake\n{a.log()}")
        check("accepted from launcher" not in a.log_text(), f"{a.node_id} took a launch\n{a.log()}")
    c.check_clean()


if __name__ == "__main__":
    run_cases([
        ("document_vectors", document_vectors),
        ("mpich_two_agents", mpich_two_agents),
        ("rank_exits_nonzero", rank_exits_nonzero),
        ("wrong_key", wrong_key),
    ])
