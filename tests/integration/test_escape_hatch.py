"""The escape hatch: inside a launch over two standalone agents, a plain mpiexec.hydra (MPICH)
and a plain mpirun (Open MPI 4.1) started by rank 0 place their processes on both nodes through
lattice-mpi-launcher, never ssh (an `ssh` first on PATH fails the test if anything calls it).
A job of another user than the agent's gets its commands run as that user. Refusals: a node
outside the launch, no token, a wrong token, another user at the socket. A
command's processes end with the launch, and when its client goes away.

The launch's other ranks wait (for a file rank 0 writes when done): a node whose ranks have all
exited ends its part of the launch, and with it the hatch there."""
import os
import socket
import stat
import time

from harness import (CaseSkipped, as_user, check, expect_status, prog, run_cases, wait_until)

NOBODY = 65534


def agents(c, count=2):
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"]) for i in range(count)]


def addresses(nodes):
    return ",".join(a.address for a in nodes)


def fake_ssh(c):
    """A directory whose `ssh` records that it was called and fails."""
    d = os.path.join(c.dir, "fake-bin")
    os.makedirs(d, exist_ok=True)
    marker = os.path.join(c.dir, "ssh-was-called")
    path = os.path.join(d, "ssh")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\necho "$@" >> {marker}\nexit 255\n')
    os.chmod(path, 0o755)
    return d, marker


def shared_dir(c):
    """A directory in the case's that the job's user may write, whoever that is."""
    os.chmod(c.dir, 0o711)
    d = os.path.join(c.dir, "shared")
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o1777)
    return d


def rank0_script(c, command):
    """Rank 0 runs `command`, prints its status, then lets the others go; they wait for it."""
    done = os.path.join(shared_dir(c), "rank0-done")
    return ["sh", "-c",
            f'if [ "$PMI_RANK" = 0 ]; then {command}; echo "inner status $?"; touch {done}; '
            f'else while [ ! -e {done} ]; do sleep 0.05; done; fi']


def launch_inside(c, nodes, command, extra_env=None, user=None):
    bin_dir, marker = fake_ssh(c)
    env = {"PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}", **(extra_env or {})}
    as_user = ["--user", user] if user else []
    r = c.run_launch(["--agents", addresses(nodes), *as_user, "-N", "2", "-n", "4",
                      *rank0_script(c, command)], timeout=180, env=env,
                     cwd="/tmp" if user else None)
    if os.path.exists(marker):
        with open(marker) as f:
            check(False, f"ssh was called with: {f.read()}\n{r.describe()}")
    return r


def expect_inner_ok(c, r):
    expect_status(r, 0)
    check("inner status 0" in r.out, f"the inner launcher failed\n{r.describe()}")
    lines = [l for l in r.out.splitlines() if " ok " in l]
    check(len(lines) == 4, f"expected 4 ok lines from the inner job\n{r.describe()}")
    check(all("2 on this node" in l for l in lines), f"not 2 ranks per node\n{r.describe()}")
    c.check_clean(r)


def hydra_inside(c):
    nodes = agents(c)
    r = launch_inside(c, nodes, f"mpiexec.hydra -n 4 -ppn 2 {prog('mpi_check')}")
    expect_inner_ok(c, r)


def hydra_inside_as_another_user(c):
    """The hatch runs its commands as the job's user, as the ranks run: a root agent's child
    becomes nobody before the exec, for mpiexec.hydra's proxies and their processes too."""
    nodes = agents(c)
    script = os.path.join(shared_dir(c), "whoami.sh")
    with open(script, "w") as f:
        f.write('#!/bin/sh\necho "inner uid $(id -u) groups $(id -G)"\n')
    os.chmod(script, 0o755)
    r = launch_inside(c, nodes, f"mpiexec.hydra -n 4 -ppn 2 {script}", user="nobody")
    expect_status(r, 0)
    check("inner status 0" in r.out, f"the inner launcher failed\n{r.describe()}")
    lines = [l for l in r.out.splitlines() if "inner uid" in l]
    check(len(lines) == 4 and all(l.endswith(f"inner uid {NOBODY} groups {NOBODY}") for l in lines),
          f"the hatch's processes are not all nobody's\n{r.describe()}")
    c.check_clean(r)


