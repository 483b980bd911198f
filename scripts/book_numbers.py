#!/usr/bin/env python3
"""The book's measured numbers, written from the committed CSV so that a chapter never quotes a number
the results do not hold. A chapter (docs/*.md, docs/notebook/*.md, sass_annotations/*.md) marks where a
step's result goes:

    <!-- measured:14 -->
    (this line is generated)
    <!-- /measured -->

and this script writes between the markers one sentence from results/<gpu>.csv: the step's TFLOP/s
and its paired ratio to cuBLAS with the interquartile range at each square size, and the same ratio of
its parent (the registrations' .parent), so the lesson's gain reads against the step it grows from.
`<!-- measured:14:8192 -->` keeps one size. The text is the same every time for the same CSV.

  scripts/book_numbers.py            rewrite every block (prints the files it changed)
  scripts/book_numbers.py --check    exit 1, naming the blocks that differ, when a block is not current
"""
import argparse
import csv
import pathlib
import re
import sys

import steps as step_table

ROOT = pathlib.Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"<!-- measured:(?P<id>\d\d[a-z]?)(?::(?P<size>\d+))? -->\n(?P<body>.*?)<!-- /measured -->", re.S)


def load_rows(csv_path):
    rows = [r for r in csv.DictReader(open(csv_path)) if r.get("mode", "burst") == "burst"]
    return {(r["step"], int(r["m"]), r["kernel"]): r for r in rows if r["m"] == r["n"] == r["k"]}


def ratio_of(rows, sid, size):
    """(ratio, q25, q75) of the step over cuBLAS at size^3, or None."""
    r = rows.get((sid, size, "cublas"))
    if not r or not r.get("step_ratio"):
        return None
    return float(r["step_ratio"]), float(r["step_ratio_q25"] or 0), float(r["step_ratio_q75"] or 0)


def sentence(rows, reg, sid, only_size=None):
    """The generated text of one block."""
    sizes = sorted({size for (s, size, k) in rows if s == sid and k == "step"})
    if only_size:
        sizes = [s for s in sizes if s == only_size]
    gpu = next((r["gpu"] for (s, _, k), r in rows.items() if s == sid and k == "step"), None)
    if not sizes or gpu is None:
        return f"**Measured:** step {sid} has no row in the committed results yet (`make bench` on a GPU writes it).\n"
    parent = reg[sid].parent if sid in reg else ""
    parts = []
    for size in sizes:
        me = rows[(sid, size, "step")]
        if not me.get("tflops"):
            parts.append(f"{size}³: {me.get('check', 'no result')}")
            continue
        tf = float(me["tflops"])
        text = f"{tf:.{3 if tf < 1 else 2 if tf < 10 else 1}f} TFLOP/s at {size}³"
        r = ratio_of(rows, sid, size)
        if r and sid != "00":
            text += f", {r[0]:.3f}× cuBLAS [IQR {r[1]:.3f}–{r[2]:.3f}]"
            p = ratio_of(rows, parent, size) if parent else None
            if p:
                text += f" (its parent {parent}: {p[0]:.3f}×)"
        parts.append(text)
    date = rows[(sid, sizes[0], "step")].get("date", "?")
    return (f"**Measured** ({gpu}, `make bench` of {date}, each ratio paired in one process, median of "
            f"{rows[(sid, sizes[0], 'step')].get('rounds', '?')} rounds): " + "; ".join(parts) + ".\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=str(ROOT))
    ap.add_argument("--csv", default="results/nvidia_h200.csv")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    root = pathlib.Path(args.root)
    rows = load_rows(root / args.csv)
    reg = step_table.by_id(step_table.load(root))
    files = sorted(list((root / "docs").glob("*.md")) + list((root / "docs").glob("notebook/*.md"))
                   + list((root / "sass_annotations").glob("*.md")))
    stale, blocks = [], 0
    for f in files:
        text = f.read_text()

        def fill(m):
            nonlocal blocks
            blocks += 1
            sid = m.group("id")
            if sid not in reg:
                sys.exit(f"error: {f.relative_to(root)}: <!-- measured:{sid} --> names no step")
            body = sentence(rows, reg, sid, int(m.group("size")) if m.group("size") else None)
            if body != m.group("body"):
                stale.append(f"{f.relative_to(root)}: measured:{sid}")
            return m.group(0).replace(m.group("body"), body, 1) if m.group("body") else \
                m.group(0).replace("-->\n", "-->\n" + body, 1)

        new = BLOCK.sub(fill, text)
        if new != text and not args.check:
            f.write_text(new)
            print(f"rewrote the measured blocks of {f.relative_to(root)}")
    if args.check:
        for s in stale:
            print(f"{s}: not what {args.csv} says: run `python3 scripts/book_numbers.py`")
        print(f"measured blocks: {blocks} checked, {len(stale)} stale")
        return 1 if stale else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
