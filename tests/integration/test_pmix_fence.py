"""What the PMIx tier's fence carries between agents (src/agent/pmix_blobs.hpp): libpmix re-sends
every key its ranks ever committed at each fence, so the agents carry a node's blob only when it
changed since the node last carried it, and hand each libpmix the other nodes' blobs only, as
they are (binary). pmix_bench over 3 agents commits its value once and fences 5 times (each rank
checks every other rank's value after each fence), then commits its timings and fences once more:
the first and last fences carry the other nodes' blobs, byte for byte as they entered, and the 4
between carry nothing."""
import os
import re

from harness import check, expect_status, prog, run_cases


def agents(c, count):
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0", "--log-level", "debug"])
            for i in range(count)]


def entered(log):
    """{epoch: bytes} of this node's blob at each PMIx fence."""
    return {int(e): int(n) for e, n in re.findall(r"PMIx fence (\d+) entered with (\d+) bytes", log)}


def completed(log):
    """{epoch: (bytes handed to libpmix, nodes whose blob the merged store held)}."""
    return {int(e): (int(b), int(n)) for e, b, n in
            re.findall(r"PMIx fence (\d+) complete: (\d+) bytes from (\d+) nodes", log)}


def repeats_left_out(c):
    nodes = agents(c, 3)
    r = c.run_launch(["--agents", ",".join(a.address for a in nodes), "-N", "3", "-n", "3",
                      "--pmi", "pmix", prog("pmix_bench"), "--bench", "5", "--size", "200"],
                     timeout=120)
    expect_status(r, 0)
    check("pmix bench: ranks=3 rounds=5" in r.out, r.describe())
    logs = [a.log_text() for a in nodes]
    ins = [entered(log) for log in logs]
    for i, log in enumerate(logs):
        outs = completed(log)
        check(sorted(outs) == list(range(1, 7)), f"n{i + 1}: fences {sorted(outs)}\n{log}")
        others = [j for j in range(3) if j != i]
        for epoch in (1, 6):
            want = sum(ins[j][epoch] for j in others)
            check(want > 0 and outs[epoch] == (want, 3),
                  f"n{i + 1}, fence {epoch}: handed libpmix {outs[epoch]}, expected the other "
                  f"nodes' {want} bytes, of a store of 3 nodes' blobs\n{log}")
        for epoch in range(2, 6):
            check(outs[epoch] == (0, 0),
                  f"n{i + 1}, fence {epoch}: carried {outs[epoch]} though nothing changed\n{log}")
    c.check_clean(r)


CASES = [("repeats_left_out", repeats_left_out)]

if __name__ == "__main__":
    run_cases(CASES if os.environ.get("LATTICE_PMIX", "1") == "1" else [])
