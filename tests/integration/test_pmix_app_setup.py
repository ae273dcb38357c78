"""RFC0029 through libpmix 4.2.2 (src/pmix/app_setup.hpp): for a --pmi pmix launch the launcher
asks PMIx_server_setup_application for the launch's namespace, its answer travels in the launch
request (AppSetup.vendor), and every agent hands it to PMIx_server_setup_local_support before it
starts its ranks. What libpmix 4.2.2 answers here is its own forwarding of the launcher's
PMIX_MCA_* settings (no fabric plugin of it is active on this machine), which the ranks on every
node then hold, unless --export NONE. Setup data that is malformed, oversized, of a key Lattice
does not carry, or that would set what libpmix does not forward or a root job's hook is refused
with a clear error, and the agent goes on."""
import os
import struct
import subprocess

from harness import ROGUE, check, expect_status, run_cases

SHOW = "echo \"rank $PMIX_RANK probe=${PMIX_MCA_lattice_probe-unset}\""
PROBE = {"PMIX_MCA_lattice_probe": "seen-by-ranks"}


def agents(c, count):
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0", "--log-level", "debug"])
            for i in range(count)]


def addresses(nodes):
    return ",".join(a.address for a in nodes)


def rank_lines(r):
    return sorted(l for l in r.out.splitlines() if l.startswith("rank "))


def launch(c, nodes, export=None):
    args = ["--agents", addresses(nodes), "-N", "2", "-n", "2", "--pmi", "pmix"]
    if export:
        args += ["--export", export]
    r = c.run_launch(args + ["/bin/sh", "-c", SHOW], timeout=120, env=PROBE)
    expect_status(r, 0)
    lines = rank_lines(r)
    check(len(lines) == 2, f"expected a line from each of 2 ranks\n{r.describe()}")
    return r, lines


def carried(c):
    """Across 2 agents: a PMIX_MCA_* setting of the launcher's environment reaches the ranks on
    both nodes (never under --export NONE); the agents log the names they set up, never the
    values."""
    nodes = agents(c, 2)
    for export, probe in ((None, "seen-by-ranks"), ("ALL", "seen-by-ranks"), ("NONE", "unset")):
        r, lines = launch(c, nodes, export)
        check(lines == [f"rank {i} probe={probe}" for i in range(2)],
              f"--export {export}: {lines}\n{r.describe()}")
        c.check_clean(r)
    for a in nodes:
        log = a.log_text()
        check("PMIx_server_setup_local_support with 1 entries setting [PMIX_MCA_lattice_probe]"
              in log, f"{a.node_id} did not set the launch up through libpmix\n{a.log()}")
        check("seen-by-ranks" not in log, f"{a.node_id} logged a value it set up\n{a.log()}")


def lps1(entries):
    """Lattice's form of the setup data (src/pmix/app_setup_codec.hpp)."""
    def s(b):
        b = b.encode() if isinstance(b, str) else b
        return struct.pack(">I", len(b)) + b
    out = b"LPS1" + struct.pack(">I", len(entries))
    for key, envars in entries:
        out += s(key) + struct.pack(">I", len(envars))
        for name, value in envars:
            out += s(name) + s(value) + b":"
    return out


def refused(c):
    """Hostile setup data in a request (lattice-test-rogue as a launcher holding the cluster
    key): each refused with its reason before anything starts; the agent then runs a launch."""
    nodes = agents(c, 1)
    env = "pmix.envar.set"
    cases = [
        (b"\x00garbage\xff" * 10, "PMIx setup data in an unknown form"),
        (b"LPS1" + b"\x00" * 70000, "PMIx setup data of 70004 bytes (at most 65536)"),
        (lps1([(env, [("PMIX_MCA_x", "1")])])[:-3], "PMIx setup data ends inside"),
        (lps1([(env, [("PMIX_MCA_x", "1")])]) + b"x",
         "PMIx setup data with bytes after its last entry"),
        (b"LPS1" + struct.pack(">I", 1 << 30), "PMIx setup data of 1073741824 entries"),
        (lps1([("pmix.pnet.opa.blob", [])]),
         "PMIx setup data under 'pmix.pnet.opa.blob', which Lattice does not carry"),
        (lps1([(env, [("PMIX_SERVER_URI", "x")])]),
         "may set libpmix's settings (PMIX_MCA_*) only, not PMIX_SERVER_URI"),
        (lps1([(env, [("LD_PRELOAD", "/tmp/x.so")])]),
         "may set libpmix's settings (PMIX_MCA_*) only, not LD_PRELOAD"),
        (lps1([(env, [("PMIX_MCA_mca_base_component_path", "/tmp/plugins")])]),
         "PMIX_MCA_mca_base_component_path may not be set for a job running as root"),
        (lps1([(env, [("A=B", "x")])]), "with a variable name that is empty or not a name"),
    ]
    peers = f"{nodes[0].node_id}={nodes[0].address}"
    for i, (blob, reason) in enumerate(cases):
        path = os.path.join(c.dir, f"vendor{i}")
        with open(path, "wb") as f:
            f.write(blob)
        p = subprocess.run(
            [ROGUE, "--key", c.key_file, "--identity", "launcher:lattice-api", "--connect",
             nodes[0].address, "--launch", f"hostile-setup-{i}", "--pmi", "pmix",
             "--vendor-file", path, "seed-launch", peers, "0", "1", "0", "1", "/bin/true"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=c.case_env(),
            timeout=60)
        check(f"refused: " in p.stdout and reason in p.stdout,
              f"case {i}: expected a refusal saying '{reason}', got:\n{p.stdout}\n{nodes[0].log()}")
    r = c.run_launch(["--agents", addresses(nodes), "-n", "1", "--pmi", "pmix", "/bin/sh", "-c",
                      SHOW], timeout=120, env=PROBE)
    expect_status(r, 0)
    check("rank 0 probe=seen-by-ranks" in r.out, r.describe())
    c.check_clean(r)


CASES = [("carried", carried), ("refused", refused)]

if __name__ == "__main__":
    run_cases(CASES if os.environ.get("LATTICE_PMIX", "1") == "1" else [])
