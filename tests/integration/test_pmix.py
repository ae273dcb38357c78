"""The PMIx tier with real Open MPI 4.1 programs (built with Open MPI's mpi.h and libmpi):
`lattice launch --pmi pmix` on one node and over 2 and 4 standalone agents (each its own
process and address, so libpmix's fence_nb crosses agents through the tree fence), MPI_Abort's
status, a rank killed by SIGKILL, and nothing left behind: no rank, no per-launch directory (Open
MPI's session tree lives in it), no shared-memory file, and the agent's PMIx server directory
gone when the agent stops and removed at start-up when a crashed agent left it; libpmix loaded
only by the first --pmi pmix launch, and a missing lattice-pmix.so said so.
In a build without libpmix (LATTICE_PMIX=0) only `absent` runs: --pmi pmix must say so."""
import os
import shutil
import signal
import socket
import subprocess
import time

from harness import (AGENTD, check, expect_failure_line, expect_mpmd, expect_status, mpmd_args, prog,
                     run_cases, test_user, wait_until)


def agents(c, count, extra=()):
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0", *extra])
            for i in range(count)]


def addresses(nodes):
    return ",".join(a.address for a in nodes)


def shm_files():
    try:
        return set(os.listdir("/dev/shm"))
    except OSError:
        return set()


def expect_ok(c, result, ranks, per_node):
    expect_status(result, 0)
    lines = [l for l in result.out.splitlines() if " ok " in l]
    check(len(lines) == ranks, f"expected {ranks} ok lines\n{result.describe()}")
    check(all(f"{per_node} on this node" in l for l in lines),
          f"each rank should see {per_node} ranks on its node\n{result.describe()}")
    check("PMI_SIZE" not in result.err, result.describe())
    c.check_clean(result)


def one_node(c):
    before = shm_files()
    r = c.run_launch(["--pmi", "pmix", "-n", "4", prog("ompi_check")], timeout=120)
    expect_ok(c, r, 4, 4)
    check(shm_files() <= before, f"new files in /dev/shm: {shm_files() - before}")


def two_agents(c):
    nodes = agents(c, 2, ["--log-level", "debug"])
    r = c.run_launch(["--agents", addresses(nodes), "--pmi", "pmix", "-n", "4",
                      prog("ompi_check")], timeout=120)
    expect_ok(c, r, 4, 2)
    # Open MPI fences across nodes through the host (fence_nb); one node alone never asks.
    for a in nodes:
        check("PMIx fence 1 entered" in a.log_text(), f"no cross-node PMIx fence\n{a.log()}")


def four_agents(c):
    nodes = agents(c, 4)
    r = c.run_launch(["--agents", addresses(nodes), "--pmi", "pmix", "-n", "8",
                      prog("ompi_check")], timeout=120)
    expect_ok(c, r, 8, 2)
    # The agents serve the next launch (a fresh namespace on the same libpmix server).
    r = c.run_launch(["--agents", addresses(nodes), "--pmi", "pmix", "-n", "4", "--distribution",
                      "cyclic", prog("ompi_check")], timeout=120)
    expect_ok(c, r, 4, 1)


def many_ranks(c):
    """More ranks than cores: rank exits race libpmix's finalize events, which must never make a
    rank that finalized look as if it had not (the client is released only after the agent saw
    its finalize)."""
    nodes = agents(c, 2)
    r = c.run_launch(["--agents", addresses(nodes), "--pmi", "pmix", "-n", "16",
                      prog("ompi_check")], timeout=180)
    expect_ok(c, r, 16, 8)


