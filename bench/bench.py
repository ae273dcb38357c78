"""Lattice benchmarks, printed as markdown tables that put Lattice beside Hydra (MPICH) and
mpirun.openmpi (Open MPI) in one run.

Runs alternate between the systems compared (A B A B ...) so that machine noise hits both alike;
tables show medians and ratios. Nothing here asserts a speed: tests test behaviour.
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import round_srun
from sim_table import sim_table

HYDRA = shutil.which("mpiexec.hydra")
MPIRUN = shutil.which("mpirun.openmpi")


def loopback(i):
    """Address of simulated node i (0-based): 127.0.0.1, 127.0.0.2, ... 127.0.1.0, ..."""
    n = i + 1
    return f"127.0.{n // 256}.{n % 256}"


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def shm_tempdir(prefix):
    """A fresh temporary directory, on tmpfs when there is one (as /run/lattice, the agents'
    default, and /dev/shm, Open MPI's, are on real nodes)."""
    return tempfile.mkdtemp(prefix=prefix, dir="/dev/shm" if os.path.isdir("/dev/shm") else None)


def sealed_build(build):
    """Whether this build seals its links (builds before sealing have no --key-file)."""
    p = subprocess.run([f"{build}/lattice-agentd", "--help"], stdout=subprocess.PIPE, text=True)
    return "--key-file" in p.stdout


class Agents:
    """Long-running lattice-agentd processes on 127.0.0.1, .2, ... (one per simulated node),
    sharing a throwaway cluster key when the build seals its links (see launch_env())."""

    def __init__(self, build, count, log_level="warn", extra=()):
        self.build = build
        self.dir = shm_tempdir("lattice-bench-")
        self.procs, self.addrs = [], []
        self.key = None
        security = []
        if sealed_build(build):
            self.key = f"{self.dir}/cluster.key"
            subprocess.run([f"{build}/lattice-agentd", "--generate-key", self.key], check=True,
                           stdout=subprocess.DEVNULL)
            security = ["--key-file", self.key] + (["--allow-root-jobs"] if os.getuid() == 0 else [])
        for i in range(count):
            r, w = os.pipe()
            node = f"n{i + 1}"
            p = subprocess.Popen(
                [f"{build}/lattice-agentd", "--listen", f"{loopback(i)}:0", "--node-id", node,
                 "--admin-socket", f"{self.dir}/{node}.sock", "--pmi-socket-dir",
                 f"{self.dir}/{node}",
                 "--log-level", log_level, "--ready-fd", str(w), *security, *extra],
                pass_fds=[w], stdout=subprocess.DEVNULL)
            os.close(w)
            with os.fdopen(r) as f:
                line = f.readline().strip()
            if not line:
                raise RuntimeError(f"agent {node} did not start")
            self.procs.append(p)
            # Named, as lattice-api names the nodes it launches on: requests then go out as
            # each agent authenticates instead of after the last one.
            self.addrs.append(f"{node}={line}" if self.key else line)

    def one_rank_each(self, m, *rest):
        """`lattice launch` of one rank on each of the first m agents; `rest`: its options, then
        the program and its arguments."""
        return [f"{self.build}/lattice", "launch", "--agents", ",".join(self.addrs[:m]), "-N",
                str(m), "-n", str(m), *rest]

    def launch_env(self):
        """The environment a launcher of these agents needs (their key)."""
        return dict(os.environ, LATTICE_KEY_FILE=self.key) if self.key else None

    def rss_kb(self, field="VmRSS"):
        """Each agent's resident memory (VmRSS), or another field of /proc/PID/status (RssAnon:
        the agent's own memory, without the program and library text paged in)."""
        out = []
        for p in self.procs:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith(field + ":"):
                        out.append(int(line.split()[1]))
        return out

    def close(self):
        for p in self.procs:
            p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def timed(cmd, env=None, timeout=600):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                       timeout=timeout)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr[-2000:]}")
    return dt, p.stdout


def alternating(cmds, reps):
    """Median wall time of each launch of {name: (command, env)}, run in turn reps times
    (A B C A B C ...) so that machine noise hits them alike."""
    times = {name: [] for name in cmds}
    for _ in range(reps):
        for name, (cmd, env) in cmds.items():
            times[name].append(timed(cmd, env=env)[0])
    return {name: median(t) for name, t in times.items()}


def hosts_launcher(tmp):
    """An ssh stand-in for M simulated hosts (Hydra's proxies, Open MPI's orteds): runs the
    command locally. Each host gets its own Open MPI session and shared-memory directory, as
    separate nodes have: orteds sharing one fail at random (the session directory exists already,
    a crash in hwloc_shmem_topology_write)."""
    path = os.path.join(tmp, "local-ssh")
    with open(path, "w") as f:
        f.write('#!/bin/sh\n# argv: [-x] HOST COMMAND...; run COMMAND here\n'
                '[ "$1" = "-x" ] && shift\n'
                f'dir="{tmp}/host-$1"\nmkdir -p "$dir"\n'
                'export OMPI_MCA_orte_tmpdir_base="$dir"\n'
                'export OMPI_MCA_btl_vader_backing_directory="$dir"\n'
                'shift\nexec /bin/sh -c "$*"\n')
    os.chmod(path, 0o755)
    return path


def hydra_hosts(ssh, m, command):
    """An mpiexec.hydra command running `command` once on each of m simulated hosts (127.0.0.1
    ...), whose proxies `ssh` (hosts_launcher()) starts."""
    hosts = ",".join(loopback(i) for i in range(m))
    return [HYDRA, "-launcher", "ssh", "-launcher-exec", ssh, "-hosts", hosts, "-n", str(m),
            *command]


def mpirun(prog, n, launcher=None, hosts=()):
    """An mpirun.openmpi command for n ranks of prog: on this node, or over simulated hosts
    ("name:slots", names mpirun does not take for its own node) whose orteds `launcher`
    (hosts_launcher()) starts."""
    cmd = [MPIRUN, "-np", str(n)] + (["--allow-run-as-root"] if os.getuid() == 0 else [])
    if hosts:
        return cmd + ["--mca", "plm_rsh_agent", launcher, "--host", ",".join(hosts), prog]
    return cmd + ["--oversubscribe", prog]


def e2e_table(args):
    prog = f"{args.build}/tests/programs/mpi_hello"
    sizes = [1, 8] if args.quick else [1, 8, 32]
    reps = 3 if args.quick else 5
    agents = Agents(args.build, 1)
    rows = []
    try:
        for n in sizes:
            cmds = {"local": ([f"{args.build}/lattice", "launch", "-n", str(n), prog], None),
                    "agent": ([f"{args.build}/lattice", "launch", "--agents", agents.addrs[0], "-n",
                               str(n), prog], agents.launch_env())}
            if HYDRA:
                cmds["hydra"] = ([HYDRA, "-n", str(n), prog], None)
            rows.append((n, alternating(cmds, reps)))
    finally:
        agents.close()
    print(f"\n### End-to-end wall time, MPICH hello (median of {reps}, alternating)\n")
    print("| N | lattice local mode | lattice, running agent | mpiexec.hydra | local / hydra | agent / hydra |")
    print("|---|---|---|---|---|---|")
    for n, m in rows:
        h = m.get("hydra", float("nan"))
        print(f"| {n} | {m['local'] * 1e3:.0f} ms | {m['agent'] * 1e3:.0f} ms | {h * 1e3:.0f} ms "
              f"| {m['local'] / h:.2f} | {m['agent'] / h:.2f} |")


