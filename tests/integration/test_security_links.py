"""Sealed links under attack, against real agents: a launcher with the wrong key or none, garbage,
silence, a replayed handshake, a byte flipped in an established link, an agent holding another
key in a launch's peer list; authenticated peers in the wrong role (not in the launch, or a
member forging another node's fromNode, or, toward a launcher, another node's rank exits); and the agent's memory and fds under abuse. After
every probe the agent is alive, says why it refused, and serves the next good launch."""
import os
import signal
import socket
import subprocess
import threading
import time

from harness import (AGENTD, LATTICE, ROGUE, SANITIZED, check, expect_status, prog, run_cases,
                     wait_until)

HANDSHAKE_DEADLINE = 5  # the agent's default security.handshake_timeout


def agents(c, count, **kwargs):
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"], **kwargs)
            for i in range(count)]


def addresses(nodes):
    return ",".join(a.address for a in nodes)


def good_launch(c, nodes):
    r = c.run_launch(["--agents", addresses(nodes), "-n", str(2 * len(nodes)), prog("mpi_check")])
    expect_status(r, 0)
    check(r.out.count("ok") == 2 * len(nodes), f"not every rank ok\n{r.describe()}")
    c.check_clean(r)
    return r


def rogue(c, agent, identity, *action, launch=None, key=None, timeout=30, flags=()):
    cmd = [ROGUE, "--key", key or c.key_file, "--identity", identity, "--connect", agent.address,
           *flags]
    if launch:
        cmd += ["--launch", launch]
    p = subprocess.run(cmd + list(action), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    return p.stdout + p.stderr


def closed_by_peer(sock, timeout):
    """True when the peer closes `sock` within timeout (reads return EOF or a reset)."""
    sock.settimeout(timeout)
    try:
        while sock.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


class Proxy:
    """A TCP relay in front of one agent. It records what clients send; with flip_after set it
    flips one bit in the middle of the first client chunk that arrives that many seconds after
    the connection opened (past the handshake and the launch request)."""

    def __init__(self, target, flip_after=None):
        self.target = target.host_port()
        self.flip_after = flip_after
        self.recorded = bytearray()
        self.flipped = False
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(8)
        self.address = f"127.0.0.1:{self.server.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            opened = time.monotonic()
            threading.Thread(target=self._pump, args=(client, upstream, opened, True),
                             daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, opened, False),
                             daemon=True).start()

    def _pump(self, src, dst, opened, from_client):
        try:
            while True:
                data = bytearray(src.recv(65536))
                if not data:
                    break
                if from_client:
                    self.recorded += data
                    late = self.flip_after is not None and time.monotonic() - opened > self.flip_after
                    if late and not self.flipped:
                        data[len(data) // 2] ^= 0x10
                        self.flipped = True
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.server.close()


def wrong_key_launcher(c):
    nodes = agents(c, 2)
    other = c.make_key("other.key")
    env = dict(c.case_env(), LATTICE_KEY_FILE=other)
    p = subprocess.run([*c.launch_command(["--agents", addresses(nodes), "-n", "2", "/bin/true"])],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=60)
    check(p.returncode not in (0, None), f"a launcher with another key was served: {p.stderr}")
    # The agent finds out from M1 and says so before it hangs up (handshake 3).
    check("cannot authenticate agent" in p.stderr and
          "it says this side's cluster key is not its own" in p.stderr,
          f"the launcher does not say why: {p.stderr}")
    for a in nodes:
        check(a.wait_log("refused"), f"{a.node_id} logged no refusal\n{a.log()}")
        check(a.alive(), f"{a.node_id} died")
    c.check_clean()
    good_launch(c, nodes)


def no_key_launcher(c):
    nodes = agents(c, 1)
    env = {k: v for k, v in c.case_env().items() if k != "LATTICE_KEY_FILE"}
    p = subprocess.run(c.launch_command(["--agents", addresses(nodes), "-n", "1", "/bin/true"]),
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=60)
    check(p.returncode == 2 and "no cluster key" in p.stderr,
          f"expected a refusal naming the missing key, got {p.returncode}: {p.stderr}")
    # A client that skips the handshake (an old, unsealed launcher) is refused at its first byte.
    with socket.create_connection(nodes[0].host_port()) as s:
        frame = (0).to_bytes(4, "little") + (2).to_bytes(4, "little") + bytes(16)
        s.sendall(frame)
        check(closed_by_peer(s, 10), "a plaintext rpc client was not dropped")
    check(nodes[0].wait_log("not a Lattice handshake"), f"no reason logged\n{nodes[0].log()}")
    good_launch(c, nodes)


def machine_has_aes():
    """What libsodium needs for AES-256-GCM (AES-NI and CLMUL), as the kernel reports it."""
    with open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    return "aes" in flags and "pclmulqdq" in flags


def versions_and_ciphers(c):
    nodes = [c.start_agent("n1", ["--listen", "127.0.0.1:0", "--log-level", "debug"])]
    magic = b"LTCSEAL\x01"
    # An agent or launcher of the previous version (1) is refused by name, not misread, and
    # hears this agent's version before the link closes.
    with socket.create_connection(nodes[0].host_port()) as s:
        s.sendall(magic + b"\x01" + os.urandom(64))
        s.settimeout(10)
        heard = b""
        while len(heard) < len(magic) + 1:
            chunk = s.recv(64)
            if not chunk:
                break
            heard += chunk
        check(heard == magic + b"\x03", f"the refusal said {heard!r}, not its version")
        check(closed_by_peer(s, 10), "a version 1 handshake kept its connection")
    check(nodes[0].wait_log("handshake version 1 is not supported (this is 2 to 3)"),
          f"no version refusal logged\n{nodes[0].log()}")
    # An agent of another version (4, a stand-in answering as a newer agent would): the
    # launcher names both versions rather than "eof".
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        def answer():
            conn, _ = server.accept()
            with conn:
                conn.recv(len(magic) + 1)
                conn.sendall(magic + b"\x04")
        t = threading.Thread(target=answer, daemon=True)
        t.start()
        r = c.run_launch(["--agents", f"n9=127.0.0.1:{port}", "/bin/true"])
        t.join(10)
    check(r.code not in (0, None) and
          "the peer speaks handshake version 4 and this side 2 to 3" in r.err, r.describe())
    # An offer of no record cipher this agent runs.
    with socket.create_connection(nodes[0].host_port()) as s:
        s.sendall(magic + b"\x02\x00" + os.urandom(64))
        check(closed_by_peer(s, 10), "an offer of no known cipher kept its connection")
    check(nodes[0].wait_log("none in common"), f"no cipher refusal logged\n{nodes[0].log()}")
    # A real launcher and this agent settle on the best cipher both run.
    good_launch(c, nodes)
    expected = "AES-256-GCM" if machine_has_aes() else "XChaCha20-Poly1305"
    check(nodes[0].wait_log("is launcher lattice@"),
          f"the launcher's link was not logged\n{nodes[0].log()}")
    check(f"records under {expected}" in nodes[0].log_text(),
          f"the launcher's link is not under {expected}\n{nodes[0].log()}")


def protocol_versions(c):
    """Launchers and agents one protocol version apart work together; further apart, both
    sides name both versions. lattice-test-rogue stamps its messages as a peer of another
    release would (release 0.1.0 stamps nothing, which reads as 1, as a stamp of 1 does)."""
    n1 = c.start_agent("n1", ["--listen", "127.0.0.1:0"])
    for version in ("1", "3"):
        out = rogue(c, n1, "launcher:skew", "--protocol", version, "status")
        check("reply: ok" in out, f"a launcher of protocol {version} was not served: {out}")
    out = rogue(c, n1, "launcher:skew", "--protocol", "9", "status")
    check("reply: error: you speak protocol version 9 and this peer 2: only adjacent versions "
          "(1 to 3) work together" in out, f"a launcher of protocol 9 was not told why: {out}")
    check(n1.wait_log("the peer speaks protocol version 9 and this side 2"),
          f"the agent did not log both versions\n{n1.log()}")
    # The launcher's side: an agent of protocol 9, then one of protocol 3 (which runs the launch).
    for version, works in (("9", False), ("3", True)):
        p = subprocess.Popen([ROGUE, "--key", c.key_file, "--identity", "agent:n9", "--listen",
                              "127.0.0.1:0", "--protocol", version,
                              "forge-exit", "0", "0", "0", "0", "100"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            line = p.stdout.readline().split()
            check(line[:2] == ["listening", "on"], f"the stand-in agent did not listen: {line}")
            r = c.run_launch(["--agents", f"n9={line[2]}", "/bin/true"])
        finally:
            p.kill()
            out = p.communicate()[0]
        if works:
            expect_status(r, 0)
            # The launcher answers an agent's requests it does not serve, rather than let them
            # wait out their deadline.
            check("launcher answered heartbeat: ok" in out and "launcher answered agentStatus: "
                  "error: method not served by this launcher" in out,
                  f"the launcher's answers: {out}")
        else:
            check(r.code not in (0, None) and "the peer speaks protocol version 9 and this "
                  "side 2" in r.err, f"the launcher did not name both versions\n{r.describe()}")


def new_authority(c, name):
    """An operators' authority made by lattice-agentd --generate-ca: the secret key's path."""
    ca = os.path.join(c.dir, name)
    subprocess.run([AGENTD, "--generate-ca", ca], check=True, stdout=subprocess.DEVNULL)
    return ca


def certifier(c, ca):
    """certify(who, authority=ca): an identity file by lattice-agentd --certify, for two days;
    certify.keys maps it to the static key --certify printed."""
    def certify(who, authority=ca):
        out = os.path.join(c.dir, who.replace(":", "-") + os.path.basename(authority) + ".id")
        p = subprocess.run([AGENTD, "--certify", who, "--ca", authority, "--out", out, "--days",
                            "2"], check=True, stdout=subprocess.PIPE, text=True)
        certify.keys[out] = p.stdout.split("static key ")[1].split()[0]
        return out
    certify.keys = {}
    return certify


def certified_config(c, ca, node, identity, revoked=None):
    """An agent configuration with this identity, requiring certificates of authority `ca` (and
    taking none whose key is listed in the file `revoked`)."""
    path = os.path.join(c.dir, f"{node}-{os.path.basename(identity)}.yaml")
    extra = f", revoked: {revoked}" if revoked else ""
    with open(path, "w") as f:
        f.write(f"security: {{identity_file: {identity}, certificate_authority: {ca}.pub{extra}}}\n")
    return path


def certified_identities(c):
    """With a certificate authority, a link's peer is what its certificate names and nothing
    else: a holder of the cluster key and of n2's identity cannot speak as n1 (or as a launcher),
    and peers without certificates, of another authority or of handshake 2 are refused, each by
    name. The launch itself runs certified end to end (launcher to agents, agent to agent)."""
    ca = new_authority(c, "ca.key")
    other_ca = new_authority(c, "other-ca.key")
    certify = certifier(c, ca)

    def config(node, identity):
        return certified_config(c, ca, node, identity)

    n2_identity = certify("agent:n2")
    nodes = [c.start_agent("n1", ["--listen", "127.0.0.1:0", "--config",
                                  config("n1", certify("agent:n1"))]),
             c.start_agent("n2", ["--listen", "127.0.0.2:0", "--config",
                                  config("n2", n2_identity)])]
    certified = {"LATTICE_IDENTITY_FILE": certify("launcher:ops"),
                 "LATTICE_AUTHORITY_FILE": ca + ".pub"}
    r = c.run_launch(["--agents", addresses(nodes), "-n", "4", prog("mpi_check")], env=certified)
    expect_status(r, 0)
    check(r.out.count("ok") == 4, f"not every rank ok\n{r.describe()}")
    for a in nodes:
        check(a.wait_log("accepted from launcher ops"), f"{a.node_id} did not name the launcher\n"
              f"{a.log()}")
    c.check_clean(r)
    # A launcher without an identity file hears why from the agents' first answer.
    r = c.run_launch(["--agents", addresses(nodes), "/bin/true"])
    check(r.code not in (0, None) and "agent n1 requires a certified identity and this side has "
          "none" in r.err, f"an uncertified launcher was not told why\n{r.describe()}")
    # A launcher certified by another authority (and trusting none itself) is refused at M3,
    # in silence: it says what that silence means.
    foreign = certify("launcher:ops", other_ca)
    r = c.run_launch(["--agents", addresses(nodes), "/bin/true"],
                     env={"LATTICE_IDENTITY_FILE": foreign})
    check(r.code not in (0, None) and "it refused this side's identity" in r.err,
          f"a launcher of another authority was not told why\n{r.describe()}")
    # A key holder certified as n2: as n1 or as a launcher it is refused at its handshake (at
    # M3, which the initiator sent believing itself established: its request goes unanswered).
    for claim in ("agent:n1", "launcher:ops"):
        out = rogue(c, nodes[0], claim, "status", flags=["--identity-file", n2_identity])
        check("reply: error: connection closed" in out, f"n2's certificate passed as {claim}: {out}")
        check(nodes[0].wait_log(f"it claims to be {claim.replace(':', ' ')} but its certificate "
                                "is for agent n2"), f"no certificate refusal logged\n"
              f"{nodes[0].log()}")
    # As itself it gets through, and is held to n2: a status request is a launcher's.
    out = rogue(c, nodes[0], "agent:n2", "status", flags=["--identity-file", n2_identity])
    check("established as agent n1" in out and "only launchers" in out,
          f"n2 as itself: {out}")
    # Another authority's launcher, an uncertified one, and a handshake 2 one.
    out = rogue(c, nodes[0], "launcher:ops", "status", flags=["--identity-file", foreign])
    check("reply: error: connection closed" in out,
          f"another authority's launcher got through: {out}")
    check(nodes[0].wait_log("is not signed by this side's authority"),
          f"no refusal of the other authority\n{nodes[0].log()}")
    out = rogue(c, nodes[0], "launcher:ops", "status", flags=["--handshake", "2"])
    check("reply: ok" not in out, f"a handshake 2 launcher got through: {out}")
    check(nodes[0].wait_log("this is 3 only, as it requires certified identities"),
          f"no refusal of handshake 2\n{nodes[0].log()}")
    metrics = subprocess.run([LATTICE, "admin", "metrics", "--socket", nodes[0].admin_socket],
                             stdout=subprocess.PIPE, text=True, timeout=30).stdout
    check('lattice_connections_refused_total{cause="certificate"} 4' in metrics,
          f"certificate refusals not counted:\n{metrics}")
    # Certificates of two days: each agent warns at its start, and shows the expiry to Prometheus.
    check(nodes[0].wait_log("this node's certificate expires in "),
          f"no expiry warning\n{nodes[0].log()}")
    expiry = [line for line in metrics.splitlines()
              if line.startswith("lattice_certificate_expiry_timestamp_seconds ")]
    check(len(expiry) == 1 and 0 < float(expiry[0].split()[1]) - time.time() <= 2 * 86400,
          f"no certificate expiry gauge: {expiry}")
    # An agent whose identity file names another node does not start.
    p = subprocess.run([AGENTD, "--config", config("n1", n2_identity), "--listen", "127.0.0.3:0",
                        "--node-id", "n1", "--key-file", c.key_file,
                        "--admin-socket", os.path.join(c.dir, "wrong.sock")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
    check(p.returncode == 1 and "certifies agent n2, but this is agent n1" in p.stdout,
          f"an agent with another node's identity: {p.returncode} {p.stdout}")
    good_launch_certified = c.run_launch(["--agents", addresses(nodes), "-n", "2", "/bin/true"],
                                         env=certified)
    expect_status(good_launch_certified, 0)


def signed_relayed_launches(c):
    """Below the head, a relayed launch comes from the node's parent agent. With certified
    identities a node takes it only on the signature of the launcher it names: a certified
    launcher's tree launch runs on four agents (n4 takes it from n2, n2 and n3 from n1), and a
    compromised n1 (its own identity, the cluster key) cannot make one up for its child n2:
    unsigned, signed by another authority's launcher, naming a launcher other than its signer,
    or once more after it was taken: each refused, by name."""
    ca = new_authority(c, "ca.key")
    certify = certifier(c, ca)
    ids = ["n1", "n2", "n3", "n4"]
    identity = {n: certify(f"agent:{n}") for n in ids}
    nodes = [c.start_agent(n, ["--listen", f"127.0.0.{i + 1}:0", "--config",
                               certified_config(c, ca, n, identity[n])])
             for i, n in enumerate(ids)]
    ops = certify("launcher:ops")
    named = ",".join(f"{a.node_id}={a.address}" for a in nodes)
    r = c.run_launch(["--agents", named, "--launch", "tree", "--fanout", "2", "-n", "8",
                      prog("mpi_check")],
                     env={"LATTICE_IDENTITY_FILE": ops, "LATTICE_AUTHORITY_FILE": ca + ".pub"})
    expect_status(r, 0)
    check(r.out.count("ok") == 8 and "not signed" not in r.err, f"not every rank ok\n{r.describe()}")
    c.check_clean(r)

    def forged(*flags):
        return rogue(c, nodes[1], "agent:n1", "relayed-launch", "n1,n2", "1",
                     flags=["--identity-file", identity["n1"], *flags])
    out = forged()
    check("reply: error" in out and "it is not signed by its launcher" in out,
          f"an unsigned relayed launch from n1 was not refused: {out}")
    foreign = certify("launcher:ops", new_authority(c, "other-ca.key"))
    out = forged("--sign-with", foreign, "--launcher-name", "ops")
    check("reply: error" in out and "is not signed by this side's authority" in out,
          f"another authority's signature passed: {out}")
    out = forged("--sign-with", ops)
    check("reply: error" in out and "claims to be launcher lattice@rogue:1 but its certificate "
          "is for launcher ops" in out, f"a signature by another launcher passed: {out}")
    # The rogue holds ops's identity here only to make a genuine signature: the request is
    # taken once (a one-rank /bin/true on n2), and refused when it comes again.
    out = forged("--sign-with", ops, "--launcher-name", "ops")
    check("reply: ok" in out, f"a genuinely signed relayed launch was refused: {out}")
    check(wait_until(lambda: "launch 'rogue-relayed' already exists" not in
                     forged("--sign-with", ops, "--launcher-name", "ops"), 20),
          "the first rogue launch never ended")
    out = forged("--sign-with", ops, "--launcher-name", "ops")
    check("reply: error" in out and "has taken that signed request already (a replay)" in out,
          f"a replayed signed request was taken again: {out}")
    check(nodes[1].wait_log("it is not signed by its launcher"), f"n2 logged no refusal\n"
          f"{nodes[1].log()}")
    good = c.run_launch(["--agents", named, "--launch", "tree", "--fanout", "2", "-n", "4",
                         "/bin/true"],
                        env={"LATTICE_IDENTITY_FILE": ops, "LATTICE_AUTHORITY_FILE": ca + ".pub"})
    expect_status(good, 0)


def revoked_identities(c):
    """security.revoked lists static keys the operators no longer trust, re-read on SIGHUP:
    n1 then closes the link it has with a revoked n2 (the launch running over it fails, naming
    n2) and refuses n2's handshakes, and a revoked launcher is refused; an identity certified
    anew, with a new key under the same name, is taken again."""
    ca = new_authority(c, "ca.key")
    certify = certifier(c, ca)
    revoked = os.path.join(c.dir, "revoked")
    with open(revoked, "w") as f:
        f.write("# static keys no longer trusted\n")
    n2_identity = certify("agent:n2")
    n1 = c.start_agent("n1", ["--listen", "127.0.0.1:0", "--config",
                              certified_config(c, ca, "n1", certify("agent:n1"), revoked)])
    n2 = c.start_agent("n2", ["--listen", "127.0.0.2:0", "--config",
                              certified_config(c, ca, "n2", n2_identity)])
    check(n2.wait_log(f"static key {certify.keys[n2_identity]}"), f"n2 did not log its key\n"
          f"{n2.log()}")
    ops = certify("launcher:ops")
    env = {"LATTICE_IDENTITY_FILE": ops, "LATTICE_AUTHORITY_FILE": ca + ".pub"}
    args = ["--agents", addresses([n1, n2]), "-n", "4", "/bin/sh", "-c",
            f"{prog('mpi_check')} && sleep 30"]
    p = c.start_launch(args, env=env)
    started = time.monotonic()
    check(wait_until(lambda: len(c.survivors()) >= 4, 20), "the launch's ranks never started")
    time.sleep(2)  # past MPI_Init's fence: n1 and n2 are linked
    with open(revoked, "a") as f:
        f.write(f"{certify.keys[n2_identity]}  # n2, lost\n")
    n1.proc.send_signal(signal.SIGHUP)
    check(n1.wait_log("closing the link of agent n2: its certificate is revoked"),
          f"n1 kept its link with the revoked n2\n{n1.log()}")
    check(n1.wait_log("SIGHUP: 1 revoked keys in"), f"n1 did not say what it read\n{n1.log()}")
    r = c.finish_launch(p, args, started, 60)
    check(r.code not in (0, None) and "node n2" in r.err and "certificate is revoked" in r.err,
          f"the launch did not fail naming n2's revocation\n"
          f"{r.describe()}\n{n1.log()}")
    # n2 cannot reach its fence parent, and says so: the launcher tells n1, whose link with it
    # is whole, so the launch ends at once, not at the fence timeout (60 s, this run's bound).
    r = c.run_launch(["--agents", addresses([n1, n2]), "-n", "2", prog("mpi_check")], env=env)
    check(r.code not in (0, None) and "it refused this side's identity" in r.err,
          f"a launch over the revoked n2 ran, or did not end naming n1's refusal\n{r.describe()}")
    check(n1.wait_log(f"agent n2 is not certified: its certificate (static key "
                      f"{certify.keys[n2_identity]}) is revoked"),
          f"n1 did not refuse n2's handshake by its revocation\n{n1.log()}")
    # The launcher's key too.
    with open(revoked, "a") as f:
        f.write(certify.keys[ops] + "\n")
    n1.proc.send_signal(signal.SIGHUP)
    check(n1.wait_log("SIGHUP: 2 revoked keys in"), f"n1 did not re-read\n{n1.log()}")
    r = c.run_launch(["--agents", n1.address, "/bin/true"], env=env)
    check(r.code not in (0, None) and "it refused this side's identity" in r.err,
          f"a revoked launcher was not refused\n{r.describe()}")
    # Certified anew (a new key under the same name), the launcher is taken again.
    renewed = os.path.join(c.dir, "ops-renewed.id")
    subprocess.run([AGENTD, "--certify", "launcher:ops", "--ca", ca, "--out", renewed, "--days",
                    "2"], check=True, stdout=subprocess.DEVNULL)
    expect_status(c.run_launch(["--agents", n1.address, "-n", "2", prog("mpi_check")],
                               env={"LATTICE_IDENTITY_FILE": renewed,
                                    "LATTICE_AUTHORITY_FILE": ca + ".pub"}), 0)


def handshake_2_served(c):
    """A launcher of 0.2.0 (handshake 2) is still served by an agent without an authority, and
    an agent set to open links with handshake 2 (security.handshake: 2, for an upgrade) runs a
    launch with an agent that opens them with 3."""
    old = os.path.join(c.dir, "old.yaml")
    with open(old, "w") as f:
        f.write("security: {handshake: 2}\n")
    nodes = [c.start_agent("n1", ["--listen", "127.0.0.1:0", "--config", old]),
             c.start_agent("n2", ["--listen", "127.0.0.2:0"])]
    out = rogue(c, nodes[0], "launcher:old", "status", flags=["--handshake", "2"])
    check("reply: ok" in out, f"a handshake 2 launcher was not served: {out}")
    good_launch(c, nodes)
    # A 0.3.0 launcher told to speak 2 (LATTICE_HANDSHAKE) runs its launch as well, and is
    # heard speaking 2: an agent that requires certificates refuses it by that version.
    r = c.run_launch(["--agents", addresses(nodes), "-n", "4", prog("mpi_check")],
                     env={"LATTICE_HANDSHAKE": "2"})
    expect_status(r, 0)
    ca = new_authority(c, "ca.key")
    strict = certified_config(c, ca, "n3", certifier(c, ca)("agent:n3"))
    n3 = c.start_agent("n3", ["--listen", "127.0.0.3:0", "--config", strict])
    r = c.run_launch(["--agents", n3.address, "/bin/true"], env={"LATTICE_HANDSHAKE": "2"})
    check(r.code not in (0, None) and "the peer speaks handshake version 3" in r.err,
          f"the launcher did not speak handshake 2\n{r.describe()}")
    check(n3.wait_log("handshake version 2 is not supported"), f"n3 heard no 2\n{n3.log()}")
    r = c.run_launch(["--agents", n3.address, "/bin/true"], env={"LATTICE_HANDSHAKE": "4"})
    check(r.code == 2 and "LATTICE_HANDSHAKE: 2 or 3, not '4'" in r.err, r.describe())


def random_bytes(c):
    nodes = agents(c, 1)
    with socket.create_connection(nodes[0].host_port()) as s:
        try:
            s.sendall(os.urandom(64 * 1024))
        except OSError:
            pass  # the agent may have closed while we were still sending: that is the point
        check(closed_by_peer(s, 10), "64 KiB of random bytes did not get the connection dropped")
    check(nodes[0].wait_log("not a Lattice handshake"), f"no reason logged\n{nodes[0].log()}")
    good_launch(c, nodes)


def silent_connection(c):
    nodes = agents(c, 1)
    started = time.monotonic()
    with socket.create_connection(nodes[0].host_port()) as s:
        check(closed_by_peer(s, HANDSHAKE_DEADLINE + 10), "a silent connection stayed open")
    took = time.monotonic() - started
    check(took >= HANDSHAKE_DEADLINE - 1, f"closed after {took:.1f} s, before the deadline")
    check(nodes[0].wait_log("no handshake within"), f"no reason logged\n{nodes[0].log()}")
    good_launch(c, nodes)


def replayed_handshake(c):
    nodes = agents(c, 1)
    proxy = Proxy(nodes[0])
    try:
        r = c.run_launch(["--agents", proxy.address, "-n", "1", "/bin/true"])
        expect_status(r, 0)
    finally:
        proxy.close()
    check(len(proxy.recorded) > 100, "the proxy recorded nothing")
    with socket.create_connection(nodes[0].host_port()) as s:
        s.sendall(bytes(proxy.recorded))
        check(closed_by_peer(s, 10), "a replayed handshake kept its connection")
    check(nodes[0].wait_log("replayed"), f"no replay refusal logged\n{nodes[0].log()}")
    check(nodes[0].log_text().count("accepted from") == 1,
          f"the replay started a launch\n{nodes[0].log()}")
    good_launch(c, nodes)


def flipped_byte_mid_stream(c):
    nodes = agents(c, 1)
    proxy = Proxy(nodes[0], flip_after=2.0)  # heartbeats flow every second after the launch
    try:
        r = c.run_launch(["--agents", proxy.address, "-n", "2", "/bin/sleep", "30"], timeout=40)
    finally:
        proxy.close()
    check(proxy.flipped, "the proxy never flipped a byte")
    check(r.code not in (0, None), f"a tampered link did not end the launch\n{r.describe()}")
    check(r.seconds < 25, f"the launch ended only after {r.seconds:.1f} s\n{r.describe()}")
    check(nodes[0].wait_log("failed authentication"), f"no reason logged\n{nodes[0].log()}")
    c.check_clean(r)
    good_launch(c, nodes)


def foreign_agent_in_peer_list(c):
    nodes = agents(c, 2)
    stranger = c.start_agent("n3", ["--listen", "127.0.0.3:0"], key_file=c.make_key("n3.key"))
    r = c.run_launch(["--agents", addresses(nodes + [stranger]), "-n", "6", "/bin/sleep", "30"])
    check(r.code not in (0, None), f"a launch with a foreign agent ran\n{r.describe()}")
    check(r.seconds < 10, f"the refusal took {r.seconds:.1f} s\n{r.describe()}")
    check("cannot authenticate agent" in r.err and "127.0.0.3" in r.err,
          f"the launcher does not name the agent it could not authenticate\n{r.describe()}")
    check(not any("accepted from" in a.log_text() for a in nodes + [stranger]),
          "an agent accepted the launch although a peer failed to authenticate")
    c.check_clean(r)
    good_launch(c, nodes)


def named(nodes, names=None):
    return ",".join(f"{n}={a.address}" for n, a in zip(names or [a.node_id for a in nodes], nodes))


def named_agents(c):
    """--agents NAME=HOST:PORT: each agent gets its request as soon as it proves that name; an
    agent proving another name, or none, ends the launch with no rank left anywhere."""
    nodes = agents(c, 3)
    r = c.run_launch(["--agents", named(nodes), "-n", "6", prog("mpi_check")])
    expect_status(r, 0)
    check(r.out.count("ok") == 6, f"not every rank ok\n{r.describe()}")
    c.check_clean(r)

    r = c.run_launch(["--agents", named(nodes, ["n1", "n3", "n2"]), "-n", "6", "/bin/sleep", "30"])
    check(r.code not in (0, None), f"a launch with misnamed agents ran\n{r.describe()}")
    check("is 'n2', not 'n3'" in r.err or "is 'n3', not 'n2'" in r.err,
          f"the launcher does not say which agent proved another name\n{r.describe()}")
    check(r.seconds < 10, f"the refusal took {r.seconds:.1f} s\n{r.describe()}")
    c.check_clean(r)

    stranger = c.start_agent("n4", ["--listen", "127.0.0.4:0"], key_file=c.make_key("n4.key"))
    r = c.run_launch(["--agents", named(nodes + [stranger]), "-n", "8", "/bin/sleep", "30"])
    check(r.code not in (0, None), f"a launch with a foreign agent ran\n{r.describe()}")
    check("cannot authenticate agent n4" in r.err,
          f"the launcher does not name the agent it could not authenticate\n{r.describe()}")
    check(r.seconds < 10, f"the refusal took {r.seconds:.1f} s\n{r.describe()}")
    c.check_clean(r)
    good_launch(c, nodes)


def running_launch(c, nodes, rounds="3"):
    """A pmi2_client job over the agents that waits 3 s before its first PMI call; returns the
    Popen, its start time and the launch id (from a rank's environment: the launch's directory
    names do not give it away)."""
    args = ["--agents", addresses(nodes), "-n", "6", "/bin/sh", "-c",
            f"sleep 3; exec {prog('pmi2_client')} --rounds {rounds}"]
    p = c.start_launch(args)
    started = time.monotonic()
    check(wait_until(c.survivors, 10), "the launch's ranks never started")
    launch = launch_id_of(c.survivors()[0])
    return p, args, started, launch


def launch_id_of(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        env = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
    return env[b"LATTICE_LAUNCH_ID"].decode()


def wrong_role(c):
    nodes = agents(c, 3)
    p, args, started, launch = running_launch(c, nodes)
    n1, n2 = nodes[0], nodes[1]
    # An agent that holds the key but is not one of the launch's nodes.
    out = rogue(c, n1, "agent:intruder", "abort", launch=launch)
    check("reply: error" in out and "not one of its nodes" in out, f"abort not refused: {out}")
    out = rogue(c, n1, "agent:intruder", "signal", "9", launch=launch)
    check("reply: error" in out and "only the launch's own launcher" in out,
          f"signal not refused: {out}")
    # Forged contributions for the first fences, with values the job would notice.
    for epoch in ("1", "2", "3", "4"):
        keys = [f"k{r}-{rank}=forged" for r in range(4) for rank in range(6)]
        rogue(c, n1, "agent:intruder", "fence", epoch, "1", "up", *keys, launch=launch)
        # A launch member (n2, index 1) claiming to be n3 (index 2).
        rogue(c, n1, "agent:n2", "fence", epoch, "2", "up", *keys, launch=launch)
        rogue(c, n2, "agent:intruder", "fence-error", epoch, "0", "forged failure", launch=launch)
        rogue(c, n2, "agent:n3", "fence-error", epoch, "0", "forged failure", launch=launch)
    # A real child of n1 (n2) whose packed entries run past their end: dropped, named.
    rogue(c, n1, "agent:n2", "fence-packed", "1", "1", "up", "036b6579ff", launch=launch)
    # A launch request from an agent identity.
    out = rogue(c, n1, "agent:n2", "launch")
    check("only launchers start launches" in out, f"an agent-role launch was not refused: {out}")
    r = c.finish_launch(p, args, started, 60)
    expect_status(r, 0)
    check(r.out.count("ok") == 6, f"the job did not see the right data\n{r.describe()}")
    log1, log2 = n1.log_text(), n2.log_text()
    for needle in ("an abort for launch", "a signal for launch",
                   "a fence contribution for launch", "claims to come from node 2 but the link is node 1",
                   f"a fence chunk from node 1 for launch {launch} is malformed: packed fence entries: "
                   "entry 0 at byte 0 has a length that is overlong or runs past the end (5 bytes) "
                   "(from agent n2): dropped"):
        check(needle in log1, f"n1 did not log '{needle}'\n{n1.log()}")
    check("a fence completion for launch" in log2, f"n2 did not log the fence error refusal\n{n2.log()}")
    c.check_clean(r)


def agent_forging_exits(c):
    """An agent that holds the key (lattice-test-rogue as n1) reports a rank of n2 as exited 42,
    after n2's own report of it: the launcher takes a rank's exit only from the link that speaks
    for the rank's node, so the real status stands."""
    real = c.start_agent("n2", ["--listen", "127.0.0.2:0"])
    p = subprocess.Popen([ROGUE, "--key", c.key_file, "--identity", "agent:n1", "--listen",
                          "127.0.0.1:0", "forge-exit", "0", "1", "1", "42", "1500"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = p.stdout.readline().split()
        check(line[:2] == ["listening", "on"], f"the rogue agent did not listen: {line}")
        r = c.run_launch(["--agents", f"n1={line[2]},n2={real.address}", "-N", "2", "-n", "2",
                          "-l", "/bin/true"])
    finally:
        p.kill()
        out = p.communicate()[0]
    check("accepted launch" in out and "sent" in out, f"the rogue did not play its part: {out}")
    expect_status(r, 0)
    check("42" not in r.err, f"the launcher believed n1 about n2's rank\n{r.describe()}")
    c.check_clean(r)


def bounded_under_abuse(c):
    config = os.path.join(c.dir, "small.yaml")
    with open(config, "w") as f:
        f.write("limits: {max_world_size: 64}\n")
    nodes = agents(c, 1)
    small = c.start_agent("n2", ["--listen", "127.0.0.2:0", "--config", config])
    good_launch(c, nodes)  # warm up: first launch's allocations are not a leak
    agent = nodes[0]
    start_rss, start_fds = agent.stats()

    # 200 silent connections: held, then closed by the handshake deadline.
    socks = [socket.create_connection(agent.host_port()) for _ in range(200)]
    check(wait_until(lambda: agent.stats()[1] >= start_fds + 150, 10),
          f"the agent did not accept the connections (fds {agent.stats()[1]})")
    deadline = time.monotonic() + HANDSHAKE_DEADLINE + 10
    for s in socks:
        check(closed_by_peer(s, max(0.1, deadline - time.monotonic())),
              "a silent connection outlived the handshake deadline")
        s.close()

    # An authenticated peer announces a 60 MiB frame and trickles: memory follows the bytes
    # (reserved memory too: a buffer sized from the header would show in VmSize at once).
    start_size = agent.memory("VmSize")
    peak = [0, 0]
    done = threading.Event()
    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], agent.memory("VmRSS"))
            peak[1] = max(peak[1], agent.memory("VmSize"))
            time.sleep(0.05)
    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        out = rogue(c, agent, "agent:prober", "trickle", "3")
    finally:
        done.set()
        sampler.join()
    check("established" in out, f"the trickling peer was not even authenticated: {out}")
    if not SANITIZED:
        check(peak[0] - start_rss < 8 * 1024,
              f"RSS grew by {(peak[0] - start_rss) // 1024} MiB for a frame that never came")
        check(peak[1] - start_size < 16 * 1024,
              f"the agent reserved {(peak[1] - start_size) // 1024} MiB for a frame that never came")

    # Oversized requests are refused with the limit's name.
    r = c.run_launch(["--agents", agent.address, "-n", "5000", "/bin/true"])
    check(r.code not in (0, None) and "limits.max_ranks_per_node" in r.err,
          f"5000 ranks on one node were not refused\n{r.describe()}")
    r = c.run_launch(["--agents", small.address, "-n", "65", "/bin/true"])
    check(r.code not in (0, None) and "limits.max_world_size" in r.err,
          f"an oversized world was not refused\n{r.describe()}")

    good_launch(c, nodes)
    # At most as many as before: links of the warm-up launch may still have been open then.
    check(wait_until(lambda: agent.stats()[1] <= start_fds, 10),
          f"fds: {start_fds} before, {agent.stats()[1]} after")
    rss = agent.stats()[0]
    if not SANITIZED:
        check(rss - start_rss < 2048, f"RSS: {start_rss} KiB before, {rss} KiB after")


if __name__ == "__main__":
    run_cases([
        ("wrong_key_launcher", wrong_key_launcher),
        ("no_key_launcher", no_key_launcher),
        ("versions_and_ciphers", versions_and_ciphers),
        ("certified_identities", certified_identities),
        ("signed_relayed_launches", signed_relayed_launches),
        ("revoked_identities", revoked_identities),
        ("handshake_2_served", handshake_2_served),
        ("protocol_versions", protocol_versions),
        ("random_bytes", random_bytes),
        ("silent_connection", silent_connection),
        ("replayed_handshake", replayed_handshake),
        ("flipped_byte_mid_stream", flipped_byte_mid_stream),
        ("foreign_agent_in_peer_list", foreign_agent_in_peer_list),
        ("named_agents", named_agents),
        ("wrong_role", wrong_role),
        ("bounded_under_abuse", bounded_under_abuse),
        ("agent_forging_exits", agent_forging_exits),
    ])
