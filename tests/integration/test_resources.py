"""CPUs and GPUs per rank: -c/--cpus-per-task with a real OpenMP MPI program (MPICH, built with
-fopenmp) that checks omp_get_max_threads and its sched_getaffinity; --cpu-bind's kinds with
-c; a -c that does not fit refused before any rank starts (by the agent, or by the launcher in
local mode, where it knows the CPUs; in an allocation, against the allocation's CPUs); and GPUs
per rank from an agent's configured `gpus:` list (--gpus-per-task, --gpus-per-node,
--gpu-bind), a request the node cannot meet refused before any rank starts. Launches run as an
unprivileged user the test makes where the binding meets the user switch."""
import os

from harness import (LATTICE, CaseFailure, check, expect_status, prog, run_cases, test_user)

CPUS = sorted(os.sched_getaffinity(0))


def omp_program():
    path = prog("mpi_omp")
    if not os.access(path, os.X_OK):
        raise CaseFailure(f"{path} was not built (the C compiler has no OpenMP?)")
    return path


def omp_lines(r):
    """rank -> (threads, team, [cpus]) from mpi_omp's lines."""
    expect_status(r, 0)
    out = {}
    for line in r.out.splitlines():
        f = line.split()
        if len(f) == 10 and f[0] == "rank":
            out[int(f[1])] = (int(f[5]), int(f[7]), [int(x) for x in f[9].split(",")])
    return out


def agents_arg(agents):
    return ",".join(a.address for a in agents)


def cpus_of(r):
    """rank -> its Cpus_allowed_list, from `-l` output of a script printing it."""
    expect_status(r, 0)
    return {int(l.split(":")[0]): l.split(":", 1)[1].strip() for l in r.out.splitlines()}


CPUS_ALLOWED = ["sh", "-c", "grep Cpus_allowed_list /proc/self/status | cut -f2"]


def openmp_cpus_per_task(c):
    """-c 2: each rank of an OpenMP MPI program gets OMP_NUM_THREADS=2 and exactly 2 CPUs of its
    own, one rank on each of two agents; -n 2 -c 1 on one agent gives each rank its own CPU."""
    if len(CPUS) < 2:
        raise CaseFailure(f"this case needs 2 CPUs, the test may use {CPUS}")
    omp = omp_program()
    nodes = [c.start_agent("n1"), c.start_agent("n2")]
    r = c.run_launch(["--agents", agents_arg(nodes), "-n", "2", "-c", "2", omp,
                      "--threads", "2", "--cpus", "2"])
    ranks = omp_lines(r)
    check(sorted(ranks) == [0, 1], f"expected ranks 0 and 1\n{r.describe()}")
    for rank, (threads, team, cpus) in ranks.items():
        check(threads == 2 and team == 2 and len(cpus) == 2 and set(cpus) <= set(CPUS),
              f"rank {rank}: {threads} threads, a team of {team}, CPUs {cpus}\n{r.describe()}")

    # Two ranks of one CPU on one node: distinct CPUs, one thread each (srun -n 2 -c 1).
    r = c.run_launch(["--agents", nodes[0].address, "-n", "2", "-c", "1", omp,
                      "--threads", "1", "--cpus", "1"])
    ranks = omp_lines(r)
    check(len(ranks) == 2 and ranks[0][2] != ranks[1][2],
          f"two ranks of -c 1 share a CPU: {ranks}\n{r.describe()}")

    # OMP_NUM_THREADS the user exported wins; SLURM_CPUS_PER_TASK says -c under --slurm-compat.
    r = c.run_launch(["--agents", nodes[0].address, "-n", "1", "-c", "2", omp, "--threads", "3",
                      "--cpus", "2"], env={"OMP_NUM_THREADS": "3"})
    check(omp_lines(r)[0][:2] == (3, 3), f"the exported OMP_NUM_THREADS=3 lost\n{r.describe()}")
    r = c.run_launch(["--agents", nodes[0].address, "--slurm-compat", "-n", "1", "-c", "2",
                      "sh", "-c", "echo $SLURM_CPUS_PER_TASK $OMP_NUM_THREADS"])
    expect_status(r, 0)
    check(r.out.split() == ["2", "2"], f"SLURM_CPUS_PER_TASK, OMP_NUM_THREADS\n{r.describe()}")
    c.check_clean(r)


