"""Hosts with their own addresses: three network namespaces joined by veth pairs to a bridge (in a
fourth namespace), made and removed by this test. An agent runs in each namespace on its own
address, the launcher runs in the first, and an MPICH job spans all three. If the machine refuses
namespaces (no root, no iproute2, no kernel support) the test says so and reports SKIP (exit 77),
never a silent pass.

Addresses come from 192.0.2.0/24 (TEST-NET-1, RFC 5737): they exist only inside these namespaces."""
import os
import select
import signal
import subprocess
import sys
import uuid

from harness import (AGENTD, AGENT_READY_TIMEOUT, LATTICE, Case, check, expect_status, prog,
                     run_cases)

SKIP = 77
NODES = 3


def sh(*args):
    return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


class Hosts:
    """The namespaces, the bridge and the veth pairs; torn down whatever happened."""

    def __init__(self):
        tag = uuid.uuid4().hex[:6]
        self.hub = f"lh{tag}"
        self.names = [f"ln{tag}{i + 1}" for i in range(NODES)]
        self.addrs = [f"192.0.2.{i + 1}" for i in range(NODES)]
        self.made = []

    def run(self, *args):
        r = sh(*args)
        if r.returncode != 0:
            raise OSError(f"{' '.join(args)}: {r.stdout.strip()}")

    def up(self):
        for ns in [self.hub] + self.names:
            self.run("ip", "netns", "add", ns)
            self.made.append(ns)
            self.run("ip", "-n", ns, "link", "set", "lo", "up")
        self.run("ip", "-n", self.hub, "link", "add", "br0", "type", "bridge")
        self.run("ip", "-n", self.hub, "link", "set", "br0", "up")
        for i, ns in enumerate(self.names):
            host_end, node_end = f"vh{i}", f"vn{i}"
            self.run("ip", "-n", self.hub, "link", "add", host_end, "type", "veth", "peer", "name",
                     node_end, "netns", ns)
            self.run("ip", "-n", self.hub, "link", "set", host_end, "master", "br0", "up")
            self.run("ip", "-n", ns, "addr", "add", f"{self.addrs[i]}/24", "dev", node_end)
            self.run("ip", "-n", ns, "link", "set", node_end, "up")

    def down(self):
        for ns in reversed(self.made):
            sh("ip", "netns", "del", ns)


def start_agent(case, hosts, i):
    """lattice-agentd inside namespace i; returns (Popen, "ADDR:PORT")."""
    node = f"n{i + 1}"
    d = os.path.join(case.dir, node)
    os.makedirs(d, exist_ok=True)
    r, w = os.pipe()
    log = open(os.path.join(d, "agent.log"), "wb")
    p = subprocess.Popen(["ip", "netns", "exec", hosts.names[i], AGENTD, "--listen",
                          f"{hosts.addrs[i]}:0", "--node-id", node, "--admin-socket",
                          os.path.join(d, "admin.sock"), "--pmi-socket-dir", d,
                          "--key-file", case.key_file, "--allow-root-jobs", "--ready-fd", str(w)],
                         pass_fds=[w], stdin=subprocess.DEVNULL, stdout=log,
                         stderr=subprocess.STDOUT, start_new_session=True)
    os.close(w)
    ready, _, _ = select.select([r], [], [], AGENT_READY_TIMEOUT)
    line = os.read(r, 256).decode().strip() if ready else ""
    os.close(r)
    check(":" in line, f"agent {node} in {hosts.names[i]} did not report an address")
    return p, line


def mpich_across_namespaces(case, hosts):
    agents = [start_agent(case, hosts, i) for i in range(NODES)]
    try:
        addrs = ",".join(a for _, a in agents)
        cmd = ["ip", "netns", "exec", hosts.names[0], LATTICE, "launch", "--env",
               f"LT_TEST_TAG={case.tag}", "--agents", addrs, "-n", "6", "-l",
               prog("mpi_check")]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=120, env=case.case_env())
        check(r.returncode == 0, f"exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        oks = [l for l in r.stdout.splitlines() if "ok" in l]
        check(len(oks) == 6, f"expected 6 ranks ok, got {len(oks)}\n{r.stdout}")
        case.check_clean()
    finally:
        for p, _ in agents:
            p.send_signal(signal.SIGTERM)
        for p, _ in agents:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def main():
    hosts = Hosts()
    try:
        hosts.up()
    except OSError as e:
        hosts.down()
        print(f"SKIP netns: this machine refuses network namespaces ({e})")
        sys.exit(SKIP)
    try:
        run_cases([("mpich_across_namespaces", lambda c: mpich_across_namespaces(c, hosts))])
    finally:
        hosts.down()


if __name__ == "__main__":
    main()
