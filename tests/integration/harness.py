"""Integration-test harness: real `lattice` launches and real `lattice-agentd` daemons, each case in
a fresh temp dir, with a per-case tag that finds every process the case left behind.

Python 3 standard library only. Environment: LATTICE_BUILD_DIR (binaries at its root) and
LATTICE_PROGRAMS (the built tests/programs). A test file lists its cases and calls run_cases().
"""
import glob
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import uuid

BUILD = os.path.abspath(os.environ["LATTICE_BUILD_DIR"]) if os.environ.get("LATTICE_BUILD_DIR") else ""
PROGRAMS = os.environ.get("LATTICE_PROGRAMS", os.path.join(BUILD, "tests", "programs"))
SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LATTICE = os.path.join(BUILD, "lattice")
SRUN = os.path.join(BUILD, "lattice-srun")  # srun's front: execs LATTICE launch
AGENTD = os.path.join(BUILD, "lattice-agentd")
ROGUE = os.path.join(BUILD, "tests", "tools", "lattice-test-rogue")
# Built with ASan+UBSan: memory figures are the sanitizer's (quarantine, shadow), not ours.
SANITIZED = os.environ.get("LATTICE_SANITIZED") == "1"

# Cap on one launch: failures must end the job on their own; this only keeps a hung launch from
# hanging the suite (meson's own timeout is 300 s per file).
LAUNCH_TIMEOUT = 60
# An agent writes its address right after binding; anything slower than this is a failure.
AGENT_READY_TIMEOUT = 15
# Killing a rank is asynchronous: its exit may trail the launcher's by milliseconds, or by seconds
# when the machine is loaded (2 cores shared with builds); a real survivor lives far longer.
SURVIVOR_GRACE = 10.0
POLL_INTERVAL = 0.05


class CaseFailure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CaseFailure(message)


def prog(name):
    return os.path.join(PROGRAMS, name)


def tail(text, lines=15):
    return "\n".join(text.rstrip().splitlines()[-lines:])


class LaunchResult:
    """What a launcher did; `command` names it in describe() (another launcher: the Node client)."""

    def __init__(self, args, code, out, err, seconds, command="lattice launch"):
        self.args, self.code, self.out, self.err, self.seconds = args, code, out, err, seconds
        self.command = command

    def describe(self):
        status = "timed out" if self.code is None else f"exit {self.code}"
        return (f"`{self.command} {' '.join(self.args)}`: {status} after {self.seconds:.1f} s\n"
                f"--- stdout (tail)\n{tail(self.out)}\n--- stderr (tail)\n{tail(self.err)}")

    def __iter__(self):  # (exit code, stdout, stderr, seconds), as the brief's run_launch returns
        return iter((self.code, self.out, self.err, self.seconds))


def processes_with_env(entry):
    """Pids of live processes whose environment holds `entry` (e.g. b"K=V"); zombies have none."""
    needle = entry.encode() + b"\0"
    found = []
    for path in glob.glob("/proc/[0-9]*"):
        pid = int(path[6:])
        if pid == os.getpid():
            continue
        try:
            with open(f"{path}/environ", "rb") as f:
                data = f.read()
        except OSError:
            continue
        if (b"\0" + data).find(b"\0" + needle) >= 0:
            found.append(pid)
    return found


def children_of(pid):
    """Pids of the live children of `pid` (none once it is gone)."""
    out = []
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(path) as f:
                out += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return out


def wait_ranks(agents, count, predicate, timeout=30):
    """True once `count` ranks across `agents` satisfy predicate(row of Agent.ranks()): a wait on
    the ranks' PMI state (past a fence, waiting in one) instead of a guess at how long it takes."""
    return wait_until(lambda: sum(1 for a in agents for r in a.ranks() if predicate(r)) >= count,
                      timeout)


def past_init(rank):
    """A rank (a row of Agent.ranks()) that has completed MPI_Init's fence."""
    return rank["fence"] >= 1


def in_fence(rank):
    """A rank (a row of Agent.ranks()) that has entered a fence and waits for its end."""
    return rank["state"] == "in_fence"


def writers_blocked(pattern, count, timeout=60):
    """True once `count` live processes whose command line holds `pattern` sleep in a pipe write:
    their output has backed up all the way (nobody reads the launcher's stdout)."""
    def blocked():
        n = 0
        for path in glob.glob("/proc/[0-9]*"):
            try:
                with open(f"{path}/cmdline", "rb") as f:
                    if pattern.encode() not in f.read().replace(b"\0", b" "):
                        continue
                with open(f"{path}/wchan") as f:
                    n += f.read().strip().endswith("pipe_write")  # anon_pipe_write on 6.x
            except OSError:
                pass
        return n >= count
    return wait_until(blocked, timeout)


