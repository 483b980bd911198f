#!/usr/bin/env python3
"""Draws the book's concept figures: every @figure of the modules in scripts/figures/ into
docs/img/<name>.png (make docs runs it). Needs matplotlib only.

  scripts/figures/draw.py                 every figure
  scripts/figures/draw.py NAME ...        these figures
  scripts/figures/draw.py --list          name, module and caption of each figure"""
import argparse
import importlib
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import plot_setup  # noqa: E402,F401  (matplotlib, or a line saying how to get it; scripts/figures/ on the path)

import style  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    for mod in sorted(HERE.glob("*.py")):
        if mod.stem not in ("style", "draw"):
            importlib.import_module(mod.stem)
    unknown = [n for n in args.names if n not in style.FIGURES]
    if unknown:
        sys.exit(f"error: no figure {', '.join(unknown)} (scripts/figures/draw.py --list names them)")
    if args.list:
        for name, (_, caption, module) in sorted(style.FIGURES.items()):
            print(f"{name}\t{module}\t{caption}")
        return 0
    for name, (fn, _, _) in sorted(style.FIGURES.items()):
        if args.names and name not in args.names:
            continue
        print(f"wrote {style.save(fn(), name).relative_to(style.ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
