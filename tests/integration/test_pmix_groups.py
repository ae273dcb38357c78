"""PMIx groups (RFC0003) with a real PMIx client, tests/programs/pmix_group.c, across two
standalone agents (each its own process and address), the job run as an unprivileged test user:
PMIx_Group_construct completes once every member has called, on every node, carried by the
launch head's collectives; every member of a group hears the same context id, and another group
another one; PMIx_Group_destruct completes likewise; an invitation (PMIx_Group_invite/join) crosses the nodes
both ways; nothing is left running."""
import os
import re
import shutil

from harness import check, expect_status, prog, run_cases, test_user


def launch(c, args=()):
    nodes = [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"]) for i in range(2)]
    os.chmod(c.dir, 0o711)
    bin_dir = os.path.join(c.dir, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    os.chmod(bin_dir, 0o755)
    program = os.path.join(bin_dir, "pmix_group")
    shutil.copy(prog("pmix_group"), program)
    os.chmod(program, 0o755)
    user = test_user("victim")
    return c.run_launch(["--agents", ",".join(a.address for a in nodes), "--user", user.name,
                         "--pmi", "pmix", "-n", "4", "-l", program, *args], timeout=120,
                        cwd="/tmp")


def construct_and_destruct(c):
    r = launch(c)
    expect_status(r, 0)
    all_ids = re.findall(r"^(\d+): group all ctx (\d+)$", r.out, re.M)
    check(sorted(int(rank) for rank, _ in all_ids) == [0, 1, 2, 3], r.describe())
    check(len({ctx for _, ctx in all_ids}) == 1, f"members saw different ids\n{r.describe()}")
    pair_ids = re.findall(r"^(\d+): group pair ctx (\d+)$", r.out, re.M)
    check(sorted(int(rank) for rank, _ in pair_ids) == [0, 2], r.describe())
    check(len({ctx for _, ctx in pair_ids}) == 1, r.describe())
    check(pair_ids[0][1] != all_ids[0][1], f"two groups, one context id\n{r.describe()}")
    for rank in range(4):
        check(f"{rank}: group destructed {rank}" in r.out, r.describe())
    c.check_clean(r)


def invite_and_join(c):
    """libpmix 4.2.2 builds invitations from events of custom ranges: the invitation goes from
    rank 0 on n1 to ranks on both nodes, each acceptance comes back to rank 0 alone, and the
    completion reaches every member."""
    r = launch(c, ["invite"])
    expect_status(r, 0)
    check("0: invite accepted by all" in r.out, r.describe())
    for rank in (1, 2, 3):
        check(f"{rank}: joined lattice-invited led by 0" in r.out, r.describe())
        check(f"{rank}: invited group complete {rank}" in r.out, r.describe())
    c.check_clean(r)


CASES = [
    ("construct_and_destruct", construct_and_destruct),
    ("invite_and_join", invite_and_join),
]

if __name__ == "__main__":
    run_cases(CASES if os.environ.get("LATTICE_PMIX", "1") == "1" else [])
