#!/usr/bin/env python3
"""Checks that measured numbers quoted in the code and the docs are those of the committed results:

- every kernel header whose "Measured" line says `make bench ... settled` (every step today) quotes, for its
  own step, the TFLOP/s at 4096 and 8192 and the paired ratio to cuBLAS that results/<gpu>.csv holds (to
  the digits quoted); step 01 quotes 4096 only and says "No 8192 run", which the CSV must bear out (one
  launch would take 2.2 s, so the bench skips it);
- the Results table of docs/hopper_ladder.md (steps 10-21: TFLOP/s, ratio to cuBLAS with its IQR,
  ratio to CUTLASS, SM clock, TFLOP/J) matches the same CSV.

Prints one line per disagreement and exits 1 if there is any.

Usage: scripts/check_numbers.py [--root DIR] [--csv results/nvidia_h200.csv]"""
import argparse
import csv
import pathlib
import re
import sys


def close(quoted, value):
    """`quoted` (a string as printed in the text) agrees with `value` to its last printed digit."""
    digits = len(quoted.split(".")[1]) if "." in quoted else 0
    return abs(float(quoted) - value) <= 0.5 * 10 ** -digits + 1e-9


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent))
    ap.add_argument("--csv", default="results/nvidia_h200.csv")
    ap.add_argument("--ladder", default="docs/hopper_ladder.md")
    args = ap.parse_args()
    root = pathlib.Path(args.root)
    rows = list(csv.DictReader(open(root / args.csv)))

    def row(step, size, kernel):
        return next((r for r in rows if r["step"] == step and r["m"] == str(size) and r["kernel"] == kernel
                     and r.get("mode", "burst") == "burst"), None)

    bad, checked = [], 0
    for src in sorted((root / "kernels").glob("*.cu")):
        step = src.name.split("_")[0]
        header = " ".join(l[2:].strip() for l in src.read_text().splitlines() if l.startswith("//"))
        m = re.search(r"Measured \(H200, make bench [^)]*settled\): (\d+\.\d+) TFLOP/s at 4096 \((\d\.\d+)x cuBLAS"
                      r"(?:.*? (\d+\.\d+) at 8192 \((\d\.\d+)x|.*?No 8192 run)", header)
        if not m:
            continue
        quotes = [(m.group(1), 4096, "step", "tflops"), (m.group(2), 4096, "cublas", "step_ratio")]
        if m.group(3):
            quotes += [(m.group(3), 8192, "step", "tflops"), (m.group(4), 8192, "cublas", "step_ratio")]
        elif row(step, 8192, "step") is not None:  # "No 8192 run" must be true of the CSV
            checked += 1
            bad.append(f"{src.relative_to(root)}: header says no 8192 run, {args.csv} has one")
        for (quoted, size, kernel, field) in quotes:
            r = row(step, size, kernel)
            checked += 1
            if r is None or not close(quoted, float(r[field])):
                bad.append(f"{src.relative_to(root)}: header says {field} {quoted} at {size}, "
                           f"{args.csv} has {r[field] if r else 'no row'}")
    ladder = (root / args.ladder).read_text()
    results = ladder[ladder.index("## Results"):]
    results = results[:results.index("\n## ", 5)]
    for line in results.splitlines():
        if not re.match(r"^\| [12]\d \|", line):
            continue
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        step = c[0]
        for size, (tf, ratio, cut, mhz) in ((4096, c[2:6]), (8192, c[6:10])):
            st, cb, ct = row(step, size, "step"), row(step, size, "cublas"), row(step, size, "cutlass_coop_128x256x64_c2x1")
            mr = re.match(r"(\d\.\d+) \[(\d\.\d+)–(\d\.\d+)\]", ratio)
            pairs = [(tf, st, "tflops"), (mhz, st, "clock_mhz")]
            if mr:
                pairs += [(mr.group(1), cb, "step_ratio"), (mr.group(2), cb, "step_ratio_q25"), (mr.group(3), cb, "step_ratio_q75")]
            if cut:
                pairs += [(cut, ct, "step_ratio")]
            for quoted, r, field in pairs:
                checked += 1
                if r is None or not close(quoted, float(r[field])):
                    bad.append(f"{args.ladder}: step {step} at {size}: {field} {quoted}, {args.csv} has "
                               f"{r[field] if r else 'no row'}")
        checked += 1
        st = row(step, 8192, "step")
        if st is None or not close(c[10], float(st["tflop_per_j"])):
            bad.append(f"{args.ladder}: step {step}: TFLOP/J {c[10]}, {args.csv} has {st['tflop_per_j'] if st else 'no row'}")
    for b in bad:
        print(b)
    print(f"numbers: {checked} checked, {len(bad)} disagree")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