def wait_marks(directory, count, timeout=30):
    """True once `directory` holds `count` files: ranks `touch` one there when they are ready
    (e.g. once their signal trap is set), so a test need not guess when that is."""
    os.makedirs(directory, exist_ok=True)
    return wait_until(lambda: len(os.listdir(directory)) >= count, timeout)


def wait_until(predicate, timeout):
    """Polls predicate until it is truthy or timeout passes; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(POLL_INTERVAL)


class Agent:
    """A `lattice-agentd` started by the test, on loopback port 0, in its own directory."""

    def __init__(self, node_id, directory, extra_args=(), env=None, key_file=None,
                 allow_root=True, binary=AGENTD, wrapper=()):
        self.node_id, self.dir = node_id, directory
        os.makedirs(directory, exist_ok=True)
        self.admin_socket = os.path.join(directory, "admin.sock")
        self.log_path = os.path.join(directory, "agent.log")
        r, w = os.pipe()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [*wrapper, binary, "--listen", "127.0.0.1:0", "--node-id", node_id,
                 "--admin-socket", self.admin_socket, "--pmi-socket-dir", directory,
                 "--ready-fd", str(w),
                 *(["--key-file", key_file] if key_file else []),
                 *(["--allow-root-jobs"] if allow_root else []), *extra_args],
                pass_fds=[w], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=env, start_new_session=True)
        os.close(w)
        try:
            self.address = self._read_ready(r)
        finally:
            os.close(r)

    def _read_ready(self, fd):
        data = b""
        deadline = time.monotonic() + AGENT_READY_TIMEOUT
        while not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise CaseFailure(f"agent {self.node_id} wrote no address within "
                                  f"{AGENT_READY_TIMEOUT} s\n{self.log()}")
            chunk = os.read(fd, 256)
            if not chunk:
                raise CaseFailure(f"agent {self.node_id} closed its ready fd without an address "
                                  f"(exit {self.proc.poll()})\n{self.log()}")
            data += chunk
        address = data.decode().strip()
        check(":" in address, f"agent {self.node_id} ready line is not HOST:PORT: {address!r}")
        return address

    def log(self):
        return "--- agent log (tail)\n" + tail(self.log_text())

    def log_text(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def wait_log(self, needle, timeout=10):
        """True once `needle` appears in the agent's log."""
        return wait_until(lambda: needle in self.log_text(), timeout)

    def host_port(self):
        host, port = self.address.rsplit(":", 1)
        return host, int(port)

    def stats(self):
        """(RSS in KiB, open fds) of the agent process."""
        return self.memory("VmRSS"), len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def memory(self, field):
        """A /proc/PID/status figure in KiB: VmRSS (touched) or VmSize (reserved, which shows
        a buffer sized from a header before any byte is written to it)."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith(field + ":"))

    def alive(self):
        return self.proc.poll() is None

    def ranks(self):
        """This agent's ranks as `lattice admin status` lists them: dicts with rank, pid,
        state (PMI), last (command) and fence (the last fence epoch it completed)."""
        p = subprocess.run([LATTICE, "admin", "status", "--socket", self.admin_socket],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=30)
        rows = []
        for line in p.stdout.splitlines():
            f = line.split()
            if len(f) >= 6 and f[0].isdigit() and f[-1].isdigit():
                rows.append({"rank": int(f[0]), "pid": f[1], "state": f[2],
                             "last": " ".join(f[3:-2]), "fence": int(f[-1])})
        return rows

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


class Case:
    """What one test case owns: a fresh temp dir, a tag for its ranks, the agents it started."""

    def __init__(self, name):
        self.name = name
        self.dir = tempfile.mkdtemp(prefix="lattice-it-")
        self.tag = uuid.uuid4().hex
        self.agents = []
        self.launchers = []
        # The case's cluster key: its agents and its launchers (LATTICE_KEY_FILE) share it.
        self.key_file = self.make_key("cluster.key")

    def make_key(self, name):
        path = os.path.join(self.dir, name)
        subprocess.run([AGENTD, "--generate-key", path], check=True, stdout=subprocess.DEVNULL)
        return path

    def launch_command(self, args):
        return [LATTICE, "launch", "--env", f"LT_TEST_TAG={self.tag}", *args]

    def case_env(self):
        # Local mode makes its agents' directory under TMPDIR: with TMPDIR inside the case's dir,
        # every launcher and agent of the case carries it, and leftovers (sockets, directories,
        # processes) are visible to checks. Ranks start from a clean environment; they carry
        # the case's tag (--env LT_TEST_TAG) instead.
        return dict(os.environ, TMPDIR=self.dir, LATTICE_KEY_FILE=self.key_file)

    def start_launch(self, args, cwd=None, env=None, stdin=subprocess.DEVNULL, wrapper=()):
        """Starts `lattice launch` in the background (its own process group); returns the Popen.
        `cwd` is where the ranks start (launches for other users pass one they may enter);
        `env` adds variables to the launcher's environment; `stdin` is the launcher's (a file,
        or subprocess.PIPE to give text through finish_launch); `wrapper` runs it (e.g. prlimit)."""
        p = subprocess.Popen([*wrapper, *self.launch_command(args)], stdin=stdin,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(self.case_env(), **(env or {})), start_new_session=True,
                             cwd=cwd)
        self.launchers.append(p)
        return p

    def finish_launch(self, p, args, started, timeout, input=None):
        try:
            out, err = p.communicate(input=input, timeout=timeout)
            code = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            code = None
        return LaunchResult(args, code, out, err, time.monotonic() - started)

    def run_launch(self, args, timeout=LAUNCH_TIMEOUT, cwd=None, env=None, input=None, wrapper=()):
        """Runs `lattice launch ARGS` to its end: LaunchResult (code None when it timed out).
        `input`: text for the launcher's stdin (else /dev/null)."""
        started = time.monotonic()
        stdin = subprocess.PIPE if input is not None else subprocess.DEVNULL
        return self.finish_launch(self.start_launch(args, cwd, env, stdin, wrapper), args, started,
                                  timeout, input)

    def start_agent(self, node_id, extra_args=(), key_file=None, allow_root=True, env=None,
                    binary=AGENTD, wrapper=()):
        """A standalone agent with the case's key (or `key_file`), allowed root jobs (tests run
        as root) unless allow_root is False; `env` adds to its environment; `binary`: a copy of
        lattice-agentd beside test doubles of its helpers (it runs the helpers beside itself);
        `wrapper` runs it (e.g. prlimit)."""
        agent = Agent(node_id, os.path.join(self.dir, node_id), extra_args,
                      dict(self.case_env(), **(env or {})), key_file or self.key_file, allow_root,
                      binary, wrapper)
        self.agents.append(agent)
        return agent

    def survivors(self):
        return processes_with_env(f"LT_TEST_TAG={self.tag}")

    def leftovers(self):
        """Processes of this case other than the agents it started: launchers and local-mode
        agents (found by TMPDIR; ranks are found by their tag, see survivors())."""
        mine = {a.proc.pid for a in self.agents}
        mine |= {child for pid in mine for child in children_of(pid)}  # behind a wrapper (strace)
        return [p for p in processes_with_env(f"TMPDIR={self.dir}") if p not in mine]

    def stale_sockets(self):
        """Per-launch PMI directories (lattice-<id>/pmi.sock) left behind."""
        return [p for p in glob.glob(os.path.join(self.dir, "**", "lattice-*"), recursive=True)
                if os.path.isdir(p)]

    def check_clean(self, result=None):
        """No rank of this case alive (after a short grace), no PMI socket file left behind."""
        context = f"\n{result.describe()}" if result else ""
        wait_until(lambda: not self.survivors(), SURVIVOR_GRACE)
        left = self.survivors()
        check(not left, f"ranks still running after the launch: {describe_pids(left)}{context}")
        wait_until(lambda: not self.leftovers(), SURVIVOR_GRACE)
        stray = self.leftovers()
        check(not stray, f"launcher/agent processes left behind: {describe_pids(stray)}{context}")
        # The agent removes a launch's directory once its ranks are reaped, which may trail
        # the launcher's exit when the launcher's link was what broke.
        wait_until(lambda: not self.stale_sockets(), SURVIVOR_GRACE)
        check(not self.stale_sockets(), f"PMI socket directories left behind: {self.stale_sockets()}")

    def cleanup(self):
        for p in self.launchers:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for pid in self.survivors() + self.leftovers():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for agent in self.agents:
            agent.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def describe_pids(pids):
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            out.append(f"{pid} {argv}")
        except OSError:
            out.append(str(pid))
    return out


