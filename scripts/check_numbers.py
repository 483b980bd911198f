#!/usr/bin/env python3
"""Checks that measured numbers quoted in the code and the docs are those of the committed results:

- every kernel header whose "Measured" line says `make bench ... settled` (every step today) quotes, for its
  own step, the TFLOP/s at 4096 and 8192 and the paired ratio to cuBLAS that results/<gpu>.csv holds (to
  the digits quoted); step 01 quotes 4096 only and says "No 8192 run", which the CSV must bear out (one
  launch would take 2.2 s, so the bench skips it);
- the Results table of docs/hopper_ladder.md (steps 10-23: TFLOP/s, ratio to cuBLAS with its IQR,
  ratio to CUTLASS, SM clock, TFLOP/J) matches the same CSV;
- the opening table of docs/fp32_ladder.md (TFLOP/s and ratio to cuBLAS at both sizes) matches it;
- docs/speed_of_light.md: the early-steps table (TFLOP/s at 4096 and its fraction of the fp32 peak the
  table's header names) matches it, and the sustained table (TFLOP/s, SM clock, power, TFLOP/J and the
  fraction of the speed of light at that clock) matches results/<gpu>_sustained.csv.

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


def table_rows(text, heading, row_re):
    """The cells of the table rows matching `row_re` between `heading` and the next "## " heading."""
    sec = text[text.index(heading):]
    end = sec.find("\n## ", 5)
    for line in (sec if end < 0 else sec[:end]).splitlines():
        if re.match(row_re, line):
            yield [x.strip() for x in line.strip().strip("|").split("|")]


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
    for c in table_rows(ladder, "## Results", r"^\| [12]\d \|"):
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
    # docs/fp32_ladder.md: the table before the first "## " section, rows "| 04 | technique | tf | ratio | tf | ratio |".
    fp32 = root / "docs/fp32_ladder.md"
    for c in table_rows(fp32.read_text(), "# The fp32 ladder", r"^\| 0\d[a-z]? \|"):
        for size, tf, ratio in ((4096, c[2], c[3]), (8192, c[4], c[5])):
            for quoted, r, field in ((tf, row(c[0], size, "step"), "tflops"),
                                     (ratio.strip("*"), row(c[0], size, "cublas"), "step_ratio")):
                checked += 1
                if r is None or not close(quoted, float(r[field])):
                    bad.append(f"docs/fp32_ladder.md: step {c[0]} at {size}: {field} {quoted}, {args.csv} has "
                               f"{r[field] if r else 'no row'}")
    sol = (root / "docs/speed_of_light.md").read_text()
    # The early steps at 4096: "| 00 cuBLAS strict FP32 | 51.1 | 76 % | ... |", fraction of the header's peak.
    early = sol[sol.index("## What the early steps show"):]
    peak = float(re.search(r"fraction of the (\d+\.\d+) fp32 peak", early).group(1))
    for c in table_rows(sol, "## What the early steps show", r"^\| 0\d "):
        step, r = c[0].split()[0], row(c[0].split()[0], 4096, "step")
        checked += 2
        if r is None or not close(c[1], float(r["tflops"])):
            bad.append(f"docs/speed_of_light.md: step {step} at 4096: tflops {c[1]}, {args.csv} has {r['tflops'] if r else 'no row'}")
        elif not close(c[2].rstrip(" %"), 100 * float(r["tflops"]) / peak):
            bad.append(f"docs/speed_of_light.md: step {step}: {c[2]} of {peak}, {args.csv}'s {r['tflops']} is "
                       f"{100 * float(r['tflops']) / peak:.1f} %")
    # The sustained table: "| step 14 | 623.1 | 1423 MHz | 692 W | 0.90 | 769 TFLOP/s | 81 % |" and the references
    # "(in step NN's process)", against the sustained CSV at the size its header names.
    sus_csv = re.sub(r"\.csv$", "_sustained.csv", args.csv)
    sus = list(csv.DictReader(open(root / sus_csv)))
    power = sol[sol.index("## Power and the clock"):]
    size = re.search(r"\| (\d+)\^3, sustained \|", power).group(1)
    kinds = (("cuBLASLt best", "cublaslt_best"), ("cuBLAS", "cublas"), ("CUTLASS cooperative", "cutlass_coop_128x256x64_c2x1"))
    for c in table_rows(sol, "## Power and the clock", r"^\| (step \d|cuBLAS|CUTLASS)"):
        m = re.match(r"step (\d+)$", c[0])
        step, kernel = (m.group(1), "step") if m else (re.search(r"in step (\d+)'s process", c[0]).group(1),
                                                       next(k for label, k in kinds if c[0].startswith(label)))
        r = next((x for x in sus if x["step"] == step and x["m"] == size and x["kernel"] == kernel), None)
        for quoted, field, scale in ((c[1], "tflops", 1), (c[2].split()[0], "clock_mhz", 1), (c[3].split()[0], "power_w", 1),
                                     (c[4], "tflop_per_j", 1), (c[6].rstrip(" %"), "sol_at_clock", 100)):
            checked += 1
            if r is None or not close(quoted, scale * float(r[field])):
                bad.append(f"docs/speed_of_light.md: sustained {c[0]}: {field} {quoted}, {sus_csv} has "
                           f"{r[field] if r else 'no row'}")
    for b in bad:
        print(b)
    print(f"numbers: {checked} checked, {len(bad)} disagree")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
