"""The launcher's and agent's user-facing features beyond wire-up: PMI_PORT mode with a real MPICH
client, the per-launch Unix PMI socket (mode 0600, served, removed afterwards), SIGINT forwarding
(a second SIGINT kills), Slurm-compatible variables, the -v timing breakdown, time limits (-t and
MPIEXEC_TIMEOUT), -K0, --alloc, --chdir, --output/--error files, --export, --input and --cpu-bind,
a launch that ends when the reader of its output goes away (`| head -1`), and lattice-srun."""
import glob
import os
import re
import shlex
import signal
import socket
import stat
import subprocess
import time

from harness import (LAUNCH_TIMEOUT, SANITIZED, SRUN, CaseFailure, LaunchResult, check,
                     expect_status, prog, run_cases, wait_marks, wait_until, writers_blocked)


def pmi_port_mode(c):
    r = c.run_launch(["-n", "4", "--pmi-port", prog("mpi_check")])
    expect_status(r, 0)
    check(r.out.count("ok") == 4, f"expected 4 ranks ok\n{r.describe()}")
    c.check_clean(r)


def unix_socket_served(c):
    agent = c.start_agent("n1")
    p = c.start_launch(["--agents", agent.address, "-n", "2", "/bin/sleep", "30"])
    started = time.monotonic()
    pattern = os.path.join(agent.dir, "lattice-*", "pmi.sock")
    wait_until(lambda: glob.glob(pattern), 10)
    paths = glob.glob(pattern)
    check(len(paths) == 1, f"expected one per-launch PMI socket, found {paths}")
    mode = stat.S_IMODE(os.stat(paths[0]).st_mode)
    check(mode == 0o600, f"socket mode is {oct(mode)}, not 0600")
    dir_mode = stat.S_IMODE(os.stat(os.path.dirname(paths[0])).st_mode)
    check(dir_mode == 0o700, f"the launch's directory has mode {oct(dir_mode)}, not 0700")
    # A client on the socket identifies itself the PMI_PORT way (initack) and gets its rank.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(paths[0])
        s.sendall(b"cmd=initack pmiid=1\n")
        data = b""
        while data.count(b"\n") < 4:
            chunk = s.recv(4096)
            check(chunk, f"socket closed after {data!r}")
            data += chunk
    check(data == b"cmd=initack\ncmd=set size=2\ncmd=set rank=1\ncmd=set debug=0\n",
          f"unexpected initack answer {data!r}")
    os.killpg(p.pid, signal.SIGTERM)  # ends the launch (forwarded as SIGTERM)
    r = c.finish_launch(p, ["sleep"], started, 30)
    check(r.code == 128 + signal.SIGTERM, f"expected 143 after SIGTERM\n{r.describe()}")
    launch_dir = os.path.dirname(paths[0])
    wait_until(lambda: not os.path.exists(launch_dir), 10)
    check(not os.path.exists(launch_dir), "the per-launch PMI directory outlived its launch")
    c.check_clean(r)


def sigint_forwarded(c):
    up = os.path.join(c.dir, "up")
    os.mkdir(up)
    p = c.start_launch(["-n", "2", "/bin/sh", "-c", "trap 'echo got-int; exit 9' INT; "
                        f"touch {up}/$PMI_RANK; while :; do sleep 0.1; done"])
    started = time.monotonic()
    check(wait_marks(up, 2), "the ranks did not set their traps")
    os.kill(p.pid, signal.SIGINT)
    r = c.finish_launch(p, ["sh"], started, 30)
    check(r.out.count("got-int") == 2, f"SIGINT did not reach both ranks\n{r.describe()}")
    check(r.code == 9, f"expected the ranks' own status 9\n{r.describe()}")
    c.check_clean(r)