def cpus_per_task_refused(c):
    """-c beyond what a node has is refused, naming the node and the numbers, before any rank
    starts: by the agent with --agents (the launcher does not know its CPUs), by the launcher in
    local mode (its agents run on its own CPUs)."""
    too_many = len(CPUS) + 1
    agent = c.start_agent("n1")
    marker = os.path.join(c.dir, "ran")
    touch = ["sh", "-c", f"touch {marker}"]
    r = c.run_launch(["--agents", agent.address, "-n", "1", "-c", str(too_many), *touch])
    check(r.code not in (0, None) and
          f"node n1: 1 rank of {too_many} CPUs (-c {too_many}) need {too_many} CPUs, but launches "
          f"there may use {len(CPUS)}" in r.err, r.describe())
    # Two ranks whose CPUs together exceed the node's, each fitting alone.
    r = c.run_launch(["--agents", agent.address, "-n", "2", "-c", str(len(CPUS)), *touch])
    check(r.code not in (0, None) and "node n1: 2 ranks of" in r.err, r.describe())
    check(not os.path.exists(marker), "a rank ran although the launch was refused")
    r = c.run_launch(["-n", "1", "-c", str(too_many), *touch])
    check(r.code == 2 and f"a rank of {too_many} CPUs does not fit a node of {len(CPUS)}" in r.err,
          r.describe())
    r = c.run_launch(["-N", "1", "-n", "2", "-c", str(len(CPUS)), *touch])
    check(r.code == 2 and "on one node need" in r.err, r.describe())
    check(not os.path.exists(marker), "a rank ran although the launch was refused")
    for bad in ("0", "x", "1025"):
        r = c.run_launch(["-n", "1", "-c", bad, "/bin/true"])
        check(r.code == 2 and "--cpus-per-task: expected a whole number" in r.err, r.describe())
    c.check_clean(r)


