"""CXI credentials for Slingshot through the fabric manager (scripts/fabric-manager-standin: the
same REST API, a bearer check and a log of calls): a launch over 2 standalone agents gets a
service and its key before any rank starts, every rank on both nodes sees FI_PROVIDER,
FI_CXI_DEFAULT_VNI, FI_CXI_AUTH_KEY, SLINGSHOT_VNIS and SLINGSHOT_SVC_IDS with the stand-in's
values, and the service is deleted at the end: after success, after a failing rank, after
SIGINT to the launcher. A fabric manager that is down, refuses the token or fails (500) fails
the launch before any rank runs, saying why. The key appears in no log (launcher at -v and
debug, agents at debug) and no admin output."""
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request

from harness import (LATTICE, SANITIZED, SOURCE_ROOT, check, expect_status, run_cases,
                     wait_until)

STANDIN = os.path.join(SOURCE_ROOT, "scripts", "fabric-manager-standin")
VARS = ("FI_PROVIDER", "FI_CXI_DEFAULT_VNI", "FI_CXI_AUTH_KEY", "SLINGSHOT_VNIS",
        "SLINGSHOT_SVC_IDS")
# Each rank prints its rank and the five variables, one line.
PRINT_VARS = "echo cxi $PMI_RANK " + " ".join(f"{v}=${v}" for v in VARS)