def second_sigint_kills(c):
    up, got = os.path.join(c.dir, "up"), os.path.join(c.dir, "got")
    os.mkdir(up)
    os.mkdir(got)
    # A rank notes each SIGINT it is given and survives it.
    p = c.start_launch(["-n", "2", "/bin/sh", "-c", f"trap 'touch {got}/$PMI_RANK' INT; "
                        f"touch {up}/$PMI_RANK; while :; do sleep 0.1; done"])
    started = time.monotonic()
    check(wait_marks(up, 2), "the ranks did not set their traps")
    os.kill(p.pid, signal.SIGINT)
    check(wait_marks(got, 2), "the first SIGINT did not reach both ranks")
    check(p.poll() is None, "one SIGINT ended a job whose ranks survive it")
    os.kill(p.pid, signal.SIGINT)
    r = c.finish_launch(p, ["sh"], started, 30)
    check(r.code == 128 + signal.SIGINT, f"expected 130 after a second SIGINT\n{r.describe()}")
    c.check_clean(r)


def slurm_compat_env(c):
    # --pmi pmi2: a script under --pmi auto gets PMIx too (test_pmi_auto.py).
    r = c.run_launch(["--pmi", "pmi2", "-n", "2", "-l", "--slurm-compat", "/bin/sh", "-c",
                      "echo procid=$SLURM_PROCID nprocs=$SLURM_NPROCS localid=$SLURM_LOCALID "
                      "pmix=${PMIX_NAMESPACE-unset}"])
    expect_status(r, 0)
    for rank in (0, 1):
        line = f"{rank}: procid={rank} nprocs=2 localid={rank} pmix=unset"
        check(line in r.out, f"missing '{line}'\n{r.describe()}")
    # The job and step srun's tasks see: the launch is the job here (no allocation), step 0.
    step = c.run_launch(["-N", "2", "-n", "3", "--slurm-compat", "/bin/sh", "-c",
                         'test "$SLURM_JOB_ID" = "$LATTICE_LAUNCH_ID" && echo "job ok '
                         '$SLURM_STEP_ID $SLURM_TASKS_PER_NODE $SLURM_CPUS_PER_TASK"'])
    expect_status(step, 0)
    check(step.out.count("job ok 0 2,1 1\n") == 3, f"SLURM job and step variables\n{step.describe()}")
    plain = c.run_launch(["-n", "1", "/bin/sh", "-c", "echo procid=${SLURM_PROCID-unset}"])
    check("procid=unset" in plain.out, f"SLURM_* without --slurm-compat\n{plain.describe()}")
    # A line longer than the agents' 64 KiB pieces keeps one label, at its start.
    # (One rank: two ranks' pieces of long lines may interleave, as under srun.)
    long = c.run_launch(["-n", "1", "-l", "/bin/sh", "-c",
                         "head -c 200000 /dev/zero | tr '\\0' x; echo; echo after"])
    expect_status(long, 0)
    check(long.out == f"0: {'x' * 200000}\n0: after\n",
          f"the long line is not labelled once, at its start\n{long.describe()}")
    c.check_clean(r)


def verbose_timings(c):
    r = c.run_launch(["-n", "2", "-v", prog("mpi_hello")])
    expect_status(r, 0)
    lines = [l for l in r.err.splitlines() if l.startswith("lattice: timing:")]
    check(lines, f"no timing line\n{r.describe()}")
    for part in ("resolve", "connect", "requests sent", "fan-out", "spawn", "first PMI init",
                 "last finalize", "exit", "total"):
        check(part in lines[0], f"timing line lacks '{part}': {lines[0]}")
    check("first PMI init -" not in lines[0], f"MPICH's init was not timed: {lines[0]}")
    c.check_clean(r)
    # Over 3 local agents, every fence's phases come back from every node: MPICH's fences are
    # timed (last rank in, merged, store in, released) with the node that was last in each (on
    # the launcher's clock, each node's times laid from when its request went out).
    r = c.run_launch(["-N", "3", "-n", "3", "-v", prog("mpi_hello")])
    expect_status(r, 0)
    fences = [l for l in r.err.splitlines() if re.match(r"lattice: fence \d+", l)]
    check(fences, f"no fence phase line\n{r.describe()}")
    check(re.search(r"critical path [0-9.]+ ms, last rank in [0-9.]+ ms \(n\d\), merged [0-9.]+ ms "
                    r"\(n\d\), store in [0-9.]+ ms \(n\d\), released [0-9.]+ ms \(n\d\)",
                    fences[-1]), f"incomplete fence phases: {fences}")
    c.check_clean(r)
    # Relayed (depth 2): the leaves' clocks are placed by the fences, and every fence's phases
    # come out in causal order on the launcher's clock (one decimal: 0.1 ms of rounding).
    r = c.run_launch(["-N", "6", "-n", "6", "--launch", "tree", "--fanout", "2", "-v",
                      prog("mpi_hello")])
    expect_status(r, 0)
    fences = [l for l in r.err.splitlines() if re.match(r"lattice: fence \d+", l)]
    check(fences, f"no fence phase line\n{r.describe()}")
    for line in fences:
        at = [float(x) for x in re.findall(
            r"(?:last rank in|merged|store in|released) ([0-9.]+) ms", line)]
        check(len(at) == 4 and all(a <= b + 0.1 for a, b in zip(at, at[1:])),
              f"fence phases out of order: {line}\n{r.describe()}")
    c.check_clean(r)


