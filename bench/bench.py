"""Lattice benchmarks, printed as markdown tables that put Lattice beside Hydra in one run.

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

HYDRA = shutil.which("mpiexec.hydra")


def loopback(i):
    """Address of simulated node i (0-based): 127.0.0.1, 127.0.0.2, ... 127.0.1.0, ..."""
    n = i + 1
    return f"127.0.{n // 256}.{n % 256}"


def median(xs):
    return statistics.median(xs) if xs else float("nan")


class Agents:
    """Long-running lattice-agentd processes on 127.0.0.1, .2, ... (one per simulated node)."""

    def __init__(self, build, count, log_level="warn"):
        self.dir = tempfile.mkdtemp(prefix="lattice-bench-")
        self.procs, self.addrs = [], []
        for i in range(count):
            r, w = os.pipe()
            node = f"n{i + 1}"
            p = subprocess.Popen(
                [f"{build}/lattice-agentd", "--listen", f"{loopback(i)}:0", "--node-id", node,
                 "--admin-socket", f"{self.dir}/{node}.sock", "--pmi-socket-dir",
                 f"{self.dir}/{node}",
                 "--log-level", log_level, "--ready-fd", str(w)],
                pass_fds=[w], stdout=subprocess.DEVNULL)
            os.close(w)
            with os.fdopen(r) as f:
                line = f.readline().strip()
            if not line:
                raise RuntimeError(f"agent {node} did not start")
            self.procs.append(p)
            self.addrs.append(line)

    def rss_kb(self):
        out = []
        for p in self.procs:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
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


def hydra_hosts_launcher(tmp):
    """An ssh stand-in for Hydra's M simulated hosts: runs the proxy command locally."""
    path = os.path.join(tmp, "local-ssh")
    with open(path, "w") as f:
        f.write('#!/bin/sh\n# argv: [-x] HOST COMMAND...; run COMMAND here\n'
                '[ "$1" = "-x" ] && shift\nshift\nexec /bin/sh -c "$*"\n')
    os.chmod(path, 0o755)
    return path


def e2e_table(args):
    prog = f"{args.build}/tests/programs/mpi_hello"
    sizes = [1, 8] if args.quick else [1, 8, 32]
    reps = 3 if args.quick else 5
    agents = Agents(args.build, 1)
    rows = []
    try:
        for n in sizes:
            times = {"local": [], "agent": [], "hydra": []}
            for _ in range(reps):
                times["local"].append(timed([f"{args.build}/lattice", "launch", "-n", str(n), prog])[0])
                times["agent"].append(timed([f"{args.build}/lattice", "launch", "--agents",
                                             agents.addrs[0], "-n", str(n), prog])[0])
                if HYDRA:
                    times["hydra"].append(timed([HYDRA, "-n", str(n), prog])[0])
            rows.append((n, {k: median(v) for k, v in times.items()}))
    finally:
        agents.close()
    print(f"\n### End-to-end wall time, MPICH hello (median of {reps}, alternating)\n")
    print("| N | lattice local mode | lattice, running agent | mpiexec.hydra | local / hydra | agent / hydra |")
    print("|---|---|---|---|---|---|")
    for n, m in rows:
        h = m["hydra"]
        print(f"| {n} | {m['local'] * 1e3:.0f} ms | {m['agent'] * 1e3:.0f} ms | {h * 1e3:.0f} ms "
              f"| {m['local'] / h:.2f} | {m['agent'] / h:.2f} |")


def parse_p(out, key):
    for tok in out.split():
        if tok.startswith(key + "="):
            return float(tok.split("=", 1)[1])
    raise RuntimeError(f"no {key}= in output: {out[-500:]}")


def round_table(args):
    prog = f"{args.build}/tests/programs/pmi2_client"
    rounds = 20 if args.quick else 50
    sizes = [16] if args.quick else [16, 64]
    agents = Agents(args.build, 1)
    rows = []
    try:
        for n in sizes:
            res = {"lattice": [], "hydra": []}
            for _ in range(3):
                _, out = timed([f"{args.build}/lattice", "launch", "--agents", agents.addrs[0], "-n",
                                str(n), prog, "--bench", str(rounds), "--size", "64"])
                res["lattice"].append(parse_p(out, "p50_us"))
                if HYDRA:
                    _, out = timed([HYDRA, "-n", str(n), prog, "--bench", str(rounds), "--size", "64"])
                    res["hydra"].append(parse_p(out, "p50_us"))
            rows.append((n, {k: median(v) for k, v in res.items()}))
    finally:
        agents.close()
    srun = "n/a (no local Slurm)" if not shutil.which("srun") else "not configured"
    print(f"\n### PMI round: put own key, fence, get every rank's key (Slurm libpmi2; p50 of {rounds} rounds, median of 3 runs)\n")
    print("| ranks on one node | lattice | mpiexec.hydra | srun --mpi=pmi2 | lattice / hydra |")
    print("|---|---|---|---|---|")
    for n, m in rows:
        print(f"| {n} | {m['lattice'] / 1e3:.2f} ms | {m['hydra'] / 1e3:.2f} ms | {srun} "
              f"| {m['lattice'] / m['hydra']:.2f} |")