def ompi_table(args):
    """End-to-end wall time of an Open MPI hello: lattice --pmi pmix (local mode, and running
    agents) beside mpirun.openmpi, on one node and over M agents / M simulated hosts."""
    prog = f"{args.build}/tests/programs/ompi_hello"
    if not (MPIRUN and os.path.exists(prog)):
        print("note: mpirun.openmpi or ompi_hello not found; no Open MPI table", file=sys.stderr)
        return
    one_node = [1, 8] if args.quick else [1, 8, 32]
    cases = [(1, n) for n in one_node] + [(m, n) for m in (2, 4) for n in one_node if n > 1]
    reps = 3 if args.quick else 5
    tmp = shm_tempdir("lattice-bench-ompi-")
    launcher = hosts_launcher(tmp)
    agents = Agents(args.build, 4)
    rows = []
    try:
        for m, n in cases:
            layout = ["-N", str(m), "-n", str(n), "--pmi", "pmix", prog]
            hosts = [f"{loopback(i)}:{n // m}" for i in range(1, m + 1)] if m > 1 else []
            rows.append((m, n, alternating({
                "local": ([f"{args.build}/lattice", "launch", *layout], None),
                "agent": ([f"{args.build}/lattice", "launch", "--agents",
                           ",".join(agents.addrs[:m]), *layout], agents.launch_env()),
                "mpirun": (mpirun(prog, n, launcher, hosts), None)}, reps)))
    finally:
        agents.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n### End-to-end wall time, Open MPI hello (median of {reps}, alternating)\n")
    print("| agents | N | lattice --pmi pmix (local mode) | lattice --pmi pmix, running agents "
          "| mpirun.openmpi | local / mpirun | agents / mpirun |")
    print("|---|---|---|---|---|---|---|")
    for m, n, t in rows:
        mp = t["mpirun"]
        print(f"| {m} | {n} | {t['local'] * 1e3:.0f} ms | {t['agent'] * 1e3:.0f} ms "
              f"| {mp * 1e3:.0f} ms | {t['local'] / mp:.2f} | {t['agent'] / mp:.2f} |")
    print("\nOne agent: `mpirun.openmpi --oversubscribe -np N`. M agents: lattice over M agents on "
          "127.0.0.1..M (local mode starts its own), mpirun.openmpi with `--host "
          "127.0.0.2:N/M,...` (M simulated hosts; an rsh stand-in starts each orted here, with "
          "its own session and shared-memory directory).")


def parse_values(out, keys):
    return tuple(parse_p(out, key) for key in keys)


def parse_p(out, key):
    for tok in out.split():
        if tok.startswith(key + "="):
            return float(tok.split("=", 1)[1])
    raise RuntimeError(f"no {key}= in output: {out[-500:]}")


def round_table(args):
    """The one-node PMI round (Slurm's libpmi2: put own key, fence, get every rank's key) under a
    running agent, mpiexec.hydra and srun --mpi=pmi2 (a private Slurm on localhost,
    bench/slurm_local.py), alternating, medians of `reps` runs of `rounds` rounds each. With more
    ranks than cores lattice's default (--sched auto) starts them under SCHED_BATCH; beside it,
    lattice with --sched normal, and Hydra's ranks (mpiexec and all it starts) under chrt -b 0.
    What --pmi auto (the default) costs: beside it, --pmi pmi2 (no choice made), and the same
    program behind a #! script, which auto cannot classify and so serves PMI-1/PMI-2 and PMIx at
    once."""
    prog = f"{args.build}/tests/programs/pmi2_client"
    wrapper_dir = tempfile.mkdtemp(prefix="lattice-bench-wrapper-")
    wrapper = os.path.join(wrapper_dir, "pmi2_client.sh")
    with open(wrapper, "w") as f:
        f.write(f'#!/bin/sh\nexec {prog} "$@"\n')
    os.chmod(wrapper, 0o755)
    rounds = 20 if args.quick else 50
    sizes = [16] if args.quick else [16, 64]
    reps = 3 if args.quick else 5
    bench = ["--bench", str(rounds), "--size", "64"]
    agents = Agents(args.build, 1)
    srun_skip = None  # why srun's column is empty: Slurm cannot run here, or a run failed
    rows = []
    try:
        for n in sizes:
            res = {"lattice": [], "hydra": [], "srun": [], "lattice normal": [], "hydra batch": [],
                   "lattice pmi2": [], "lattice both": []}
            for _ in range(reps):
                for key, extra, program in (("lattice", [], prog),
                                            ("lattice normal", ["--sched", "normal"], prog),
                                            ("lattice pmi2", ["--pmi", "pmi2"], prog),
                                            ("lattice both", [], wrapper)):
                    _, out = timed([f"{args.build}/lattice", "launch", "--agents", agents.addrs[0],
                                    "-n", str(n), *extra, program, *bench],
                                   env=agents.launch_env())
                    res[key].append(parse_p(out, "p50_us"))
                if HYDRA:
                    for key, chrt in (("hydra", []), ("hydra batch", ["chrt", "-b", "0"])):
                        _, out = timed([*chrt, HYDRA, "-n", str(n), prog, *bench])
                        res[key].append(parse_p(out, "p50_us"))
                if srun_skip is None:
                    try:
                        res["srun"].append(round_srun.srun_round(args, n, rounds))
                    except (round_srun.SlurmUnavailable, RuntimeError) as e:
                        srun_skip = str(e)
                        print(f"bench: srun skipped: {srun_skip}", file=sys.stderr)
            rows.append((n, {k: median(v) for k, v in res.items()}))
    finally:
        agents.close()
        round_srun.close()
        shutil.rmtree(wrapper_dir, ignore_errors=True)
    print(f"\n### PMI round: put own key, fence, get every rank's key (Slurm libpmi2; p50 of {rounds} "
          f"rounds, median of {reps} alternating runs)\n")
    cores = os.cpu_count() or 1
    print("| ranks on one node | lattice | mpiexec.hydra | srun --mpi=pmi2 | lattice / hydra "
          "| lattice / srun | lattice --sched normal | hydra under chrt -b 0 |")
    print("|---|---|---|---|---|---|---|---|")
    for n, m in rows:
        s = m["srun"]
        srun, ratio = (f"{s / 1e3:.2f} ms", f"{m['lattice'] / s:.2f}") if s == s else \
            (f"skipped: {srun_skip}", "-")
        print(f"| {n} | {m['lattice'] / 1e3:.2f} ms | {m['hydra'] / 1e3:.2f} ms | {srun} "
              f"| {m['lattice'] / m['hydra']:.2f} | {ratio} | {m['lattice normal'] / 1e3:.2f} ms "
              f"| {m['hydra batch'] / 1e3:.2f} ms |")
    print("\n--pmi auto, the default (lattice above), against --pmi pmi2 and against serving both "
          "wire-ups (the program behind a #! script, which auto serves PMI-1/PMI-2 and PMIx):\n")
    print("| ranks on one node | --pmi auto | --pmi pmi2 | auto / pmi2 | both (a script) "
          "| both / pmi2 |")
    print("|---|---|---|---|---|---|")
    for n, m in rows:
        print(f"| {n} | {m['lattice'] / 1e3:.2f} ms | {m['lattice pmi2'] / 1e3:.2f} ms "
              f"| {m['lattice'] / m['lattice pmi2']:.2f} | {m['lattice both'] / 1e3:.2f} ms "
              f"| {m['lattice both'] / m['lattice pmi2']:.2f} |")
    print(f"\nlattice: --sched auto, the default, which puts ranks under SCHED_BATCH on a node with "
          f"more ranks than CPUs ({cores} here).")
    print("\nsrun: a private slurmctld + slurmd on localhost (auth/none, one node of CPUs=64, "
          "bench/slurm_local.py), each run a new job. SCHED_BATCH: a woken rank does not "
          "preempt what runs, so on a node with more ranks than cores the agent (or Hydra's "
          "proxy) answers every rank that is ready before yielding.")


