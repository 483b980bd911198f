#!/usr/bin/env python3
"""Runs the package's CPU tests (test_cpu.py), those of make bench-torch's scripts (test_scripts.py) and
those of the shapes pair tables (test_shapes_pair.py),
plain unittest (nothing to install), and ends with one line, "python: N passed, N failed, N skipped",
counted over test methods; exit 1 when one failed.
make test runs it after the Catch2 suite with the library it built ($GEMM_STEPS_LIB)."""
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def main():
    suite = unittest.defaultTestLoader.loadTestsFromNames(["test_cpu", "test_scripts", "test_shapes_pair"])
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=1 if "-q" in sys.argv else 2).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    for test, why in result.skipped:
        print(f"skipped: {why} ({test.id()})")
    print(f"python: {result.testsRun - failed - skipped} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
