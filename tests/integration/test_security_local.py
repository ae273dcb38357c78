"""The local side of security, against real agents run as root (as CI runs): jobs run as their
user (uid, gid, groups, HOME from passwd; the working directory entered as them), ranks never see the agent's environment, root jobs get
no interpreter or loader hooks unless the operator allows them, reserved variables are refused, the launch's PMI socket and PMI_PORT admit
only the job's user, the admin socket only root, one agent per PMI socket directory, and key
files are checked before anything listens."""
import glob
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import time

from harness import (AGENTD, BUILD, LAUNCH_TIMEOUT, as_user, check, expect_status, processes_with_env, run_cases,
                     wait_until)

NOBODY = 65534
STRANGER = 12345  # a uid that is neither root nor the job's user


def env_of(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        return dict(e.split("=", 1) for e in f.read().decode(errors="replace").split("\0") if "=" in e)


def rank_pid(c, timeout=20):
    check(wait_until(lambda: c.survivors(), timeout), "the rank never started")
    return c.survivors()[0]


def probe(path_or_addr, line):
    """Connects (Unix path or (host, port)), sends `line`, returns what came back: 'closed ...'
    when the peer closed (with or without a reset), 'open, got ...' when 3 s passed, 'refused:
    ...' when the connect itself failed."""
    family = socket.AF_UNIX if isinstance(path_or_addr, str) else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect(path_or_addr)
    except OSError as e:
        return f"refused: {e.strerror}"
    try:
        s.sendall(line)
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return f"closed after {data!r}"
            data += chunk
    except socket.timeout:
        return f"open, got {data!r}"
    except OSError as e:
        return f"closed: {e.strerror}"
    finally:
        s.close()


def open_case_dir(c):
    """Lets other users through the case's directory (mkdtemp made it 0700), as they may pass
    through /run/lattice: only the launch's own directory and sockets should stop them."""
    os.chmod(c.dir, 0o711)


def agent_env_stays_out(c):
    agent = c.start_agent("n1", env={"AGENT_SECRET_TOKEN": "s3cret", "AGENT_ONLY": "1"})
    r = c.run_launch(["--agents", agent.address, "--user", "nobody", "-n", "1",
                      "--env", "LD_LIBRARY_PATH=/opt/x", "/usr/bin/env"], cwd="/tmp")
    expect_status(r, 0)
    check("AGENT_SECRET_TOKEN" not in r.out and "AGENT_ONLY" not in r.out,
          f"the agent's environment reached a rank\n{r.describe()}")
    for line in ("HOME=/nonexistent", "USER=nobody", "LOGNAME=nobody", "LD_LIBRARY_PATH=/opt/x"):
        check(line in r.out.splitlines(), f"the rank lacks {line}\n{r.describe()}")
    # A root job may not be handed loader variables, nor anyone the launch's own names.
    r = c.run_launch(["--agents", agent.address, "-n", "1", "--env", "LD_PRELOAD=/tmp/evil.so",
                      "/bin/true"])
    check(r.code not in (0, None) and "LD_PRELOAD may not be set for a job running as root"
          in r.err, f"LD_PRELOAD for a root job was not refused\n{r.describe()}")
    r = c.run_launch(["--agents", agent.address, "-n", "1", "--env", "LATTICE_AGENT_PID=1",
                      "/bin/true"])
    check(r.code not in (0, None) and "reserved" in r.err,
          f"a reserved variable was not refused\n{r.describe()}")
    c.check_clean(r)


SHELL_HOOK = "#!/bin/sh\nid -u > {marker}.bash\n"
PYTHON_HOOK = "open({marker!r} + '.python', 'w').write('hooked')\n"
PERL_HOOK = "package strict; open(my $f, '>', '{marker}.perl'); print $f 'hooked'; 1;\n"


def root_jobs_get_no_hooks(c):
    """Whoever sets a root job's environment does not choose code for it to run: BASH_ENV, ENV,
    PYTHONPATH and PERL5LIB (planted files a bash script, a Python program and a Perl one
    would load) are refused when the launch names them and left out, with a warning, when
    --export takes them from the launcher's environment; an agent whose operator allows them
    passes them. Before, all four reached the root job and ran the planted code."""
    plant = os.path.join(c.dir, "planted")
    os.mkdir(plant)
    marker = os.path.join(c.dir, "hooked")
    files = {"hook.sh": SHELL_HOOK, "sitecustomize.py": PYTHON_HOOK, "strict.pm": PERL_HOOK}
    for name, text in files.items():
        with open(os.path.join(plant, name), "w") as f:
            f.write(text.format(marker=marker))
    hooks = {"BASH_ENV": os.path.join(plant, "hook.sh"), "ENV": os.path.join(plant, "hook.sh"),
             "PYTHONPATH": plant, "PERL5LIB": plant}
    # Each program would load its hook; `env` shows what reached the rank.
    job = ["/bin/sh", "-c", "bash -c true; python3 -c pass; perl -Mstrict -e 1; env"]
    agent = c.start_agent("n1")

    def hooked():
        return sorted(os.path.basename(p) for p in glob.glob(marker + ".*"))

    for name, value in hooks.items():
        r = c.run_launch(["--agents", agent.address, "-n", "1", "--env", f"{name}={value}", *job])
        check(r.code not in (0, None) and
              f"environment variable {name} may not be set for a job running as root" in r.err,
              f"{name} given to a root job was not refused\n{r.describe()}")
    r = c.run_launch(["--agents", agent.address, "-n", "1", "--export", f"PYTHONPATH={plant}",
                      *job])
    check(r.code not in (0, None) and "PYTHONPATH may not be set" in r.err,
          f"--export PYTHONPATH=... for a root job was not refused\n{r.describe()}")
    check(not hooked(), f"a refused launch ran hooks: {hooked()}")

    r = c.run_launch(["--agents", agent.address, "-n", "1", *job], env=hooks)
    expect_status(r, 0)
    got = {line.split("=", 1)[0] for line in r.out.splitlines() if "=" in line}
    check(not got & set(hooks), f"{sorted(got & set(hooks))} reached a root job\n{r.describe()}")
    check(not hooked(), f"the root job ran hooks: {hooked()}\n{r.describe()}")
    warning = [l for l in r.err.splitlines() if "left out of the root job's environment" in l]
    check(len(warning) == 1 and all(name in warning[0] for name in hooks),
          f"no single warning naming the hooks left out\n{r.describe()}")
    check("PYTHONPATH" in agent.log(), f"the agent did not log what it left out\n{agent.log()}")
    # A user's job keeps them (nobody cannot write the markers: only env's output counts).
    r = c.run_launch(["--agents", agent.address, "--user", "nobody", "-n", "1", "/usr/bin/env"],
                     env=hooks, cwd="/tmp")
    expect_status(r, 0)
    for name, value in hooks.items():
        check(f"{name}={value}" in r.out.splitlines(), f"a user's job lost {name}\n{r.describe()}")
    check("left out" not in r.err, f"a warning for a user's job\n{r.describe()}")

    # The operator allows them: named and exported, they reach the root job, which runs them.
    config = os.path.join(c.dir, "allow-hooks.yaml")
    with open(config, "w") as f:
        f.write("security:\n  allow_root_job_env: [BASH_ENV, ENV, 'PYTHON*', PERL5LIB]\n")
    allowing = c.start_agent("n2", ["--config", config])
    r = c.run_launch(["--agents", allowing.address, "-n", "1",
                      *[a for name, value in hooks.items() for a in ("--env", f"{name}={value}")],
                      *job])
    expect_status(r, 0)
    for name, value in hooks.items():
        check(f"{name}={value}" in r.out.splitlines(), f"allowed {name} did not arrive\n{r.describe()}")
    check(hooked() == ["hooked.bash", "hooked.perl", "hooked.python"],
          f"the allowed hooks did not all run: {hooked()}\n{r.describe()}")
    for path in glob.glob(marker + ".*"):
        os.unlink(path)
    r = c.run_launch(["--agents", allowing.address, "-n", "1", *job], env=hooks)
    expect_status(r, 0)
    # (The case's own environment may hold other hooks, GIT_* say: those are still left out.)
    warned = " ".join(l for l in r.err.splitlines() if "left out" in l)
    check(not any(name in warned for name in hooks) and
          all(f"{n}={v}" in r.out.splitlines() for n, v in hooks.items()),
          f"allowed hooks were left out of the exported environment\n{r.describe()}")
    c.check_clean(r)


def ranks_run_as_their_user(c):
    agent = c.start_agent("n1")
    r = c.run_launch(["--agents", agent.address, "--user", "nobody", "-n", "2", "-l", "-v",
                      "/bin/sh", "-c", "echo uid=$(id -u) gid=$(id -g) groups=$(id -G)"],
                     cwd="/tmp")
    expect_status(r, 0)
    for rank in (0, 1):
        want = f"{rank}: uid={NOBODY} gid={NOBODY} groups={NOBODY}"
        check(want in r.out.splitlines(), f"missing '{want}'\n{r.describe()}")
    # The root agent looked nobody up once, before it started the ranks; -v times it.
    timing = [l for l in r.err.splitlines() if l.startswith("lattice: timing:")]
    check(timing and re.search(r"fan-out [\d.]+ ms, user looked up [\d.]+ ms, spawn", timing[0]),
          f"no user lookup in the timing line\n{r.describe()}")
    own = c.run_launch(["--agents", agent.address, "-n", "1", "-v", "/bin/true"])
    expect_status(own, 0)
    check("user looked up" not in own.err, f"a lookup for the agent's own user\n{own.describe()}")
    c.check_clean(r)


def workdir_entered_as_the_user(c):
    """The agent becomes the job's user in each rank's child before it enters the working
    directory: one that only root may enter stops the launch before any rank runs, named."""
    agent = c.start_agent("n1")
    private = os.path.join(c.dir, "root-only")
    os.mkdir(private, 0o700)
    r = c.run_launch(["--agents", agent.address, "--user", "nobody", "-n", "2", "--chdir", private,
                      "/bin/sh", "-c", "echo ran"], cwd="/tmp")
    check(r.code not in (0, None), f"a directory nobody cannot enter was entered\n{r.describe()}")
    check("ran" not in r.out, f"a rank ran\n{r.describe()}")
    check(f"cannot spawn rank 0 on n1: cannot change to directory '{private}': permission denied"
          in r.err, f"the refusal is not named\n{r.describe()}")
    c.check_clean(r)


SLOW_DESCRIBE = """#!/bin/sh
# lattice-rank-exec, but its passwd lookup hangs while the flag file exists (a stuck sssd/LDAP).
for a in "$@"; do
  if [ "$a" = --describe ] && [ -e {flag} ]; then echo $$ > {pid_file}; exec sleep 120; fi
done
exec {helper} "$@"
"""


def interrupted_during_user_lookup(c):
    """Ctrl-C while a root agent is still looking the job's user up (NSS stuck): the ranks never
    start, the lookup is dropped at once, and the job ends as interrupted (130). Before, the
    signal found no rank to reach and was lost; the ranks started when the lookup returned."""
    bindir = os.path.join(c.dir, "bin")
    os.mkdir(bindir)
    flag, pid_file = os.path.join(c.dir, "slow"), os.path.join(c.dir, "describe.pid")
    shutil.copy(AGENTD, bindir)
    helper = os.path.join(bindir, "lattice-rank-exec")
    with open(helper, "w") as f:
        f.write(SLOW_DESCRIBE.format(flag=flag, pid_file=pid_file,
                                     helper=os.path.join(BUILD, "lattice-rank-exec")))
    os.chmod(helper, 0o755)
    open(flag, "w").close()
    agent = c.start_agent("n1", binary=os.path.join(bindir, "lattice-agentd"))
    marker = os.path.join(c.dir, "ran")
    args = ["--agents", agent.address, "--user", "nobody", "-n", "2",
            "/bin/sh", "-c", f"echo ran >> {marker}"]
    started = time.monotonic()
    p = c.start_launch(args, cwd="/tmp")
    check(wait_until(lambda: os.path.exists(pid_file) and open(pid_file).read().strip(), 10),
          f"the agent never looked the user up\n{agent.log()}")
    describe_pid = int(open(pid_file).read())
    p.send_signal(signal.SIGINT)
    r = c.finish_launch(p, args, started, LAUNCH_TIMEOUT)
    expect_status(r, 130)
    check("interrupted by signal 2 before the ranks on n1 started" in r.err,
          f"the interrupt is not the reason\n{r.describe()}")
    check("exit statuses: ranks 0-1: not started" in r.err,
          f"the ranks are not reported as never started\n{r.describe()}")
    check(wait_until(lambda: not os.path.exists(f"/proc/{describe_pid}"), 10),
          f"the lookup helper still runs after the launch ended\n{agent.log()}")
    check(not os.path.exists(marker), "a rank started after the interrupt")
    c.check_clean(r)
    # A launcher lost during the lookup (killed) ends the launch there just as well.
    os.unlink(pid_file)
    p = c.start_launch(args, cwd="/tmp")
    check(wait_until(lambda: os.path.exists(pid_file) and open(pid_file).read().strip(), 10),
          f"the agent never looked the user up\n{agent.log()}")
    describe_pid = int(open(pid_file).read())
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    check(wait_until(lambda: not os.path.exists(f"/proc/{describe_pid}"), 10),
          f"the lookup helper outlived its launcher\n{agent.log()}")
    check(not os.path.exists(marker), "a rank started after the launcher was lost")
    c.check_clean()
    # The agent serves the next launch once lookups answer again.
    os.unlink(flag)
    r = c.run_launch(["--agents", agent.address, "--user", "nobody", "-n", "1", "/bin/true"],
                     cwd="/tmp")
    expect_status(r, 0)


def pmi_socket_is_the_users(c):
    open_case_dir(c)
    agent = c.start_agent("n1")
    args = ["--agents", agent.address, "--user", "nobody", "-n", "1", "/bin/sleep", "30"]
    p = c.start_launch(args, cwd="/tmp")
    started = time.monotonic()
    pattern = os.path.join(agent.dir, "lattice-*", "pmi.sock")
    check(wait_until(lambda: glob.glob(pattern), 10), f"no PMI socket\n{agent.log()}")
    path = glob.glob(pattern)[0]
    directory = os.path.dirname(path)
    st, dst = os.stat(path), os.stat(directory)
    check(st.st_uid == NOBODY and stat.S_IMODE(st.st_mode) == 0o600,
          f"socket is uid {st.st_uid} mode {oct(stat.S_IMODE(st.st_mode))}, not nobody 0600")
    check(dst.st_uid == NOBODY and stat.S_IMODE(dst.st_mode) == 0o700,
          f"directory is uid {dst.st_uid} mode {oct(stat.S_IMODE(dst.st_mode))}, not nobody 0700")
    # Another user cannot even reach the socket...
    out = as_user(STRANGER, lambda: probe(path, b"cmd=initack pmiid=0\n"))
    check(out.startswith("refused"), f"uid {STRANGER} reached the socket: {out}")
    # ...and if someone loosens the directory and the socket, the agent still refuses by the
    # peer's credentials.
    os.chmod(directory, 0o755)
    os.chmod(path, 0o666)
    out = as_user(STRANGER, lambda: probe(path, b"cmd=initack pmiid=0\n"))
    check(out.startswith("closed"), f"uid {STRANGER} was served: {out}")
    check(agent.wait_log(f"refused a PMI connection on the socket from uid {STRANGER}"),
          f"no refusal logged\n{agent.log()}")
    # The job's own user is served.
    out = as_user(NOBODY, lambda: probe(path, b"cmd=initack pmiid=0\n"))
    check("cmd=set rank=0" in out, f"the job's user was not served: {out}")
    os.killpg(p.pid, signal.SIGTERM)
    r = c.finish_launch(p, args, started, 30)
    check(not os.path.exists(directory), "the launch's directory outlived it")
    c.check_clean(r)


def pmi_port_is_the_users(c):
    agent = c.start_agent("n1")
    args = ["--agents", agent.address, "--user", "nobody", "--pmi-port", "-n", "1",
            "/bin/sleep", "30"]
    p = c.start_launch(args, cwd="/tmp")
    started = time.monotonic()
    env = env_of(rank_pid(c))
    host, port = env["PMI_PORT"].rsplit(":", 1)
    pmi_id = env["PMI_ID"]
    check(pmi_id != "0" and pmi_id != env["PMI_RANK"], f"PMI_ID {pmi_id} is the rank number")
    line = f"cmd=initack pmiid={pmi_id}\n".encode()
    # The real id, stolen from the rank's environment, is worthless from another uid.
    out = as_user(STRANGER, lambda: probe((host, int(port)), line))
    check(out.startswith("closed"), f"uid {STRANGER} was served on the port: {out}")
    check(agent.wait_log(f"refused a PMI connection on the port from uid {STRANGER}"),
          f"no refusal logged\n{agent.log()}")
    # The job's user with a guessed id is dropped, and the job goes on.
    out = as_user(NOBODY, lambda: probe((host, int(port)), b"cmd=initack pmiid=0\n"))
    check(out.startswith("closed"), f"a guessed PMI_ID was served: {out}")
    check(p.poll() is None, "a bad PMI_ID on the port ended the job")
    # The real id works once.
    out = as_user(NOBODY, lambda: probe((host, int(port)), line))
    check("cmd=set rank=0" in out, f"the rank's own id was refused: {out}")
    out = as_user(NOBODY, lambda: probe((host, int(port)), line))
    check("cmd=set rank=0" not in out, f"a PMI_ID worked twice: {out}")
    os.killpg(p.pid, signal.SIGTERM)
    r = c.finish_launch(p, args, started, 30)
    c.check_clean(r)


def root_jobs_need_permission(c):
    agent = c.start_agent("n1", allow_root=False)
    r = c.run_launch(["--agents", agent.address, "-n", "1", "/bin/true"])
    check(r.code not in (0, None), f"a root job ran without allow_root_jobs\n{r.describe()}")
    check("does not run jobs as root" in r.err and "n1" in r.err,
          f"the refusal does not say why and where\n{r.describe()}")
    # A node that refused started nothing, and the summary says so rather than "no exit status".
    check("exit statuses: rank 0: not started" in r.err,
          f"the refused rank is not 'not started'\n{r.describe()}")
    check(agent.wait_log("does not run jobs as root"), f"no refusal logged\n{agent.log()}")
    r = c.run_launch(["--agents", agent.address, "--user", "nobody", "-n", "1", "/bin/true"],
                     cwd="/tmp")
    expect_status(r, 0)
    c.check_clean(r)


def one_agent_per_socket_dir(c):
    first = c.start_agent("n1")
    p = subprocess.run([AGENTD, "--listen", "127.0.0.1:0", "--node-id", "n2", "--key-file",
                        c.key_file, "--admin-socket", os.path.join(c.dir, "second.sock"),
                        "--pmi-socket-dir", first.dir], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=30)
    check(p.returncode != 0, f"a second agent started on the same PMI socket dir: {p.stdout}")
    check(f"pid {first.proc.pid}" in p.stdout, f"the refusal does not name the holder: {p.stdout}")
    check(first.alive(), "the first agent died")


def admin_socket_is_roots(c):
    open_case_dir(c)
    agent = c.start_agent("n1")
    os.chmod(agent.admin_socket, 0o666)  # as if someone loosened it
    out = as_user(STRANGER, lambda: probe(agent.admin_socket, b"status\n"))
    check(out.startswith("closed"), f"uid {STRANGER} got an answer: {out}")
    check(agent.wait_log(f"refused an admin client (uid {STRANGER})"),
          f"no refusal logged\n{agent.log()}")
    out = probe(agent.admin_socket, b"status\n")
    check("n1" in out, f"root got no status: {out}")


def key_files_are_checked(c):
    def start(*extra):
        return subprocess.run([AGENTD, "--listen", "127.0.0.1:0", "--node-id", "k",
                               "--admin-socket", os.path.join(c.dir, "k.sock"),
                               "--pmi-socket-dir", os.path.join(c.dir, "k"), *extra],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=30)
    p = start()
    check(p.returncode != 0 and "no cluster key" in p.stdout, f"started without a key: {p.stdout}")
    loose = c.make_key("loose.key")
    os.chmod(loose, 0o644)
    p = start("--key-file", loose)
    check(p.returncode != 0 and "chmod 600" in p.stdout,
          f"started with a world-readable key: {p.stdout}")
    p = subprocess.run([AGENTD, "--generate-key", c.key_file], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=30)
    check(p.returncode != 0 and "refusing to overwrite" in p.stdout,
          f"--generate-key overwrote a key: {p.stdout}")


if __name__ == "__main__":
    run_cases([
        ("agent_env_stays_out", agent_env_stays_out),
        ("root_jobs_get_no_hooks", root_jobs_get_no_hooks),
        ("ranks_run_as_their_user", ranks_run_as_their_user),
        ("workdir_entered_as_the_user", workdir_entered_as_the_user),
        ("interrupted_during_user_lookup", interrupted_during_user_lookup),
        ("pmi_socket_is_the_users", pmi_socket_is_the_users),
        ("pmi_port_is_the_users", pmi_port_is_the_users),
        ("root_jobs_need_permission", root_jobs_need_permission),
        ("one_agent_per_socket_dir", one_agent_per_socket_dir),
        ("admin_socket_is_roots", admin_socket_is_roots),
        ("key_files_are_checked", key_files_are_checked),
    ])