def children_cpu_s(agent_proc):
    """CPU of the agent's reaped children (its ranks, which it starts directly), in seconds."""
    with open(f"/proc/{agent_proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def floor_table(args):
    """What a PMI get costs on this machine whatever the server does (issue 11 part 4): 64
    clients making libpmi2's get (a write, then reads of the header and the body, under
    SCHED_BATCH) against an epoll loop that answers with a fixed reply, beside lattice-agentd
    serving the 64-rank round with Slurm's libpmi2 (its puts and fence included): wall time of
    the 4,096 gets of one round, and CPU per get of the server and of the clients."""
    n, reps = 64, 3 if args.quick else 5
    each = n * (5 if args.quick else 40)
    floors = []
    for _ in range(reps):
        _, out = timed([f"{args.build}/bench/lattice-bench-rtt-floor", str(n), str(each)])
        floors.append({k: parse_p(out, k) for k in
                       ("wall_us_per_get", "server_us_per_get", "clients_us_per_get")})
    prog = f"{args.build}/tests/programs/pmi2_client"
    short, long = (5, 15) if args.quick else (10, 60)
    agents = Agents(args.build, 1)
    ours = []
    try:
        for _ in range(reps):
            spent = {}
            for rounds in (short, long):
                c0, k0 = agents_cpu_s(agents), children_cpu_s(agents.procs[0])
                _, out = timed([f"{args.build}/lattice", "launch", "--agents", agents.addrs[0],
                                "-n", str(n), prog, "--bench", str(rounds), "--size", "64"],
                               env=agents.launch_env())
                spent[rounds] = (agents_cpu_s(agents) - c0,
                                 children_cpu_s(agents.procs[0]) - k0, parse_p(out, "p50_us"))
            gets = (long - short) * n * n  # the launch's own cost cancels
            ours.append({"wall_us_per_get": spent[long][2] / (n * n),
                         "server_us_per_get": (spent[long][0] - spent[short][0]) / gets * 1e6,
                         "clients_us_per_get": (spent[long][1] - spent[short][1]) / gets * 1e6})
    finally:
        agents.close()

    def row(name, runs):
        m = {k: median([r[k] for r in runs]) for k in runs[0]}
        print(f"| {name} | {m['wall_us_per_get'] * n * n / 1e3:.1f} ms "
              f"| {m['server_us_per_get']:.2f} µs | {m['clients_us_per_get']:.2f} µs |")

    print(f"\n### What a PMI get costs here, whatever the server (64 clients, median of {reps})\n")
    print("| server | 4,096 gets (a 64-rank round's) | server CPU per get | clients' CPU per get |")
    print("|---|---|---|---|")
    row("an epoll loop with a fixed reply (C, bench/rtt_floor.c)", floors)
    row("lattice-agentd, the 64-rank round (p50; its puts and fence included)", ours)


def user_table(args):
    """Ranks of another user than the agent's, against the agent's own: a root agent looks the
    job's user up once per launch and switches in each rank's child, so both cost one exec per
    rank. /bin/true, 64 ranks on one agent, alternating, median of 7."""
    if os.getuid() != 0:
        print("\n(user table skipped: only a root agent starts ranks as another user)")
        return
    n = 16 if args.quick else 64
    agents = Agents(args.build, 1)
    try:
        base = [f"{args.build}/lattice", "launch", "--agents", agents.addrs[0], "-n", str(n),
                "--chdir", "/tmp"]
        t = alternating({"own": (base + ["/bin/true"], agents.launch_env()),
                         "other": (base + ["--user", "nobody", "/bin/true"], agents.launch_env())},
                        7)
    finally:
        agents.close()
    print(f"\n### {n} ranks of /bin/true on one root agent: the agent's own user against another "
          "(median of 7, ms)\n")
    print("| root | nobody | nobody / root |")
    print("|---|---|---|")
    print(f"| {t['own'] * 1000:.1f} | {t['other'] * 1000:.1f} | {t['other'] / t['own']:.2f} |")


def rss_table(args):
    """An agent's resident memory idle, and after launches of 8 and 64 MPICH ranks on it (what a
    launch leaves behind: buffers, caches): just after each, and at rest (the agent returns
    freed memory once it has been quiet for 2 s)."""
    agents = Agents(args.build, 1)
    rows = []

    def sample(state):
        rows.append((state, agents.rss_kb()[0], agents.rss_kb("RssAnon")[0]))

    try:
        time.sleep(0.5)
        sample("idle")
        for n in (8, 64):
            timed([f"{args.build}/lattice", "launch", "--agents", agents.addrs[0], "-n", str(n),
                   f"{args.build}/tests/programs/mpi_hello"], env=agents.launch_env())
            time.sleep(0.3)
            sample(f"0.3 s after one {n}-rank launch")
            time.sleep(3)
            sample("3 s after it (at rest)")
    finally:
        agents.close()
    print("\n### lattice-agentd memory\n")
    print("| state | RSS | of which its own (RssAnon) |")
    print("|---|---|---|")
    for state, kb, anon in rows:
        print(f"| {state} | {kb / 1024:.1f} MiB | {anon / 1024:.1f} MiB |")


def printed_values(cmd, keys, env=None):
    """The values of `keys` (microseconds) that one benchmark run (pmi2_client, pmix_bench)
    prints; None when the run failed (said on stderr), so one failure costs a cell, not the
    table."""
    try:
        _, out = timed(cmd, env=env)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"bench: {str(e)[:500]}", file=sys.stderr)
        return None
    return parse_values(out, keys)


def p50_p99(cmd, env=None):
    return printed_values(cmd, ("p50_us", "p99_us"), env)


def left_before_last_in(cmd, env=None):
    """By how much a rank left a --fence-bench fence before the last rank entered it (0 for a
    barrier), or None."""
    got = printed_values(cmd, ("left_before_last_in_us",), env)
    return got and got[0]


def ms_or_dash(us):
    return "-" if us is None else f"{us / 1e3:.1f} ms"


