"""srun's and mpiexec's spellings of `lattice launch`'s options, with real MPICH programs on real
agents: mpiexec's `-np 4 -ppn 2` on two agents, srun's -w/-x choosing agents by node id (the
ranks' LATTICE_NODELIST says which ran the launch), srun's --multi-prog file and mpiexec's
-configfile as one MPI world, and a mistyped option's one-line error."""
import os

from harness import LATTICE, check, expect_status, prog, run_cases


def agents(c, count):
    """`count` agents n1, n2, ... on 127.0.0.1, 127.0.0.2, ...: one address per node."""
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"]) for i in range(count)]


def named(nodes):
    return ",".join(f"{a.node_id}={a.address}" for a in nodes)


def ok_lines(result, n, per_node):
    expect_status(result, 0)
    for rank in range(n):
        want = f"rank {rank}/{n} ok (allreduce, barrier, ring, {per_node} on this node)"
        check(want in result.out, f"no line '{want}'\n{result.describe()}")


def mpiexec_np_ppn(c):
    nodes = agents(c, 2)
    r = c.run_launch(["--agents", named(nodes), "-np", "4", "-ppn", "2", "-prepend-rank",
                      prog("mpi_check")], timeout=120)
    ok_lines(r, 4, 2)
    check(any(l.startswith("3: rank 3/4 ok") for l in r.out.splitlines()),
          f"-prepend-rank: no '3: ' label\n{r.describe()}")
    c.check_clean(r)


def nodelist_and_exclude(c):
    nodes = agents(c, 3)
    for choice, chosen in ((["-w", "n[1,3]"], "n1,n3"), (["--exclude=n1"], "n2,n3"),
                           (["-hosts", "n2,n3", "-x", "n3"], "n2")):
        count = len(chosen.split(","))
        r = c.run_launch(["--agents", named(nodes), *choice, "-n", "4", "--ntasks-per-node",
                          str(4 // count), prog("mpi_check")], timeout=120)
        ok_lines(r, 4, 4 // count)
        # The launch's nodes, as its ranks see them (LATTICE_NODELIST): those chosen.
        r = c.run_launch(["--agents", named(nodes), *choice, "-N", str(count), "-n", str(count),
                          "printenv", "LATTICE_NODELIST"])
        expect_status(r, 0)
        check(r.out.split() == [chosen] * count,
              f"{choice}: the launch ran on {r.out.split()}, not {chosen}\n{r.describe()}")
    c.check_clean()
    # A node id no agent has is an error naming it, before anything starts.
    r = c.run_launch(["--agents", named(nodes), "-w", "n1,n9", "-n", "2", prog("mpi_check")])
    expect_status(r, 2)
    check("no node 'n9'" in r.err and len(r.err.strip().splitlines()) == 1,
          f"-w n9: expected one line naming n9\n{r.describe()}")


def multi_prog(c):
    nodes = agents(c, 2)
    conf = os.path.join(c.dir, "mpmd.conf")
    with open(conf, "w") as f:
        f.write(f"# srun --multi-prog\n0,2 {prog('mpi_mpmd')} even %t\n"
                f"*   {prog('mpi_mpmd')} rest offset%o\n")
    r = c.run_launch(["--agents", named(nodes), "-n", "4", "--multi-prog", conf], timeout=120)
    expect_status(r, 0)
    # Ranks 0..3 have a command line each (%t), so each is its own app of one rank.
    want = ["mpmd rank 0 of 4 appnum 0 app-size 1 env - args even 0",
            "mpmd rank 1 of 4 appnum 1 app-size 1 env - args rest offset0",
            "mpmd rank 2 of 4 appnum 2 app-size 1 env - args even 2",
            "mpmd rank 3 of 4 appnum 3 app-size 1 env - args rest offset1"]
    got = sorted(l.rstrip() for l in r.out.splitlines() if l.startswith("mpmd rank"))
    check(got == want, f"expected {want}\n{r.describe()}")
    c.check_clean(r)


def configfile(c):
    nodes = agents(c, 2)
    conf = os.path.join(c.dir, "mpiexec.conf")
    with open(conf, "w") as f:
        f.write(f"-n 2 -env MPMD_TEST_APP first {prog('mpi_mpmd')} x\n"
                f"-n 1 {prog('mpi_mpmd')}\n")
    r = c.run_launch(["--agents", named(nodes), "-genv", "MPMD_TEST_APP", "global",
                      "-configfile", conf], timeout=120)
    expect_status(r, 0)
    want = ["mpmd rank 0 of 3 appnum 0 app-size 2 env first args x",
            "mpmd rank 1 of 3 appnum 0 app-size 2 env first args x",
            "mpmd rank 2 of 3 appnum 1 app-size 1 env global args"]
    got = sorted(l.rstrip() for l in r.out.splitlines() if l.startswith("mpmd rank"))
    check(got == want, f"expected {want}\n{r.describe()}")
    c.check_clean(r)


def mistyped_option(c):
    r = c.run_launch(["--ntask", "2", prog("mpi_check")])
    expect_status(r, 2)
    check(r.err == "lattice: unknown option '--ntask'; did you mean '--ntasks'? "
                   "(lattice launch --help)\n", f"expected one line\n{r.describe()}")
    check(r.out == "", f"nothing on stdout\n{r.describe()}")
    # --help still prints the usage, on stdout.
    h = c.run_launch(["--help"])
    expect_status(h, 0)
    check("-w, --nodelist" in h.out and "-np" in h.out, f"usage\n{h.describe()}")
    c.check_clean(r)


if __name__ == "__main__":
    run_cases([
        ("mpiexec_np_ppn", mpiexec_np_ppn),
        ("nodelist_and_exclude", nodelist_and_exclude),
        ("multi_prog", multi_prog),
        ("configfile", configfile),
        ("mistyped_option", mistyped_option),
    ])