def rss_table(args):
    agents = Agents(args.build, 1)
    try:
        time.sleep(0.5)
        idle = agents.rss_kb()[0]
        timed([f"{args.build}/lattice", "launch", "--agents", agents.addrs[0], "-n", "8",
               f"{args.build}/tests/programs/mpi_hello"])
        after = agents.rss_kb()[0]
    finally:
        agents.close()
    print("\n### lattice-agentd memory\n")
    print("| state | RSS |")
    print("|---|---|")
    print(f"| idle | {idle / 1024:.1f} MB |")
    print(f"| after one 8-rank launch | {after / 1024:.1f} MB |")


def fence_table(args):
    """Fence latency inside the ranks across M agents, beside Hydra with M simulated hosts."""
    prog = f"{args.build}/tests/programs/pmi2_client"
    ms = [1, 2, 4, 8] if args.quick else [1, 2, 4, 8, 16, 32, 64]
    per_node = [1, 4]
    sizes = [64, 1000]  # libpmi2 caps a value below 1024 bytes (PMI2_MAX_VALLEN)
    fanouts = [("2", 2), ("8", 8), ("star", 0)]
    rounds = 20 if args.quick else 50
    tmp = tempfile.mkdtemp(prefix="lattice-bench-hydra-")
    ssh = hydra_hosts_launcher(tmp)
    agents = Agents(args.build, max(ms))
    rows = []
    try:
        for m in ms:
            addrs = ",".join(agents.addrs[:m])
            for r in per_node:
                for size in sizes:
                    row = {}
                    for name, k in fanouts:
                        if m <= 2 and name != "star":
                            continue  # every fanout is a star at one or two nodes
                        fan = str(k if k else max(m - 1, 1))
                        _, out = timed([f"{args.build}/lattice", "launch", "--agents", addrs, "-N",
                                        str(m), "-n", str(m * r), "--fanout", fan, prog, "--bench",
                                        str(rounds), "--size", str(size)])
                        row[name] = (parse_p(out, "p50_us"), parse_p(out, "p99_us"))
                    if HYDRA and r == 1:
                        hosts = ",".join(loopback(i) for i in range(m))
                        _, out = timed([HYDRA, "-launcher", "ssh", "-launcher-exec", ssh, "-hosts",
                                        hosts, "-n", str(m * r), prog, "--bench", str(rounds),
                                        "--size", str(size)])
                        row["hydra"] = (parse_p(out, "p50_us"), parse_p(out, "p99_us"))
                    rows.append((m, r, size, row))
    finally:
        agents.close()
        shutil.rmtree(tmp, ignore_errors=True)

    def cell(row, key):
        if key not in row:
            return "-"
        p50, p99 = row[key]
        return f"{p50 / 1e3:.2f} / {p99 / 1e3:.2f}"

    print(f"\n### Fence across agents: put -> fence -> get-all, p50 / p99 ms over {rounds} rounds (measured in the ranks)\n")
    print("| agents | ranks/agent | bytes/rank | fanout 2 | fanout 8 | star | Hydra, M simulated hosts | best / hydra |")
    print("|---|---|---|---|---|---|---|---|")
    for m, r, size, row in rows:
        best = min(v[0] for k, v in row.items() if k != "hydra")
        ratio = f"{best / row['hydra'][0]:.3f}" if "hydra" in row else "-"
        print(f"| {m} | {r} | {size} | {cell(row, '2')} | {cell(row, '8')} | {cell(row, 'star')} "
              f"| {cell(row, 'hydra')} | {ratio} |")


def fanout_table(args):
    """Launch fan-out: LaunchProcesses to every agent until every agent has accepted it (-v
    "fan-out"), and until every agent has spawned its rank (-v "spawn")."""
    counts = [16, 64] if args.quick else [64, 256]
    rows = []
    for m in counts:
        agents = Agents(args.build, m)
        try:
            addrs = ",".join(agents.addrs)
            fan, spawn = [], []
            for _ in range(3):
                p = subprocess.run([f"{args.build}/lattice", "launch", "-v", "--agents", addrs,
                                    "-N", str(m), "-n", str(m), "/bin/true"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   timeout=300)
                if p.returncode != 0:
                    raise RuntimeError(p.stderr[-2000:])
                for line in p.stderr.splitlines():
                    if "timing:" in line:
                        fan.append(float(line.split("fan-out ")[1].split(" ms")[0]))
                        spawn.append(float(line.split(", spawn ")[1].split(" ms")[0]))
            rows.append((m, median(fan), median(spawn)))
        finally:
            agents.close()
    print("\n### Launch fan-out, one rank per agent (median of 3)\n")
    print("| agents | every agent accepted | every rank spawned |")
    print("|---|---|---|")
    for m, fan, sp in rows:
        print(f"| {m} | {fan:.1f} ms | {sp:.1f} ms |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=["e2e", "round", "rss", "fence", "fanout"])
    args = ap.parse_args()
    if not HYDRA:
        print("note: mpiexec.hydra not found; Hydra columns will be empty", file=sys.stderr)
    tables = {"e2e": e2e_table, "round": round_table, "rss": rss_table, "fence": fence_table,
              "fanout": fanout_table}
    for name, fn in tables.items():
        if args.only in (None, name):
            fn(args)


if __name__ == "__main__":
    main()