def fence_table(args):
    """Fence latency inside the ranks across M agents (PMI-2 at several fanouts, and the PMIx tier
    at one rank per agent), beside Hydra with M simulated hosts."""
    prog = f"{args.build}/tests/programs/pmi2_client"
    pmix_prog = f"{args.build}/tests/programs/pmix_bench"
    pmix = os.path.exists(pmix_prog)
    if not pmix:
        print("note: pmix_bench not built; the PMIx column will be empty", file=sys.stderr)
    ms = [1, 2, 4, 8] if args.quick else [1, 2, 4, 8, 16, 32, 64]
    per_node = [1, 4]
    sizes = [64, 1000]  # libpmi2 caps a value below 1024 bytes (PMI2_MAX_VALLEN)
    fanouts = [("2", 2), ("8", 8), ("star", 0)]
    rounds = 20 if args.quick else 50
    tmp = tempfile.mkdtemp(prefix="lattice-bench-hydra-")
    ssh = hosts_launcher(tmp)
    agents = Agents(args.build, max(ms))
    rows = []
    try:
        for m in ms:
            lattice = [f"{args.build}/lattice", "launch", "--agents", ",".join(agents.addrs[:m]),
                       "-N", str(m)]
            star = max(m - 1, 1)
            for r in per_node:
                for size in sizes:
                    bench = ["--bench", str(rounds), "--size", str(size)]
                    row = {}
                    for name, k in fanouts:
                        if m <= 2 and name != "star":
                            continue  # every fanout is a star at one or two nodes
                        row[name] = p50_p99(lattice + ["-n", str(m * r), "--fanout", str(k or star),
                                                       prog, *bench], env=agents.launch_env())
                    if pmix and r == 1:
                        row["pmix"] = p50_p99(lattice + ["-n", str(m), "--fanout", "8",
                                                         "--pmi", "pmix", pmix_prog, *bench],
                                              env=agents.launch_env())
                    if HYDRA and r == 1:
                        row["hydra"] = p50_p99(hydra_hosts(ssh, m, [prog, *bench]))
                    rows.append((m, r, size, row))
    finally:
        agents.close()
        shutil.rmtree(tmp, ignore_errors=True)

    def cell(row, key):
        if key not in row:
            return "-"
        if row[key] is None:
            return "failed"
        p50, p99 = row[key]
        return f"{p50 / 1e3:.2f} / {p99 / 1e3:.2f}"

    print(f"\n### Fence across agents: put -> fence -> get-all, p50 / p99 ms over {rounds} rounds (measured in the ranks)\n")
    print("| agents | ranks/agent | bytes/rank | fanout 2 | fanout 8 | star | PMIx tier (fanout 8) "
          "| Hydra, M simulated hosts | best PMI-2 / hydra |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m, r, size, row in rows:
        pmi2 = [v[0] for k, v in row.items() if k in ("2", "8", "star") and v]
        ratio = (f"{min(pmi2) / row['hydra'][0]:.3f}" if pmi2 and row.get("hydra") else "-")
        print(f"| {m} | {r} | {size} | {cell(row, '2')} | {cell(row, '8')} | {cell(row, 'star')} "
              f"| {cell(row, 'pmix')} | {cell(row, 'hydra')} | {ratio} |")
    print("\nPMI-2 columns: pmi2_client (Slurm libpmi2). PMIx tier: pmix_bench under --pmi pmix, one "
          "rank per agent; each round times PMIx_Fence (PMIX_COLLECT_DATA, carrying the one value "
          "of bytes/rank each rank committed once) -> PMIx_Get of every other rank's value.")


def fence_only_table(args):
    """The fence alone on its critical path (pmi2_client --fence-bench: last rank in -> last rank
    out, one rank per agent, 64 bytes put per rank) at several fanouts, beside Hydra's fence
    with M simulated hosts. Hydra's PMI-2 fence is no barrier: it answers each rank at once and
    makes a get wait instead, until every rank has fenced if the key is not there yet. So each
    system is also timed to the end of a get of another rank's key after the fence (the first
    moment a rank can use the fence's data), and, with one rank entering 50 ms late, by how much
    a rank left a fence before the last rank entered it."""
    prog = f"{args.build}/tests/programs/pmi2_client"
    ms = [4, 16] if args.quick else [16, 64, 128, 256]
    rounds = 10 if args.quick else 20
    fanouts = [("2", 2), ("8", 8), ("star", 0)]
    tmp = tempfile.mkdtemp(prefix="lattice-bench-hydra-")
    ssh = hosts_launcher(tmp)
    rows = []
    agents = Agents(args.build, max(ms))
    # {rounds: {"ours": [p50 µs], "hydra": [...]}} at ms[1] agents, fanout 8
    by_rounds = {} if args.quick else {n: {"ours": [], "hydra": []}
                                       for n in (rounds, 3 * rounds, 11 * rounds)}
    try:
        one_node = one_node_fences(args, agents, rounds)
        per_key = fence_cpu_per_key(args, agents, ms[1])
        per_round = {(m, keys): fence_cpu_per_round(args, agents, ssh, m, keys)
                     for m, keys in dict.fromkeys(((ms[1], 1), (ms[-1], 1), (ms[-1], 0)))}
        # Each round adds every rank's key to the store: how the fence bears a growing store
        # (medians of 3, alternating).
        m = ms[1]
        for _ in range(3 if by_rounds else 0):
            for longer, got in by_rounds.items():
                bench = ["--fence-bench", str(longer), "--size", "64"]
                ours = p50_p99(agents.one_rank_each(m, "--fanout", "8", prog, *bench),
                               env=agents.launch_env())
                if ours:
                    got["ours"].append(ours[0])
                hydra = p50_p99(hydra_hosts(ssh, m, [prog, *bench])) if HYDRA else None
                if hydra:
                    got["hydra"].append(hydra[0])
        late = ["--fence-bench", "5", "--late-ms", "50"]
        left_early = {"ours": left_before_last_in(agents.one_rank_each(ms[0], prog, *late),
                                                  env=agents.launch_env()),
                      "hydra": left_before_last_in(hydra_hosts(ssh, ms[0], [prog, *late]))
                      if HYDRA else None}
        for m in ms:
            bench = ["--fence-bench", str(rounds), "--size", "64"]
            row = {}
            for name, k in fanouts:
                row[name] = p50_p99(agents.one_rank_each(m, "--fanout", str(k or m), prog, *bench),
                                    env=agents.launch_env())
            row["8, get"] = p50_p99(agents.one_rank_each(m, "--fanout", "8", prog, *bench,
                                                         "--then-get"), env=agents.launch_env())
            if HYDRA:
                row["hydra"] = p50_p99(hydra_hosts(ssh, m, [prog, *bench]))
                row["hydra, get"] = p50_p99(hydra_hosts(ssh, m, [prog, *bench, "--then-get"]))
            rows.append((m, row))
    finally:
        agents.close()
        shutil.rmtree(tmp, ignore_errors=True)

    def cell(row, key):
        v = row.get(key)
        return "-" if key not in row else "failed" if v is None else f"{v[0] / 1e3:.2f} / {v[1] / 1e3:.2f}"

    print(f"\n### The fence alone, last rank in -> last rank out: p50 / p99 ms over {rounds} rounds "
          "(one rank per agent, 64 B each)\n")
    print("| agents | fanout 2 | fanout 8 | star | Hydra, M simulated hosts | best / Hydra "
          "| fence + get, fanout 8 | fence + get, Hydra |")
    print("|---|---|---|---|---|---|---|---|")
    for m, row in rows:
        ours = [row[k][0] for k in ("2", "8", "star") if row.get(k)]
        ratio = f"{min(ours) / row['hydra'][0]:.2f}" if ours and row.get("hydra") else "-"
        print(f"| {m} | {cell(row, '2')} | {cell(row, '8')} | {cell(row, 'star')} "
              f"| {cell(row, 'hydra')} | {ratio} | {cell(row, '8, get')} "
              f"| {cell(row, 'hydra, get')} |")
    print("\nHydra's PMI-2 fence answers each rank at once; a get waits instead (until every rank "
          "has fenced, if its key is not there yet). Fence + get: the timed section ends with a get "
          "of a key the next rank put before the fence, the first moment a rank can use the "
          f"fence's data. With rank 0 entering each of 5 fences 50 ms late ({ms[0]} agents), the "
          "most a rank left a fence before the last rank had entered it: Lattice "
          f"{ms_or_dash(left_early['ours'])}, Hydra {ms_or_dash(left_early['hydra'])} (Hydra's "
          "rounds drift apart by the late rank's delay each round: nothing holds the others "
          "back).")
    print(one_node)
    if by_rounds:
        print(f"\nAs the store grows ({ms[1]} agents, fanout 8; each round adds {ms[1]} keys), "
              "p50 ms, median of 3 alternating runs:\n")
        print("| rounds | Lattice | Hydra |")
        print("|---|---|---|")

        def p50(runs):
            return f"{median(runs) / 1e3:.2f}" if runs else "-"
        for longer, got in by_rounds.items():
            print(f"| {longer} | {p50(got['ours'])} | {p50(got['hydra'])} |")
    print("\nThe whole machine's CPU per round (the ranks' too; a round is a fence to start together, "
          "the puts and the timed fence), ms: what each system spends, wherever it spends it, "
          "beside the wall time a round takes and the part of it the timed fence took (its p50). "
          f"Medians of {len(next(iter(per_round.values()))['ours']['cpu'])} alternating runs, of "
          "60 rounds minus 10 rounds. With no puts both fences of a round are empty, and alike.\n")
    print("| agents | puts per rank | Lattice CPU | Lattice wall | Lattice fence | Hydra CPU "
          "| Hydra wall | Hydra fence |")
    print("|---|---|---|---|---|---|---|---|")
    for (m, keys), got in per_round.items():
        cells = " | ".join(f"{median(got[name][k]):.2f}" if got[name][k] else "-"
                           for name in ("ours", "hydra") for k in ("cpu", "wall", "fence"))
        print(f"| {m} | {keys} | {cells} |")
    m, hi, fence_us, with_puts_us = per_key
    print(f"\nAgent CPU per key per agent ({m} agents, fanout 8, best of 3): {fence_us:.2f} µs "
          f"in the fence (goal <= 0.25): the agents' CPU per round with {hi} puts of {hi} keys "
          f"per rank minus with {hi} puts of one key, over the extra keys times the agents. "
          f"Counting the extra puts' PMI round trips too ({hi} puts of {hi} keys against 1 put): "
          f"{with_puts_us:.2f} µs.")


def one_node_fences(args, agents, rounds):
    """The fence of n ranks on one node under one agent, beside `srun --mpi=pmi2` (whose fence is
    a barrier too) and Hydra: the fence alone and the fence with a get, p50 / p99 ms (medians of
    alternating runs), and by how much a rank left a fence before the last rank entered it (the
    most over the runs). Returns the table as text."""
    prog = f"{args.build}/tests/programs/pmi2_client"
    reps = 1 if args.quick else 3
    keys = ("p50_us", "p99_us", "left_before_last_in_us")
    srun_skip = None
    rows = []
    for n in ([16] if args.quick else [16, 64]):
        for what, extra in (("fence", []), ("fence + get", ["--then-get"])):
            opts = ["--fence-bench", str(rounds), "--size", "64", *extra]
            runs = {"ours": [], "srun": [], "hydra": []}
            for _ in range(reps):
                runs["ours"].append(printed_values(
                    [f"{args.build}/lattice", "launch", "--agents", agents.addrs[0], "-n", str(n),
                     prog, *opts], keys, env=agents.launch_env()))
                if srun_skip is None:
                    try:
                        runs["srun"].append(parse_values(
                            round_srun.srun_pmi2_client(args, n, opts), keys))
                    except (round_srun.SlurmUnavailable, RuntimeError) as e:
                        srun_skip = str(e)
                        print(f"bench: srun skipped: {srun_skip}", file=sys.stderr)
                if HYDRA:
                    runs["hydra"].append(printed_values([HYDRA, "-n", str(n), prog, *opts], keys))
            rows.append((n, what, {name: [r for r in got if r] for name, got in runs.items()}))
    round_srun.close()

    def cell(got):
        if not got:
            return "-"
        return (f"{median(r[0] for r in got) / 1e3:.2f} / {median(r[1] for r in got) / 1e3:.2f} "
                f"({max(r[2] for r in got) / 1e3:.1f})")

    lines = [f"\nOne node, n ranks under one agent, beside `srun --mpi=pmi2` and `mpiexec.hydra` "
             f"(p50 / p99 ms over {rounds} rounds, medians of {reps} alternating runs; in "
             "brackets, the most a rank left a fence before the last rank had entered it, ms: 0 "
             "for a barrier)" + (f"; srun skipped: {srun_skip}" if srun_skip else "") + ":\n",
             "| ranks | timed | Lattice | srun --mpi=pmi2 | Hydra |", "|---|---|---|---|---|"]
    lines += [f"| {n} | {what} | {cell(got['ours'])} | {cell(got['srun'])} | {cell(got['hydra'])} |"
              for n, what, got in rows]
    return "\n".join(lines)


def fence_cpu_per_key(args, agents, m, fanout=8):
    """The agents' CPU per key per agent in the fence, at one agent count, so the per-process
    costs (wake-ups, contention of this many processes) cancel out: rounds where each rank puts
    16 distinct keys against rounds where it puts one key 16 times (the same PMI traffic, 15
    keys fewer to carry), and, as before, against rounds of a single put (the puts' own round
    trips then count too). Returns (m, 16, fence µs, with-puts µs)."""
    prog = f"{args.build}/tests/programs/pmi2_client"
    hi, rounds = 16, 10 if args.quick else 40

    def cpu_per_round(keys, same_key=False):
        def run(n):
            c0 = agents_cpu_s(agents)
            subprocess.run(agents.one_rank_each(m, "--fanout", str(fanout), prog, "--fence-bench",
                                                str(n), "--size", "64", "--keys", str(keys),
                                                *(["--same-key"] if same_key else [])),
                           env=agents.launch_env(), stdout=subprocess.DEVNULL, check=True)
            return agents_cpu_s(agents) - c0
        return (run(rounds + 5) - run(5)) / rounds  # the launch's own cost cancels

    # Best of 3 for each arm: the least disturbed runs (a best of differences would favour
    # whichever noise made the difference smallest).
    best_keys = min(cpu_per_round(hi) for _ in range(3))
    best_same = min(cpu_per_round(hi, same_key=True) for _ in range(3))
    best_one = min(cpu_per_round(1) for _ in range(3))
    extra = (hi - 1) * m * m  # keys each agent receives beyond one per rank, over all agents
    return m, hi, (best_keys - best_same) / extra * 1e6, (best_keys - best_one) / extra * 1e6


def busy_cpu_s():
    """CPU time the whole machine spent busy (all but idle and iowait), in seconds."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def fence_cpu_per_round(args, agents, ssh, m, keys=1):
    """The machine's CPU and the wall time per --fence-bench round (`keys` puts per rank; 0: empty
    fences) at m agents (fanout 8) and under Hydra with m simulated hosts: runs of 60 rounds minus
    runs of 10, so that start-up and teardown cancel; alternating, medians of 3; beside them the
    timed fence's p50 in the longer runs. The idle agents' own CPU during Hydra's runs (the end of
    the launch before) is not Hydra's and is taken out. {"ours"|"hydra": {"cpu"|"wall"|"fence":
    [ms (per round)]}}."""
    prog = f"{args.build}/tests/programs/pmi2_client"
    reps = 1 if args.quick else 3

    def command(name, rounds):
        bench = [prog, "--fence-bench", str(rounds), "--size", "64", "--keys", str(keys)]
        if name == "hydra":
            return hydra_hosts(ssh, m, bench), None
        return agents.one_rank_each(m, "--fanout", "8", *bench), agents.launch_env()

    def cost(name, rounds):
        cmd, env = command(name, rounds)
        busy, own = busy_cpu_s(), agents_cpu_s(agents)
        wall, out = timed(cmd, env=env)
        cpu = busy_cpu_s() - busy
        if name == "hydra":
            cpu -= agents_cpu_s(agents) - own
        return cpu, wall, parse_p(out, "p50_us")

    out = {name: {"cpu": [], "wall": [], "fence": []} for name in ("ours", "hydra")}
    for _ in range(reps):
        for name in out:
            if name == "hydra" and not HYDRA:
                continue
            try:
                lo, hi = cost(name, 10), cost(name, 60)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"bench: {str(e)[:500]}", file=sys.stderr)
                continue
            out[name]["cpu"].append((hi[0] - lo[0]) / 50 * 1e3)
            out[name]["wall"].append((hi[1] - lo[1]) / 50 * 1e3)
            out[name]["fence"].append(hi[2] / 1e3)
    return out


def agents_cpu_s(agents):
    """CPU time of every agent's threads, in seconds, to the nanosecond (schedstat's run time:
    /proc/PID/stat counts clock ticks and truncates each agent's total to 10 ms, which at 16
    agents is noise larger than what a quick fence run measures)."""
    total = 0
    for p in agents.procs:
        for task in os.listdir(f"/proc/{p.pid}/task"):
            with open(f"/proc/{p.pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
    return total / 1e9


def idle_table(args):
    """What an idle pool of agents costs: CPU per second of wall time, summed over the agents,
    before any launch and after one launch over all of them (whose links and heartbeats stay)."""
    m = 16 if args.quick else 256
    window = 5 if args.quick else 10
    agents = Agents(args.build, m)
    rows = []
    try:
        for state in ("before any launch", "after a launch over all of them"):
            if state.startswith("after"):
                timed(agents.one_rank_each(m, f"{args.build}/tests/programs/pmi2_client"),
                      env=agents.launch_env())
            # Let start-up, or the launch's ending, settle: links unused for 5 s close, and at 256
            # agents on two cores the last of them go 8-9 s after the launch.
            time.sleep(12)
            c0, t0 = agents_cpu_s(agents), time.monotonic()
            time.sleep(window)
            rows.append((state, (agents_cpu_s(agents) - c0) / (time.monotonic() - t0) * 1000))
    finally:
        agents.close()
    print(f"\n### Idle cost of {m} agents (CPU ms per second, all agents, over {window} s)\n")
    print("| state | CPU |")
    print("|---|---|")
    for state, ms in rows:
        print(f"| {state} | {ms:.1f} ms/s |")


def fanout_once(build, agents, m, launch=None):
    """One launch of /bin/true on each of m agents, as a star or relayed down the fence tree
    (--launch; None: the build's default, for builds older than the option): (-v "fan-out" ms,
    -v "spawn" ms, the launcher's wall time ms)."""
    t0 = time.monotonic()
    how = ["--launch", launch] if launch else []
    p = subprocess.run([f"{build}/lattice", "launch", "-v", *how, "--agents",
                        ",".join(agents.addrs), "-N", str(m), "-n", str(m), "/bin/true"],
                       stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300, env=agents.launch_env())
    wall = (time.monotonic() - t0) * 1000
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    for line in p.stderr.splitlines():
        if "timing:" in line:
            return (float(line.split("fan-out ")[1].split(" ms")[0]),
                    float(line.split(", spawn ")[1].split(" ms")[0]), wall)
    raise RuntimeError(f"no timing line: {p.stderr[-1000:]}")


def start_cost_ms(prog, n=128):
    """What this machine charges to start and reap one copy of prog, ms: n in a row with
    posix_spawn (glibc's clone(CLONE_VM|CLONE_VFORK), as the agent's), median of 3 batches."""
    batches = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            os.waitpid(os.posix_spawn(prog, [prog], os.environ), 0)
        batches.append((time.perf_counter() - t0) * 1000 / n)
    return median(batches)


def kill_commands_naming(text, settle_s=0.5, within_s=5):
    """SIGKILL to every process whose command line holds `text`, scanning again until none has
    been seen for `settle_s` (a dying launcher's children may still be starting theirs)."""
    deadline = time.monotonic() + within_s
    quiet_since = time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - quiet_since < settle_s:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if text.encode() in f.read():
                        os.kill(int(pid), signal.SIGKILL)
                        quiet_since = time.monotonic()
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)