def time_limit(c):
    # Two nodes: the ranks that trap SIGTERM say so, proving the gentle stop reached both.
    script = "trap 'echo got-term; exit 0' TERM; while :; do sleep 0.1; done"
    for extra, env in ((["-t", "0:02"], None), ([], {"MPIEXEC_TIMEOUT": "2"})):
        r = c.run_launch(["-N", "2", "-n", "2", *extra, "/bin/sh", "-c", script], env=env)
        expect_status(r, 124)
        check("time limit reached (00:00:02)" in r.err, f"no time-limit reason\n{r.describe()}")
        check(r.out.count("got-term") == 2, f"SIGTERM did not reach both ranks\n{r.describe()}")
        check(r.seconds < 15, f"the limit took {r.seconds:.1f} s to end the launch\n{r.describe()}")
        c.check_clean(r)
    r = c.run_launch(["-n", "1", "/bin/true"], env={"MPIEXEC_TIMEOUT": "soon"})
    check(r.code == 2 and "MPIEXEC_TIMEOUT" in r.err, f"a bad MPIEXEC_TIMEOUT passed\n{r.describe()}")


def kill_on_bad_exit_0(c):
    script = 'if [ "$PMI_RANK" = 1 ]; then exit 3; fi; sleep 1; echo "done $PMI_RANK"'
    r = c.run_launch(["-N", "2", "-n", "3", "-K0", "/bin/sh", "-c", script])
    expect_status(r, 3)
    check("done 0" in r.out and "done 2" in r.out, f"-K0 did not keep the others\n{r.describe()}")
    check("rank 1 on" in r.err and "exited with status 3" in r.err,
          f"the failed rank is not named\n{r.describe()}")
    # Without -K0 the same job ends at the first bad exit.
    r = c.run_launch(["-N", "2", "-n", "3", "/bin/sh", "-c", script])
    expect_status(r, 3)
    check("done" not in r.out, f"the others ran on without -K0\n{r.describe()}")
    c.check_clean(r)


def alloc_and_chdir(c):
    os.makedirs(os.path.join(c.dir, "work"), exist_ok=True)
    # Outside an allocation the ranks have no LATTICE_ALLOC_ID (test_allocations has the rest).
    r = c.run_launch(["-n", "2", "-l", "--chdir", "work", "/bin/sh", "-c",
                      'echo "[${LATTICE_ALLOC_ID-unset}] $(pwd)"'], cwd=c.dir)
    expect_status(r, 0)
    want = f"[unset] {os.path.join(c.dir, 'work')}"
    check(r.out.count(want) == 2, f"ranks did not see --chdir, or saw an allocation\n{r.describe()}")
    # --alloc without --agents asks this node's agent for that allocation: none is running here.
    r = c.run_launch(["-n", "1", "--alloc", "alloc-42", "/bin/true"], cwd=c.dir,
                     env={"LATTICE_USER_SOCKET": os.path.join(c.dir, "no-agent.sock")})
    expect_status(r, 1)
    check("allocation alloc-42: cannot reach the agent's user door" in r.err,
          f"--alloc outside an allocation is not said clearly\n{r.describe()}")
    c.check_clean(r)


