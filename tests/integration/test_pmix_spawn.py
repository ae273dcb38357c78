"""PMIx_Spawn (what MPI_Comm_spawn calls underneath) with a real PMIx client, tests/programs/
pmix_spawn.c, across standalone agents (each its own process and address), the job run as an
unprivileged test user: the children start as a launch of their own on the parent's nodes,
spread over them or on the node PMIX_HOST names, know their parent (PMIX_PARENT_ID) and get the
variables it gave; their output comes back through the parent's launcher labelled as theirs
("1.R: "); a spawn that cannot be met fails at once with the reason, never hangs; and nothing
is left running."""
import os
import re
import shutil

from harness import check, expect_status, prog, run_cases, test_user

CHILD = re.compile(r"^1\.(\d+): child (\d+)/(\d+) on (\S+) of (\S+) parent (\S+)$")


def agents(c, count, *extra):
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0", *extra])
            for i in range(count)]


def job_program(c, name="pmix_spawn"):
    """The program where the test user can run it (the case's directory is root's)."""
    os.chmod(c.dir, 0o711)
    bin_dir = os.path.join(c.dir, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    os.chmod(bin_dir, 0o755)
    program = os.path.join(bin_dir, name)
    shutil.copy(prog(name), program)
    os.chmod(program, 0o755)
    return program


def spawn(c, nodes, args, program="pmix_spawn"):
    user = test_user("victim")
    return c.run_launch(["--agents", ",".join(a.address for a in nodes), "--user", user.name,
                         "--pmi", "pmix", "-n", str(len(nodes)), "-l", job_program(c, program),
                         *args], timeout=120, cwd="/tmp")


def children(result):
    """(rank, size, node, nspace, parent) of every child line, checked for its env line too."""
    out = []
    for line in result.out.splitlines():
        m = CHILD.match(line)
        if m:
            out.append((int(m.group(1)), int(m.group(3)), m.group(4), m.group(5), m.group(6)))
            check(f"1.{m.group(1)}: child {m.group(2)} env from-parent" in result.out,
                  f"child {m.group(1)} did not get the parent's variable\n{result.describe()}")
    return sorted(out)


def spawned_nspace(result):
    m = re.search(r"^0: spawned \d+ into (\S+)$", result.out, re.M)
    check(m, f"rank 0 did not report a spawn\n{result.describe()}")
    return m.group(1)


def across_agents(c):
    nodes = agents(c, 2)
    r = spawn(c, nodes, ["3"])
    expect_status(r, 0)
    nspace = spawned_nspace(r)
    got = children(r)
    check([g[0] for g in got] == [0, 1, 2], f"expected children 0-2\n{r.describe()}")
    check(all(g[1] == 3 and g[3] == nspace for g in got), r.describe())
    # As -N 2 -n 3 would place them; the parent is rank 0 of the launch that spawned them.
    check([g[2] for g in got] == ["n1", "n1", "n2"], f"children's nodes\n{r.describe()}")
    check(all(g[4].endswith(":0") and g[4] != nspace for g in got), r.describe())
    c.check_clean(r)


def on_named_host(c):
    nodes = agents(c, 2)
    r = spawn(c, nodes, ["2", "n2"])
    expect_status(r, 0)
    got = children(r)
    check([g[2] for g in got] == ["n2", "n2"], f"PMIX_HOST n2 not honoured\n{r.describe()}")
    c.check_clean(r)


def refused_at_once(c):
    """A host that is none of the launch's: the spawn fails with the reason (rank 0 prints it and
    exits 3, which ends the launch); no child runs and nothing waits."""
    nodes = agents(c, 2)
    r = spawn(c, nodes, ["2", "n9"])
    expect_status(r, 3)
    check("0: spawn failed" in r.out, r.describe())
    check("'n9' is not one of the launch's nodes" in r.out + r.err, r.describe())
    check(not children(r), r.describe())
    c.check_clean(r)


PARENT = re.compile(r"^(\d+): parent (\d+)/(\d+): (\d+) children, their sum (\d+)$", re.M)
OMPI_CHILD = re.compile(r"^1\.(\d+): child (\d+)/(\d+): (\d+) parents, their sum (\d+)$", re.M)


def comm_spawn(c, host, children, parents=2):
    """ompi_spawn (Open MPI's MPI_Comm_spawn, then an MPI_Allreduce across the parents and the
    children, then MPI_Comm_disconnect) on `parents` agents: every parent hears the children's
    sum and every child the parents'."""
    nodes = agents(c, parents, "--log-level", "debug")
    r = spawn(c, nodes, [str(children), host], program="ompi_spawn")
    expect_status(r, 0)
    got = sorted((int(m[0]), int(m[3]), int(m[4])) for m in PARENT.findall(r.out))
    expected_children = children * (children + 1) // 2
    check(got == [(p, children, expected_children) for p in range(parents)],
          f"parents' view of the children\n{r.describe()}")
    kids = sorted((int(m[0]), int(m[3]), int(m[4])) for m in OMPI_CHILD.findall(r.out))
    expected_parents = 100 * parents * (parents + 1) // 2
    check(kids == [(k, parents, expected_parents) for k in range(children)],
          f"children's view of the parents\n{r.describe()}")
    c.check_clean(r)
    return nodes


def comm_spawn_beside(c):
    """Children on both nodes, beside their parents (-N 2 -n 3's placement)."""
    comm_spawn(c, "-", 3)


def comm_spawn_elsewhere(c):
    """Children on n2 only: n1's libpmix knows their namespace from the parent's head
    (PmixFamily) and fetches their data from n2."""
    n1 = comm_spawn(c, "n2", 2)[0]
    log = n1.log_text()
    check(re.search(r"spawned namespace lattice\.\S+ \(2 ranks\) registered here", log), n1.log())
    check(re.search(r"direct modex for rank \d of spawned launch \S+ asked of node 1", log),
          n1.log())


def job_file(c, name, text, mode):
    """A file in the case's directory (the victim may pass through it), with `mode`."""
    path = os.path.join(c.dir, "bin", name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def comm_spawn_hostfile(c):
    """MPI_Info "hostfile" (PMIX_HOSTFILE): the launcher reads it as the job's user and the
    children run on the node it names, n2, only."""
    job_program(c, "ompi_spawn")
    hosts = job_file(c, "hosts", "# spawn here\nn2 slots=2\n", 0o644)
    n1 = comm_spawn(c, f"hostfile:{hosts}", 2)[0]
    check(re.search(r"spawned namespace lattice\.\S+ \(2 ranks\) registered here",
                    n1.log_text()), n1.log())


def hostfile_read_as_user(c):
    """A hostfile the job's user may not read is not read for them by a root launcher: the
    spawn fails, saying why, and nothing of the file shows."""
    nodes = agents(c, 1)
    job_program(c, "ompi_spawn")
    secret = job_file(c, "root-only", "n1 precious-secret\n", 0o600)
    r = spawn(c, nodes, ["1", f"hostfile:{secret}"], program="ompi_spawn")
    expect_status(r, 0)
    check("0: parent 0: spawn failed" in r.out, r.describe())
    check(f"cannot open file {secret} as user lattice-t-victim: Permission denied" in r.err,
          r.describe())
    check("precious" not in r.out + r.err, r.describe())
    check(not OMPI_CHILD.findall(r.out), r.describe())
    c.check_clean(r)


def add_host_refused(c):
    """MPI_Info "add-host": children run on the launch's own nodes, so it is refused at once,
    by name, rather than ignored."""
    nodes = agents(c, 1)
    r = spawn(c, nodes, ["1", "add-host:elsewhere"], program="ompi_spawn")
    expect_status(r, 0)
    check("0: parent 0: spawn failed" in r.out, r.describe())
    check("children run on the launch's own nodes" in r.err, r.describe())
    c.check_clean(r)


def nested_spawn(c):
    """Parents on n1-n3, their children on n2 and n3, who spawn grandchildren in turn
    (MPI_Comm_spawn from a spawned launch) on n2 and n3: the grandchildren connect back to the
    children through the family's first launch, whose head (n1) hears of them from the
    children's head (n2) and tells every node; every generation hears the sum of the one it
    talks to."""
    nodes = agents(c, 3, "--log-level", "debug")
    r = spawn(c, nodes, ["2", "n2,n3", "nested"], program="ompi_spawn")
    expect_status(r, 0)
    got = sorted((int(m[0]), int(m[3]), int(m[4])) for m in PARENT.findall(r.out))
    check(got == [(p, 2, 3) for p in range(3)], f"parents' view of the children\n{r.describe()}")
    kids = sorted((int(m[0]), int(m[3]), int(m[4])) for m in OMPI_CHILD.findall(r.out))
    check(kids == [(0, 3, 600), (1, 3, 600)], f"children's view of the parents\n{r.describe()}")
    for k in range(2):
        check(f"1.{k}: child {k}: grandchildren's sum 3" in r.out, r.describe())
        check(f"1.1.{k}: child {k}/2: 2 parents, their sum 30" in r.out, r.describe())
    # n1 runs neither generation: its libpmix learnt both namespaces from its own head.
    registered = re.findall(r"spawned namespace (lattice\.\S+) \(2 ranks\) registered here",
                            nodes[0].log_text())
    check(len(set(registered)) == 2, nodes[0].log())
    c.check_clean(r)


CASES = [
    ("across_agents", across_agents),
    ("on_named_host", on_named_host),
    ("refused_at_once", refused_at_once),
    ("comm_spawn_beside", comm_spawn_beside),
    ("comm_spawn_elsewhere", comm_spawn_elsewhere),
    ("comm_spawn_hostfile", comm_spawn_hostfile),
    ("hostfile_read_as_user", hostfile_read_as_user),
    ("add_host_refused", add_host_refused),
    ("nested_spawn", nested_spawn),
]

if __name__ == "__main__":
    run_cases(CASES if os.environ.get("LATTICE_PMIX", "1") == "1" else [])