def mpirun_inside(c):
    if not os.path.exists(prog("ompi_check")):
        raise CaseSkipped("no Open MPI programs in this build")
    nodes = agents(c)
    r = launch_inside(c, nodes, f"mpirun.openmpi -np 4 {prog('ompi_check')}",
                      {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    expect_inner_ok(c, r)


def refusals(c):
    nodes = agents(c)
    probe = os.path.join(c.dir, "probe-socket")
    script = (
        '$HYDRA_LAUNCHER_EXEC -x n9 true; echo "outside $?"; '
        'LATTICE_EXEC_TOKEN=0000 $HYDRA_LAUNCHER_EXEC n2 true; echo "token $?"; '
        'env -u LATTICE_EXEC_TOKEN $HYDRA_LAUNCHER_EXEC n2 true; echo "none $?"; '
        '$HYDRA_LAUNCHER_EXEC n2 "echo on \\$(cat /proc/sys/kernel/hostname) > /dev/null; exit 7"; '
        'echo "ran $?"; '
        f'echo "$LATTICE_EXEC_SOCKET" > {probe}')
    r = launch_inside(c, nodes, script)
    expect_status(r, 0)
    for needle in ("outside 255", "token 255", "none 255", "ran 7"):
        check(needle in r.out, f"expected '{needle}'\n{r.describe()}")
    check("not part of launch" in r.err and "its nodes: n1,n2" in r.err, r.describe())
    check("not this launch's token" in r.err, r.describe())
    check("not inside a Lattice launch" in r.err, r.describe())
    # The socket lived in the launch's private directory: another user could not reach it.
    with open(probe) as f:
        path = f.read().strip()
    check(path.endswith("/exec.sock"), f"exec socket path {path!r}")

    def connect():
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(path)
            return "connected"
        except OSError as e:
            return f"refused: {e.strerror}"
        finally:
            s.close()
    # While a launch runs: start one that holds, probe its socket as nobody, then let it go.
    hold = os.path.join(c.dir, "hold")
    p = c.start_launch(["--agents", addresses(nodes), "-N", "2", "-n", "2", "sh", "-c",
                        f'echo "$LATTICE_EXEC_SOCKET" > {probe}.$PMI_RANK; '
                        f'while [ ! -e {hold} ]; do sleep 0.05; done'])
    check(wait_until(lambda: os.path.exists(f"{probe}.0") and os.path.getsize(f"{probe}.0") > 0,
                     30), "the holding launch never started")
    with open(f"{probe}.0") as f:
        path = f.read().strip()
    check(stat.S_ISSOCK(os.stat(path).st_mode), f"{path} is not a socket")
    answer = as_user(NOBODY, connect)
    check(answer.startswith("refused"), f"another user reached the exec socket: {answer}")
    open(hold, "w").close()
    r2 = c.finish_launch(p, ["(holding launch)"], time.monotonic(), 60)
    expect_status(r2, 0)
    c.check_clean(r2)


def killed_with_launch(c):
    """A command still running on n2 when the launch fails is killed there."""
    nodes = agents(c)
    started = os.path.join(c.dir, "remote-started")
    r = c.run_launch(["--agents", addresses(nodes), "-N", "2", "-n", "2", "sh", "-c",
                      f'if [ "$PMI_RANK" = 0 ]; then '
                      f'$HYDRA_LAUNCHER_EXEC n2 "touch {started}; exec sleep 300" & '
                      f'while [ ! -e {started} ]; do sleep 0.05; done; exit 3; '
                      f'else sleep 300; fi'], timeout=60)
    expect_status(r, 3)
    c.check_clean(r)  # the remote sleep carries the case's tag: it must be gone too


def client_gone(c):
    """Killing lattice-mpi-launcher ends its command on the other node; the launch then ends."""
    nodes = agents(c)
    started = os.path.join(c.dir, "remote-started")
    done = os.path.join(c.dir, "rank0-done")
    r = c.run_launch(["--agents", addresses(nodes), "-N", "2", "-n", "2", "sh", "-c",
                      f'if [ "$PMI_RANK" = 0 ]; then '
                      f'$HYDRA_LAUNCHER_EXEC n2 "touch {started}; exec sleep 300" & client=$!; '
                      f'while [ ! -e {started} ]; do sleep 0.05; done; kill $client; wait; '
                      f'echo "client gone"; touch {done}; '
                      f'else while [ ! -e {done} ]; do sleep 0.05; done; fi'], timeout=60)
    expect_status(r, 0)
    check("client gone" in r.out, r.describe())
    c.check_clean(r)


def late_command_refused(c):
    """A command for a node whose ranks have all exited is refused at once, with the reason,
    instead of waiting for a launch that is gone there (rank 1 on n2 exits at once; rank 0 asks
    n2 until the refusal comes)."""
    nodes = agents(c)
    r = c.run_launch(["--agents", addresses(nodes), "-N", "2", "-n", "2", "sh", "-c",
                      'if [ "$PMI_RANK" = 0 ]; then i=0; while [ $i -lt 200 ]; do '
                      '$HYDRA_LAUNCHER_EXEC n2 true 2>/dev/null || break; i=$((i+1)); sleep 0.05; '
                      'done; $HYDRA_LAUNCHER_EXEC n2 true; echo "late $?"; fi'], timeout=60)
    expect_status(r, 0)
    check("late 255" in r.out, f"no refusal for a node that left the launch\n{r.describe()}")
    check("has ended on n2" in r.err, r.describe())
    c.check_clean(r)


CASES = [
    ("hydra_inside", hydra_inside),
    ("hydra_inside_as_another_user", hydra_inside_as_another_user),
    ("mpirun_inside", mpirun_inside),
    ("refusals", refusals),
    ("killed_with_launch", killed_with_launch),
    ("client_gone", client_gone),
    ("late_command_refused", late_command_refused),
]

if __name__ == "__main__":
    run_cases(CASES)