def output_files(c):
    r = c.run_launch(["-N", "2", "-n", "3", "-l", "--output", "out-%t.txt", "--error", "err-%n.txt",
                      "/bin/sh", "-c", 'echo "hello $PMI_RANK"; echo "oops $PMI_RANK" >&2'],
                     cwd=c.dir)
    expect_status(r, 0)
    check("hello" not in r.out and "oops" not in r.err, f"output reached the terminal\n{r.describe()}")
    for rank in range(3):
        with open(os.path.join(c.dir, f"out-{rank}.txt")) as f:
            text = f.read()
        check(text == f"{rank}: hello {rank}\n", f"out-{rank}.txt holds {text!r}")
    with open(os.path.join(c.dir, "err-1.txt")) as f:  # block layout: rank 2 on node 1
        check(f.read() == "2: oops 2\n", "err-1.txt does not hold node 1's stderr")
    c.check_clean(r)


def environment_export(c):
    """--export over two standalone agents: ALL by default, NONE, a pattern list; the launch's
    own variables always win."""
    nodes = [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"]) for i in range(2)]
    agents = ",".join(a.address for a in nodes)
    env = {"LT_FOO_A": "a", "LT_FOO_B": "b", "LT_BAR": "bar", "PMI_SIZE": "77",
           "LATTICE_LT_X": "x"}

    def ranks_env(*extra):
        r = c.run_launch(["--agents", agents, "-n", "2", "--tasks-per-node", "1", "-l", *extra,
                          "/usr/bin/env"], env=env)
        expect_status(r, 0)
        c.check_clean(r)
        seen = {0: {}, 1: {}}
        for line in r.out.splitlines():
            rank, _, var = line.partition(": ")
            name, _, value = var.partition("=")
            seen[int(rank)][name] = value
        return seen, r

    seen, r = ranks_env()
    for rank in (0, 1):
        got = seen[rank]
        check(got.get("LT_FOO_A") == "a" and got.get("LT_BAR") == "bar",
              f"rank {rank} lacks the launcher's variables by default\n{r.describe()}")
        check(got.get("PMI_SIZE") == "2", f"PMI_SIZE was overridden on rank {rank}\n{r.describe()}")
        check("LATTICE_LT_X" not in got, f"a LATTICE_* variable was exported\n{r.describe()}")
    seen, r = ranks_env("--export=NONE", "--env", "LT_ONLY=1")
    for rank in (0, 1):
        got = seen[rank]
        check(not any(k.startswith("LT_FOO") or k == "LT_BAR" for k in got),
              f"--export=NONE sent the launcher's variables to rank {rank}\n{r.describe()}")
        check(got.get("LT_ONLY") == "1" and got.get("PMI_RANK") == str(rank),
              f"--env or the launch's variables missing on rank {rank}\n{r.describe()}")
    seen, r = ranks_env("--export=LT_FOO_*")
    for rank in (0, 1):
        names = {k for k in seen[rank] if k.startswith("LT_FOO") or k == "LT_BAR"}
        check(names == {"LT_FOO_A", "LT_FOO_B"},
              f"--export=LT_FOO_* sent {sorted(names)} to rank {rank}\n{r.describe()}")


def slow_reader_loses_nothing(c):
    """Ranks write faster than whatever reads the launcher's stdout (a pager, a slow terminal):
    the agents stop reading the ranks' pipes while the launcher catches up, as srun does, so
    memory stays bounded everywhere and every byte arrives. The launcher's loop never waits on
    its stdout, so it keeps the agents' idle timeout (2 s here) from taking it for gone. Before,
    the launcher blocked in its write, each agent queued the whole output for it, and the
    launch ended at the idle timeout or the link's 256 MiB limit."""
    config = os.path.join(c.dir, "short-idle.yaml")
    with open(config, "w") as f:
        f.write("limits:\n  idle_timeout: 2\n")
    nodes = [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0", "--config", config])
             for i in range(2)]
    before = [a.memory("VmRSS") for a in nodes]
    size = 48 << 20  # per rank
    args = ["--agents", ",".join(a.address for a in nodes), "-n", "2", "/bin/sh", "-c",
            f"head -c {size} /dev/zero | tr '\\0' x; echo"]
    started = time.monotonic()
    p = c.start_launch(args)
    # Nobody reads the launcher's stdout meanwhile: once both ranks' writers are held up, every
    # buffer on the way is as full as it gets.
    check(writers_blocked("tr \\0 x", 2), "the ranks' output never backed up")
    grown = [a.memory("VmRSS") - b for a, b in zip(nodes, before)]
    with open(f"/proc/{p.pid}/status") as f:
        launcher = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    r = c.finish_launch(p, args, started, 120)
    expect_status(r, 0)
    check(len(r.out) == 2 * (size + 1) and r.out.count("x") == 2 * size,
          f"{len(r.out)} bytes of output, not {2 * (size + 1)}\n{r.describe()}")
    if not SANITIZED:  # ASan's quarantine keeps what passed through: its RSS says nothing
        check(max(grown) < 24 << 10, f"agents grew by {grown} KiB holding output for the launcher")
        check(launcher < 64 << 10, f"the launcher held {launcher} KiB of output")
    c.check_clean(r)


def agent_stops_despite_a_slow_reader(c):
    """An agent told to stop (SIGTERM) while its ranks' output waits for a stalled reader of the
    launcher's stdout does not wait for that reader: it ends the launch and exits."""
    agent = c.start_agent("n1")
    args = ["--agents", agent.address, "-n", "1", "/bin/sh", "-c",
            "head -c 100000000 /dev/zero | tr '\\0' x; sleep 30"]
    started = time.monotonic()
    p = c.start_launch(args)
    check(agent.wait_log("spawned", 10), f"no spawn\n{agent.log()}")
    # The output backs up (nobody reads the launcher's stdout) until the rank's writer waits.
    check(writers_blocked("tr \\0 x", 1), "the rank's output never backed up")
    agent.proc.send_signal(signal.SIGTERM)
    check(wait_until(lambda: not agent.alive(), 15),
          f"the agent waited for the launcher's reader instead of stopping\n{agent.log()}")
    r = c.finish_launch(p, args, started, 60)
    check(r.code not in (0, None), f"the launch did not fail\n{r.describe()[-2000:]}")
    c.check_clean()


def reader_gone_ends_the_launch(c):
    """`lattice launch -n 2 yes | head -1`: once head has its line and exits, the launcher's next
    write fails (EPIPE; it ignores SIGPIPE) and the launch ends everywhere, as under srun and
    Hydra: every rank killed, status 141 (128+SIGPIPE, what a shell shows for a command SIGPIPE
    killed), nothing said. On one node and two, and through stderr. Before, the launcher dropped
    the output and the ranks ran on: the pipeline never ended. (--export NONE: a root job is
    told which of the launcher's variables it does not get, which is not what is tested here.)"""
    quiet = ["--export", "NONE"]
    for args, redirect, stream in [(quiet + ["-n", "2", "yes"], "", "stdout"),
                                   (quiet + ["-N", "2", "-n", "2", "yes"], "", "stdout"),
                                   (quiet + ["-n", "1", "sh", "-c", "yes >&2"], "2>&1 >/dev/null",
                                    "stderr")]:
        script = (f"{shlex.join(c.launch_command(args))} {redirect} | head -1; "
                  "echo \"status ${PIPESTATUS[0]}\" >&2")
        try:
            p = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                               env=c.case_env(), timeout=LAUNCH_TIMEOUT, start_new_session=True)
        except subprocess.TimeoutExpired:
            raise CaseFailure(f"`{script}` did not end within {LAUNCH_TIMEOUT} s "
                              f"(survivors: {len(c.survivors())})")
        what = f"`{script}` ({stream}):\n--- stdout\n{p.stdout}--- stderr\n{p.stderr[-2000:]}"
        check(p.stdout == "y\n", f"head did not get one line\n{what}")
        check(p.stderr.strip().splitlines()[-1:] == ["status 141"], f"expected status 141\n{what}")
        check("lattice:" not in p.stderr, f"the launcher said something\n{what}")
        c.check_clean()


