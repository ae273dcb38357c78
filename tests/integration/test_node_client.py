"""A second implementation of the launcher's side of the protocol, written in Node from
docs/protocol.md alone (tests/node_client), runs launches against real agents: an MPICH job over
two agents as an unprivileged user, a rank's non-zero exit that ends the launch everywhere, and a
wrong cluster key that the handshake refuses before anything starts. Its links open with
handshake 3 (Noise XXpsk0, over npm noise-handshake); handshake 2 (`--handshake 2`) is still
served; with a certificate authority, the client proves a certified identity and checks the
agents' certificates, and an uncertified client or one of another authority is refused. It proves
the document is enough to implement the protocol; tests/node_client/test_vectors.mjs checks it
against the document's vectors first."""
import os
import shutil
import subprocess
import time

from harness import (AGENTD, SOURCE_ROOT, CaseFailure, LaunchResult, check, note, prog,
                     run_cases, tail, test_user)

CLIENT_DIR = os.path.join(SOURCE_ROOT, "tests", "node_client")
CLIENT = os.path.join(CLIENT_DIR, "launch.mjs")
NODE = shutil.which("node")


def require_client():
    if not NODE:
        raise CaseFailure("node is not installed: run scripts/install-deps")
    for module in ("libsodium-wrappers", "noise-handshake"):
        if not os.path.isdir(os.path.join(CLIENT_DIR, "node_modules", module)):
            raise CaseFailure(f"{CLIENT_DIR}/node_modules/{module} is missing: "
                              "run scripts/install-deps")


def agents(c, count, config=None):
    """`count` agents on 127.0.0.1, 127.0.0.2, ...: one address per node; config(node_id), when
    given, names each one's --config file."""
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0",
                                        *(["--config", config(f"n{i + 1}")] if config else [])])
            for i in range(count)]


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


def expect_mpi_check(r, handshake=3):
    """The 4-rank mpi_check launch ran: every rank said ok, every status 0, over `handshake`."""
    check(r.code == 0, f"expected exit 0\n{r.describe()}")
    check(f"(handshake {handshake}" in r.err, f"the client did not use handshake {handshake}\n"
          f"{r.describe()}")
    for rank in range(4):
        check(any(l.startswith(f"{rank}: rank {rank}/4 ok") for l in r.out.splitlines()),
              f"no line from rank {rank}\n{r.describe()}")
    last = r.out.rstrip().splitlines()[-1]
    check(last == "exit statuses: 0:0 1:0 2:0 3:0", f"last line {last!r}\n{r.describe()}")


def mpich_two_agents(c, handshake=3):
    """mpi_check (MPI_Init, allreduce, barrier, ring) with PMI-2, 4 ranks in blocks over 2 agents,
    launched by the Node client as the unprivileged test user (over handshake 3)."""
    victim = test_user("victim")
    nodes = agents(c, 2)
    key = user_key(c, victim, c.key_file, "victim.key")
    flags = [] if handshake == 3 else ["--handshake", str(handshake)]
    r = run_client(c, victim, key, nodes, [*flags, "-n", "4", "--pmi", "pmi2", prog("mpi_check")])
    expect_mpi_check(r, handshake)
    # For comparison (indicative only): the same launch by `lattice launch`, as root.
    ours = c.run_launch(["--agents", ",".join(a.address for a in nodes), "-n", "4", "--pmi",
                         "pmi2", prog("mpi_check")])
    check(ours.code == 0, f"lattice launch failed\n{ours.describe()}")
    note(f"one 4-rank mpi_check launch (handshake {handshake}): Node client {r.seconds:.2f} s, "
         f"lattice launch {ours.seconds:.2f} s")
    name = launcher_name(r)
    for a in nodes:
        check(a.wait_log(f"accepted from launcher {name}, 2 ranks here as {victim.name}"),
              f"{a.node_id}'s log shows no launch accepted from {name}\n{a.log()}")
        check(a.wait_log("outcome=ok"), f"{a.node_id}'s launch did not end ok\n{a.log()}")
    c.check_clean(r)


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


def handshake_2_still_served(c):
    """The client with `--handshake 2` (release 0.2.0's handshake) runs the same 4-rank launch
    against the same agents: a 0.3.0 agent without an authority still answers handshake 2."""
    mpich_two_agents(c, handshake=2)


def wrong_key(c):
    """A client holding another cluster key: the agent finds the PSK wrong at M1 (refused: key)
    and sends the key notice; the client says so and exits non-zero; no rank starts anywhere."""
    victim = test_user("victim")
    nodes = agents(c, 2)
    key = user_key(c, victim, c.make_key("other.key"), "victim.key")
    r = run_client(c, victim, key, nodes, ["-n", "2", "/bin/sh", "-c", "echo started"])
    check(r.code not in (0, None), f"expected a non-zero exit\n{r.describe()}")
    check("handshake refused (key)" in r.err, f"the refusal is not named\n{r.describe()}")
    check("started" not in r.out, f"a rank ran\n{r.describe()}")
    for a in nodes:
        # Handshake 3: the agent finds out first, at M1 (its tag does not verify under the PSK).
        check(a.wait_log("cause=key"), f"{a.node_id} logged no refused handshake\n{a.log()}")
        check("accepted from launcher" not in a.log_text(), f"{a.node_id} took a launch\n{a.log()}")
    c.check_clean()


