#!/usr/bin/env python3
"""Prints the results table of a results/<gpu>.csv in step order (one row per step, one column pair
per size: TFLOP/s and the ratio to cuBLAS timed in the same process), as Markdown.
With --readme FILE, rewrites the table between <!-- results:begin --> and <!-- results:end -->."""
import argparse
import csv
import json
import pathlib
import re
import sys

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def table(csv_path):
    try:
        with open(csv_path) as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"error: cannot read {csv_path}: {e.strerror}")
    if not rows:
        sys.exit(f"error: {csv_path}: no rows")
    if not any(r.get("tflops") for r in rows):
        sys.exit(f"error: {csv_path}: no step passed its check, nothing to tabulate")
    sizes = sorted({int(r["m"]) for r in rows})
    steps = {}
    for r in rows:
        steps.setdefault((r["step"], r["name"]), {})[int(r["m"])] = r
    first = next(r for r in rows if r.get("tflops"))
    meta_path = pathlib.Path(csv_path).with_suffix(".meta.json")
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    lines = [
        f"GPU: {first['gpu']} ({first['sm_count']} SMs, L2 {first['l2_mib']} MiB, max SM clock "
        f"{first['max_sm_clock_mhz']} MHz, clocks left as found); driver {meta.get('driver_version', '?')} "
        f"(CUDA {first['driver_cuda']}), CUDA runtime {first['runtime']}, cuBLAS {first['cublas']}; "
        f"measured {first['date']}. Square M = N = K; median of {first['reps']} launches with L2 flushed; "
        f"cuBLAS timed in the same process at the same shape.",
        "",
        "| step | technique | dtype | " + " | ".join(f"{s} TFLOP/s | {s} vs cuBLAS" for s in sizes) + " | check |",
        "|---|---|---|" + "---:|---:|" * len(sizes) + "---|",
    ]
    for (step, name), by_size in sorted(steps.items()):
        any_row = next(iter(by_size.values()))
        cells, checks = [], set()
        for s in sizes:
            r = by_size.get(s)
            if r is None:
                cells += ["skipped", ""]
            elif not r.get("tflops"):
                cells += ["—", ""]
                checks.add(r["check"])
            else:
                cells += [f"{float(r['tflops']):.1f}", f"{100 * float(r['ratio']):.1f}% of {float(r['cublas_tflops']):.1f}"]
                checks.add(r["check"])
        lines.append(f"| {step} {name} | {any_row.get('technique', '')} | {any_row.get('dtype', '')} | "
                     + " | ".join(cells) + f" | {'/'.join(sorted(checks))} |")
    for note in meta.get("notes", []):
        lines.append(f"\n{note}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--readme")
    args = ap.parse_args()
    text = "\n\n".join(table(c) for c in args.csv)
    print(text)
    if args.readme:
        readme = pathlib.Path(args.readme)
        old = readme.read_text()
        if BEGIN not in old or END not in old:
            sys.exit(f"{readme}: markers {BEGIN} / {END} not found")
        new = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: f"{BEGIN}\n{text}\n{END}", old, flags=re.S)
        readme.write_text(new)
        print(f"rewrote the table in {readme}")


if __name__ == "__main__":
    main()
