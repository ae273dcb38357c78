"""The agent as a daemon: admin status, a clean SIGTERM while ranks run (no rank, no socket file
left), --check-config on the shipped example config and on broken files, and no start without a
listen address (the shipped config leaves it to the operator)."""
import glob
import json
import os
import pwd
import signal
import subprocess
import time

from harness import AGENTD, LATTICE, SOURCE_ROOT, CaseFailure, check, run_cases, wait_until

COMMAND_TIMEOUT = 30
RANKS_RUNNING_TIMEOUT = 20


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=COMMAND_TIMEOUT)


def agent_version():
    p = run([AGENTD, "--version"])
    check(p.returncode == 0 and p.stdout.startswith("lattice-agentd ")
          and p.stdout.rstrip().endswith("(protocol 2 (works with 1 to 3), handshake 3)"),
          f"lattice-agentd --version: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return p.stdout.split()[1]


def admin_status(c):
    agent = c.start_agent("node-a")
    p = run([LATTICE, "admin", "status", "--socket", agent.admin_socket])
    what = f"exit {p.returncode}\n--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}"
    check(p.returncode == 0, f"admin status failed: {what}")
    check(agent_version() in p.stdout, f"status does not show version {agent_version()}: {what}")
    check("node-a" in p.stdout, f"status does not show the node id: {what}")
    # The same as JSON, with a launch running: its ranks and their pids.
    args = ["--agents", agent.address, "-n", "2", "/bin/sleep", "300"]
    started = time.monotonic()
    launcher = c.start_launch(args)
    check(wait_until(lambda: len(c.survivors()) == 2, RANKS_RUNNING_TIMEOUT),
          f"2 ranks not running\n{agent.log()}")
    p = run([LATTICE, "admin", "status", "--json", "--socket", agent.admin_socket])
    check(p.returncode == 0, f"admin status --json: {p.stdout}{p.stderr}")
    state = json.loads(p.stdout)
    check(state["node_id"] == "node-a" and state["version"] == agent_version(), p.stdout)
    check(len(state["launches"]) == 1, p.stdout)
    pids = sorted(r["pid"] for r in state["launches"][0]["ranks"])
    check(pids == sorted(c.survivors()), f"ranks' pids {pids}, running {c.survivors()}")
    os.killpg(launcher.pid, signal.SIGTERM)
    c.check_clean(c.finish_launch(launcher, args, started, COMMAND_TIMEOUT))


def env_reaches_ranks(c):
    # HOME and USER from the request lose to passwd's, as lattice-rank-exec would set them.
    r = c.run_launch(["-n", "2", "-l", "--env", "LT_EXTRA=two words", "--env", "HOME=/nowhere",
                      "--env", "USER=mallory", "/usr/bin/env"])
    check(r.code == 0, f"launch of /usr/bin/env failed\n{r.describe()}")
    # The agent's own user: ranks start directly, with these from its passwd entry.
    me = pwd.getpwuid(os.geteuid())
    for rank in range(2):
        for var in (f"LT_TEST_TAG={c.tag}", "LT_EXTRA=two words", "PMI_RANK=" + str(rank),
                    f"USER={me.pw_name}", f"LOGNAME={me.pw_name}", f"HOME={me.pw_dir}"):
            check(f"{rank}: {var}" in r.out.splitlines(),
                  f"rank {rank} lacks {var}\n{r.describe()}")
    c.check_clean(r)


def sigterm_during_launch(c):
    agent = c.start_agent("n1")
    args = ["--agents", agent.address, "-n", "2", "/bin/sleep", "300"]
    started = time.monotonic()
    launcher = c.start_launch(args)
    running = wait_until(lambda: len(c.survivors()) == 2, RANKS_RUNNING_TIMEOUT)
    check(running, f"2 ranks not running after {RANKS_RUNNING_TIMEOUT} s: {c.survivors()}\n"
                   f"{agent.log()}")
    agent.proc.send_signal(signal.SIGTERM)
    try:
        code = agent.proc.wait(timeout=COMMAND_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise CaseFailure(f"agent still running {COMMAND_TIMEOUT} s after SIGTERM\n{agent.log()}")
    check(code == 0, f"agent exited {code} on SIGTERM\n{agent.log()}")
    result = c.finish_launch(launcher, args, started, COMMAND_TIMEOUT)
    check(result.code is not None,
          f"the launcher did not end after its agent stopped\n{result.describe()}")
    check(result.code != 0, f"the launcher reported success for killed ranks\n{result.describe()}")
    c.check_clean(result)
    check(not os.path.exists(agent.admin_socket), f"admin socket {agent.admin_socket} left behind")


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def sigterm_during_drain(c):
    """The rank exited, a grandchild still holds its output pipe, the agent drains it: a SIGTERM
    to the agent now must not replace the drain (the launch then never ended, and neither did
    the agent, until the grandchild let go). Containment ends what a rank leaves behind; a
    subreaper agent finds it by its environment, which this grandchild clears, so it escapes and
    keeps the pipe."""
    conf = os.path.join(c.dir, "subreaper.yaml")
    with open(conf, "w") as f:
        f.write("jobs:\n  containment: subreaper\n")
    agent = c.start_agent("n1", ["--config", conf])
    args = ["--agents", agent.address, "-n", "1", "/bin/sh", "-c",
            "env -i /bin/sleep 120.25 & sleep 0.5; exit 0"]
    started = time.monotonic()
    launcher = c.start_launch(args)
    grandchild = lambda: [p for p in pids_running("/bin/sleep 120.25")]
    draining = wait_until(lambda: grandchild() and not c.survivors(), RANKS_RUNNING_TIMEOUT)
    check(draining, f"no lone grandchild holding the pipe: {c.survivors()} {grandchild()}\n{agent.log()}")
    agent.proc.send_signal(signal.SIGTERM)
    try:
        try:
            code = agent.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            raise CaseFailure(f"agent still running 15 s after SIGTERM during an output drain\n"
                              f"{agent.log()}")
        check(code == 0, f"agent exited {code} on SIGTERM\n{agent.log()}")
        result = c.finish_launch(launcher, args, started, COMMAND_TIMEOUT)
        check(result.code is not None, f"the launcher did not end\n{result.describe()}")
    finally:
        for pid in c.survivors() + grandchild():
            os.kill(pid, signal.SIGKILL)
    c.check_clean(result)


def pids_running(cmdline):
    """Pids whose command line is `cmdline` (arguments joined by spaces)."""
    out = []
    for path in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            with open(path, "rb") as f:
                if f.read().replace(b"\0", b" ").strip() == cmdline.encode():
                    out.append(int(path.split("/")[2]))
        except OSError:
            pass
    return out


def check_config_example(c):
    path = os.path.join(SOURCE_ROOT, "conf", "agent.yaml")
    check(os.path.exists(path), f"{path} does not exist")
    p = run([AGENTD, "--check-config", "--config", path])
    check(p.returncode == 0, f"--check-config {path}: exit {p.returncode}\n{p.stderr}")


def check_config_broken(c):
    broken = {
        "syntax.yaml": ("listen: [127.0.0.1:7400\n", "syntax.yaml"),
        "typo.yaml": ("node_idd: n1\n", "node_idd"),
    }
    for name, (text, needle) in broken.items():
        path = os.path.join(c.dir, name)
        with open(path, "w") as f:
            f.write(text)
        p = run([AGENTD, "--check-config", "--config", path])
        what = f"--check-config on {name}: exit {p.returncode}\n{p.stderr}"
        check(p.returncode == 2, f"expected exit 2: {what}")
        check(needle in p.stderr, f"stderr does not name '{needle}': {what}")


def listen_required(c):
    """The shipped agent.yaml names no address, and the agent then refuses to start, naming the
    key, rather than listen on every network (before, it listened on 0.0.0.0:7400)."""
    config = os.path.join(c.dir, "agent.yaml")
    with open(os.path.join(SOURCE_ROOT, "conf", "agent.yaml")) as f:
        shipped = f.read()
    with open(config, "w") as f:
        f.write(shipped.replace("/etc/lattice/cluster.key", c.key_file))
    sockets = os.path.join(c.dir, "n1")
    cmd = [AGENTD, "--config", config, "--admin-socket", os.path.join(c.dir, "admin.sock"),
           "--pmi-socket-dir", sockets]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        _, err = p.communicate(timeout=COMMAND_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        _, err = p.communicate()
        raise CaseFailure(f"the agent started without a listen address\n{err}")
    check(p.returncode == 1 and "no listen address" in err and "listen: HOST:PORT" in err,
          f"exit {p.returncode}: {err}")
    # Given one, the same file starts an agent.
    agent = c.start_agent("n1", ["--config", config])
    check("listening on 127.0.0.1:" in agent.log_text(), agent.log())


if __name__ == "__main__":
    run_cases([
        ("admin_status", admin_status),
        ("env_reaches_ranks", env_reaches_ranks),
        ("sigterm_during_launch", sigterm_during_launch),
        ("sigterm_during_drain", sigterm_during_drain),
        ("check_config_example", check_config_example),
        ("check_config_broken", check_config_broken),
        ("listen_required", listen_required),
    ])
