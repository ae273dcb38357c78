"""A private Slurm on localhost for side-by-side benchmarks (srun beside Lattice and Hydra).

    with LocalSlurm() as slurm:
        subprocess.run(slurm.srun(16, "--mpi=pmi2") + ["./prog"], env=slurm.env)

starts its own slurmctld and slurmd (Slurm 22.05, Debian 12's packages) from a slurm.conf it
writes in a fresh temporary directory: its own cluster name, ports, state, spool, pid and log
files, no munge (auth/none, cred/none), proctrack/linuxproc, task/none, one node with CPUs=64 and
SlurmdParameters=config_overrides (see ../../shared/pmi-wire.md §9). It never reads or touches a
system Slurm: every client gets SLURM_CONF pointing at the private slurm.conf, and inherited
SLURM_* variables are dropped.

Whatever goes wrong (packages missing, a daemon that exits or never reports the node idle), start
raises SlurmUnavailable with a one-line reason, within `start_timeout` seconds. However the run
ends (exception, Ctrl-C, SIGTERM, the bench's exit) the daemons and their step daemons are killed
and the directory is removed; if the bench itself is SIGKILLed, the daemons die with it
(PR_SET_PDEATHSIG).
"""
import atexit
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

PLUGIN_DIRS = ("/usr/lib/x86_64-linux-gnu/slurm-wlm", "/usr/lib/slurm-wlm", "/usr/lib64/slurm",
               "/usr/lib/slurm")
NEEDED_PLUGINS = ("auth_none.so", "cred_none.so", "proctrack_linuxproc.so", "task_none.so",
                  "mpi_pmi2.so")
PACKAGES = "Debian's slurmctld slurmd slurm-client: scripts/install-deps --bench"


class SlurmUnavailable(RuntimeError):
    """The local Slurm cannot run here; str() is a one-line reason."""


