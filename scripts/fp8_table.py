#!/usr/bin/env python3
"""An FP8 step's measured rows as the chapter's table, from a results CSV the harness wrote (the FP8
shapes runs of scripts/gpu_session.sh fp8: results/<gpu>_fp8_shapes.csv), so that the book quotes what
the file holds. One row per shape the step ran (the file's last run of it): the step's TFLOP/s, its
paired ratio to cuBLASLt with the step's scaling (default accumulation: kernel cublaslt_best) with the
interquartile range, the same against fast accumulation where the file has it (cublaslt_fast), the SM
clock, and the relative RMS error of the step against the fp64 oracle beside cuBLASLt's. With --sol, a
column more: the step's fraction of the FP8 speed of light at its measured clock (sol_at_clock).

  scripts/fp8_table.py results/nvidia_h100_80gb_hbm3_fp8_shapes.csv --step 37
  scripts/fp8_table.py CSV --step 37 --book docs/fp8.md --block fp8_37 [--sol] [--check]
      writes (or, with --check, compares and exits 1 when stale) the block between
      <!-- fp8_37:table --> and <!-- /fp8_37 --> of the chapter
"""
import argparse
import csv
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import results_table  # noqa: E402
from shape_sweep import book_label  # noqa: E402


def table(csv_path, step, sol=False):
    try:
        with open(csv_path, newline="") as f:
            rows = [r for r in csv.DictReader(f) if r.get("step") == step]
    except OSError as e:
        sys.exit(f"error: cannot read {csv_path}: {e.strerror}")
    if not rows:
        sys.exit(f"error: {csv_path}: no rows of step {step}")
    shapes = {}
    for r in rows:  # the file's last run of a shape wins, kernel by kernel
        shapes.setdefault((int(r["m"]), int(r["n"]), int(r["k"])), {})[r["kernel"]] = r
    lines = ["| M × N × K | TFLOP/s | × cuBLASLt [IQR] | × fast accumulation | SM MHz | "
             + ("of the speed of light | " if sol else "") + "rel. RMS error (cuBLASLt) |",
             "|---|---:|---:|---:|---:|" + ("---:|" if sol else "") + "---|"]
    for shape in sorted(shapes, key=lambda s: (s[1], s[2], s[0])):
        by = shapes[shape]
        step_row, ref, fast = by.get("step"), by.get("cublaslt_best"), by.get("cublaslt_fast")
        if step_row is None or ref is None:
            continue
        ratio = f"{float(ref['step_ratio']):.3f} [{float(ref['step_ratio_q25']):.3f}–{float(ref['step_ratio_q75']):.3f}]"
        fast_ratio = f"{float(fast['step_ratio']):.3f}" if fast and fast.get("step_ratio") else "–"
        err = f"{float(step_row['rel_rms_err']):.6f} ({float(ref['rel_rms_err']):.6f})" if step_row.get("rel_rms_err") else "–"
        light = (f"{float(step_row['sol_at_clock']):.3f} | " if step_row.get("sol_at_clock") else "– | ") if sol else ""
        lines.append(f"| {book_label(*shape)} | {float(step_row['tflops']):.2f} | {ratio} | {fast_ratio} | "
                     f"{step_row.get('clock_mhz', '')} | {light}{err} |")
    if len(lines) == 2:
        sys.exit(f"error: {csv_path}: step {step} has no shape with both its own row and cuBLASLt's")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--step", required=True, help="the FP8 step's id, e.g. 37")
    ap.add_argument("--book", help="write the table into this chapter's block --block")
    ap.add_argument("--block", help="the block's name: <!-- NAME:table --> ... <!-- /NAME -->")
    ap.add_argument("--sol", action="store_true",
                    help="add a column: the step's fraction of the FP8 speed of light at its clock (sol_at_clock)")
    ap.add_argument("--check", action="store_true", help="with --book: exit 1 when the block is not current")
    args = ap.parse_args()
    body = table(args.csv, args.step, args.sol)
    if not args.book:
        print(body, end="")
        return 0
    if not args.block:
        sys.exit("error: --book needs --block")
    command = f"python3 scripts/fp8_table.py {args.csv} --step {args.step} --book {args.book} --block {args.block}" + (" --sol" if args.sol else "")
    return results_table.rewrite_block(args.book, args.block, body, args.check, command)


if __name__ == "__main__":
    sys.exit(main())
