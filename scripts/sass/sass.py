#!/usr/bin/env python3
"""PTX/SASS tooling for the matmul series (the command line; the code is the sasslib package next to
this file). `python3 scripts/sass/sass.py --help` lists the subcommands: dump, sass, ptx, diff, check,
fresh, resources, constants, selftest, tools."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sasslib.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