def cpus_per_task_local_layout(c):
    """In local mode -c lays ranks out by CPUs: as many nodes (local agents) as the ranks' CPUs
    fill, as srun -n 2 -c 2 takes two nodes of 2 CPUs."""
    per_node = len(CPUS) // 2 or 1
    r = c.run_launch(["-l", "-n", "2", "-c", "2", "sh", "-c",
                      'echo "$LATTICE_NNODES $OMP_NUM_THREADS $(grep Cpus_allowed_list '
                      '/proc/self/status | cut -f2)"'])
    expect_status(r, 0)
    lines = {int(l.split(":")[0]): l.split(":", 1)[1].split() for l in r.out.splitlines()}
    want_nodes = str(-(-2 // per_node))
    for rank, (nnodes, threads, cpus) in lines.items():
        check(nnodes == want_nodes and threads == "2" and len(cpus.replace("-", ",").split(",")) == 2,
              f"rank {rank}: {nnodes} nodes, OMP_NUM_THREADS {threads}, CPUs {cpus} "
              f"(expected {want_nodes} nodes)\n{r.describe()}")
    c.check_clean(r)


def cpu_bind_kinds(c):
    """--cpu-bind with -c: threads (the default) and cores bind each rank to its own CPUs,
    sockets and ldoms to the socket and NUMA node they lie in, mask_cpu to its mask, none not at
    all; the ranks run as an unprivileged user (the binding is made before the switch)."""
    if len(CPUS) < 2:
        raise CaseFailure(f"this case needs 2 CPUs, the test may use {CPUS}")
    victim = test_user("victim")
    agent = c.start_agent("n1")
    full = cpus_of(c.run_launch(["--agents", agent.address, "-l", "-n", "1", *CPUS_ALLOWED]))[0]

    def bound(*args):
        return cpus_of(c.run_launch(["--agents", agent.address, "-l", "-n", "2", "-c", "1",
                                     "--user", victim.name, *args, *CPUS_ALLOWED], cwd="/tmp"))

    for kind in ([], ["--cpu-bind=threads"], ["--cpu-bind=cores"]):
        got = bound(*kind)
        check(got[0] != got[1] and full not in got.values(),
              f"{kind or 'the default'}: ranks not on CPUs of their own: {got}")
    # This machine's sockets and NUMA nodes hold both ranks' CPUs (the unit tests cover more).
    for kind in ("sockets", "ldoms"):
        got = bound(f"--cpu-bind={kind}")
        check(got[0] == got[1], f"--cpu-bind={kind}: ranks on different {kind}: {got}")
    check(bound("--cpu-bind=none") == {0: full, 1: full}, "--cpu-bind=none bound the ranks")
    a, b = CPUS[0], CPUS[1]
    got = bound(f"--cpu-bind=mask_cpu:{1 << b:x},{1 << a:#x}")
    check(got == {0: str(b), 1: str(a)}, f"mask_cpu: {got}")
    r = c.run_launch(["--agents", agent.address, "-n", "1", "--cpu-bind=mask_cpu:0x0", "/bin/true"])
    check(r.code == 2 and "names no CPU" in r.err, r.describe())
    r = c.run_launch(["--agents", agent.address, "-n", "1", f"--cpu-bind=mask_cpu:{1 << 1000:x}",
                      "/bin/true"])
    check(r.code not in (0, None) and "does not have" in r.err, r.describe())
    c.check_clean(r)


def cpus_per_task_in_allocation(c):
    """In an allocation of one CPU a node, the allocation's CPUs are what -c must fit: -c 2 is
    refused by the agent, naming the node and the one CPU; -c 1 binds the rank to that CPU."""
    from test_allocations import Alloc, agents, script
    victim = test_user("victim")
    nodes = agents(c, 1)
    body = (f"{LATTICE} launch -n 1 -c 2 /bin/true; echo \"c2 exit $?\"\n"
            f"{LATTICE} launch -n 1 -c 1 sh -c 'echo \"c1 $OMP_NUM_THREADS "
            "$(grep Cpus_allowed_list /proc/self/status | cut -f2)\"'\n")
    a = Alloc(c, nodes, [script(c, victim, "batch.sh", body)], user=victim,
              extra=["--cpus-per-node", "1"])
    r = a.finish()
    expect_status(r, 0)
    check("c2 exit 0" not in r.out and "c2 exit" in r.out and
          "node n1: 1 rank of 2 CPUs (-c 2) need 2 CPUs, but launches there may use 1" in r.err,
          f"-c 2 in an allocation of one CPU\n{r.describe()}")
    got = [l.split() for l in r.out.splitlines() if l.startswith("c1 ")]
    check(len(got) == 1 and got[0][1] == "1" and got[0][2].isdigit() and int(got[0][2]) in CPUS,
          f"-c 1: not on one CPU of the allocation\n{r.describe()}")
    c.check_clean(r)


def gpu_config(c, name, gpus):
    path = os.path.join(c.dir, name)
    with open(path, "w") as f:
        f.write("gpus:\n" + "".join(f"  - {{{g}}}\n" for g in gpus))
    return path


def visible(r, variable="CUDA_VISIBLE_DEVICES"):
    """rank -> the variable's value ('-' unset), from `-l` output of `echo ${VAR:--}`."""
    expect_status(r, 0)
    return {int(l.split(":")[0]): l.split(":", 1)[1].strip() for l in r.out.splitlines()}


def show(variable="CUDA_VISIBLE_DEVICES"):
    return ["sh", "-c", f"echo ${{{variable}:--}}"]


def gpus_per_task_from_config(c):
    """Four made-up NVIDIA GPUs in an agent's configuration: -n 4 --gpus-per-task 1 shows each
    rank a distinct one in CUDA_VISIBLE_DEVICES, over any value exported; more ranks than GPUs
    are refused before any rank starts, naming the node and its GPUs."""
    conf = gpu_config(c, "gpus.yaml", [f"index: {i}, vendor: nvidia, numa: 0" for i in range(4)])
    agent = c.start_agent("n1", ["--config", conf])
    check(agent.wait_log("GPUs from the configuration: 4 GPUs (nvidia 0-3)"),
          f"the agent does not say where its GPUs come from\n{agent.log()}")
    at = ["--agents", agent.address, "-l"]
    got = visible(c.run_launch([*at, "-n", "4", "--gpus-per-task", "1", *show()],
                               env={"CUDA_VISIBLE_DEVICES": "7"}))
    check(sorted(got.values()) == ["0", "1", "2", "3"], f"ranks' GPUs: {got}")
    got = visible(c.run_launch([*at, "-n", "2", "--gpus-per-task", "2", *show()]))
    check(got == {0: "0,1", 1: "2,3"}, f"--gpus-per-task 2: {got}")
    got = visible(c.run_launch([*at, "-n", "3", "--gpus-per-node", "2", *show()]))
    check(got == {0: "0,1", 1: "0,1", 2: "0,1"}, f"--gpus-per-node 2: {got}")
    got = visible(c.run_launch([*at, "-n", "2", "--gpus-per-task", "1", "--gpu-bind", "none",
                                *show()]))
    check(got == {0: "0,1", 1: "0,1"}, f"--gpu-bind none: {got}")
    got = visible(c.run_launch([*at, "-n", "3", "--gpu-bind", "map_gpu:3,1", *show()]))
    check(got == {0: "3", 1: "1", 2: "3"}, f"map_gpu:3,1: {got}")
    got = visible(c.run_launch([*at, "-n", "1", *show()], env={"CUDA_VISIBLE_DEVICES": "7"}))
    check(got == {0: "7"}, f"without a GPU option the exported value must pass: {got}")

    marker = os.path.join(c.dir, "ran")
    touch = ["sh", "-c", f"touch {marker}"]
    for args, why in ((["-n", "5", "--gpus-per-task", "1"],
                       "5 ranks of 1 GPU (--gpus-per-task 1) need 5"),
                      (["-n", "1", "--gpus-per-node", "5"], "--gpus-per-node 5 asks for 5"),
                      (["-n", "1", "--gpu-bind", "map_gpu:4"], "--gpu-bind map_gpu names GPU 4")):
        r = c.run_launch(["--agents", agent.address, *args, *touch])
        check(r.code not in (0, None) and f"node n1 has 4 GPUs (nvidia 0-3): {why}" in r.err,
              r.describe())
    check(not os.path.exists(marker), "a rank ran although the launch was refused")
    plain = c.start_agent("n2")
    r = c.run_launch(["--agents", plain.address, "-n", "1", "--gpus-per-task", "1", *touch])
    check(r.code not in (0, None) and "node n2 has no GPUs" in r.err, r.describe())
    check(not os.path.exists(marker), "a rank ran although the launch was refused")
    c.check_clean(r)


def gpu_vendors_and_closest(c):
    """Each vendor's variable (ROCR_VISIBLE_DEVICES, ZE_AFFINITY_MASK), and --gpu-bind closest:
    ranks bound to CPUs of NUMA node 0 get the GPUs configured there first."""
    conf = gpu_config(c, "mixed.yaml", ["index: 0, vendor: amd", "index: 1, vendor: amd",
                                        "index: 0, vendor: intel"])
    agent = c.start_agent("n1", ["--config", conf])
    at = ["--agents", agent.address, "-l"]
    got = visible(c.run_launch([*at, "-n", "2", "--gpus-per-task", "1",
                                *show("ROCR_VISIBLE_DEVICES")]))
    check(got == {0: "0", 1: "1"}, f"ROCR_VISIBLE_DEVICES: {got}")
    # Places in the node's order: amd 0, amd 1, intel 0.
    got = visible(c.run_launch([*at, "-n", "1", "--gpu-bind", "map_gpu:2",
                                *show("ZE_AFFINITY_MASK")]))
    check(got == {0: "0"}, f"ZE_AFFINITY_MASK: {got}")

    # The machine's NUMA node of CPU 0 holds the ranks; two GPUs elsewhere come first in order.
    numa = next((int(d[4:]) for d in sorted(os.listdir("/sys/devices/system/node"))
                 if d.startswith("node") and d[4:].isdigit()), 0)
    conf = gpu_config(c, "numa.yaml", [f"index: 0, vendor: nvidia, numa: {numa + 1}",
                                       f"index: 1, vendor: nvidia, numa: {numa + 1}",
                                       f"index: 2, vendor: nvidia, numa: {numa}",
                                       f"index: 3, vendor: nvidia, numa: {numa}"])
    far = c.start_agent("n2", ["--config", conf])
    at = ["--agents", far.address, "-l", "-n", "2", "-c", "1", "--gpus-per-task", "1"]
    got = visible(c.run_launch([*at, *show()]))
    check(got == {0: "0", 1: "1"}, f"in order: {got}")
    got = visible(c.run_launch([*at, "--gpu-bind", "closest", *show()]))
    check(got == {0: "2", 1: "3"}, f"--gpu-bind closest (ranks on NUMA node {numa}): {got}")
    r = c.run_launch(["--agents", far.address, "-n", "1", "--gpu-bind", "closest", "/bin/true"])
    check(r.code == 2 and "--gpu-bind closest needs --gpus-per-task or --gpus-per-node" in r.err,
          r.describe())
    c.check_clean(r)


def gpu_config_refused(c):
    """A bad gpus: list stops the agent at start with the file, line and what is wrong."""
    import subprocess
    from harness import AGENTD
    conf = gpu_config(c, "bad.yaml", ["index: 0, vendor: nvidia", "index: 0, vendor: nvidia"])
    p = subprocess.run([AGENTD, "--check-config", "--config", conf], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=30)
    check(p.returncode != 0 and f"{conf}:3: gpus[1]: nvidia GPU 0 is listed twice" in p.stderr,
          f"exit {p.returncode}\n{p.stderr}")


if __name__ == "__main__":
    run_cases([
        ("openmp_cpus_per_task", openmp_cpus_per_task),
        ("cpus_per_task_refused", cpus_per_task_refused),
        ("cpus_per_task_local_layout", cpus_per_task_local_layout),
        ("cpu_bind_kinds", cpu_bind_kinds),
        ("cpus_per_task_in_allocation", cpus_per_task_in_allocation),
        ("gpus_per_task_from_config", gpus_per_task_from_config),
        ("gpu_vendors_and_closest", gpu_vendors_and_closest),
        ("gpu_config_refused", gpu_config_refused),
    ])