def _free_ports(count):
    """`count` distinct TCP ports free on 127.0.0.1 right now (bound, then released)."""
    socks, ports = [], []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def _die_with_parent():
    """preexec_fn: SIGKILL this child when the bench dies, even by SIGKILL."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _last_error(path):
    """The last 'error:'/'fatal:' line of a log, shortened, or ''."""
    try:
        with open(path, errors="replace") as f:
            lines = [l.strip() for l in f if "error" in l.lower() or "fatal" in l.lower()]
    except OSError:
        return ""
    return lines[-1][-200:] if lines else ""


def _our_pids(sids, root):
    """Pids of this Slurm's processes: the daemons' sessions (slurmctld, slurmd, slurmscriptd),
    processes working in or holding files under `root` (slurmstepd leaves slurmd's session but
    keeps its directory and log), and the sessions of those (a step's tasks share its stepd's)."""
    sids = set(sids)
    procs = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()  # state ppid pgrp session ...
        if fields[0] != "Z":  # a zombie is dead already, waiting for its parent
            procs[int(d)] = int(fields[3])
    if root:
        for pid, sid in procs.items():
            if sid in sids:
                continue
            try:
                links = [os.readlink(f"/proc/{pid}/cwd")]
                links += [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
            except OSError:
                continue
            if any(l == root or l.startswith(root + "/") for l in links):
                sids.add(sid)
    return [pid for pid, sid in procs.items() if sid in sids and pid != os.getpid()]


def _remove_stale_dirs():
    """Directories an earlier, SIGKILLed bench left behind (its daemons died with it)."""
    base = tempfile.gettempdir()
    for name in os.listdir(base):
        path = os.path.join(base, name)
        if not name.startswith("lattice-slurm-") or not os.path.isdir(path):
            continue
        try:
            with open(f"{path}/slurmctld.pid") as f:
                os.kill(int(f.read().strip()), 0)
            continue  # its slurmctld still runs: someone's live instance
        except ProcessLookupError:
            pass
        except (OSError, ValueError):
            if time.time() - os.stat(path).st_mtime < 3600:
                continue  # no pid file yet: maybe starting right now
        shutil.rmtree(path, ignore_errors=True)


class LocalSlurm:
    """A private slurmctld + slurmd on localhost (a context manager). After start():
    `env` is the environment for Slurm's clients, `srun(n, *opts)` a command-line prefix."""

    def __init__(self, cpus=64, start_timeout=30, cluster="latbench"):
        self.cpus = cpus
        self.start_timeout = start_timeout
        self.cluster = cluster
        self.node = f"{cluster}1"
        self.dir = None
        self.procs = {}
        self.sids = set()
        self.env = None
        self._old_sigterm = None

    # -- lifecycle ------------------------------------------------------------------------

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def start(self):
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self):
        binaries = {b: shutil.which(b) or (f"/usr/sbin/{b}" if os.path.exists(f"/usr/sbin/{b}")
                                           else None)
                    for b in ("slurmctld", "slurmd", "srun", "sinfo", "scontrol", "scancel")}
        missing = [b for b, p in binaries.items() if not p]
        if missing:
            raise SlurmUnavailable(f"no {', '.join(missing)} ({PACKAGES})")
        plugindir = next((d for d in PLUGIN_DIRS if os.path.exists(f"{d}/mpi_pmi2.so")), None)
        if not plugindir or any(not os.path.exists(f"{plugindir}/{p}") for p in NEEDED_PLUGINS):
            raise SlurmUnavailable(f"Slurm plugins {', '.join(NEEDED_PLUGINS)} not found "
                                   f"({PACKAGES})")
        if os.getuid() != 0:
            # slurmd must run as root to start tasks; a non-root slurmd only runs its own user's
            # jobs and still needs root for the step daemons' setuid.
            raise SlurmUnavailable("slurmd needs root (the bench is not running as root)")
        self.bin = binaries
        atexit.register(self.close)
        if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
            self._old_sigterm = signal.SIG_DFL
            signal.signal(signal.SIGTERM, self._on_sigterm)

        _remove_stale_dirs()
        self.dir = tempfile.mkdtemp(prefix="lattice-slurm-")
        os.chmod(self.dir, 0o755)
        for sub in ("state", "spool", "log"):
            os.mkdir(f"{self.dir}/{sub}")
        ctld_port, slurmd_port = _free_ports(2)
        host = socket.gethostname().split(".")[0]
        conf = f"{self.dir}/slurm.conf"
        plugstack = f"{self.dir}/plugstack.conf"
        open(plugstack, "w").close()
        with open(conf, "w") as f:
            f.write(f"""# Private Slurm for lattice's benchmarks (bench/slurm_local.py); removed at exit.
ClusterName={self.cluster}
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
PluginDir={plugindir}
PlugStackConfig={plugstack}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
InactiveLimit=0
KillWait=2
MinJobAge=2
StateSaveLocation={self.dir}/state
SlurmdSpoolDir={self.dir}/spool
SlurmctldPidFile={self.dir}/slurmctld.pid
SlurmdPidFile={self.dir}/slurmd.pid
SlurmctldLogFile={self.dir}/log/slurmctld.log
SlurmdLogFile={self.dir}/log/slurmd.log
SlurmctldDebug=error
SlurmdDebug=error
NodeName={self.node} NodeHostname={host} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN
PartitionName=bench Nodes={self.node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
""")
        self.conf = conf
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        self.env["SLURM_CONF"] = conf

        self._spawn("slurmctld", [self.bin["slurmctld"], "-D", "-c", "-f", conf])
        self._spawn("slurmd", [self.bin["slurmd"], "-D", "-f", conf, "-N", self.node])

        deadline = time.monotonic() + self.start_timeout
        state = ""
        while time.monotonic() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    why = _last_error(f"{self.dir}/log/{name}.log") or _last_error(
                        f"{self.dir}/log/{name}.out")
                    raise SlurmUnavailable(f"{name} exited {p.returncode} at start"
                                           + (f": {why}" if why else ""))
            try:
                q = subprocess.run([self.bin["sinfo"], "-h", "-n", self.node, "-o", "%t"],
                                   env=self.env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, timeout=5)
                state = q.stdout.strip().splitlines()[-1] if q.stdout.strip() else ""
            except subprocess.TimeoutExpired:
                state = "sinfo timed out"
            if q.returncode == 0 and state.rstrip("*") == "idle":
                return
            time.sleep(0.3)
        raise SlurmUnavailable(f"node {self.node} not idle after {self.start_timeout} s "
                               f"(last sinfo: {state[-150:] or 'nothing'})")

    def _spawn(self, name, cmd):
        out = open(f"{self.dir}/log/{name}.out", "w")
        try:
            p = subprocess.Popen(cmd, env=self.env, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT, start_new_session=True,
                                 preexec_fn=_die_with_parent, cwd=self.dir)
        finally:
            out.close()
        self.procs[name] = p
        self.sids.add(p.pid)  # a session leader's session id is its pid

    def _on_sigterm(self, signum, frame):
        raise SystemExit(128 + signum)  # unwinds through __exit__ / finally: close() runs

    def close(self):
        """Kill the jobs, the daemons and their step daemons; remove the directory. Idempotent."""
        ctld = self.procs.get("slurmctld")
        if ctld and ctld.poll() is None:
            try:  # slurmd ends the steps itself; each running step has a socket in the spool
                subprocess.run([self.bin["scancel"], "--partition", "bench"], env=self.env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=5)
                deadline = time.monotonic() + 3
                while time.monotonic() < deadline and any(
                        f.startswith(self.node + "_") for f in os.listdir(f"{self.dir}/spool")):
                    time.sleep(0.1)
            except (subprocess.TimeoutExpired, OSError):
                pass
        # The daemons (SIGTERM), then whatever is left of them and of their steps (SIGKILL).
        for p in self.procs.values():
            if p.poll() is None:
                p.terminate()
        for p in self.procs.values():
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if self.sids:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                pids = _our_pids(self.sids, self.dir)
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                time.sleep(0.1)
        for p in self.procs.values():
            try:
                p.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        self.procs = {}
        self.sids = set()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        if self._old_sigterm is not None:
            signal.signal(signal.SIGTERM, self._old_sigterm)
            self._old_sigterm = None
        atexit.unregister(self.close)

    # -- clients --------------------------------------------------------------------------

    def srun(self, n, *opts):
        """Command-line prefix of an srun of n tasks on the one node (add the program); run it
        with env=self.env."""
        return [self.bin["srun"], "-N", "1", "-n", str(n), "--overcommit", *opts]

    def log_tail(self, name="slurmd", lines=20):
        try:
            with open(f"{self.dir}/log/{name}.log", errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except (OSError, TypeError):
            return ""


if __name__ == "__main__":
    # Smoke test: python3 bench/slurm_local.py [N] -- starts, runs `srun -n N hostname`, stops.
    import sys
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    try:
        with LocalSlurm() as s:
            t0 = time.perf_counter()
            p = subprocess.run(s.srun(n) + ["/bin/hostname"], env=s.env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=60)
            print(f"srun -n {n} hostname: exit {p.returncode} in "
                  f"{time.perf_counter() - t0:.2f} s, {len(p.stdout.splitlines())} lines")
            if p.returncode:
                print(p.stdout[-1000:])
    except SlurmUnavailable as e:
        print(f"skipped: {e}")
        sys.exit(1)
