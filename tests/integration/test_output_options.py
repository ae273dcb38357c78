"""srun's output and signal options, with jobs run as an unprivileged user the test makes, through
agents running as root: -u passes a partial line on as it is written (before its newline, and
labelled once), --open-mode=append keeps what earlier launches wrote (the files still the user's),
and --signal=SIG@SECONDS reaches every rank on every node before the time limit."""
import os
import select
import time

from harness import check, expect_status, run_cases, test_user


def victim_agents(c, count):
    """`count` agents on 127.0.0.x, and the victim, who may pass through the case's directory."""
    victim = test_user("victim")
    os.chmod(c.dir, 0o711)
    nodes = [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"]) for i in range(count)]
    return victim, ",".join(a.address for a in nodes)


def read_until(p, needle, timeout):
    """Reads the launcher's stdout until `needle` shows; what was read (without waiting for EOF)."""
    seen = ""
    deadline = time.monotonic() + timeout
    fd = p.stdout.fileno()
    os.set_blocking(fd, False)
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            seen += chunk.decode()
    os.set_blocking(fd, True)
    return seen


def unbuffered_partial_line(c):
    victim, agents = victim_agents(c, 1)
    flag = os.path.join(c.dir, "go")
    # The rank writes half a line (printf flushes at exit of the builtin), then waits for the
    # test to have seen it: without -u, the half line would wait for its newline, for ever.
    script = f'printf partial; while [ ! -e {flag} ]; do sleep 0.05; done; echo " rest"'
    args = ["--agents", agents, "--user", victim.name, "-u", "-l", "-n", "1", "/bin/sh", "-c",
            script]
    started = time.monotonic()
    p = c.start_launch(args, cwd="/tmp")
    seen = read_until(p, "0: partial", 60)
    open(flag, "w").close()
    r = c.finish_launch(p, args, started, 60)
    r.out = seen + r.out
    check("0: partial" in seen, f"the partial line did not come before its newline\n{r.describe()}")
    expect_status(r, 0)
    check(r.out == "0: partial rest\n", f"the line is not whole, labelled once\n{r.describe()}")
    c.check_clean(r)


def open_mode_append(c):
    victim, agents = victim_agents(c, 1)
    theirs = os.path.join(c.dir, "theirs")
    os.mkdir(theirs)
    os.chown(theirs, victim.uid, victim.gid)
    out = os.path.join(theirs, "out.%t")

    def launch(word, *extra):
        r = c.run_launch(["--agents", agents, "--user", victim.name, "-n", "1", "-o", out, *extra,
                          "/bin/echo", word], cwd="/tmp")
        expect_status(r, 0)
        with open(os.path.join(theirs, "out.0")) as f:
            return f.read(), r

    launch("one")
    text, r = launch("two", "--open-mode=append")
    check(text == "one\ntwo\n", f"append lost the earlier output: {text!r}\n{r.describe()}")
    text, r = launch("three", "--open-mode", "truncate")
    check(text == "three\n", f"truncate kept the earlier output: {text!r}\n{r.describe()}")
    st = os.stat(os.path.join(theirs, "out.0"))
    check(st.st_uid == victim.uid, f"the file belongs to uid {st.st_uid}, not the victim")
    c.check_clean(r)


def signal_before_time_limit(c):
    victim, agents = victim_agents(c, 2)
    # Each rank waits for USR1 and exits 0 on it; the time limit would end them with 124.
    script = ('trap "echo rank $PMI_RANK got USR1; exit 0" USR1; '
              'while :; do sleep 0.1; done')
    r = c.run_launch(["--agents", agents, "--user", victim.name, "-n", "2", "--tasks-per-node",
                      "1", "-t", "0:30", "--signal", "USR1@25", "/bin/sh", "-c", script],
                     cwd="/tmp", timeout=60)
    expect_status(r, 0)
    for rank in (0, 1):
        check(f"rank {rank} got USR1" in r.out, f"rank {rank} got no USR1\n{r.describe()}")
    c.check_clean(r)
    # Without a time limit there is nothing to signal before: refused, nothing started.
    r = c.run_launch(["--agents", agents, "-n", "1", "--signal", "USR1", "/bin/true"])
    expect_status(r, 2)
    check("--signal: the launch has no time limit" in r.err, r.describe())


if __name__ == "__main__":
    run_cases([
        ("unbuffered_partial_line", unbuffered_partial_line),
        ("open_mode_append", open_mode_append),
        ("signal_before_time_limit", signal_before_time_limit),
    ])
