"""Issue 11 part 6, "beyond this machine, by simulation": lattice-bench-sim drives the real fence
engine and the real launch codecs over a modeled cluster network (1,024 to 16,384 nodes) and
prints its own markdown tables (the model's parameters first, then predicted fence and launch
fan-out times beside the design's budgets). bench.py calls sim_table(args) for --only sim."""
import subprocess
import sys


def sim_table(args):
    """Runs {args.build}/bench/lattice-bench-sim (--quick: 1,024 and 4,096 nodes only) and prints
    its tables; a failure is reported on stderr with the simulator's own words."""
    cmd = [f"{args.build}/bench/lattice-bench-sim"]
    if args.quick:
        cmd.append("--quick")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=600)
    if p.returncode != 0:
        print(f"lattice-bench-sim failed ({p.returncode}): {p.stderr[-2000:]}", file=sys.stderr)
        return
    print(p.stdout, end="")