def certified(c):
    """A cluster with a certificate authority (lattice-agentd --generate-ca, --certify): agents
    hold certified identities and require the launcher's. (a) The client with its identity file
    and the authority runs the 4-rank launch, and each agent names launcher node-client; (b)
    without an identity it is refused at M2 with the document's text and nothing starts; (c) with
    an identity of another authority it is refused by the agents (`certificate`); (d) checking
    the agents against another authority, the client refuses them itself; (e) over handshake 2 it
    hears the version notice (such agents answer 3 only)."""
    victim = test_user("victim")
    os.chmod(c.dir, 0o711)

    def generate_ca(name):
        path = os.path.join(c.dir, name)
        subprocess.run([AGENTD, "--generate-ca", path], check=True, stdout=subprocess.DEVNULL)
        os.chmod(path + ".pub", 0o644)
        return path

    def certify(who, authority, owner=None):
        out = os.path.join(c.dir, f"{who.replace(':', '-')}-{os.path.basename(authority)}.identity")
        subprocess.run([AGENTD, "--certify", who, "--ca", authority, "--out", out],
                       check=True, stdout=subprocess.DEVNULL)
        if owner:  # a private file: mode 0600, owned by its reader
            os.chown(out, owner.uid, owner.gid)
            os.chmod(out, 0o600)
        return out

    ca = generate_ca("ca.key")
    other_ca = generate_ca("other-ca.key")

    def config(node):
        path = os.path.join(c.dir, f"{node}.yaml")
        with open(path, "w") as f:
            f.write(f"security: {{key_file: {c.key_file}, identity_file: {certify('agent:' + node, ca)}, "
                    f"certificate_authority: {ca}.pub}}\n")
        return path

    nodes = agents(c, 2, config)
    key = user_key(c, victim, c.key_file, "victim.key")
    mine = certify("launcher:node-client", ca, victim)
    theirs = certify("launcher:node-client", other_ca, victim)
    launch = ["-n", "4", "--pmi", "pmi2", prog("mpi_check")]

    # (a) certified both ways.
    r = run_client(c, victim, key, nodes, ["--identity", mine, "--authority", ca + ".pub", *launch])
    expect_mpi_check(r)
    check(launcher_name(r) == "node-client", f"the client is not named by its certificate\n"
          f"{r.describe()}")
    for a in nodes:
        check(a.wait_log(f"accepted from launcher node-client, 2 ranks here as {victim.name}"),
              f"{a.node_id} did not name launcher node-client\n{a.log()}")
        check(a.wait_log("outcome=ok"), f"{a.node_id}'s launch did not end ok\n{a.log()}")
    c.check_clean(r)

    def refused(r, needle):
        check(r.code not in (0, None), f"expected a non-zero exit\n{r.describe()}")
        check(needle in r.err, f"no {needle!r}\n{r.describe()}")
        check("started" not in r.out, f"a rank ran\n{r.describe()}")
        check("nothing was started" in r.err or "refused the launch" in r.err
              or "lost agent" in r.err, f"the client did not say how it ended\n{r.describe()}")

    probe = ["-n", "2", "/bin/sh", "-c", "echo started"]
    # (b) no identity: M2's flags say the agent requires one; the client refuses at M2.
    r = run_client(c, victim, key, nodes, ["--authority", ca + ".pub", *probe])
    refused(r, "agent n1 requires a certified identity and this side has none")
    check("nothing was started" in r.err, f"the client went on\n{r.describe()}")
    # (c) an identity of another authority: the agents refuse it at M3, which the client sent
    # believing itself established: it sees each link close before anything came.
    r = run_client(c, victim, key, nodes, ["--identity", theirs, "--authority", ca + ".pub", *probe])
    refused(r, "the agent closed the link before sending anything")
    for a in nodes:
        check(a.wait_log("cause=certificate"), f"{a.node_id} logged no certificate refusal\n"
              f"{a.log()}")
        check("is not signed by this side's authority" in a.log_text(),
              f"{a.node_id} did not say why\n{a.log()}")
    # (d) the agents' certificates checked against another authority: the client refuses them.
    r = run_client(c, victim, key, nodes, ["--identity", mine, "--authority", other_ca + ".pub",
                                           *probe])
    refused(r, "handshake refused (certificate)")
    check("not signed by this side's authority" in r.err, f"no reason given\n{r.describe()}")
    # (e) handshake 2: an agent that requires certificates answers 3 only (the version notice).
    r = run_client(c, victim, key, nodes, ["--handshake", "2", *probe])
    refused(r, "handshake refused (version): the peer speaks handshake version 3")
    for a in nodes:
        launches = a.log_text().count("accepted from launcher")
        check(launches == 1, f"{a.node_id} accepted {launches} launches, not 1\n{a.log()}")
    c.check_clean()


if __name__ == "__main__":
    run_cases([
        ("document_vectors", document_vectors),
        ("mpich_two_agents", mpich_two_agents),
        ("rank_exits_nonzero", rank_exits_nonzero),
        ("wrong_key", wrong_key),
        ("handshake_2_still_served", handshake_2_still_served),
        ("certified", certified),
    ])