def direct_modex(c):
    """Open MPI's async modex skips the wire-up fence: each rank's data is fetched on demand
    through libpmix's direct modex, which the agents carry to the rank's node and back."""
    nodes = agents(c, 2, ["--log-level", "debug"])
    r = c.run_launch(["--agents", addresses(nodes), "--pmi", "pmix", "-n", "4",
                      "--env", "OMPI_MCA_pmix_base_async_modex=1",
                      "--env", "OMPI_MCA_pmix_base_collect_data=0", prog("ompi_check")],
                     timeout=120)
    expect_ok(c, r, 4, 2)
    asked = sum(a.log_text().count("direct modex for rank") for a in nodes)
    check(asked > 0, f"no direct modex between agents\n{nodes[0].log()}\n{nodes[1].log()}")


def abort_status(c):
    nodes = agents(c, 2)
    r = c.run_launch(["--agents", addresses(nodes), "--pmi", "pmix", "-n", "4",
                      prog("ompi_fail"), "abort"], timeout=120)
    expect_status(r, 7)
    expect_failure_line(r, "rank 1", "abort", "7")
    # Open MPI's "N/A" stands for no message: the line ends at the exit code.
    check("N/A" not in r.err, f"Open MPI's placeholder message shown\n{r.describe()}")
    c.check_clean(r)


def killed_rank(c):
    nodes = agents(c, 2)
    r = c.run_launch(["--agents", addresses(nodes), "--pmi", "pmix", "-n", "4",
                      prog("ompi_fail"), "self-kill"], timeout=120)
    expect_status(r, 137)
    expect_failure_line(r, "rank 1", "SIGKILL")
    c.check_clean(r)


def as_another_user(c):
    """A root agent runs an Open MPI job as nobody: libpmix registers the ranks as nobody, and
    Open MPI's session files go to the launch's directory, which nobody owns (never the agent's
    PMIx server directory)."""
    os.chmod(c.dir, 0o711)  # others pass through, as through /run/lattice
    bin_dir = os.path.join(c.dir, "bin")
    os.makedirs(bin_dir)
    os.chmod(bin_dir, 0o755)
    program = os.path.join(bin_dir, "ompi_check")
    shutil.copy(prog("ompi_check"), program)
    os.chmod(program, 0o755)
    nodes = agents(c, 2)
    r = c.run_launch(["--agents", addresses(nodes), "--user", "nobody", "--pmi", "pmix", "-n", "4",
                      program], timeout=120, cwd="/tmp")
    expect_ok(c, r, 4, 2)


