"""The agent's metrics as an operator's Prometheus reads them, and its log lines' fields: `lattice admin metrics` and the
HTTP endpoint (metrics.listen) give the same families, parsed by prometheus_client's own parser;
after real MPICH launches across two agents (as an unprivileged user), one of them failing, and
connections refused for several causes, the counts are those events'. The endpoint answers
nothing but GET/HEAD /metrics, names no user or launch, holds a bounded number of clients, and
lets idle ones go; the admin socket stays closed to other local users."""
import os
import re
import socket
import subprocess
import time

from harness import (LATTICE, CaseSkipped, check, expect_status, prog, run_cases, test_user,
                     wait_until)

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:  # scripts/install-deps installs python3-prometheus-client
    text_string_to_metric_families = None


def agents(c, count):
    """`count` agents on 127.0.0.x, the first serving its metrics over HTTP on a port it picks."""
    os.chmod(c.dir, 0o711)
    config = os.path.join(c.dir, "metrics.yaml")
    with open(config, "w") as f:
        f.write("metrics:\n  listen: 127.0.0.1:0\n")
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0",
                                        *(["--config", config] if i == 0 else [])])
            for i in range(count)]


def endpoint(agent):
    check(agent.wait_log("metrics served on http://"), agent.log())
    host, port = re.search(r"metrics served on http://([\d.]+):(\d+)/metrics",
                           agent.log_text()).groups()
    return host, int(port)


def http(address, request, timeout=10):
    """The whole answer to `request` (bytes), the server closing the connection."""
    with socket.create_connection(address, timeout=timeout) as s:
        s.sendall(request)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    return answer


def parse(text):
    """{(sample name, frozen labels): value}, through Prometheus's own parser."""
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(samples, name, **labels):
    key = (name, tuple(sorted(labels.items())))
    check(key in samples, f"no sample {key}; have {sorted(k for k in samples if k[0] == name)}")
    return samples[key]


def admin_metrics(agent):
    p = subprocess.run([LATTICE, "admin", "--socket", agent.admin_socket, "metrics"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    check(p.returncode == 0, f"admin metrics: {p.stdout}{p.stderr}")
    return p.stdout


def scrape(address):
    answer = http(address, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    check(head.startswith(b"HTTP/1.1 200 "), f"scrape answered {head!r}")
    check(b"text/plain; version=0.0.4" in head, f"content type: {head!r}")
    length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
    check(length == len(body), f"Content-Length {length}, body {len(body)} bytes")
    return body.decode()


def refuse(agent, first_bytes):
    """A connection to the agent's sealed port that sends `first_bytes` and waits to be let go."""
    host, port = agent.host_port()
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(first_bytes)
        try:
            while s.recv(4096):
                pass
        except OSError:
            pass


def counts_after_launches(c):
    if text_string_to_metric_families is None:
        raise CaseSkipped("python3-prometheus-client missing (scripts/install-deps)")
    victim = test_user("victim")
    nodes = agents(c, 2)
    address = endpoint(nodes[0])
    before = parse(scrape(address))
    check(value(before, "lattice_launches_started_total") == 0, "a fresh agent counts launches")
    check(value(before, "lattice_launches_failed_total", reason="exited") == 0,
          "a declared reason is not shown at 0")
    check(value(before, "lattice_connections_refused_total", cause="key") == 0,
          "a declared cause is not shown at 0")

    agents_arg = ",".join(a.address for a in nodes)
    ok = c.run_launch(["--agents", agents_arg, "--user", victim.name, "-N", "2", "-n", "4",
                       prog("mpi_check")], cwd="/tmp", timeout=120)
    expect_status(ok, 0)
    failed = c.run_launch(["--agents", agents_arg, "--user", victim.name, "-N", "2", "-n", "4",
                           prog("mpi_fail"), "exit-before-init"], cwd="/tmp", timeout=120)
    check(failed.code not in (0, None), f"the failing launch passed\n{failed.describe()}")
    # Three refusals before any handshake completes: another protocol, another handshake
    # version, and a launcher holding another key (refused at M1: key).
    refuse(nodes[0], b"GET / HTTP/1.0\r\n\r\n")
    refuse(nodes[0], b"LTCSEAL\x01\x09" + bytes(64))
    wrong = c.run_launch(["--agents", nodes[0].address, "--key-file", c.make_key("other.key"),
                          "-n", "1", "true"], timeout=60)
    check(wrong.code not in (0, None), f"a launch with another key ran\n{wrong.describe()}")

    over_http = parse(scrape(address))
    over_admin = parse(admin_metrics(nodes[0]))
    check(set(over_http) == set(over_admin), "HTTP and the admin socket give other families")
    for s in (over_http, over_admin):
        check(value(s, "lattice_launches_started_total") == 2, f"started: {s}")
        check(value(s, "lattice_launches_ended_total") == 2, "ended")
        failures = sum(v for (name, _), v in s.items() if name == "lattice_launches_failed_total")
        check(failures == 1, f"{failures} failed launches counted, 1 failed")
        # Rank 1, which exits before MPI_Init, is on n1 (block layout).
        check(value(s, "lattice_launches_failed_total", reason="exited") == 1, "reason")
        check(value(s, "lattice_launches_running") == 0, "launches running")
        check(value(s, "lattice_ranks_running") == 0, "ranks running")
        count = value(s, "lattice_fence_duration_seconds_count")
        check(count >= 1, "mpi_check's fences were not counted")
        check(value(s, "lattice_fence_duration_seconds_bucket", le="+Inf") == count, "+Inf")
        buckets = sorted((float(dict(k[1])["le"]), v) for k, v in s.items()
                         if k[0] == "lattice_fence_duration_seconds_bucket")
        check(all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])), f"not cumulative {buckets}")
        check(value(s, "lattice_fence_duration_seconds_sum") > 0, "fence durations sum to 0")
        for cause in ("not_lattice", "version", "key"):
            check(value(s, "lattice_connections_refused_total", cause=cause) >= 1,
                  f"no refusal counted for {cause}")
        check(value(s, "lattice_connections_refused_total", cause="table_full") == 0, "table")
        for name in ("lattice_sealed_bytes_sent_total", "lattice_sealed_bytes_received_total",
                     "lattice_messages_sent_total", "lattice_messages_received_total"):
            check(value(s, name) > 0, f"{name} is 0")
        check(value(s, "process_resident_memory_bytes") > 1 << 20, "resident memory")
        check(value(s, "process_open_fds") > 3, "open fds")
        check(value(s, "lattice_agent_info", version=value_label(s, "version"), node="n1") == 1,
              "agent info")
    # The same events in the log, with fields a log search can pick them by.
    log = nodes[0].log_text()
    check(len(re.findall(rf": accepted from .* launch=\S+ node=n1 uid={victim.uid} ranks=2$",
                         log, re.M)) == 2, f"accepted lines without their fields\n{log}")
    check(re.search(r": ended launch=\S+ node=n1 outcome=ok$", log, re.M), log)
    check(re.search(r": ended: .* node=n1 outcome=exited$", log, re.M), log)
    check(re.search(r" launch=\S+ node=n1 reason=exited rank=1$", log, re.M), log)
    check(re.search(r"refused 127\.0\.0\.1:\d+: not a Lattice .* cause=not_lattice$", log, re.M),
          log)
    n2 = parse(admin_metrics(nodes[1]))
    check(value(n2, "lattice_launches_started_total") == 2, "n2's launches")
    check(value(n2, "lattice_fence_duration_seconds_count") >= 1, "n2's fences")
    check(victim.name not in admin_metrics(nodes[0]), "the metrics name the job's user")