def hydra_true_ms(ssh, m):
    """(wall ms, runs retried) of Hydra starting /bin/true on m simulated hosts. Hydra's mpiexec
    now and then dies of SIGPIPE when a proxy whose rank exited at once closes first (a race of
    its own, seen about one run in twenty here): such a run is retried, once the proxies it left
    behind (each in a session of its own, waiting for it forever) are killed."""
    cmd = hydra_hosts(ssh, m, ["/bin/true"])
    for retried in range(5):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        if p.returncode == 0:
            return (time.perf_counter() - t0) * 1000, retried
        if p.returncode != -signal.SIGPIPE:
            raise RuntimeError(f"{' '.join(cmd[:2])} ... exited {p.returncode}")
        kill_commands_naming(ssh)  # the proxies were started through it; nothing else was
    raise RuntimeError("Hydra died of SIGPIPE five times in a row")


def fanout_table(args):
    """Launch fan-out: LaunchProcesses to every agent until every agent has accepted it (-v
    "fan-out"), until every agent has spawned its rank (-v "spawn"), and the launcher's wall
    time; beside Hydra starting the same ranks over M simulated hosts (no resident daemons:
    its wall includes starting a proxy per host) and beside the floor this machine sets, M starts
    of /bin/true spread over its cores with nothing else running."""
    # From one node (what an interactive launch waits for) to 256.
    counts = [1, 16, 64] if args.quick else [1, 16, 64, 128, 256]
    tmp = tempfile.mkdtemp(prefix="lattice-bench-hydra-")
    ssh = hosts_launcher(tmp)
    rows = []
    try:
        for m in counts:
            agents = Agents(args.build, m)
            try:
                fan, spawn, wall, tree, hydra = [], [], [], [], []
                retried = 0
                for _ in range(5):
                    f, sp, w = fanout_once(args.build, agents, m, "star")
                    fan.append(f)
                    spawn.append(sp)
                    wall.append(w)
                    if m > 1:
                        tree.append(fanout_once(args.build, agents, m, "tree")[2])
                    if HYDRA:
                        ms, again = hydra_true_ms(ssh, m)
                        hydra.append(ms)
                        retried += again
                floor = m * start_cost_ms("/bin/true") / min(m, os.cpu_count() or 1)
                rows.append((m, median(fan), median(spawn), median(wall),
                             median(tree) if tree else None, median(hydra), floor, retried))
            finally:
                agents.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("\n### Launch fan-out to running agents, /bin/true, one rank per agent (median of 5)\n")
    print("The first three columns are the star (--launch star: a link from the launcher to "
          "every agent); the fourth relays the launch down the fence tree (--launch tree, "
          "fanout 8: a link to the head agent only), alternating with it.\n")
    print("| agents | every agent accepted | every rank spawned | launch wall, star "
          "| launch wall, tree | Hydra, M simulated hosts "
          "| M starts of /bin/true alone, spread over the cores |")
    print("|---|---|---|---|---|---|---|")
    for m, fan, sp, w, tr, hy, floor, _ in rows:
        hydra = f"{hy:.1f} ms" if HYDRA else "-"
        relayed = f"{tr:.1f} ms" if tr is not None else "- (one node)"
        print(f"| {m} | {fan:.1f} ms | {sp:.1f} ms | {w:.1f} ms | {relayed} | {hydra} "
              f"| {floor:.1f} ms |")
    retried = sum(row[7] for row in rows)
    if retried:
        print(f"\nHydra runs retried: {retried} (mpiexec killed by SIGPIPE writing to a proxy "
              "whose rank had already exited)")


