"""srun's columns of the one-node PMI tables (bench.py round_table, fence_only_table): the same
pmi2_client runs under `srun --mpi=pmi2` through a private Slurm on localhost
(slurm_local.LocalSlurm).

    p50_us = srun_round(args, 16, 50)   # raises SlurmUnavailable (one-line reason) or RuntimeError
    out = srun_pmi2_client(args, 16, ["--fence-bench", "20"])   # its stdout; raises the same
    ...
    close()                             # stops the private Slurm (also done at exit)

The first call starts the private slurmctld + slurmd (a second or two) and later calls reuse
them; if they could not start, every later call raises the same reason at once.
"""
import subprocess
import time

from slurm_local import LocalSlurm, SlurmUnavailable

__all__ = ["srun_round", "srun_pmi2_client", "close", "SlurmUnavailable"]

_slurm = None
_failure = None


def _instance():
    global _slurm, _failure
    if _failure is not None:
        raise SlurmUnavailable(_failure)
    if _slurm is None:
        s = LocalSlurm()
        try:
            s.start()
        except SlurmUnavailable as e:
            _failure = str(e)
            raise
        _slurm = s
    return _slurm


def close():
    """Stop the private Slurm, if one was started."""
    global _slurm
    if _slurm is not None:
        _slurm.close()
        _slurm = None


def _p50(out):
    for tok in out.split():
        if tok.startswith("p50_us="):
            return float(tok.split("=", 1)[1])
    raise RuntimeError(f"srun: no p50_us= in output: {out[-300:]}")


def srun_round(args, n, rounds, size=64, timeout=300):
    """p50 (µs) of `rounds` PMI rounds of n ranks (put own key, fence, get every rank's key; Slurm's
    libpmi2 served by Slurm's mpi/pmi2 plugin in slurmstepd) on one node, as pmi2_client
    --bench prints it. Raises SlurmUnavailable when no local Slurm can run here, RuntimeError
    when the run fails."""
    return _p50(srun_pmi2_client(args, n, ["--bench", str(rounds), "--size", str(size)], timeout))


def srun_pmi2_client(args, n, options, timeout=300):
    """The stdout of n ranks of pmi2_client `options` under srun --mpi=pmi2 on this node. Raises
    SlurmUnavailable when no local Slurm can run here, RuntimeError when the run fails."""
    slurm = _instance()
    prog = f"{args.build}/tests/programs/pmi2_client"
    cmd = slurm.srun(n, "--mpi=pmi2") + [prog, *options]
    try:
        p = subprocess.run(cmd, env=slurm.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        subprocess.run([slurm.bin["scancel"], "--partition", "bench"], env=slurm.env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
        time.sleep(1)
        raise RuntimeError(f"srun -n {n} timed out after {timeout} s")
    if p.returncode != 0:
        raise RuntimeError(f"srun -n {n} exited {p.returncode}: "
                           f"{(p.stderr.strip().splitlines() or ['no stderr'])[-1][:300]}")
    return p.stdout
