#!/usr/bin/env python3
"""Prints the shapes sweep of a results/<gpu>_shapes.csv (`make bench-shapes`, any subset of its steps
and shapes) as Markdown: one summary line per step (geometric mean of its ratio to the best reference
over the shapes it ran, and its worst five shapes with their spread and clock), then one table row
per step and shape: its TFLOP/s, which reference was the best in its process (the fastest of cuBLAS,
cuBLASLt's best of 8 and the CUTLASS configurations), the paired ratio to it (median of the per-round
ratios [interquartile range]), the ratio to cuBLAS, and the SM clock of the step and of that reference.
With --full FILE, writes it between <!-- shapes:begin --> and <!-- shapes:end --> of FILE
(docs/results.md); `make results-tables` does so when the CSV exists."""
import argparse
import csv
import pathlib
import sys

import results_table
import shape_sweep as sw

BEGIN, END = "<!-- shapes:begin -->", "<!-- shapes:end -->"
FIGURE = "img/shapes.png"


def fmt(v, spec="{:.3f}"):
    return spec.format(v) if v is not None else ""


def ratio_cell(r):
    if r["ratio"] is None:
        return ""
    iqr = f" [{fmt(r['q25'])}–{fmt(r['q75'])}]" if r["q25"] is not None and r["q75"] is not None else ""
    return f"{r['ratio']:.3f}{iqr}"


def summary(sid, name, mine):
    ok = [r for r in mine if r["ratio"] is not None]
    untimed = [r for r in mine if r["ratio"] is None]
    head = f"**step {sid} {name}**: "
    if not ok:
        return head + f"no shape timed ({len(untimed)} not timed)."
    gm = sw.geomean([r["ratio"] for r in ok])
    if gm is None:
        return head + f"no positive ratio to the best reference ({len(ok)} shapes; a damaged file?)."
    worst = sorted(ok, key=lambda r: r["ratio"])[:5]
    at_floor = sum(r["ratio"] >= 0.95 for r in ok)
    text = (head + f"geometric mean {gm:.3f}× the best reference over {len(ok)} shapes; at or above 0.95× on "
            f"{at_floor} of {len(ok)}")
    if untimed:
        text += "; not timed: " + ", ".join(f"{sw.label(r['m'], r['n'], r['k'])} ({r['status']})" for r in untimed)
    text += ". Worst five: " + "; ".join(
        f"{sw.label(r['m'], r['n'], r['k'])} {ratio_cell(r)} at {fmt(r['clock'], '{:.0f}')} MHz (against {r['best']})"
        for r in worst) + "."
    return text


def table(csv_path, figure=False):
    if sw.pending_commit(csv_path):
        sys.exit(f"error: a benchmark was killed while committing into {pathlib.Path(csv_path).parent}: run "
                 f"`python3 scripts/results_io.py --recover {pathlib.Path(csv_path).parent}` first")
    try:
        res = sw.read_results(csv_path)
        with open(csv_path) as f:
            first = next((r for r in csv.DictReader(f) if r.get("tflops")), None)
    except OSError as e:
        sys.exit(f"error: cannot read {csv_path}: {e.strerror}")
    if not res:
        sys.exit(f"error: {csv_path}: no step rows in the paired format (scripts/bench.py --shapes writes it)")
    lines = []
    if first:
        lines.append(
            f"GPU: {first.get('gpu', '?')} ({first.get('sm_count', '?')} SMs, clocks left as found), CUDA runtime "
            f"{first.get('runtime', '?')}, cuBLAS {first.get('cublas', '?')}; measured {dates(csv_path)} "
            f"([`{pathlib.Path(csv_path).name}`](../results/{pathlib.Path(csv_path).name})). bf16, C = A·Bᵀ. Each step "
            f"runs in its own process per shape, alternating launch by launch with cuBLAS, cuBLASLt's best of 8 and "
            f"the CUTLASS configurations (L2 flushed before every launch; {rounds(csv_path)} rounds{' (the fewer at 1 TFLOP or more a GEMM)' if '–' in rounds(csv_path) else ''}). "
            f"× best: the paired ratio to the fastest reference of that process (above 1: the step is "
            f"faster), median of the per-round ratios [interquartile range]. SM MHz: the probe beside the launches.")
    else:
        lines.append(f"No shape of {pathlib.Path(csv_path).name} was timed.")
    steps = sorted({r["step"] for r in res}, key=sw.step_key)
    lines.append("")
    for sid in steps:
        mine = [r for r in res if r["step"] == sid]
        lines += [summary(sid, mine[0]["name"], mine), ""]
    if figure:
        lines += [f"![each step's ratio to the best reference over the shapes sweep]({FIGURE})", ""]
    lines += ["| step | family | M×N×K | TFLOP/s | best reference | × best [IQR] | × cuBLAS | SM MHz step / ref | check |",
              "|---|---|---|---:|---|---:|---:|---:|---|"]
    for r in sorted(res, key=lambda r: (sw.step_key(r["step"]), sw.shape_key(r))):
        check = "pass" if r["status"] == "ok" else r["status"]
        if r.get("untimed_refs"):
            check += f" ({', '.join(r['untimed_refs'])}: another C than cuBLAS's, not timed)"
        clocks = f"{fmt(r['clock'], '{:.0f}')} / {fmt(r['best_clock'], '{:.0f}')}" if r["ratio"] is not None else ""
        lines.append(f"| {r['step']} | {r['family']} | {sw.label(r['m'], r['n'], r['k'])} | {fmt(r['tflops'], '{:.1f}')} | "
                     f"{r['best']} | {ratio_cell(r)} | {fmt(r['refs'].get('cublas'))} | {clocks} | {check} |")
    return "\n".join(lines)


def rounds(csv_path):
    with open(csv_path) as f:
        rs = sorted({int(r["rounds"]) for r in csv.DictReader(f) if (r.get("rounds") or "").isdigit()})
    return "?" if not rs else str(rs[0]) if len(rs) == 1 else f"{rs[0]}–{rs[-1]}"


def dates(csv_path):
    with open(csv_path) as f:
        ds = sorted({r["date"] for r in csv.DictReader(f) if r.get("date")})
    return "?" if not ds else ds[0] if len(ds) == 1 else f"{ds[0]} to {ds[-1]}"



def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv")
    ap.add_argument("--full", help="write the table between the shapes markers of this file (docs/results.md)")
    args = ap.parse_args()
    # The figure is linked only where it exists beside the file written (a link to a missing image fails
    # scripts/check_links.py).
    figure = bool(args.full) and (pathlib.Path(args.full).parent / FIGURE).exists()
    text = table(args.csv, figure)
    if args.full:
        results_table.rewrite(args.full, text, BEGIN, END, "the shapes table")
    else:
        print(text)


if __name__ == "__main__":
    main()
