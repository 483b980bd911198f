#!/usr/bin/env python3
"""make test-run: the Catch2 suite (build/bin/tests), then the Python package's CPU tests
(python/tests/run_cpu.py, over build/lib/libgemmsteps.so), each printing its own summary line; then
one line adding them up, "N passed, N failed, N skipped", the last line of `make test`. Exit 1 when
either failed or did not end with its summary line.
Usage: scripts/run_tests.py [--build DIR] [Catch2 arguments...]"""
import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = re.compile(r"^(?:python: )?(\d+) passed, (\d+) failed, (\d+) skipped$")


def run(cmd, env=None):
    """Runs cmd with its output passed through; (exit status, its last summary line's counts or None)."""
    counts = None
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          errors="replace") as p:
        for line in p.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            m = SUMMARY.match(line.strip())
            if m:
                counts = tuple(int(x) for x in m.groups())
    return p.returncode, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    args, catch_args = ap.parse_known_args()
    build = Path(args.build).resolve()
    parts = [("build/bin/tests", [str(build / "bin" / "tests"), *catch_args], None),
             ("python/tests", [sys.executable, str(ROOT / "python/tests/run_cpu.py"), "-q"],
              dict(os.environ, GEMM_STEPS_LIB=str(build / "lib" / "libgemmsteps.so")))]
    total, status = [0, 0, 0], 0
    for name, cmd, env in parts:
        rc, counts = run(cmd, env)
        if counts is None:
            print(f"{name} ended without its summary line (exit status {rc})")
            total[1] += 1
            status = 1
            continue
        total = [t + c for t, c in zip(total, counts)]
        if rc != 0:
            status = 1
    print(f"{total[0]} passed, {total[1]} failed, {total[2]} skipped")
    return status


if __name__ == "__main__":
    sys.exit(main())