def env_of(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        return dict(e.decode().split("=", 1) for e in f.read().split(b"\0") if b"=" in e)


def uid_of(pid):
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def intrude(user, env):
    """Runs pmix_intruder as `user` with `env`; what it printed (it is killed after 20 s: let in,
    it may wait in a fence for ever)."""
    p = subprocess.Popen([prog("pmix_intruder")], env=env, user=user.uid, group=user.gid,
                         extra_groups=[], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    try:
        return p.communicate(timeout=20)[0]
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        return p.communicate()[0] + "\n(killed after 20 s)"


def knock(port, times):
    """Connects to 127.0.0.1:port `times` times, each time until the agent closes it (or 2 s);
    how many connected."""
    done = 0
    for _ in range(times):
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", port))
            done += 1
            s.recv(1)
        except OSError:
            pass
        finally:
            s.close()
    return done


def door_admits_only_the_jobs_user(c):
    """Another local user who learnt a running launch's PMIx namespace and server address (the
    test, as root, reads them where a leak would give them away) calls PMIx_Init as its rank 0
    with a shim that makes getuid() return the victim's uid: libpmix believes what a TCP client
    claims, the agent asks the kernel. Refused and logged with the real uid, first with no PMIx
    launch of the attacker's own on the node, then with one; the victim's launch, which wires up
    after both tries, runs to its end."""
    os.chmod(c.dir, 0o711)
    victim, hostile = test_user("victim"), test_user("hostile")
    agent = c.start_agent("n1")
    args = ["--agents", agent.address, "--user", victim.name, "--pmi", "pmix", "-n", "2",
            "/bin/sh", "-c", f"sleep 4; exec {prog('ompi_check')}"]
    p = c.start_launch(args, cwd="/tmp")
    started = time.monotonic()
    check(wait_until(c.survivors, 20), f"the victim's ranks never started\n{agent.log()}")
    env = env_of(c.survivors()[0])
    attack = {k: v for k, v in env.items() if k.startswith("PMIX_")}
    attack.update(PMIX_RANK="0", PATH="/usr/bin:/bin", LD_PRELOAD=prog("uid_shim.so"),
                  LATTICE_TEST_FAKE_UID=str(victim.uid), LATTICE_TEST_FAKE_GID=str(victim.gid))
    out = intrude(hostile, attack)
    check("init: refused" in out, f"uid {hostile.uid} got in as the victim's rank 0: {out}")
    check(agent.wait_log(f"refused a PMIx client from uid {hostile.uid}: no PMIx launch of that "
                         "user runs here"), f"no refusal logged\n{agent.log()}")
    # A burst of connections from that user costs a log line a second, with a count.
    port = int(env["PMIX_SERVER_URI41"].rsplit(":", 1)[1])
    burst = hostile.run(lambda: knock(port, 300))
    check(burst == "300", f"the burst did not connect: {burst}")
    time.sleep(1.1)  # the next refusal's line says how many were left out
    hostile.run(lambda: knock(port, 1))
    check(agent.wait_log("more like it"), f"no count of the refusals left out\n{agent.log()}")
    lines = [l for l in agent.log_text().splitlines() if "no PMIx launch of that user" in l]
    check(len(lines) <= 10, f"{len(lines)} lines for 302 refusals\n{agent.log()}")
    # With a PMIx launch of its own here, the attacker passes the first check, not the second.
    own_args = ["--agents", agent.address, "--user", hostile.name, "--pmi", "pmix", "-n", "1",
                "/bin/sleep", "60"]
    own = c.start_launch(own_args, cwd="/tmp")
    check(wait_until(lambda: hostile.uid in [uid_of(q) for q in c.survivors()], 20),
          "the attacker's own launch never started")
    out = intrude(hostile, attack)
    check("init: refused" in out, f"uid {hostile.uid} got in as the victim's rank 0: {out}")
    nspace = env["PMIX_NAMESPACE"]
    check(agent.wait_log(f"uid {hostile.uid} posed as rank 0 of {nspace}, which runs as uid "
                         f"{victim.uid}"), f"no refusal logged\n{agent.log()}")
    r = c.finish_launch(p, args, started, 120)
    expect_status(r, 0)
    lines = [l for l in r.out.splitlines() if " ok " in l]
    check(len(lines) == 2, f"the victim's launch did not run to its end\n{r.describe()}")
    os.killpg(own.pid, signal.SIGTERM)
    c.finish_launch(own, own_args, started, 30)
    c.check_clean(r)


def server_dir_lifecycle(c):
    (node,) = agents(c, 1)
    server_dir = os.path.join(node.dir, "pmix-server")
    r = c.run_launch(["--agents", node.address, "--pmi", "pmix", "-n", "2", prog("ompi_check")],
                     timeout=120)
    expect_ok(c, r, 2, 2)
    check(os.path.isdir(server_dir), f"no PMIx server directory at {server_dir}\n{node.log()}")
    node.stop()
    check(not os.path.exists(server_dir), f"{server_dir} left after the agent stopped")
    # A crashed agent's leftovers go at the next start in the same directory.
    os.makedirs(os.path.join(server_dir, "stale"), exist_ok=True)
    c.agents.remove(node)
    c.start_agent("n1", ["--listen", "127.0.0.1:0"])
    check(not os.path.exists(server_dir), f"{server_dir} left from a previous agent")


def environment(c):
    """What a rank finds: libpmix's variables and mpirun's OMPI_*, never PMI_* beside them."""
    r = c.run_launch(["--pmi", "pmix", "-n", "2", "/usr/bin/env"], timeout=60)
    expect_status(r, 0)
    check("PMIX_NAMESPACE=lattice." in r.out, r.describe())
    check("OMPI_COMM_WORLD_SIZE=2" in r.out, r.describe())
    check("PMI_SIZE=" not in r.out and "PMI_FD=" not in r.out, r.describe())
    c.check_clean(r)


def absent(c):
    """A build without libpmix refuses --pmi pmix before anything runs, and says why."""
    nodes = agents(c, 2)
    for args in (["--agents", addresses(nodes)], []):  # standalone agents and local mode
        r = c.run_launch([*args, "--pmi", "pmix", "-n", "2", "/bin/true"], timeout=60)
        check(r.code not in (0, None), f"--pmi pmix ran without PMIx\n{r.describe()}")
        check("built without libpmix" in r.err, f"no clear reason\n{r.describe()}")
        c.check_clean(r)


def loaded_on_first_use(c):
    """libpmix is not in the agent until a --pmi pmix launch needs it (lattice-pmix.so, loaded
    then and kept): an agent serving MPICH never maps it."""
    agent, = agents(c, 1)

    def maps_libpmix():
        with open(f"/proc/{agent.proc.pid}/maps") as f:
            return "libpmix" in f.read()

    r = c.run_launch(["--agents", agent.address, "-n", "2", prog("mpi_hello")], timeout=60)
    expect_status(r, 0)
    check(not maps_libpmix(), "an MPICH launch loaded libpmix")
    r = c.run_launch(["--agents", agent.address, "--pmi", "pmix", "-n", "2", prog("ompi_check")],
                     timeout=120)
    expect_ok(c, r, 2, 2)
    check(maps_libpmix(), "a --pmi pmix launch ran without libpmix mapped?")


def module_missing(c):
    """An agent whose lattice-pmix.so is missing refuses --pmi pmix, naming the file, and goes
    on serving PMI-2 launches."""
    bindir = os.path.join(c.dir, "bin")
    os.mkdir(bindir)
    shutil.copy(AGENTD, bindir)
    agent = c.start_agent("n1", binary=os.path.join(bindir, "lattice-agentd"))
    r = c.run_launch(["--agents", agent.address, "--pmi", "pmix", "-n", "2", prog("ompi_check")],
                     timeout=60)
    check(r.code not in (0, None), f"--pmi pmix ran without its module\n{r.describe()}")
    check("PMIx (--pmi pmix) is not available: cannot load" in r.err and "lattice-pmix.so" in r.err,
          f"no clear reason\n{r.describe()}")
    c.check_clean(r)
    r = c.run_launch(["--agents", agent.address, "-n", "2", prog("mpi_hello")], timeout=60)
    expect_status(r, 0)
    c.check_clean(r)


def mpmd(c):
    """Open MPI's MPI_APPNUM under --pmi pmix over 2 agents: per-rank app numbers and the app
    arrays (size, leader) registered with libpmix; each app its own --env and argv."""
    nodes = agents(c, 2)
    apps = [(2, "a", ["argA"]), (3, "b", ["argB", "x"])]
    r = c.run_launch(["--agents", addresses(nodes), "--pmi", "pmix", "-N", "2",
                      *mpmd_args("ompi_mpmd", apps)], timeout=120)
    expect_mpmd(r, apps)
    c.check_clean(r)


CASES = [
    ("one_node", one_node),
    ("two_agents", two_agents),
    ("four_agents", four_agents),
    ("many_ranks", many_ranks),
    ("direct_modex", direct_modex),
    ("abort_status", abort_status),
    ("killed_rank", killed_rank),
    ("as_another_user", as_another_user),
    ("server_dir_lifecycle", server_dir_lifecycle),
    ("door_admits_only_the_jobs_user", door_admits_only_the_jobs_user),
    ("environment", environment),
    ("mpmd", mpmd),
    ("loaded_on_first_use", loaded_on_first_use),
    ("module_missing", module_missing),
]

if __name__ == "__main__":
    run_cases(CASES if os.environ.get("LATTICE_PMIX", "1") == "1" else [("absent", absent)])