class FabricManager:
    def __init__(self, c, *extra):
        self.token = "tok-" + os.urandom(8).hex()
        self.token_file = os.path.join(c.dir, f"fabric-{self.token}.token")
        with open(self.token_file, "w") as f:
            f.write(self.token + "\n")
        os.chmod(self.token_file, 0o600)
        self.log_path = os.path.join(c.dir, f"fabric-{self.token}.log")
        self.proc = subprocess.Popen(
            [STANDIN, "--token-file", self.token_file, "--log", self.log_path, *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        c.launchers.append(self.proc)  # killed by the case's cleanup
        line = self.proc.stdout.readline()
        check(line.startswith("listening on "), f"stand-in did not start: {line!r}")
        self.url = "http://" + line.split()[-1]

    def args(self, vni=77):
        return ["--vni", str(vni), "--fabric-url", self.url, "--fabric-token-file", self.token_file]

    def calls(self):
        try:
            with open(self.log_path) as f:
                return [json.loads(l) for l in f if l.strip()]
        except OSError:
            return []

    def get(self, path):
        req = urllib.request.Request(self.url + path,
                                     headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"null")

    def services(self):
        return self.get("/fabric/cxi/services")

    def expect_deleted(self, result):
        check(wait_until(lambda: not self.services(), 10),
              f"services still live: {self.services()}\n{result.describe()}")
        made = [c for c in self.calls() if c["method"] == "POST" and c["status"] == 201]
        deleted = [c for c in self.calls() if c["method"] == "DELETE" and c["status"] == 204]
        check(len(made) == len(deleted) >= 1,
              f"services made and deleted do not match: {self.calls()}\n{result.describe()}")


def agents(c, count):
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0", "--log-level", "debug"])
            for i in range(count)]


def addresses(nodes):
    return ",".join(a.address for a in nodes)


def launch_held(c, fm, nodes, hold, extra=()):
    """A 2-agent CXI launch whose ranks print their variables and wait for `hold` to exist."""
    script = f"{PRINT_VARS}; while [ ! -e {hold} ]; do sleep 0.1; done"
    return c.start_launch(["--agents", addresses(nodes), "-n", "4", "-v", *extra, *fm.args(),
                           "sh", "-c", script], env={"LATTICE_LOG_LEVEL": "debug"})


def cxi_two_agents(c):
    fm = FabricManager(c)
    nodes = agents(c, 2)
    hold = os.path.join(c.dir, "go")
    started = time.monotonic()
    p = launch_held(c, fm, nodes, hold)
    check(wait_until(lambda: len(fm.services()) == 1, 30), "no service was made")
    service = fm.services()[0]
    key = fm.get(f"/fabric/cxi/services/{service['id']}/auth")["auth_key"]
    check(service["vni"] == 77 and sorted(service["nodes"]) == ["n1", "n2"], str(service))
    admin = [subprocess.run([LATTICE, "admin", "status", "--socket", a.admin_socket],
                            capture_output=True, text=True).stdout for a in nodes]
    open(hold, "w").close()
    r = c.finish_launch(p, ["cxi"], started, 60)
    expect_status(r, 0)
    lines = [l for l in r.out.splitlines() if l.startswith("cxi ")]
    check(len(lines) == 4, f"expected 4 ranks' variables\n{r.describe()}")
    want = {"FI_PROVIDER": "cxi", "FI_CXI_DEFAULT_VNI": "77", "FI_CXI_AUTH_KEY": key,
            "SLINGSHOT_VNIS": "77", "SLINGSHOT_SVC_IDS": str(service["svc_id"])}
    for line in lines:
        got = dict(kv.split("=", 1) for kv in line.split()[2:])
        check(got == want, f"rank variables {got}, expected {want}\n{r.describe()}")
    post = next(x for x in fm.calls() if x["method"] == "POST")
    check(post["authorized"], f"POST: {post}")
    check(json.loads(post["body"])["vni"] == 77, f"POST body: {post}")
    fm.expect_deleted(r)
    check(re.search(r"CXI credentials [0-9.]+ ms", r.err), f"-v shows no provisioning time\n{r.err}")
    # The key is in no log line and no admin output.
    for text, what in [(r.err, "launcher stderr (-v, debug)"), *[(a.log_text(), a.node_id + " log")
                                                                  for a in nodes],
                       *[(out, "admin status") for out in admin]]:
        for form in (key, key.upper()):
            check(form not in text, f"the key appears in the {what}")
    for node, out in zip(nodes, admin):  # taken while the ranks held: the launch is in it
        check(node.node_id in out and "rank" in out, f"admin status shows no launch:\n{out}")
    c.check_clean(r)


def cxi_after_failing_rank(c):
    fm = FabricManager(c)
    nodes = agents(c, 2)
    r = c.run_launch(["--agents", addresses(nodes), "-n", "4", *fm.args(), "sh", "-c",
                      'if [ "$PMI_RANK" = 3 ]; then exit 5; fi; sleep 30'])
    expect_status(r, 5)
    fm.expect_deleted(r)
    c.check_clean(r)


def cxi_after_sigint(c):
    fm = FabricManager(c)
    nodes = agents(c, 2)
    started = time.monotonic()
    p = launch_held(c, fm, nodes, os.path.join(c.dir, "never"))
    check(wait_until(lambda: len(fm.services()) == 1, 30), "no service was made")
    check(wait_until(lambda: len(c.survivors()) >= 4, 30), "ranks did not start")
    os.killpg(p.pid, signal.SIGINT)  # the ranks (no trap) die of it, and the launch fails
    r = c.finish_launch(p, ["sigint"], started, 60)
    check(r.code not in (0, None), f"SIGINT should fail the launch\n{r.describe()}")
    fm.expect_deleted(r)
    c.check_clean(r)


def expect_refused(c, nodes, token_file, url, needles):
    marker = os.path.join(c.dir, "ran")
    r = c.run_launch(["--agents", addresses(nodes), "-n", "2", "--vni", "5", "--fabric-url", url,
                      "--fabric-token-file", token_file, "sh", "-c", f"touch {marker}"])
    check(r.code not in (0, None), f"the launch should fail\n{r.describe()}")
    for needle in needles:
        check(needle in r.err, f"expected '{needle}' in the error\n{r.describe()}")
    check(not os.path.exists(marker), "a rank ran although the credentials were refused")
    c.check_clean(r)


def fabric_down(c):
    fm = FabricManager(c)
    closed = "http://127.0.0.1:1"
    expect_refused(c, agents(c, 2), fm.token_file, closed,
                   [f"fabric manager {closed}", "POST /fabric/cxi/services", "attempts"])


def fabric_refuses(c):
    bad = FabricManager(c)
    with open(bad.token_file, "w") as f:
        f.write("not-the-token\n")
    nodes = agents(c, 2)
    expect_refused(c, nodes, bad.token_file, bad.url, ["HTTP 401", "invalid bearer token"])
    failing = FabricManager(c, "--fail-post", "500")
    expect_refused(c, nodes, failing.token_file, failing.url, ["HTTP 500", "(4 attempts)"])
    check([x["method"] for x in failing.calls()] == ["POST"] * 4, f"{failing.calls()}")


def fabric_retries_then_config(c):
    """Two 503s are retried through; the fabric keys may come from the launcher's config file."""
    fm = FabricManager(c, "--fail-first", "2")
    config = os.path.join(c.dir, "launcher.yaml")
    with open(config, "w") as f:
        f.write(f"fabric:\n  url: {fm.url}\n  token_file: {fm.token_file}\n  vni: 9\n")
    nodes = agents(c, 2)
    r = c.run_launch(["--agents", addresses(nodes), "-n", "2", "--config", config, "sh", "-c",
                      PRINT_VARS])
    expect_status(r, 0)
    check(r.out.count("FI_CXI_DEFAULT_VNI=9 ") == 2, r.describe())
    check([x["status"] for x in fm.calls()][:2] == [503, 503], f"{fm.calls()}")
    fm.expect_deleted(r)


def copies_in_memory(pid, needle):
    """How many times `needle` appears in the readable memory of process `pid` (as root)."""
    count = 0
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if fields[1][0] != "r":
                continue  # guard pages
            try:
                mem.seek(start)
                count += mem.read(end - start).count(needle)
            except (OSError, ValueError, OverflowError):
                continue  # [vsyscall] and the like
    return count


def token_copies_in_launcher(c):
    """While a CXI launch runs (after the credentials came), the launcher's memory holds the
    fabric manager's token once: the Authorization line it keeps in guarded memory. libcurl was
    handed that very line and wipes what it frees; and the CXI key's hex from the answer is gone
    too (its bytes are in guarded memory once). Before, freed blocks of libcurl's held the token
    three or four more times (its CURLOPT_XOAUTH2_BEARER string, the header it built of it, the
    requests it formatted); and without `-z now`, the lazy resolver's register saves left it (and
    the key) in dead stack frames too."""
    if SANITIZED:
        return  # ASan's shadow and quarantine mappings are too large to scan
    fm = FabricManager(c)
    token_file = os.path.join(c.dir, "plain.token")  # fm's file name holds the token
    shutil.copy(fm.token_file, token_file)
    nodes = agents(c, 1)
    hold = os.path.join(c.dir, "go")
    started = time.monotonic()
    p = c.start_launch(["--agents", addresses(nodes), "-n", "1", "--vni", "77", "--fabric-url",
                        fm.url, "--fabric-token-file", token_file, "sh", "-c",
                        f"while [ ! -e {hold} ]; do sleep 0.1; done"])
    check(wait_until(lambda: c.survivors(), 30), "the rank never started")
    service = fm.services()[0]
    key = fm.get(f"/fabric/cxi/services/{service['id']}/auth")["auth_key"]
    token = copies_in_memory(p.pid, fm.token.encode())
    key_hex = copies_in_memory(p.pid, key.encode()) + copies_in_memory(p.pid, key.upper().encode())
    key_bytes = copies_in_memory(p.pid, bytes.fromhex(key))
    open(hold, "w").close()
    r = c.finish_launch(p, ["hold"], started, 60)
    expect_status(r, 0)
    check(token == 1, f"the token is {token} times in the launcher's memory, not once")
    check(key_hex == 0 and key_bytes == 1,
          f"the CXI key is in the launcher's memory {key_hex} times as hex and {key_bytes} times "
          f"as bytes, not 0 and 1")
    fm.expect_deleted(r)
    c.check_clean(r)


def token_file_checked(c):
    fm = FabricManager(c)
    os.chmod(fm.token_file, 0o644)
    r = c.run_launch(["-n", "1", *fm.args(), "true"])
    expect_status(r, 2)
    check("mode 0644" in r.err, r.describe())
    check(not fm.calls(), "the fabric manager was asked with an unusable token")
    r = c.run_launch(["-n", "1", "--vni", "3", "true"])
    expect_status(r, 2)
    check("needs the fabric manager" in r.err, r.describe())


if __name__ == "__main__":
    run_cases([
        ("cxi_two_agents", cxi_two_agents),
        ("cxi_after_failing_rank", cxi_after_failing_rank),
        ("cxi_after_sigint", cxi_after_sigint),
        ("fabric_down", fabric_down),
        ("fabric_refuses", fabric_refuses),
        ("fabric_retries_then_config", fabric_retries_then_config),
        ("token_file_checked", token_file_checked),
        ("token_copies_in_launcher", token_copies_in_launcher),
    ])