def baseline_build(args, added, name):
    """A build of the last commit before the one that added the file `added` (e.g. the commit
    before sealing), made once in `name`/ beside the build, for side-by-side runs."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    first = subprocess.run(["git", "-C", root, "log", "--diff-filter=A", "--format=%H", "--",
                            added], stdout=subprocess.PIPE, text=True, check=True).stdout.split()
    if not first:
        raise RuntimeError(f"cannot find the commit that added {added}")
    rev = subprocess.run(["git", "-C", root, "rev-parse", first[-1] + "^"],
                         stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    out = os.path.join(os.path.dirname(os.path.abspath(args.build)), name)
    stamp = os.path.join(out, "REVISION")
    if not (os.path.exists(stamp) and open(stamp).read().strip() == rev):
        shutil.rmtree(out, ignore_errors=True)
        src = os.path.join(out, "src")
        os.makedirs(src)
        archive = subprocess.Popen(["git", "-C", root, "archive", rev], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", src], stdin=archive.stdout, check=True)
        archive.wait()
        subprocess.run(["meson", "setup", os.path.join(out, "build"), src,
                        "-Dreal_clients=enabled"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["ninja", "-C", os.path.join(out, "build")], check=True,
                       stdout=subprocess.DEVNULL)
        with open(stamp, "w") as f:
            f.write(rev + "\n")
    return os.path.join(out, "build"), rev[:7]


def sealing_table(args):
    """What sealing costs: fence round and launch fan-out at 16 and 64 agents, this build beside
    a build of the last commit before sealing, alternating; and the CPU of one handshake and of
    sealing + opening a record (in memory, both sides)."""
    plain, rev = baseline_build(args, "src/secure/channel.cpp", "build-baseline")
    prog = "tests/programs/pmi2_client"
    counts = [16] if args.quick else [16, 64]
    reps = 3 if args.quick else 5
    rounds = 20 if args.quick else 50
    rows = []
    for m in counts:
        res = {b: {"round": [], "fan": [], "spawn": []} for b in ("sealed", "plain")}
        farms = {"sealed": Agents(args.build, m), "plain": Agents(plain, m)}
        builds = {"sealed": args.build, "plain": plain}
        try:
            for _ in range(reps):
                for b in ("sealed", "plain"):
                    agents, build = farms[b], builds[b]
                    _, out = timed([f"{build}/lattice", "launch", "--agents", ",".join(agents.addrs),
                                    "-N", str(m), "-n", str(m), f"{build}/{prog}", "--bench",
                                    str(rounds), "--size", "64"], env=agents.launch_env())
                    res[b]["round"].append(parse_p(out, "p50_us") / 1e3)
                    # Both as stars: the build before sealing has no relayed launches.
                    f, sp, _ = fanout_once(build, agents, m, "star" if b == "sealed" else None)
                    res[b]["fan"].append(f)
                    res[b]["spawn"].append(sp)
        finally:
            for a in farms.values():
                a.close()
        rows.append((m, {b: {k: median(v) for k, v in r.items()} for b, r in res.items()}))
    _, hs = timed([f"{args.build}/bench/lattice-bench-handshake"])
    figures = dict(line.split("=") for line in hs.split())
    print(f"\n### Cost of sealing: this build beside {rev} (the last commit before sealing), "
          f"medians of {reps} alternating runs, 1 rank per agent\n")
    print("| agents | fence round p50 sealed | plain | sealed / plain | fan-out sealed | plain "
          "| sealed / plain | spawn sealed | plain | sealed / plain |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for m, r in rows:
        s, p = r["sealed"], r["plain"]
        print(f"| {m} | {s['round']:.2f} ms | {p['round']:.2f} ms | {s['round'] / p['round']:.2f} "
              f"| {s['fan']:.1f} ms | {p['fan']:.1f} ms | {s['fan'] / p['fan']:.2f} "
              f"| {s['spawn']:.1f} ms | {p['spawn']:.1f} ms | {s['spawn'] / p['spawn']:.2f} |")
    print("\n| CPU, in memory | per operation |")
    print("|---|---|")
    print(f"| one handshake 3 (Noise XXpsk0), both sides (2 ephemeral key pairs, 4 exchanges, "
          f"the HKDFs) | {float(figures['handshake_us']):.0f} µs |")
    if "v2_handshake_us" in figures:
        print(f"| one handshake 2 (0.2.0's), both sides (2 X25519 key pairs, 2 exchanges) "
              f"| {float(figures['v2_handshake_us']):.0f} µs |")
    for prefix, name in (("", figures["cipher"]), ("xchacha_", "XChaCha20-Poly1305, the fallback")):
        if f"{prefix}seal_open_100_us" not in figures:
            continue  # the machine's own choice is the fallback
        print(f"| seal + open a 100 B record ({name}) "
              f"| {float(figures[prefix + 'seal_open_100_us']):.2f} µs |")
        print(f"| seal + open a 64 KiB record ({name}) "
              f"| {float(figures[prefix + 'seal_open_65536_us']):.1f} µs "
              f"({float(figures[prefix + 'seal_open_65536_MBps']):.0f} MB/s) |")


def contain_table(args):
    """What containment costs: a 64-rank MPICH hello on one agent and a launch of /bin/true over
    256 agents (star and tree), this build (a cgroup per launch; and, for comparison, its
    subreaper mode) beside a build of the last commit before containment, alternating."""
    before, rev = baseline_build(args, "src/proc/containment.cpp", "build-precontain")
    tmp = shm_tempdir("lattice-bench-contain-")
    conf = os.path.join(tmp, "subreaper.yaml")
    with open(conf, "w") as f:
        f.write("jobs:\n  containment: subreaper\n")
    reps = 3 if args.quick else 5
    builds = {"contained": (args.build, ()), "subreaper": (args.build, ("--config", conf)),
              "before": (before, ())}
    hello = "tests/programs/mpi_hello"
    rows = {}
    for m, n in ((1, 64), (64 if args.quick else 256, 0)):
        farms = {b: Agents(build, m, extra=extra) for b, (build, extra) in builds.items()}
        res = {b: [] for b in builds}
        try:
            for _ in range(reps):
                for b, (build, _) in builds.items():
                    agents = farms[b]
                    if n:
                        t, _ = timed([f"{build}/lattice", "launch", "--agents", agents.addrs[0],
                                      "-n", str(n), f"{build}/{hello}"], env=agents.launch_env())
                        res[b].append(t * 1000)
                    else:
                        res[b].append((fanout_once(build, agents, m, "star")[2],
                                       fanout_once(build, agents, m, "tree")[2]))
        finally:
            for a in farms.values():
                a.close()
        rows[(m, n)] = res
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n### Cost of containment: this build beside {rev} (the last commit before it), "
          f"medians of {reps} alternating runs, wall ms\n")
    print("| launch | contained (cgroup) | subreaper | before | contained / before |")
    print("|---|---|---|---|---|")
    for (m, n), res in rows.items():
        if n:
            c, s, b = (median(res[k]) for k in ("contained", "subreaper", "before"))
            print(f"| {n} ranks on 1 agent (MPICH hello) | {c:.1f} | {s:.1f} | {b:.1f} "
                  f"| {c / b:.3f} |")
            continue
        for i, how in enumerate(("star", "tree")):
            c, s, b = (median([r[i] for r in res[k]]) for k in ("contained", "subreaper", "before"))
            print(f"| /bin/true over {m} agents ({how}) | {c:.1f} | {s:.1f} | {b:.1f} "
                  f"| {c / b:.3f} |")


def agent_messages(build, agents):
    """Messages all agents have sent since they started (their admin status)."""
    total = 0
    for i in range(len(agents.procs)):
        out = subprocess.run([f"{build}/lattice", "admin", "status", "--socket",
                              f"{agents.dir}/n{i + 1}.sock"], stdout=subprocess.PIPE, text=True,
                             check=True).stdout
        total += int(out.split("messages ")[1].split(" out")[0])
    return total


def failing_once(build, agents, m, n, bad_rank):
    """One launch of n ranks over m agents in which `bad_rank` exits 1 at once and every other
    rank would sleep a minute: (seconds to the launcher's exit, messages the launcher sent,
    messages the agents sent)."""
    before = agent_messages(build, agents)
    script = f'test "$PMI_RANK" = {bad_rank} && exit 1; exec sleep 60'
    t0 = time.perf_counter()
    p = subprocess.run([f"{build}/lattice", "launch", "-v", "--agents", ",".join(agents.addrs),
                        "-N", str(m), "-n", str(n), "/bin/sh", "-c", script],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300,
                       env=agents.launch_env())
    dt = time.perf_counter() - t0
    if p.returncode != 1 or f"rank {bad_rank} on" not in p.stderr:
        raise RuntimeError(f"unexpected end (exit {p.returncode}): {p.stderr[-2000:]}")
    sent = int(p.stderr.split("messages to and from agents: ")[1].split(" sent")[0])
    return dt, sent, agent_messages(build, agents) - before


def failing_table(args):
    """A failing job before and after the launch-policy engine: one rank of 256 over 16 agents
    exits 1 at once; time to the launcher's exit and the messages everyone sent for it."""
    before, rev = baseline_build(args, "src/policy/launch_policy.cpp", "build-before-policy")
    m, n = 16, 256
    reps = 3 if args.quick else 5
    res = {b: {"time": [], "launcher": [], "agents": []} for b in ("policy", "before")}
    farms = {"policy": Agents(args.build, m), "before": Agents(before, m)}
    builds = {"policy": args.build, "before": before}
    try:
        for _ in range(reps):
            for b in ("policy", "before"):
                dt, sent, agents_sent = failing_once(builds[b], farms[b], m, n, 100)
                res[b]["time"].append(dt * 1e3)
                res[b]["launcher"].append(sent)
                res[b]["agents"].append(agents_sent)
    finally:
        for a in farms.values():
            a.close()
    print(f"\n### A failing job: rank 100 of {n} exits 1 at once, {m} agents; this build beside "
          f"{rev} (before the launch-policy engine), medians of {reps} alternating runs\n")
    print("| build | launcher exits after | messages sent by the launcher | by the agents "
          "(sum; all kinds: output, exits, aborts, heartbeats) |")
    print("|---|---|---|---|")
    for b, label in (("policy", "this build"), ("before", rev)):
        r = res[b]
        print(f"| {label} | {median(r['time']):.0f} ms | {median(r['launcher']):.0f} "
              f"| {median(r['agents']):.0f} |")


