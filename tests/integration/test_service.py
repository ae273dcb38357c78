"""The agent as systemd runs it: the unit `meson install` puts in place passes `systemd-analyze
verify` against the installed files (the install bound over /usr/local in a mount namespace of
the test's own), and asks for what the agent needs (notify, its watchdog, a delegated cgroup,
unlimited locked memory); the agent speaks sd_notify's protocol to a service manager (the test's
own socket standing in for systemd): READY=1 once it listens, WATCHDOG=1 from its loop at half
WATCHDOG_USEC, STOPPING=1 at SIGTERM; its log lines carry journald's priorities when its stderr
is the journal; and the installed agent, started by the unit's own ExecStart after the edits an
operator must make, runs a job from the installed launcher. Every other test runs the agent
without a manager."""
import json
import os
import re
import shutil
import socket
import subprocess
import time

from harness import BUILD, CaseSkipped, check, expect_status, run_cases, test_user

def build_paths():
    """The build's prefix, sbindir and sysconfdir (absolute), as the installed unit names them."""
    p = subprocess.run(["meson", "introspect", BUILD, "--buildoptions"], stdout=subprocess.PIPE,
                       text=True, check=True, timeout=60)
    options = {o["name"]: o["value"] for o in json.loads(p.stdout)}
    prefix = options["prefix"]
    return prefix, [os.path.join(prefix, options[name]) for name in ("sbindir", "sysconfdir")]


def installed_unit(c, prefix):
    root = os.path.join(c.dir, "root")
    p = subprocess.run(["meson", "install", "-C", BUILD, "--no-rebuild", "--quiet",
                        "--destdir", root], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=300)
    check(p.returncode == 0, f"meson install failed:\n{p.stdout}")
    unit = os.path.join(root + prefix, "lib/systemd/system/lattice-agentd.service")
    check(os.path.isfile(unit), f"no unit installed at {unit}")
    return root, unit


