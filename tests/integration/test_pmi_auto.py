"""--pmi auto, the default: with no --pmi, an Open MPI program gets PMIx and an MPICH program
PMI-1/PMI-2, each as one world of 4 ranks over 2 agents (before, the Open MPI program ran as 4
one-rank jobs); an agent serving only MPICH never maps libpmix; a program that cannot be told
(a shell script, python3 with mpi4py) gets both at once and wires up through whichever its MPI
speaks; an MPMD launch mixing Open MPI and MPICH is refused before anything runs, naming both.
In a build without libpmix (LATTICE_PMIX=0) auto means PMI-1/PMI-2 for everything: MPICH and
scripts still run, and an Open MPI program is refused with the reason."""
import os
import shutil
import subprocess

from harness import AGENTD, check, expect_status, prog, run_cases

PMIX = os.environ.get("LATTICE_PMIX", "1") == "1"


def agents(c, count):
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"]) for i in range(count)]


def addresses(nodes):
    return ",".join(a.address for a in nodes)


def maps_libpmix(agent):
    with open(f"/proc/{agent.proc.pid}/maps") as f:
        return "libpmix" in f.read()


def expect_world(c, result, ranks, per_node):
    """mpi_check's lines: every rank of one world of `ranks`, `per_node` on each node."""
    expect_status(result, 0)
    want = sorted(f"rank {r}/{ranks} ok (allreduce, barrier, ring, {per_node} on this node)"
                  for r in range(ranks))
    got = sorted(l for l in result.out.splitlines() if " ok (" in l)
    check(got == want, f"expected {want}\n{result.describe()}")
    c.check_clean(result)


def chose(agent, program, words):
    check(f"{program} {words}" in agent.log_text(), f"no '{program} {words}' in\n{agent.log()}")


def open_mpi_without_pmi(c):
    nodes = agents(c, 2)
    r = c.run_launch(["--agents", addresses(nodes), "-n", "4", prog("ompi_check")], timeout=120)
    expect_world(c, r, 4, 2)
    chose(nodes[0], prog("ompi_check"), "links libmpi.so.40 (Open MPI): PMIx")


def mpich_without_pmi(c):
    nodes = agents(c, 2)
    r = c.run_launch(["--agents", addresses(nodes), "-n", "4", prog("mpi_check")], timeout=120)
    expect_world(c, r, 4, 2)
    chose(nodes[0], prog("mpi_check"), "links libmpich.so.12 (MPICH): PMI-1/PMI-2")
    for a in nodes:
        check(not maps_libpmix(a), "an MPICH launch loaded libpmix")


def wrapper(c, name, program):
    path = os.path.join(c.dir, name)
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\nexec {program} \"$@\"\n")
    os.chmod(path, 0o755)
    return path