class FabricStandin:
    """scripts/fabric-manager-standin on loopback with a throwaway token."""

    def __init__(self):
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.dir = tempfile.mkdtemp(prefix="lattice-fabric-")
        self.token = f"{self.dir}/token"
        with open(self.token, "w") as f:
            f.write("bench-" + os.urandom(8).hex() + "\n")
        os.chmod(self.token, 0o600)
        self.proc = subprocess.Popen([f"{root}/scripts/fabric-manager-standin", "--token-file",
                                      self.token], stdout=subprocess.PIPE, text=True)
        self.url = "http://" + self.proc.stdout.readline().split()[-1]

    def args(self):
        return ["--vni", "77", "--fabric-url", self.url, "--fabric-token-file", self.token]

    def close(self):
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def timing_field(stderr, name):
    for line in stderr.splitlines():
        if "timing:" in line and f"{name} " in line:
            value = line.split(f"{name} ")[1].split(" ms")[0]
            return float(value) if value != "-" else float("nan")
    return float("nan")


def cxi_table(args):
    """CXI credentials from the fabric manager (the stand-in, on loopback): the provisioning time
    (POST service + GET key, -v "CXI credentials") and what it adds to a /bin/true launch over
    running agents, beside the same launch without CXI, alternating. Hydra and mpirun have no
    CXI provisioning of their own (Slurm's and Flux's live in plugins): nothing to put beside."""
    counts = [2] if args.quick else [2, 16, 64]
    reps = 3 if args.quick else 7
    fm = FabricStandin()
    rows = []
    try:
        for m in counts:
            agents = Agents(args.build, m)
            try:
                base = [f"{args.build}/lattice", "launch", "-v", "--agents", ",".join(agents.addrs),
                        "-N", str(m), "-n", str(m)]
                runs = {"plain": base + ["/bin/true"], "cxi": base + fm.args() + ["/bin/true"]}
                res = {k: {"wall": [], "fan": [], "cred": []} for k in runs}
                for _ in range(reps):
                    for k, cmd in runs.items():
                        t0 = time.perf_counter()
                        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           text=True, timeout=120, env=agents.launch_env())
                        if p.returncode != 0:
                            raise RuntimeError(p.stderr[-2000:])
                        res[k]["wall"].append((time.perf_counter() - t0) * 1000)
                        res[k]["fan"].append(timing_field(p.stderr, "fan-out"))
                        res[k]["cred"].append(timing_field(p.stderr, "CXI credentials"))
                rows.append((m, res))
            finally:
                agents.close()
    finally:
        fm.close()
    print(f"\n### CXI credentials from the fabric manager (stand-in on loopback; median of {reps})\n")
    print("| agents | provisioning (POST + GET) | fan-out without CXI | fan-out with CXI "
          "| launch wall without | launch wall with |")
    print("|---|---|---|---|---|---|")
    for m, r in rows:
        print(f"| {m} | {median(r['cxi']['cred']):.1f} ms | {median(r['plain']['fan']):.1f} ms "
              f"| {median(r['cxi']['fan']):.1f} ms | {median(r['plain']['wall']):.1f} ms "
              f"| {median(r['cxi']['wall']):.1f} ms |")


