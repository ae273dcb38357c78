"""Safe on a shared node (issue 30), against real agents run as root: each case is an attack a
local user can try, made as that user does it. The job runs as the test's victim user; the
attacker is the job's own user (its own directory) or a second, hostile local user."""
import glob
import os
import signal
import stat
import subprocess
import time

from harness import (check, children_of, expect_status, run_cases, test_user, wait_until)

# What other users run: the system's Python (a developer's may live where they cannot reach).
PYTHON = "/usr/bin/python3"

# Lists the launch directories it is told about on stdin (one path per line) and tries to put a
# link to TARGET in place of each socket in them, for as long as the directory is there.
RACER = r"""
import os, sys, time
target = sys.argv[1]
for line in sys.stdin:
    d = line.strip()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and os.path.isdir(d):
        for name in ("exec.sock", "pmi.sock"):
            p = os.path.join(d, name)
            try:
                os.rename(p, p + ".moved")
                os.symlink(target, p)
                print("planted", p, flush=True)
            except OSError:
                pass
        time.sleep(0.001)
"""


def open_case_dir(c):
    """Lets other users through the case's directory (mkdtemp made it 0700), as they may pass
    through /run/lattice: only what the agent makes there should stop them."""
    os.chmod(c.dir, 0o711)


def rank_env(c, timeout=20):
    check(wait_until(c.survivors, timeout), "the rank never started")
    with open(f"/proc/{c.survivors()[0]}/environ", "rb") as f:
        return dict(e.decode().split("=", 1) for e in f.read().split(b"\0") if b"=" in e)


def socket_dir_hides_launches(c):
    """Nothing another user can see names a launch: the socket directory cannot be listed, and
    the sockets' paths in /proc/net/unix carry no launch id."""
    open_case_dir(c)
    victim, hostile = test_user("victim"), test_user("hostile")
    agent = c.start_agent("n1")
    args = ["--agents", agent.address, "--user", victim.name, "-n", "1", "/bin/sleep", "30"]
    p = c.start_launch(args, cwd="/tmp")
    launch_id = rank_env(c)["LATTICE_LAUNCH_ID"]
    mode = stat.S_IMODE(os.stat(agent.dir).st_mode)
    check(mode == 0o711, f"the socket directory is {oct(mode)}, not 0711")
    listed = hostile.run(lambda: sorted(os.listdir(agent.dir)))
    check("PermissionError" in listed, f"another user listed the socket directory: {listed}")
    with open("/proc/net/unix") as f:
        unix = f.read()
    check(agent.dir in unix, "the launch's sockets are not in /proc/net/unix")
    check(launch_id not in unix, "a socket's path in /proc/net/unix names the launch")
    os.killpg(p.pid, 15)
    c.finish_launch(p, args, time.monotonic(), 30)
    c.check_clean()


