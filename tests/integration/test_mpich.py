"""Real MPICH programs (PMI-1) through `lattice launch` in local mode: wire-up checks at several
sizes, labelled output, exit status, and nothing left running afterwards."""
import re

from harness import check, expect_status, prog, run_cases

LABEL = re.compile(r"^(\d+): (.*)$")


def labelled_lines(result):
    """stdout as (rank, text) pairs; every non-empty line must carry a "R: " label."""
    pairs = []
    for line in result.out.splitlines():
        if not line:
            continue
        m = LABEL.match(line)
        check(m, f"unlabelled output line {line!r}\n{result.describe()}")
        pairs.append((int(m.group(1)), m.group(2)))
    return pairs


def mpi_check(n):
    def case(c):
        r = c.run_launch(["-n", str(n), "-l", prog("mpi_check")])
        expect_status(r, 0)
        pairs = labelled_lines(r)
        for rank in range(n):
            want = f"rank {rank}/{n} ok"
            check(any(label == rank and text.startswith(want) for label, text in pairs),
                  f"no line '{rank}: {want}...'\n{r.describe()}")
        check(all(0 <= label < n for label, _ in pairs),
              f"labels outside 0..{n - 1}\n{r.describe()}")
        c.check_clean(r)
    return case


def hello_unlabelled(c):
    n = 2
    r = c.run_launch(["-n", str(n), prog("mpi_hello")])
    expect_status(r, 0)
    for rank in range(n):
        check(re.search(rf"^hello from rank {rank} of {n} on \S+$", r.out, re.M),
              f"no unlabelled hello line for rank {rank}\n{r.describe()}")
    c.check_clean(r)


if __name__ == "__main__":
    run_cases([
        ("mpi_check_n1", mpi_check(1)),
        ("mpi_check_n4", mpi_check(4)),
        ("mpi_check_n8", mpi_check(8)),
        ("mpi_hello_unlabelled", hello_unlabelled),
    ])