def reshape_table(args):
    """What issue 31's reshaping costs (one link per agent pair, one wire module): fence rounds
    (PMI-2 at fanout 8 and 2, the PMIx tier) over 16 and 64 agents and /bin/true over 256 agents
    (star and relayed), this build beside a build of the last commit before it, alternating."""
    before, rev = baseline_build(args, "tests/unit/agent/node_links_test.cpp", "build-before-links")
    reps = 3 if args.quick else 5
    rounds = 20 if args.quick else 50
    builds = {"after": args.build, "before": before}
    rows = []
    for m in ((16,) if args.quick else (16, 64)):
        farms = {b: Agents(build, m) for b, build in builds.items()}
        res = {b: {} for b in builds}
        try:
            for _ in range(reps):
                for b, build in builds.items():
                    agents = farms[b]
                    base = [f"{build}/lattice", "launch", "--agents", ",".join(agents.addrs), "-N",
                            str(m)]
                    bench = ["--bench", str(rounds), "--size", "64"]
                    runs = {
                        "PMI-2 round, fanout 8, 1 rank per agent":
                            base + ["-n", str(m), "--fanout", "8",
                                    f"{build}/tests/programs/pmi2_client", *bench],
                        "PMI-2 round, fanout 2, 4 ranks per agent":
                            base + ["-n", str(4 * m), "--fanout", "2",
                                    f"{build}/tests/programs/pmi2_client", *bench],
                    }
                    if os.path.exists(f"{build}/tests/programs/pmix_bench"):
                        runs["PMIx fence, fanout 8, 1 rank per agent"] = base + [
                            "-n", str(m), "--fanout", "8", "--pmi", "pmix",
                            f"{build}/tests/programs/pmix_bench", *bench]
                    for name, cmd in runs.items():
                        p50, _ = p50_p99(cmd, env=agents.launch_env())
                        res[b].setdefault(f"{name}, {m} agents (p50 µs)", []).append(p50)
        finally:
            for a in farms.values():
                a.close()
        rows.append(res)
    m = 64 if args.quick else 256
    farms = {b: Agents(build, m) for b, build in builds.items()}
    res = {b: {} for b in builds}
    try:
        for _ in range(reps):
            for b, build in builds.items():
                for how in ("star", "tree"):
                    wall = fanout_once(build, farms[b], m, how)[2]
                    res[b].setdefault(f"/bin/true over {m} agents, {how} (wall ms)", []).append(wall)
    finally:
        for a in farms.values():
            a.close()
    rows.append(res)
    print(f"\n### Issue 31's reshaping: this build beside {rev} (the last commit before it), "
          f"medians of {reps} alternating runs\n")
    print("| measure | after | before | after / before |")
    print("|---|---|---|---|")
    for res in rows:
        for name in res["after"]:
            a, b = median(res["after"][name]), median(res["before"][name])
            print(f"| {name} | {a:.1f} | {b:.1f} | {a / b:.3f} |")


class Allocation:
    """An allocation of root's on the first m agents (`lattice alloc`), held by a batch step
    that waits on a fifo until close(); launches through its user door reach its nodes."""

    def __init__(self, build, agents, m):
        self.fifo = os.path.join(agents.dir, "alloc-gate")
        os.mkfifo(self.fifo)
        self.id = "bench-" + os.urandom(6).hex()
        self.door = os.path.join(agents.dir, "n1", "user.sock")
        self.proc = subprocess.Popen(
            [f"{build}/lattice", "alloc", "--agents", ",".join(agents.addrs[:m]), "--id", self.id,
             "--", "/bin/sh", "-c", f"cat {self.fifo} >/dev/null"],
            env=agents.launch_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not self.running(agents):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"the allocation did not start: {self.proc.stderr.read()}")
            time.sleep(0.05)

    def running(self, agents):
        p = subprocess.run([f"{agents.build}/lattice", "admin", "--socket",
                            f"{agents.dir}/n1.sock", "allocations"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        return self.id in p.stdout and "running" in p.stdout

    def env(self):
        """A launcher's environment inside it: no key, the allocation and its door."""
        env = {k: v for k, v in os.environ.items() if k != "LATTICE_KEY_FILE"}
        return dict(env, LATTICE_ALLOC_ID=self.id, LATTICE_USER_SOCKET=self.door)

    def close(self):
        with open(self.fifo, "w"):
            pass
        self.proc.wait(timeout=60)


def alloc_start_ms(build, agents):
    """`lattice alloc -v ... -- /bin/true` on every agent: (its "started on M nodes in T ms",
    its wall time ms)."""
    t0 = time.monotonic()
    p = subprocess.run([f"{build}/lattice", "alloc", "-v", "--agents", ",".join(agents.addrs),
                        "--", "/bin/true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=300, env=agents.launch_env())
    wall = (time.monotonic() - t0) * 1000
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-2000:])
    for line in p.stderr.splitlines():
        if " nodes in " in line and "started on" in line:
            return float(line.split(" nodes in ")[1].split(" ms")[0]), wall
    raise RuntimeError(f"no start line: {p.stderr[-1000:]}")


def alloc_table(args):
    """Allocations: a launch of /bin/true on M agents through the user door of an allocation (no
    key; the door's agent relays it) beside a key holder's launch of the same (--launch auto:
    relayed from 16 agents), alternating; and the time `lattice alloc` takes to start an
    allocation on 256 agents."""
    reps = 5 if args.quick else 9
    rows = []
    for m in (16, 64):
        agents = Agents(args.build, m)
        alloc = Allocation(args.build, agents, m)
        try:
            cmds = {"door": ([f"{args.build}/lattice", "launch", "-N", str(m), "-n", str(m),
                              "/bin/true"], alloc.env()),
                    "key": (agents.one_rank_each(m, "/bin/true"), agents.launch_env())}
            timed(cmds["door"][0], env=cmds["door"][1])  # warm
            times = {name: [] for name in cmds}
            for _ in range(reps):
                for name, (cmd, env) in cmds.items():
                    times[name].append(timed(cmd, env=env)[0] * 1000)
            rows.append((m, median(times["door"]), median(times["key"])))
        finally:
            alloc.close()
            agents.close()
    m = 64 if args.quick else 256
    agents = Agents(args.build, m)
    try:
        starts = [alloc_start_ms(args.build, agents) for _ in range(reps)]
    finally:
        agents.close()
    print(f"\n### Launches through an allocation's user door beside a key holder's, /bin/true, one "
          f"rank per agent (medians of {reps} alternating runs, wall ms)\n")
    print("| agents | through the user door (no key) | key holder (--agents) | door / key |")
    print("|---|---|---|---|")
    for m_, door, key in rows:
        print(f"| {m_} | {door:.1f} | {key:.1f} | {door / key:.3f} |")
    print(f"\n### `lattice alloc` on {m} agents, batch step /bin/true (median of {reps})\n")
    print("| allocation started on every node (-v) | whole `lattice alloc` wall |")
    print("|---|---|")
    print(f"| {median([s for s, _ in starts]):.1f} ms | {median([w for _, w in starts]):.1f} ms |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only",
                    choices=["e2e", "ompi", "round", "rss", "fence", "fanout", "sealing", "failing",
                             "cxi", "fenceonly", "idle", "sim", "user", "floor", "contain",
                             "reshape", "alloc"])
    args = ap.parse_args()
    if not HYDRA:
        print("note: mpiexec.hydra not found; Hydra columns will be empty", file=sys.stderr)
    tables = {"e2e": e2e_table, "ompi": ompi_table, "round": round_table, "rss": rss_table,
              "fence": fence_table, "fanout": fanout_table, "sealing": sealing_table,
              "failing": failing_table, "cxi": cxi_table, "fenceonly": fence_only_table,
              "idle": idle_table, "sim": sim_table, "user": user_table, "floor": floor_table,
              "contain": contain_table, "reshape": reshape_table, "alloc": alloc_table}
    for name, fn in tables.items():
        if args.only in (None, name):
            fn(args)


if __name__ == "__main__":
    main()