def sockets_given_by_descriptor(c):
    """The job's user swaps a socket in its launch directory for a link to a root-only file
    while the agent gives the socket away. Every chown-family call of the agent is held back
    300 ms (strace), so the swap wins wherever the agent gives a file by its path in a directory
    the user already owns."""
    open_case_dir(c)
    victim = test_user("victim")
    secret = os.path.join(c.dir, "root-only")
    with open(secret, "w") as f:
        f.write("root's\n")
    os.chmod(secret, 0o600)
    calls = "chown,fchown,fchownat,lchown"
    agent = c.start_agent("n1", wrapper=["strace", "-qq", "-o", "/dev/null", "-e",
                                         f"trace={calls}", "-e",
                                         f"inject={calls}:delay_enter=300000"])
    racer = subprocess.Popen([PYTHON, "-c", RACER, secret], user=victim.uid,
                             group=victim.gid, extra_groups=[], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    seen = set()
    try:
        args = ["--agents", agent.address, "--user", victim.name, "-n", "1", "/bin/true"]
        p = c.start_launch(args, cwd="/tmp")
        started = time.monotonic()
        while p.poll() is None and time.monotonic() - started < 30:
            for name in os.listdir(agent.dir):
                path = os.path.join(agent.dir, name)
                if name.startswith("lattice-") and path not in seen:
                    seen.add(path)
                    racer.stdin.write(path + "\n")
                    racer.stdin.flush()
            time.sleep(0.001)
        r = c.finish_launch(p, args, started, 30)
    finally:
        racer.stdin.close()
        planted = racer.stdout.read()
        racer.wait()
    check(seen, "the racer never saw a launch directory")
    st = os.stat(secret)
    check(st.st_uid == 0, f"the agent gave a root-only file to uid {st.st_uid} through a link "
                          f"its user planted ({planted.strip()})\n{r.describe()}")
    expect_status(r, 0)
    c.check_clean(r)


def agent_config(c, name, text):
    """A config file for an agent of the case (the harness's flags give the rest)."""
    path = os.path.join(c.dir, name)
    with open(path, "w") as f:
        f.write(text)
    return ["--config", path]


def cgroup_dirs(agent):
    """The launch cgroups of `agent` (under its lattice-agentd.PID directory, any hierarchy)."""
    pid = agent_pid(agent)
    return glob.glob(f"/sys/fs/cgroup/**/lattice-agentd.{pid}/launch.*", recursive=True)


def agent_pid(agent):
    """The agent's own pid, also when a wrapper (strace) started it."""
    for pid in [agent.proc.pid] + children_of(agent.proc.pid):
        with open(f"/proc/{pid}/comm") as f:
            if f.read().strip() == "lattice-agentd":
                return pid
    return agent.proc.pid


def strays_end_with_the_launch(mode):
    def case(c):
        victim = test_user("victim")
        agent = c.start_agent("n1", extra_args=agent_config(
            c, "agent.yaml", f"jobs:\n  containment: {mode}\n"))
        check(agent.wait_log("launches are contained by "), f"no containment said\n{agent.log()}")
        said = next(l for l in agent.log_text().splitlines() if "launches are contained by" in l)
        want = {"cgroup2": "cgroup v2", "cgroup1": "cgroup v1", "subreaper": "child subreaper"}
        check(want[mode] in said, f"containment {mode} not in use: {said}")
        # A rank that leaves a daemon in a session of its own and a double-forked child, and
        # exits: both outlived the launch (reparented to PID 1) before. (It waits a moment
        # first, so that both are there, settled, when it exits: the count is exact.)
        r = c.run_launch(["--agents", agent.address, "--user", victim.name, "-n", "2", "-l",
                          "/bin/sh", "-c",
                          "setsid sleep 300 </dev/null >/dev/null 2>&1 & (sleep 301 &) ; "
                          "sleep 0.5; echo started"], cwd="/tmp")
        expect_status(r, 0)
        check(r.out.count("started") == 2, f"the ranks did not run\n{r.describe()}")
        check("n1: 4 processes the launch left behind" in r.err,
              f"the launcher was not told of 4 strays on n1\n{r.describe()}")
        c.check_clean(r)
        # The emptied group is kept for the next launch: one at most, and empty.
        def settled():
            left = cgroup_dirs(agent)
            return len(left) <= 1 and all(not open(f"{d}/cgroup.procs").read() for d in left)
        check(wait_until(settled, 10), f"launch cgroups left behind: {cgroup_dirs(agent)}")
        # The next launch (in the kept group, where there is one) runs as any other.
        again = c.run_launch(["--agents", agent.address, "--user", victim.name, "-n", "2",
                              "/bin/true"], cwd="/tmp")
        expect_status(again, 0)
        check(wait_until(lambda: not zombies_of(agent_pid(agent)), 10),
              f"the agent left its adopted orphans unreaped: {zombies_of(agent_pid(agent))}")
    return case


def zombies_of(pid):
    out = []
    for child in children_of(pid):
        try:
            with open(f"/proc/{child}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    out.append(child)
        except OSError:
            pass
    return out


def soft_nofile(pid):
    with open(f"/proc/{pid}/limits") as f:
        return int(next(l for l in f if l.startswith("Max open files")).split()[3])


def ranks_inherit_limits_and_umask(c):
    """Ranks get the launcher's soft limits (capped by the agent's hard ones) and its umask, as
    srun's tasks do; an agent configured to propagate none keeps its own."""
    victim = test_user("victim")
    # (Not the core limit: a sanitized launcher's is 0 whatever it was given.)
    agent = c.start_agent("n1", wrapper=["prlimit", "--nofile=15000:18000",
                                         "--stack=8388608:unlimited"])
    probe = "echo nofile=$(ulimit -Sn) stack=$(ulimit -Ss) umask=$(umask)"
    r = c.run_launch(["--agents", agent.address, "--user", victim.name, "-n", "1",
                      "/bin/sh", "-c", probe], cwd="/tmp",
                     wrapper=["prlimit", "--nofile=1000:2000", "--stack=4194304:16777216", "sh",
                              "-c", 'umask 027; exec "$@"', "umask"])
    expect_status(r, 0)
    want = "nofile=1000 stack=4096 umask=0027"  # ulimit -s counts KiB
    check(want in r.out, f"expected '{want}' (the agent has nofile={soft_nofile(agent.proc.pid)})"
                         f"\n{r.describe()}")
    # More than the agent's hard limit: capped at it.
    r = c.run_launch(["--agents", agent.address, "--user", victim.name, "-n", "1",
                      "/bin/sh", "-c", probe], cwd="/tmp",
                     wrapper=["prlimit", "--nofile=19000:19000"])
    expect_status(r, 0)
    check("nofile=18000" in r.out, f"not capped at the agent's hard limit\n{r.describe()}")
    other = c.start_agent("n2", extra_args=agent_config(
        c, "none.yaml", "jobs:\n  propagate_limits: NONE\n"),
        wrapper=["prlimit", "--nofile=15000:18000"])
    r = c.run_launch(["--agents", other.address, "--user", victim.name, "-n", "1",
                      "/bin/sh", "-c", probe], cwd="/tmp",
                     wrapper=["prlimit", "--nofile=1000:2000"])
    expect_status(r, 0)
    own = soft_nofile(other.proc.pid)
    check(f"nofile={own}" in r.out, f"NONE: not the agent's own {own}\n{r.describe()}")
    c.check_clean(r)


def sighup_reloads_and_keeps_launches(c):
    """SIGHUP (logrotate's, an operator's reload) reopens the log file and re-reads the config
    while a launch runs: the log level and limits change, what needs a restart is said, a broken
    file changes nothing, and neither the agent nor the launch ends (it killed both before)."""
    victim = test_user("victim")
    log = os.path.join(c.dir, "agentd.log")
    conf = os.path.join(c.dir, "agent.yaml")
    with open(conf, "w") as f:
        f.write("log_level: info\nlimits:\n  max_connections: 1024\n")
    agent = c.start_agent("n1", extra_args=["--config", conf, "--log-file", log])
    args = ["--agents", agent.address, "--user", victim.name, "-n", "2", "-l",
            "/bin/sh", "-c", "sleep 3; echo done"]
    p = c.start_launch(args, cwd="/tmp")
    started = time.monotonic()
    check(wait_until(c.survivors, 20), "the ranks never started")
    os.rename(log, log + ".1")
    with open(conf, "w") as f:
        f.write("log_level: debug\nlimits:\n  max_connections: 77\n"
                "security:\n  handshake_timeout: 7\n")
    os.kill(agent_pid(agent), signal.SIGHUP)
    check(wait_until(lambda: os.path.exists(log) and "SIGHUP: log reopened" in open(log).read(),
                     10), f"no reopened log\n{agent.log()}")
    text = open(log).read()
    check("log level debug, limits.max_connections 77" in text, f"not re-read:\n{text}")
    check("security.handshake_timeout changed in" in text and "restarts" in text,
          f"a restart-only change was not said:\n{text}")
    with open(conf, "w") as f:
        f.write("log_level: loud\n")
    os.kill(agent_pid(agent), signal.SIGHUP)
    check(wait_until(lambda: "the configuration is unchanged" in open(log).read(), 10),
          f"a broken file was not refused:\n{open(log).read()}")
    r = c.finish_launch(p, args, started, 60)
    expect_status(r, 0)
    check(r.out.count("done") == 2, f"the launch did not run to its end\n{r.describe()}")
    check(agent.alive(), "SIGHUP ended the agent")
    # Debug lines since the reload: the new level is in force.
    check(" debug " in open(log).read(), "no debug line after the reload")
    c.check_clean(r)


CASES = [
    ("socket_dir_hides_launches", socket_dir_hides_launches),
    ("sockets_given_by_descriptor", sockets_given_by_descriptor),
    ("strays_end_with_the_launch_cgroup2", strays_end_with_the_launch("cgroup2")),
    ("strays_end_with_the_launch_cgroup1", strays_end_with_the_launch("cgroup1")),
    ("strays_end_with_the_launch_subreaper", strays_end_with_the_launch("subreaper")),
    ("ranks_inherit_limits_and_umask", ranks_inherit_limits_and_umask),
    ("sighup_reloads_and_keeps_launches", sighup_reloads_and_keeps_launches),
]

if __name__ == "__main__":
    run_cases(CASES)
