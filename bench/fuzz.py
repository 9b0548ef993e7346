"""The long fuzz run (issue 19): ``tests/fuzz`` with the ``long`` hypothesis profile.

``./dev test`` runs the fuzz tests derandomized with a few examples each (well under a
minute). This runs the same tests random (a new set of inputs every run, no example
database), ``--scale`` times as many examples, and prints the summary the fuzz tests
keep: examples run and examples per second. A failure prints hypothesis' reproduction
(``@reproduce_failure``) and the input that failed; the run's exit code is pytest's.

    .venv/bin/python bench/fuzz.py [--scale 40] [--workers 1] [-k EXPR]

``--workers`` above 1 runs test modules in parallel (pytest-xdist); each worker then
prints its own figures in its log, not here, so the figure below counts only with 1.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=40, help="times the ci profile's examples")
    parser.add_argument("--workers", type=int, default=1, help="pytest-xdist workers (1: none)")
    parser.add_argument("-k", dest="select", default="", help="only tests matching (pytest -k)")
    args = parser.parse_args(argv)
    env = dict(os.environ, KUBESCHED_FUZZ_PROFILE="long", KUBESCHED_FUZZ_SCALE=str(args.scale))
    command = [sys.executable, "-m", "pytest", "tests/fuzz", "-q", "-p", "no:cacheprovider"]
    command += ["-n", str(args.workers)] if args.workers > 1 else ["-n", "0"]
    # The suite's per-test limit (5 minutes) is for the ci profile; a long run takes longer.
    command += ["--timeout", "0"]
    if args.select:
        command += ["-k", args.select]
    started = time.monotonic()
    result = subprocess.run(command, cwd=ROOT, env=env, check=False)
    seconds = time.monotonic() - started
    print(f"bench/fuzz.py: scale {args.scale}, {seconds:.0f} s, exit {result.returncode}")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