def large_stdin_arrives_whole(c):
    """More stdin than an agent may queue for a rank (16 MiB), to ranks that read it slowly: the
    launcher reads its stdin only as fast as the ranks take it (StdinTaken), so every byte
    arrives, from a file and through a pipe, to one rank or to all. Before, the agent dropped the
    rank's stdin at its limit: the rank saw EOF after 64 KiB and the job still exited 0."""
    nodes = [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"]) for i in range(2)]
    agents = ",".join(a.address for a in nodes)
    before = [a.memory("VmRSS") for a in nodes]
    size = 24 << 20
    script = ["/bin/sh", "-c", 'sleep 2; echo "rank $PMI_RANK took $(wc -c) bytes"']
    path = os.path.join(c.dir, "big.in")
    with open(path, "w") as f:
        f.write("y" * size)
    with open(path) as f:
        p = c.start_launch(["--agents", agents, "-n", "2", *script], stdin=f)
        r = c.finish_launch(p, ["< big.in"], time.monotonic(), 120)
    expect_status(r, 0)
    check(f"rank 0 took {size} bytes" in r.out, f"rank 0 lost stdin\n{r.describe()}")
    grown = [a.memory("VmRSS") - b for a, b in zip(nodes, before)]
    r = c.run_launch(["--agents", agents, "-n", "3", "-i", "all", *script], input="z" * size,
                     timeout=120)
    expect_status(r, 0)
    for rank in range(3):
        check(f"rank {rank} took {size} bytes" in r.out, f"rank {rank} lost stdin\n{r.describe()}")
    if not SANITIZED:
        check(max(grown) < 24 << 10, f"agents grew by {grown} KiB holding stdin for a rank")
    c.check_clean(r)


def stdin_forwarding(c):
    """The launcher's stdin reaches rank 0 by default (srun's --input), every rank with `all`,
    one rank by number, none with `none`; EOF reaches them (`cat` ends), whether stdin is a pipe
    or a file, over two standalone agents; the other ranks read /dev/null and never block."""
    nodes = [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"]) for i in range(2)]
    agents = ",".join(a.address for a in nodes)
    script = ["sh", "-c", 'printf "rank %s got [%s]\\n" "$PMI_RANK" "$(cat | tr "\\n" +)"']
    text = "first line\nsecond line\n"

    def got(r, rank):
        lines = [l for l in r.out.splitlines() if l.startswith(f"rank {rank} got")]
        check(len(lines) == 1, f"rank {rank} printed {len(lines)} lines\n{r.describe()}")
        return lines[0].split("got ", 1)[1]

    r = c.run_launch(["--agents", agents, "-n", "3", *script], input=text)
    expect_status(r, 0)
    check(got(r, 0) == "[first line+second line+]", r.describe())
    check(got(r, 1) == "[]" and got(r, 2) == "[]", r.describe())
    r = c.run_launch(["--agents", agents, "-n", "3", "--input", "all", *script], input=text)
    expect_status(r, 0)
    check(all(got(r, k) == "[first line+second line+]" for k in range(3)), r.describe())
    path = os.path.join(c.dir, "input.txt")
    with open(path, "w") as f:
        f.write("from a file\n")
    with open(path) as f:
        p = c.start_launch(["--agents", agents, "-n", "3", "-i", "2", *script], stdin=f)
        r = c.finish_launch(p, ["-i", "2"], time.monotonic(), 60)
    expect_status(r, 0)
    check(got(r, 2) == "[from a file+]" and got(r, 0) == "[]", r.describe())
    r = c.run_launch(["--agents", agents, "-n", "2", "--input", "none", *script], input=text)
    expect_status(r, 0)
    check(got(r, 0) == "[]", r.describe())
    r = c.run_launch(["--agents", agents, "-n", "2", "--input", "5", "/bin/true"])
    check(r.code == 2 and "--input: rank 5" in r.err, r.describe())
    c.check_clean(r)


def cpu_binding(c):
    """--cpu-bind from the node's real topology (hwloc): `cores` puts ranks on different cores
    (with two or more), map_cpu on the named CPU, none leaves the launcher's CPUs; -v says each
    rank's CPUs; a CPU the node lacks is refused before anything runs."""
    allowed = sorted(os.sched_getaffinity(0))
    script = ["sh", "-c", "grep Cpus_allowed_list /proc/self/status | cut -f2"]

    def cpus(r):
        expect_status(r, 0)
        return {int(l.split(":")[0]): l.split(":", 1)[1].strip() for l in r.out.splitlines()}

    none = cpus(c.run_launch(["-l", "-n", "2", *script]))
    full = none[0]
    check(none[1] == full, f"unbound ranks differ: {none}")
    r = c.run_launch(["-l", "-v", "-n", "2", "--cpu-bind=cores", *script])
    bound = cpus(r)
    if len(allowed) >= 2:
        check(bound[0] != bound[1], f"--cpu-bind=cores put both ranks on {bound[0]}\n{r.describe()}")
    check(all(b != full or len(allowed) == 1 for b in bound.values()), f"not bound: {bound}")
    check("rank 0 on n1 bound to CPUs" in r.err, f"-v does not say the binding\n{r.describe()}")
    last = allowed[-1]
    mapped = cpus(c.run_launch(["-l", "-n", "1", f"--cpu-bind=map_cpu:{last}", *script]))
    check(mapped[0] == str(last), f"map_cpu:{last} gave {mapped[0]}")
    r = c.run_launch(["-n", "1", "--cpu-bind=map_cpu:1000", "/bin/true"])
    check(r.code not in (0, None) and "does not have" in r.err, r.describe())
    c.check_clean(r)


def sched_batch(c):
    """--sched: batch puts every rank under SCHED_BATCH (as the job's user too, where the agent
    is root), normal leaves them SCHED_OTHER, and auto (the default) is batch only on a node
    with more ranks than CPUs; anything else is refused before anything runs."""
    script = ["sh", "-c", "awk '/^policy/ { print $3 }' /proc/self/sched"]
    over = len(os.sched_getaffinity(0)) + 1  # ranks, one more than the agent's CPUs

    def policies(args):
        r = c.run_launch(args + script)
        expect_status(r, 0)
        return set(r.out.split())

    check(policies(["-n", "1"]) == {"0"}, "auto, one rank: not SCHED_OTHER")
    check(policies(["-n", str(over)]) == {"3"}, f"auto, {over} ranks: not SCHED_BATCH")
    check(policies(["-n", str(over), "--sched", "normal"]) == {"0"},
          "--sched normal is not SCHED_OTHER")
    check(policies(["-n", "1", "--sched", "batch"]) == {"3"}, "--sched batch is not SCHED_BATCH")
    if os.geteuid() == 0:
        check(policies(["--user", "nobody", "-n", "2", "--sched", "batch"]) == {"3"},
              "--user nobody --sched batch: not SCHED_BATCH")
    r = c.run_launch(["-n", "1", "--sched", "fifo", "/bin/true"])
    check(r.code == 2 and "--sched: auto, normal or batch, got 'fifo'" in r.err, r.describe())
    c.check_clean(r)


def open_files_limits(c):
    """A shell's soft limit on open files (1024 on many systems) is below what a launcher needs
    for a link per node, or an agent for a few descriptors per rank: both raise it to the hard
    limit, as srun does. A launcher whose hard limit is too low says so before connecting; an
    agent warns at start when its limits.* allow more than it may open. Before, a launch on
    more nodes than the soft limit failed with 'too many open files'."""
    def nofile(soft, hard):
        return ["prlimit", f"--nofile={soft}:{hard}", "--"]
    roomy = c.start_agent("n1", ["--listen", "127.0.0.1:0"], wrapper=nofile(16, 8192))
    r = c.run_launch(["--agents", roomy.address, "-n", "8", "/bin/true"])
    expect_status(r, 0)
    check("may open" not in roomy.log_text(), f"warned with room to spare\n{roomy.log_text()}")
    tight = c.start_agent("n2", ["--listen", "127.0.0.2:0"], wrapper=nofile(64, 64))
    check(tight.wait_log("may open 64 files"), f"no warning at 64 files\n{tight.log_text()}")
    nodes = [roomy, tight] + [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"])
                              for i in range(2, 12)]
    agents = ",".join(a.address for a in nodes)
    r = c.run_launch(["--agents", agents, "-N", "12", "-n", "12", "/bin/true"],
                     wrapper=nofile(16, 8192))
    expect_status(r, 0)
    r = c.run_launch(["--agents", agents, "-N", "12", "-n", "12", "/bin/true"],
                     wrapper=nofile(16, 16))
    expect_status(r, 2)
    check("needs about 76 open files" in r.err and "may open 16" in r.err, r.describe())
    c.check_clean(r)


def srun_front(c):
    """lattice-srun, srun's front for job scripts: it execs `lattice launch` with srun's options
    translated (-l labels; ranks get SLURM_*; the program's own -n stays its own), and refuses
    what lattice cannot do in one line with srun's status 1, before anything runs."""
    def srun(*args):
        started = time.monotonic()
        p = subprocess.run([SRUN, *args], stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, env=c.case_env(), timeout=LAUNCH_TIMEOUT)
        return LaunchResult(["(lattice-srun)", *args], p.returncode, p.stdout, p.stderr,
                            time.monotonic() - started)

    r = srun("-n", "2", "-l", "/bin/echo", "hi")
    expect_status(r, 0)
    check(sorted(r.out.splitlines()) == ["0: hi", "1: hi"], r.describe())
    # --export=ALL,NAME=VALUE as srun spells it: the case's tag, so check_clean finds the ranks.
    r = srun("-n2", f"--export=ALL,LT_TEST_TAG={c.tag}", "/bin/sh", "-c",
             'echo "$SLURM_PROCID/$SLURM_NTASKS $*"', "sh", "-n", "5")
    expect_status(r, 0)
    check(sorted(r.out.splitlines()) == ["0/2 -n 5", "1/2 -n 5"], r.describe())
    r = srun("--mem-per-gpu", "1G", "/bin/true")
    check(r.code == 1 and r.out == "" and r.err ==
          "lattice-srun: --mem-per-gpu is not supported (lattice launch limits memory per node "
          "(--mem) or per CPU (--mem-per-cpu), not per GPU)\n", r.describe())
    c.check_clean(r)


if __name__ == "__main__":
    run_cases([
        ("pmi_port_mode", pmi_port_mode),
        ("unix_socket_served", unix_socket_served),
        ("sigint_forwarded", sigint_forwarded),
        ("second_sigint_kills", second_sigint_kills),
        ("slurm_compat_env", slurm_compat_env),
        ("verbose_timings", verbose_timings),
        ("time_limit", time_limit),
        ("kill_on_bad_exit_0", kill_on_bad_exit_0),
        ("alloc_and_chdir", alloc_and_chdir),
        ("output_files", output_files),
        ("environment_export", environment_export),
        ("slow_reader_loses_nothing", slow_reader_loses_nothing),
        ("agent_stops_despite_a_slow_reader", agent_stops_despite_a_slow_reader),
        ("reader_gone_ends_the_launch", reader_gone_ends_the_launch),
        ("stdin_forwarding", stdin_forwarding),
        ("large_stdin_arrives_whole", large_stdin_arrives_whole),
        ("cpu_binding", cpu_binding),
        ("sched_batch", sched_batch),
        ("open_files_limits", open_files_limits),
        ("srun_front", srun_front),
    ])
