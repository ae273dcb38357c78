"""Connection floods without the key, by a hostile local user, against a real agent, with a
legitimate launch (root's, from 127.0.0.1) started in the middle: from one source address
(127.0.0.9), from many loopback addresses at once, and into a table of connections that is full.
Each launch must succeed, and the agent's log must stay small: refusals at most once a second per
cause, with counts of the lines left out. Before per-source caps, one client filled all 1024
slots, every launch during it failed, and the agent wrote a line per refusal (89,383 lines)."""
import datetime
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

from harness import check, expect_status, note, prog, run_cases, test_user

HERE = os.path.dirname(os.path.abspath(__file__))
FLOOD_CLIENT = os.path.join(HERE, "flood_client.py")
# The system's interpreter: one under root's home (pyenv) is out of the other user's reach.
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
HANDSHAKE_DEADLINE = 5  # the agent's default security.handshake_timeout
# More connections than the default limits.max_connections: on an agent without per-source
# caps, this one client takes every slot.
FLOOD_CONNECTIONS = 1100
# Refusal causes a flood can produce here (source full, no handshake in time, a slot given up
# to a newer connection, the flooder's own hang-ups at its end), with room to spare.
MAX_CAUSES = 5


def room_for_files(n=4096):
    """The flood holds more sockets than a shell's usual 1024; the flooder and the agents started
    after this inherit the limit (root may raise its hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = max(hard, n)
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))


class Flood:
    """flood_client.py in the background, as `user` (a TestUser) or through `prefix` (e.g. ip
    netns exec); stop() gives its figures and how long it ran."""

    def __init__(self, host, port, sources, count=FLOOD_CONNECTIONS, user=None, prefix=()):
        with open(FLOOD_CLIENT) as f:
            code = f.read()  # passed inline: the other user may not read the source tree
        as_user = dict(user=user.uid, group=user.gid, extra_groups=[]) if user else {}
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [*prefix, PYTHON, "-c", code, host, str(port), str(count), "600",
             ",".join(sources)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/",
            start_new_session=True, **as_user)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            out, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            out, err = self.proc.communicate()
        elapsed = time.monotonic() - self.started
        lines = out.strip().splitlines()
        check(lines, f"the flood client printed nothing (exit {self.proc.returncode}): {err}")
        return json.loads(lines[-1]), elapsed


class RefusalLog:
    """The agent's refusal lines (link: refused/refusing), what their counts add up to, and the
    shortest gap between two lines of one cause (numbers folded, as the agent folds them)."""

    def __init__(self, text):
        self.lines = [l for l in text.splitlines() if " link: refus" in l]
        self.bytes = sum(len(l) + 1 for l in self.lines)
        self.left_out = 0
        last, self.closest = {}, None
        for line in self.lines:
            more = re.search(r" \(and (\d+) more like it in the last [\d.]+ s\)$", line)
            if more:
                self.left_out += int(more.group(1))
                line = line[:more.start()]
            stamp, _, rest = line.partition(" ")  # RFC 3339, UTC: 2026-11-27T16:06:25.232Z
            t = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
            cause = re.sub(r"\d+", "#", rest.split(" link: ", 1)[1])
            if cause in last:
                gap = t - last[cause]
                self.closest = gap if self.closest is None else min(self.closest, gap)
            last[cause] = t

    def describe(self):
        return (f"{len(self.lines)} refusal lines ({self.bytes} bytes), "
                f"{self.left_out} more counted in them")


def flood_during_launch(c, agent, sources, count=FLOOD_CONNECTIONS):
    """Floods `agent` as the hostile user from `sources`, runs a launch from 127.0.0.1 once the
    agent refuses some of the flood, and keeps flooding past the handshake deadline (so that
    silent connections also time out). Checks the launch and the log."""
    room_for_files()
    host, port = agent.host_port()
    flood = Flood(host, port, sources, count, user=test_user("hostile"))
    try:
        # "refusing" at accept, or "refused" once taken: the flood has reached a limit.
        check(agent.wait_log("refus", 60), f"the flood met no limit\n{agent.log()}")
        r = c.run_launch(["--agents", agent.address, "-n", "2", prog("mpi_check")])
        while time.monotonic() - flood.started < HANDSHAKE_DEADLINE + 2:
            time.sleep(0.2)
    finally:
        figures, elapsed = flood.stop()
    log = RefusalLog(agent.log_text())
    what = f"flood {figures} for {elapsed:.1f} s; the agent's log: {log.describe()}"
    note(what)
    expect_status(r, 0)
    check(r.out.count("ok") == 2, f"not every rank ok during the flood ({what})\n{r.describe()}")
    check(figures["closed"] >= 100, f"the flood did not churn ({what})")
    check(len(log.lines) <= MAX_CAUSES * (elapsed + 2), f"the log grew with the flood ({what})")
    check(log.closest is None or log.closest >= 0.99,
          f"two lines of one cause {log.closest:.3f} s apart ({what})")
    check(log.left_out > 0 and log.left_out + len(log.lines) >= figures["closed"] // 2,
          f"the log's counts do not account for the flood ({what})")
    check(agent.alive(), f"the agent died\n{agent.log()}")
    c.check_clean(r)


def one_source_flood(c):
    """One address, 127.0.0.9: at most limits.max_handshakes_per_source of its connections are
    held; the launch from 127.0.0.1 gets a slot."""
    agent = c.start_agent("n1", ["--listen", "127.0.0.1:0"])
    flood_during_launch(c, agent, ["127.0.0.9"])


def many_local_sources_flood(c):
    """Any local user may bind any of 127/8: a local client is counted by its user, so 200
    loopback source addresses are still one source."""
    agent = c.start_agent("n1", ["--listen", "127.0.0.1:0"])
    flood_during_launch(c, agent, [f"127.0.1.{i}" for i in range(1, 201)])


def full_table_gives_way(c):
    """With every slot taken by handshakes (limits.max_connections below the per-source cap), a
    new connection takes the place of the flood's oldest handshake."""
    config = os.path.join(c.dir, "small.yaml")
    with open(config, "w") as f:
        f.write("limits: {max_connections: 16}\n")
    agent = c.start_agent("n1", ["--listen", "127.0.0.1:0", "--config", config])
    flood_during_launch(c, agent, ["127.0.0.9"], count=40)


def sighup_changes_the_cap(c):
    """limits.max_handshakes_per_source is re-read on SIGHUP, like every limits.* key."""
    config = os.path.join(c.dir, "cap.yaml")
    with open(config, "w") as f:
        f.write("limits: {max_handshakes_per_source: 4}\n")
    agent = c.start_agent("n1", ["--listen", "127.0.0.1:0", "--config", config])
    host, port = agent.host_port()
    flood = Flood(host, port, ["127.0.0.9"], count=20, user=test_user("hostile"))
    try:
        check(agent.wait_log("4 of its connections are in their handshake", 30), agent.log())
        with open(config, "w") as f:
            f.write("limits: {max_handshakes_per_source: 6}\n")
        agent.proc.send_signal(signal.SIGHUP)
        check(agent.wait_log("6 of its connections are in their handshake", 30), agent.log())
    finally:
        flood.stop()


if __name__ == "__main__":
    run_cases([
        ("one_source_flood", one_source_flood),
        ("many_local_sources_flood", many_local_sources_flood),
        ("full_table_gives_way", full_table_gives_way),
        ("sighup_changes_the_cap", sighup_changes_the_cap),
    ])
