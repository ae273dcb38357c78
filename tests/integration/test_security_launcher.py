"""The launcher as a target on a shared node. A root launcher (lattice-api's role) opens a job's
--output/--error files with the job's user's rights only: a link that user planted does not lead
root's writes to a root-only file, and no file appears where the user could not make one."""
import os

from harness import check, expect_status, run_cases, test_user


def output_files_opened_as_job_user(c):
    """Before, the root launcher fopen()ed out.0 itself: it followed the victim's link and wrote
    the rank's output into the root-only file, and it made out.0 in the root-only directory."""
    victim = test_user("victim")
    os.chmod(c.dir, 0o711)  # the victim may pass through, as through /home
    precious = os.path.join(c.dir, "root-only")
    with open(precious, "w") as f:
        f.write("precious\n")
    os.chmod(precious, 0o600)
    theirs = os.path.join(c.dir, "theirs")
    os.mkdir(theirs)
    os.chown(theirs, victim.uid, victim.gid)
    planted = victim.run(lambda: os.symlink(precious, os.path.join(theirs, "out.0")) or "planted")
    check(planted == "planted", f"the victim could not plant the link: {planted}")
    agent = c.start_agent("n1")
    r = c.run_launch(["--agents", agent.address, "--user", victim.name, "-n", "2", "-o",
                      os.path.join(theirs, "out.%t"), "/bin/sh", "-c", 'echo "hello $PMI_RANK"'],
                     cwd="/tmp")
    expect_status(r, 0)
    with open(precious) as f:
        kept = f.read()
    check(kept == "precious\n", f"the root-only file now holds {kept!r}\n{r.describe()}")
    check(f"cannot open output file {theirs}/out.0 as user {victim.name}: Permission denied"
          in r.err, f"the refusal is not named\n{r.describe()}")
    check("hello 0" in r.out, f"rank 0's output was lost instead of going to the terminal\n"
          f"{r.describe()}")
    # Where the victim may write, the file is made, and is theirs.
    made = os.path.join(theirs, "out.1")
    check(os.path.isfile(made), f"{made} was not made\n{r.describe()}")
    st = os.stat(made)
    check((st.st_uid, st.st_gid) == (victim.uid, victim.gid),
          f"{made} belongs to {st.st_uid}:{st.st_gid}, not the victim\n{r.describe()}")
    with open(made) as f:
        check(f.read() == "hello 1\n", f"{made} does not hold rank 1's output")

    root_dir = os.path.join(c.dir, "root-dir")
    os.mkdir(root_dir, 0o755)
    r = c.run_launch(["--agents", agent.address, "--user", victim.name, "-n", "1", "-o",
                      os.path.join(root_dir, "out.%t"), "/bin/echo", "hi"], cwd="/tmp")
    expect_status(r, 0)
    check(not os.path.exists(os.path.join(root_dir, "out.0")),
          f"a file appeared in a directory only root may write\n{r.describe()}")
    check(f"cannot open output file {root_dir}/out.0 as user {victim.name}: Permission denied"
          in r.err, f"the refusal is not named\n{r.describe()}")
    c.check_clean(r)


if __name__ == "__main__":
    run_cases([
        ("output_files_opened_as_job_user", output_files_opened_as_job_user),
    ])
