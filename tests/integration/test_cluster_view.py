"""An operator's view of several agents from a launcher host: `lattice admin status --agents
LIST` asks each agent over a sealed link with the cluster key and shows what each one's admin
socket would say (text, or one JSON document), with an unreachable agent named and the exit
status 1. Without the key nothing is shown: another key is refused by every agent, and a
hostile local user who cannot read the operators' key cannot ask at all."""
import json
import os
import re
import subprocess

from harness import LATTICE, check, run_cases, test_user, wait_until


def agents(c, count):
    os.chmod(c.dir, 0o711)
    return [c.start_agent(f"n{i + 1}", ["--listen", f"127.0.0.{i + 1}:0"]) for i in range(count)]


def admin(args, key_file, user=None):
    p = subprocess.run([LATTICE, "admin", *args, *(["--key-file", key_file] if key_file else [])],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60,
                       cwd="/tmp", env={"PATH": "/usr/bin:/bin"},
                       **({"user": user.uid, "group": user.gid, "extra_groups": []} if user else {}))
    return p.returncode, p.stdout, p.stderr


def running_launch(c, nodes, victim):
    """A victim's launch of 2 ranks over both nodes, running: (its Popen, its id)."""
    p = c.start_launch(["--agents", ",".join(a.address for a in nodes), "--user", victim.name,
                        "-N", "2", "-n", "2", "sleep", "60"], cwd="/tmp")
    launch = {}

    def started():
        out = subprocess.run([LATTICE, "admin", "--socket", nodes[1].admin_socket, "status"],
                             stdout=subprocess.PIPE, text=True, timeout=30).stdout
        m = re.search(r"^launch (\S+): .* 1 of 2 ranks here", out, re.M)
        if m and re.search(r"^\s+1\s+\d+\s", out, re.M):
            launch["id"] = m.group(1)
        return "id" in launch

    check(wait_until(started, 30), "the launch never ran on n2")
    return p, launch["id"]


def status_of_agents(c):
    victim = test_user("victim")
    nodes = agents(c, 2)
    p, launch_id = running_launch(c, nodes, victim)
    listed = f"{nodes[0].address},n2={nodes[1].address},127.0.0.3:1"
    code, out, err = admin(["--agents", listed, "status"], c.key_file)
    check(code == 1, f"an unreachable agent does not fail the command ({code})\n{out}{err}")
    check(f"== n1 ({nodes[0].address})\n" in out and f"== n2 ({nodes[1].address})\n" in out,
          f"headings:\n{out}")
    check(out.count(f"launch {launch_id}: ") == 2, f"the launch is not shown on both:\n{out}")
    check(re.search(r"^== 127\.0\.0\.3 \(127\.0\.0\.3:1\): .*refused", out, re.M),
          f"the unreachable agent is not named:\n{out}")

    code, out, err = admin(["--agents", f"{nodes[0].address},{nodes[1].address}", "status",
                            "--json", launch_id], c.key_file)
    check(code == 0, f"--json: {code}\n{out}{err}")
    doc = json.loads(out)
    check([a["agent"] for a in doc["agents"]] == ["n1", "n2"], f"agents: {doc}")
    for index, a in enumerate(doc["agents"]):
        launches = a["status"]["launches"]
        check(len(launches) == 1 and launches[0]["launch_id"] == launch_id, f"{a}")
        check(launches[0]["node_index"] == index, f"{a}")
        check([r["rank"] for r in launches[0]["ranks"]] == [index], f"{a}")
    p.terminate()
    p.communicate(timeout=60)


def refused_without_key(c):
    victim, hostile = test_user("victim"), test_user("hostile")
    nodes = agents(c, 2)
    p, launch_id = running_launch(c, nodes, victim)
    listed = ",".join(a.address for a in nodes)
    # Another key: every agent refuses the handshake, and says so in its log.
    other = c.make_key("other.key")
    code, out, err = admin(["--agents", listed, "status"], other)
    check(code == 1 and launch_id not in out, f"another key was shown the status:\n{out}{err}")
    check(out.count("== ") == 2 and "handshake" in out, f"no refusal per agent:\n{out}")
    # A hostile user cannot read the operators' key, and their own gets nothing either.
    code, out, err = admin(["--agents", listed, "status"], c.key_file, hostile)
    check(code == 2 and "Permission denied" in out + err, f"{code}\n{out}{err}")
    own = os.path.join(c.dir, "hostile.key")
    subprocess.run(["cp", other, own], check=True)
    os.chown(own, hostile.uid, hostile.gid)
    code, out, err = admin(["--agents", listed, "status"], own, hostile)
    check(code == 1 and launch_id not in out, f"the hostile user's key was answered:\n{out}{err}")
    p.terminate()
    p.communicate(timeout=60)


run_cases([
    ("status_of_agents", status_of_agents),
    ("refused_without_key", refused_without_key),
])
