"""Safe on a shared node (issue 30), against real agents run as root: each case is an attack a
local user can try, made as that user does it. The job runs as the test's victim user; the
attacker is the job's own user (its own directory) or a second, hostile local user."""
import os
import stat
import subprocess
import time

from harness import (AGENTD, check, expect_status, run_cases, test_user, wait_until)

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


CASES = [
    ("socket_dir_hides_launches", socket_dir_hides_launches),
    ("sockets_given_by_descriptor", sockets_given_by_descriptor),
]

if __name__ == "__main__":
    run_cases(CASES)