def value_label(samples, label):
    return next(dict(k[1])[label] for k in samples if k[0] == "lattice_agent_info")


def ranks_running(c):
    if text_string_to_metric_families is None:
        raise CaseSkipped("python3-prometheus-client missing (scripts/install-deps)")
    victim = test_user("victim")
    nodes = agents(c, 1)
    p = c.start_launch(["--agents", nodes[0].address, "--user", victim.name, "-n", "3",
                        "sleep", "60"], cwd="/tmp")
    running = lambda: parse(admin_metrics(nodes[0]))
    check(wait_until(lambda: value(running(), "lattice_ranks_running") == 3, 30),
          f"ranks_running never reached 3: {running()}")
    check(value(running(), "lattice_launches_running") == 1, "launches running")
    p.terminate()
    p.communicate(timeout=60)
    check(wait_until(lambda: value(running(), "lattice_ranks_running") == 0, 30),
          "the ranks are still counted after their launch ended")
    check(wait_until(lambda: value(running(), "lattice_launches_ended_total") == 1, 30),
          "the launch's end was not counted")


def http_bounds(c):
    nodes = agents(c, 1)
    address = endpoint(nodes[0])
    status = lambda answer: answer.split(b"\r\n", 1)[0]
    check(status(http(address, b"GET / HTTP/1.1\r\n\r\n")) == b"HTTP/1.1 404 Not Found", "path")
    post = http(address, b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
    check(status(post) == b"HTTP/1.1 405 Method Not Allowed" and b"Allow: GET, HEAD" in post,
          f"POST: {post!r}")
    head = http(address, b"HEAD /metrics HTTP/1.0\r\n\r\n")
    check(status(head) == b"HTTP/1.1 200 OK" and head.endswith(b"\r\n\r\n"), f"HEAD: {head!r}")
    bad = http(address, b"GET /metrics\x00 HTTP/1.1\r\n\r\n")
    check(status(bad) == b"HTTP/1.1 400 Bad Request", f"a NUL: {bad!r}")
    big = http(address, b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n")
    check(status(big).startswith(b"HTTP/1.1 431"), f"a huge head: {status(big)!r}")

    # Idle clients fill the endpoint's places; one more is let go at once, and the idle ones
    # after the request deadline; then a scrape is answered again.
    idle = [socket.create_connection(address, timeout=10) for _ in range(16)]
    time.sleep(1)  # all accepted by then: accepting takes the agent microseconds
    extra = socket.create_connection(address, timeout=10)
    check(extra.recv(100) == b"", "a 17th client was held")
    extra.close()
    started = time.monotonic()
    for s in idle:
        check(s.recv(100) == b"", "an idle client was answered")
        s.close()
    check(time.monotonic() - started < 15, "idle clients held beyond the deadline")
    check(nodes[0].alive(), nodes[0].log())
    check("lattice_agent_uptime_seconds" in scrape(address), "no scrape after the flood")


def admin_refused_to_others(c):
    hostile = test_user("hostile")
    nodes = agents(c, 1)
    os.chmod(nodes[0].dir, 0o755)
    answer = hostile.run(lambda: subprocess.run(
        [LATTICE, "admin", "--socket", nodes[0].admin_socket, "metrics"], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, timeout=30).stdout)
    check("lattice_" not in answer, f"another user read the admin socket: {answer}")


run_cases([
    ("counts_after_launches", counts_after_launches),
    ("ranks_running", ranks_running),
    ("http_bounds", http_bounds),
    ("admin_refused_to_others", admin_refused_to_others),
])