def scripts_get_both(c):
    """A shell wrapper cannot be told: both are served, and each MPI finds its own. Open MPI's
    ranks given both keep Open MPI's default shared-memory files (named by the host: see
    environment.cpp), so they run on one agent here, where nodes are simulated on one host."""
    nodes = agents(c, 2)
    for name, program, used in (("run_mpich.sh", "mpi_check", nodes),
                                ("run_ompi.sh", "ompi_check", nodes[:1])):
        if program == "ompi_check" and not PMIX:
            continue
        script = wrapper(c, name, prog(program))
        r = c.run_launch(["--agents", addresses(used), "-n", "4", script], timeout=120)
        expect_world(c, r, 4, 4 // len(used))
        chose(nodes[0], script, "a script (#!): PMI-1/PMI-2 and PMIx")


def mpi4py(c):
    """python3 running mpi4py (Debian's links Open MPI): one world with no --pmi (on one agent,
    as scripts_get_both says why)."""
    python = "/usr/bin/python3"  # Debian's, where python3-mpi4py installs
    if subprocess.run([python, "-c", "import mpi4py"], capture_output=True).returncode != 0:
        print("# python3-mpi4py is not installed: skipped")
        return
    nodes = agents(c, 1)
    code = ("from mpi4py import MPI; w = MPI.COMM_WORLD; "
            "print(f'py rank {w.Get_rank()} of {w.Get_size()} sum {w.allreduce(w.Get_rank())}')")
    r = c.run_launch(["--agents", addresses(nodes), "-n", "4", python, "-c", code],
                     timeout=120)
    expect_status(r, 0)
    got = sorted(l for l in r.out.splitlines() if l.startswith("py rank"))
    check(got == [f"py rank {i} of 4 sum 6" for i in range(4)], r.describe())
    c.check_clean(r)


def mixed_mpmd_refused(c):
    """Open MPI and MPICH in one MPMD launch: refused on every node before any rank starts,
    naming both programs and what each needs."""
    nodes = agents(c, 2)
    r = c.run_launch(["--agents", addresses(nodes), "-n", "2", prog("ompi_check"), ":", "-n", "2",
                      prog("mpi_check")], timeout=60)
    check(r.code not in (0, None), f"a mixed MPMD launch ran\n{r.describe()}")
    for words in (f"'{prog('ompi_check')}' links libmpi.so.40 (Open MPI) and needs PMIx",
                  f"'{prog('mpi_check')}' links libmpich.so.12 (MPICH) and needs PMI-1/PMI-2",
                  "one launch cannot mix them"):
        check(words in r.err, f"missing '{words}'\n{r.describe()}")
    check(" ok (" not in r.out, r.describe())
    c.check_clean(r)


def explicit_choice_kept(c):
    """--pmi pmi2 and --pmi auto said outright; any other value is refused, naming the choices."""
    r = c.run_launch(["--pmi", "pmi2", "-n", "2", prog("mpi_check")], timeout=60)
    expect_world(c, r, 2, 2)
    r = c.run_launch(["--pmi", "auto", "-n", "2", prog("mpi_check")], timeout=60)
    expect_world(c, r, 2, 2)
    r = c.run_launch(["--pmi", "both", "-n", "2", prog("mpi_check")], timeout=60)
    check(r.code not in (0, None) and "--pmi: auto, pmi2 or pmix, got 'both'" in r.err,
          r.describe())


def open_mpi_without_pmix_build(c):
    """A build without libpmix: an Open MPI program is refused, with the reason. The build has
    no Open MPI test program then; Open MPI's ompi_info links libmpi.so.40 as well."""
    program = "/usr/bin/ompi_info"
    if not os.path.exists(program):
        print("# Open MPI is not installed: skipped")
        return
    nodes = agents(c, 2)
    r = c.run_launch(["--agents", addresses(nodes), "-n", "4", program], timeout=60)
    check(r.code not in (0, None), f"an Open MPI program ran without PMIx\n{r.describe()}")
    check("needs PMIx, which this agent cannot serve" in r.err and "built without libpmix" in r.err,
          f"no clear reason\n{r.describe()}")
    c.check_clean(r)


def without_pmix_module(c):
    """An agent whose lattice-pmix.so is missing (as good as one built without libpmix): a script
    gets PMI-1/PMI-2 alone and its MPICH program runs; an Open MPI program is refused, saying
    why."""
    bindir = os.path.join(c.dir, "bin")
    os.mkdir(bindir)
    shutil.copy(AGENTD, bindir)
    agent = c.start_agent("n1", binary=os.path.join(bindir, "lattice-agentd"))
    r = c.run_launch(["--agents", agent.address, "-n", "2", wrapper(c, "run.sh", prog("mpi_check"))],
                     timeout=60)
    expect_world(c, r, 2, 2)
    r = c.run_launch(["--agents", agent.address, "-n", "2", prog("ompi_check")], timeout=60)
    check(r.code not in (0, None), f"an Open MPI program ran without PMIx\n{r.describe()}")
    for words in (f"'{prog('ompi_check')}' links libmpi.so.40 (Open MPI) and needs PMIx, which "
                  "this agent cannot serve", "cannot load", "lattice-pmix.so"):
        check(words in r.err, f"missing '{words}'\n{r.describe()}")
    c.check_clean(r)


CASES = [
    ("mpich_without_pmi", mpich_without_pmi),
    ("scripts_get_both", scripts_get_both),
    ("explicit_choice_kept", explicit_choice_kept),
]
PMIX_CASES = [
    ("open_mpi_without_pmi", open_mpi_without_pmi),
    ("mpi4py", mpi4py),
    ("mixed_mpmd_refused", mixed_mpmd_refused),
    ("without_pmix_module", without_pmix_module),
]

if __name__ == "__main__":
    run_cases(CASES + (PMIX_CASES if PMIX else
                       [("open_mpi_without_pmix_build", open_mpi_without_pmix_build)]))
