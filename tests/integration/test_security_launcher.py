"""The launcher as a target on a shared node. A root launcher (lattice-api's role) opens a job's
--output/--error files with the job's user's rights only: a link that user planted does not lead
root's writes to a root-only file, and no file appears where the user could not make one. A
launcher holds the cluster key (and maybe the fabric manager's token) and is not dumpable: another
process of its own user cannot read its memory or environment, as it can a plain process's."""
import os
import subprocess
import time

from harness import LAUNCH_TIMEOUT, check, expect_status, run_cases, test_user, wait_until


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


def launcher_not_dumpable(c):
    """The victim runs a launch (local mode: it holds the throwaway cluster key). Another of the
    victim's processes reads a rank's environment and opens its memory, but not the launcher's.
    Before, the launcher was dumpable: its environment and memory were the user's to read (and
    the key in its memory with them, through /proc/PID/mem or ptrace)."""
    victim = test_user("victim")
    os.chown(c.dir, victim.uid, victim.gid)  # local mode's agents make their directory here
    started = time.monotonic()
    p = c.start_launch(["-n", "1", "cat"], cwd=c.dir, stdin=subprocess.PIPE,
                       wrapper=["setpriv", f"--reuid={victim.uid}", f"--regid={victim.gid}",
                                "--init-groups"])
    check(wait_until(lambda: c.survivors(), 30), "the rank never started")
    rank = c.survivors()[0]

    def probe(pid):
        def attempt():
            out = []
            for name in ("environ", "mem"):
                try:
                    with open(f"/proc/{pid}/{name}", "rb") as f:
                        if name == "environ":
                            f.read()
                    out.append(f"{name}:read")
                except OSError as e:
                    out.append(f"{name}:{e.strerror}")
            return " ".join(out)
        return victim.run(attempt)

    plain, launcher = probe(rank), probe(p.pid)
    r = c.finish_launch(p, ["-n", "1", "cat"], started, LAUNCH_TIMEOUT)
    expect_status(r, 0)
    check(plain == "environ:read mem:read",
          f"the victim cannot read its own rank's /proc files ({plain}): the probe proves nothing")
    check(launcher == "environ:Permission denied mem:Permission denied",
          f"the victim's other process got at the launcher: {launcher}\n{r.describe()}")
    c.check_clean(r)


if __name__ == "__main__":
    run_cases([
        ("output_files_opened_as_job_user", output_files_opened_as_job_user),
        ("launcher_not_dumpable", launcher_not_dumpable),
    ])
