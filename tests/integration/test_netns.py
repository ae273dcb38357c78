"""Hosts with their own addresses: three network namespaces joined by veth pairs to a bridge (in a
fourth namespace), made and removed by this test. An agent runs in each namespace on its own
address, the launcher runs in the first, and an MPICH job spans all three; and a connection flood
from the second host, counted by its address, does not keep a launch from the first off the
third's agent. If the machine refuses
namespaces (no root, no iproute2, no kernel support) the test says so and reports it skipped (a TAP
skip with the reason), never a silent pass.

Addresses come from 192.0.2.0/24 (TEST-NET-1, RFC 5737): they exist only inside these namespaces."""
import os
import select
import signal
import subprocess
import sys
import time
import uuid

from harness import (AGENTD, AGENT_READY_TIMEOUT, LATTICE, Case, check, expect_status, note,
                     prog, run_cases, skip_all, wait_until)
from test_floods import HANDSHAKE_DEADLINE, Flood, RefusalLog, room_for_files

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


def flood_from_another_host(case, hosts):
    """Host 2 (192.0.2.2, root there: another host's clients are counted by address) floods the
    agent on host 3 with silent connections; a launch from host 1 must still get through, and
    the agent's log stays small. Before per-source caps the flood took every slot."""
    room_for_files()
    agent, address = start_agent(case, hosts, 2)
    log_path = os.path.join(case.dir, "n3", "agent.log")
    def log_text():
        with open(log_path, errors="replace") as f:
            return f.read()
    host, port = address.rsplit(":", 1)
    flood = Flood(host, int(port), [hosts.addrs[1]], prefix=["ip", "netns", "exec", hosts.names[1]])
    try:
        check(wait_until(lambda: "refus" in log_text(), 60), f"the flood met no limit\n{log_text()}")
        r = subprocess.run(["ip", "netns", "exec", hosts.names[0], LATTICE, "launch", "--env",
                            f"LT_TEST_TAG={case.tag}", "--agents", address, "-n", "2",
                            prog("mpi_check")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=120, env=case.case_env())
        while time.monotonic() - flood.started < HANDSHAKE_DEADLINE + 2:
            time.sleep(0.2)
    finally:
        figures, elapsed = flood.stop()
        agent.send_signal(signal.SIGTERM)
        try:
            agent.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(agent.pid, signal.SIGKILL)
    log = RefusalLog(log_text())
    what = f"flood {figures} for {elapsed:.1f} s; the agent's log: {log.describe()}"
    note(what)
    check(r.returncode == 0 and r.stdout.count("ok") == 2,
          f"the launch during the flood: exit {r.returncode} ({what})\n{r.stdout[-2000:]}\n"
          f"{r.stderr[-2000:]}")
    check(f"({hosts.addrs[1]})" in log_text(), f"refusals do not name the source ({what})")
    check(len(log.lines) <= 5 * (elapsed + 2), f"the log grew with the flood ({what})")
    check(log.left_out > 0, f"no counts of the lines left out ({what})")
    case.check_clean()


def main():
    hosts = Hosts()
    try:
        hosts.up()
    except OSError as e:
        hosts.down()
        skip_all(f"this machine refuses network namespaces ({e})")
    try:
        run_cases([("mpich_across_namespaces", lambda c: mpich_across_namespaces(c, hosts)),
                   ("flood_from_another_host", lambda c: flood_from_another_host(c, hosts))])
    finally:
        hosts.down()


if __name__ == "__main__":
    main()