def as_user(uid, fn, gid=None):
    """Runs fn() in a forked child that has become uid (gid = `gid`, default uid; no groups) and
    returns what it returned (a short string) — for probes "from another user"."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(uid if gid is None else gid)
            os.setuid(uid)
            out = str(fn())
        except BaseException as e:  # the parent reports it
            out = f"error: {type(e).__name__}: {e}"
        os.write(w, out.encode()[:4096])
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read().decode(errors="replace")
    os.waitpid(pid, 0)
    return data


class TestUser:
    """A local user made for the tests with useradd (kept between runs: making one is slow and
    they own nothing but an empty home): name, uid, gid, home."""

    def __init__(self, name):
        import pwd
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            subprocess.run(["useradd", "--create-home", "--user-group", "--shell", "/bin/sh", name],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            pw = pwd.getpwnam(name)
        self.name, self.uid, self.gid, self.home = name, pw.pw_uid, pw.pw_gid, pw.pw_dir

    def run(self, fn):
        """fn() in a forked child that has become this user (as_user)."""
        return as_user(self.uid, fn, gid=self.gid)


def test_user(role):
    """The test user for `role`: "victim" (the job's user) or "hostile" (another local user)."""
    return TestUser(f"lattice-t-{role}")


def expect_status(result, code):
    check(result.code == code, f"expected exit {code}\n{result.describe()}")


def expect_failure_line(result, *needles):
    """One stderr line of the launcher names the rank, the node and the reason (every needle)."""
    lines = [l for l in result.err.splitlines() if all(n.lower() in l.lower() for n in needles)]
    check(lines, f"no stderr line containing all of {list(needles)}\n{result.describe()}")


def mpmd_args(program, apps):
    """`lattice launch` segments for mpi_mpmd-style programs: apps = [(ranks, name, [args])], each
    app's name passed as MPMD_TEST_APP with its own --env."""
    out = []
    for i, (ranks, name, args) in enumerate(apps):
        out += ([":"] if i else []) + ["-n", str(ranks), "--env", f"MPMD_TEST_APP={name}",
                                       prog(program), *args]
    return out


def expect_mpmd(result, apps):
    """Every rank of mpi_mpmd printed its place: ranks numbered through the apps in order, one
    world, the app's number, size, --env value and arguments."""
    expect_status(result, 0)
    want, first = [], 0
    world = sum(ranks for ranks, _, _ in apps)
    for appnum, (ranks, name, args) in enumerate(apps):
        for rank in range(first, first + ranks):
            want.append(f"mpmd rank {rank} of {world} appnum {appnum} app-size {ranks} "
                        f"env {name} args {' '.join(args)}".rstrip())
        first += ranks
    got = sorted(l.rstrip() for l in result.out.splitlines() if l.startswith("mpmd rank"))
    check(got == sorted(want), f"expected {want}\n{result.describe()}")


def preflight():
    missing = [p for p in (LATTICE, AGENTD) if not os.access(p, os.X_OK)]
    if not BUILD or missing:
        print(f"Bail out! missing binaries {missing or '(LATTICE_BUILD_DIR unset)'}", flush=True)
        sys.exit(1)


class CaseSkipped(Exception):
    """A case that cannot run on this machine or build; the reason is reported beside it."""


def note(text):
    """A line for whoever reads the test's output (a TAP comment: meson shows it, never parses it)."""
    for line in str(text).splitlines() or [""]:
        print(f"# {line}", flush=True)


def skip_all(reason):
    """Nothing in this file can run here (e.g. no network namespaces): one TAP skip, exit 0."""
    print(f"1..0 # SKIP {reason}", flush=True)
    sys.exit(0)


def run_cases(cases, only=None):
    """Runs (name, fn(case)) pairs and reports each to meson as TAP ("ok N - NAME", or
    "not ok N - NAME" with the failure's first line as a comment and the rest on stderr); exits 1
    on any failure. Command-line arguments, when given, select cases by name."""
    preflight()
    only = set(only if only is not None else sys.argv[1:])
    selected = [(name, fn) for name, fn in cases if not only or name in only]
    print(f"1..{len(selected)}", flush=True)
    failures = 0
    for number, (name, fn) in enumerate(selected, 1):
        case = Case(name)
        try:
            fn(case)
            print(f"ok {number} - {name}", flush=True)
        except CaseSkipped as e:
            print(f"ok {number} - {name} # SKIP {e}", flush=True)
        except CaseFailure as e:
            failures += 1
            first, _, rest = str(e).partition("\n")
            print(f"not ok {number} - {name}", flush=True)
            note(first)
            if rest:
                print(rest, file=sys.stderr, flush=True)
        except Exception as e:  # a bug in the test itself still counts as a failure, loudly
            failures += 1
            print(f"not ok {number} - {name}", flush=True)
            note(f"test error {type(e).__name__}: {e}")
            traceback.print_exc()
        finally:
            case.cleanup()
    sys.exit(1 if failures else 0)
