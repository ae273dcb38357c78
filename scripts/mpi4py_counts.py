"""Runs mpi4py's runtests.py as one rank and writes that rank's counts to $MPI4PY_COUNTS/rank-R.json
(scripts/mpi4py-suite reads them): interleaved "Ran N tests" lines of several ranks cannot be
told apart on a shared stderr."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.getcwd())
import runtests  # noqa: E402  (mpi4py's test/runtests.py, from the current directory)


def counted_run(options, testsuite, runner=None):
    runner = unittest.TextTestRunner(verbosity=options.verbose, failfast=options.failfast)
    result = runner.run(testsuite)
    from mpi4py import MPI
    counts = {
        "rank": MPI.COMM_WORLD.Get_rank(),
        "run": result.testsRun,
        "failures": len(result.failures),
        "errors": len(result.errors),
        "skipped": len(result.skipped),
        "expected_failures": len(result.expectedFailures),
        "unexpected_successes": len(result.unexpectedSuccesses),
    }
    out = os.environ.get("MPI4PY_COUNTS")
    if out:
        with open(os.path.join(out, f"rank-{counts['rank']}.json"), "w") as f:
            json.dump(counts, f)
    return result.wasSuccessful()


runtests.run_tests = counted_run
sys.exit(runtests.main(sys.argv[1:]))