def unit_verifies(c):
    if not shutil.which("systemd-analyze") or not shutil.which("unshare"):
        raise CaseSkipped("systemd-analyze or unshare missing (scripts/install-deps)")
    prefix, (sbindir, sysconfdir) = build_paths()
    if not sbindir.startswith(prefix + "/"):
        raise CaseSkipped(f"sbindir {sbindir} outside the prefix {prefix}: no one tree to bind")
    root, unit = installed_unit(c, prefix)
    with open(unit) as f:
        text = f.read()
    for line in ("Type=notify", "NotifyAccess=main", "Delegate=yes", "LimitMEMLOCK=infinity",
                 f"ExecStart={sbindir}/lattice-agentd --config {sysconfdir}/lattice/agent.yaml"):
        check(re.search(rf"^{re.escape(line)}$", text, re.M), f"unit lacks {line!r}:\n{text}")
    check(re.search(r"^WatchdogSec=\d+s$", text, re.M), text)
    check(os.path.isfile(root + prefix + "/share/man/man8/lattice-agentd.8"), "no man page")
    # The installed tree where the unit expects it, for systemd-analyze alone.
    p = subprocess.run(
        ["unshare", "--mount", "sh", "-c",
         f"mount --bind {root}{prefix} {prefix} && "
         f"systemd-analyze verify --man=no {prefix}/lib/systemd/system/lattice-agentd.service"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    check(p.returncode == 0 and not p.stdout.strip(),
          f"systemd-analyze verify (rc {p.returncode}):\n{p.stdout}")


def configs_kept(c):
    """meson install puts the example configurations in SYSCONFDIR/lattice, valid as they are,
    and never over an operator's file; the pristine ones stay under the documentation."""
    prefix, (_, sysconfdir) = build_paths()
    root, _ = installed_unit(c, prefix)
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "conf")
    for name in ("agent.yaml", "launcher.yaml"):
        with open(os.path.join(source, name)) as f:
            original = f.read()
        for where in (f"{root}{sysconfdir}/lattice", f"{root}{prefix}/share/doc/lattice/examples"):
            with open(os.path.join(where, name)) as f:
                check(f.read() == original, f"{where}/{name} is not conf/{name}")
    agent_yaml = f"{root}{sysconfdir}/lattice/agent.yaml"
    p = subprocess.run([os.path.join(BUILD, "lattice-agentd"), "--config", agent_yaml,
                        "--check-config"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=60)
    check(p.returncode == 0, f"the installed agent.yaml does not check:\n{p.stdout}")
    with open(agent_yaml, "a") as f:
        f.write("# the operator's own\n")
    installed_unit(c, prefix)
    with open(agent_yaml) as f:
        check(f.read().endswith("# the operator's own\n"), "meson install overwrote agent.yaml")


def notify_messages(manager, until, timeout=10):
    """sd_notify datagrams until `until(messages)` holds."""
    messages = []
    deadline = time.monotonic() + timeout
    while not until(messages):
        left = deadline - time.monotonic()
        check(left > 0, f"the service manager heard only {messages}")
        manager.settimeout(left)
        try:
            messages.append(manager.recv(4096).decode())
        except socket.timeout:
            continue
    return messages


def service_manager(c):
    """The socket a service manager listens on (NOTIFY_SOCKET): (its path, the socket)."""
    path = os.path.join(c.dir, "notify.sock")
    manager = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    manager.bind(path)
    return path, manager


def notify_protocol(c):
    path, manager = service_manager(c)
    with manager:
        agent = c.start_agent("n1", ["--listen", "127.0.0.1:0"],
                              env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000"})
        got = notify_messages(manager, lambda m: any("READY=1" in x for x in m))
        ready = next(x for x in got if "READY=1" in x)
        check(f"STATUS=node n1 listening on {agent.address}" in ready.splitlines(), ready)
        # At half of 0.4 s: several within a second and a half.
        got = notify_messages(manager, lambda m: sum(x == "WATCHDOG=1" for x in m) >= 3, 5)
        check(all(x == "WATCHDOG=1" for x in got), got)
        agent.stop()
        got = notify_messages(manager, lambda m: any("STOPPING=1" in x for x in m))
        stopping = next(x for x in got if "STOPPING=1" in x)
        check(re.search(r"^STATUS=signal 15: ending 0 launches$", stopping, re.M), stopping)


def no_watchdog_unasked(c):
    """Without WATCHDOG_USEC the agent says it is ready and sends nothing more."""
    path, manager = service_manager(c)
    with manager:
        c.start_agent("n1", ["--listen", "127.0.0.1:0"], env={"NOTIFY_SOCKET": path})
        notify_messages(manager, lambda m: any("READY=1" in x for x in m))
        manager.settimeout(1.0)
        try:
            extra = manager.recv(4096).decode()
        except socket.timeout:
            extra = None
        check(extra is None, f"unasked message {extra!r}")


def journal_priorities(c):
    """With stderr the journal (JOURNAL_STREAM names its device and inode, as systemd sets it),
    each line starts with its syslog priority and no time; elsewhere with an RFC 3339 time."""
    log = os.path.join(c.dir, "n1", "agent.log")
    os.makedirs(os.path.dirname(log))
    open(log, "w").close()  # the harness truncates it: same inode
    st = os.stat(log)
    agent = c.start_agent("n1", env={"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"})
    check(os.stat(log).st_ino == st.st_ino, "the log file was replaced")
    check(agent.wait_log(f"<6>agentd[n1] info agent: node n1 listening on {agent.address}"),
          agent.log())
    other = c.start_agent("n2", env={"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"})
    check(other.wait_log("agent: node n2 listening"), other.log())
    check(re.search(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z agentd\[n2\] info agent: node n2 "
                    r"listening", other.log_text(), re.M), other.log())
    check("<6>" not in other.log_text(), other.log())


def installed_agent_runs(c):
    """The installed agent as the unit starts it: its ExecStart, in the installed tree, with the
    runtime directory systemd makes (RuntimeDirectory=lattice, 0711) and a service manager's
    socket, after the edits an operator must make to the installed agent.yaml (the address to
    listen on and the key). It says READY=1, the installed launcher runs a job on it as an
    unprivileged user, and SIGTERM ends it cleanly."""
    if not shutil.which("unshare"):
        raise CaseSkipped("unshare missing (scripts/install-deps)")
    prefix, (sbindir, sysconfdir) = build_paths()
    if not sbindir.startswith(prefix + "/") or not sysconfdir.startswith(prefix + "/"):
        raise CaseSkipped(f"sbindir or sysconfdir outside the prefix {prefix}: no one tree to bind")
    root, unit = installed_unit(c, prefix)
    with open(unit) as f:
        exec_start = re.search(r"^ExecStart=(.*)$", f.read(), re.M).group(1)
    config = root + sysconfdir + "/lattice/agent.yaml"
    with open(config) as f:
        text = f.read()
    check("key_file: /etc/lattice/cluster.key" in text, f"the installed agent.yaml:\n{text}")
    with open(config, "w") as f:
        f.write("listen: 127.0.0.1:0\n" +
                text.replace("key_file: /etc/lattice/cluster.key", f"key_file: {c.key_file}"))
    path, manager = service_manager(c)
    log_path = os.path.join(c.dir, "installed-agent.log")
    with manager, open(log_path, "w") as log:
        # A private /run as systemd's RuntimeDirectory gives the unit its own /run/lattice.
        script = (f"mount --bind {root}{prefix} {prefix} && mount -t tmpfs tmpfs /run && "
                  f"mkdir -m 0711 /run/lattice && exec {exec_start}")
        agent = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                  script], stdout=log, stderr=subprocess.STDOUT,
                                 env={"NOTIFY_SOCKET": path, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
        try:
            got = notify_messages(manager, lambda m: any("READY=1" in x for x in m), 20)
            ready = next(x for x in got if "READY=1" in x)
            status = re.search(r"^STATUS=node (\S+) listening on (\S+)$", ready, re.M)
            check(status, f"READY=1 without the address: {ready}")
            victim = test_user("victim")
            p = subprocess.run([root + prefix + "/bin/lattice", "launch", "--key-file", c.key_file,
                                "--agents", f"{status.group(1)}={status.group(2)}",
                                "--user", victim.name, "-n", "2", "/usr/bin/id", "-un"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=60, cwd="/tmp")
            check(p.returncode == 0 and p.stdout.split() == [victim.name] * 2,
                  f"the installed launcher's job: exit {p.returncode}\n{p.stdout}{p.stderr}")
            agent.terminate()
            notify_messages(manager, lambda m: any("STOPPING=1" in x for x in m))
            check(agent.wait(15) == 0, f"the installed agent exited {agent.returncode}")
        finally:
            if agent.poll() is None:
                agent.kill()
                agent.wait()
    with open(log_path) as f:
        check("listening on 127.0.0.1:" in f.read(), f"the installed agent's log:\n{log_path}")


CASES = [
    ("unit_verifies", unit_verifies),
    ("configs_kept", configs_kept),
    ("notify_protocol", notify_protocol),
    ("no_watchdog_unasked", no_watchdog_unasked),
    ("journal_priorities", journal_priorities),
    ("installed_agent_runs", installed_agent_runs),
]

if __name__ == "__main__":
    run_cases(CASES)
