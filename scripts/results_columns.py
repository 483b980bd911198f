#!/usr/bin/env python3
"""The scaling and accumulation columns of the results CSVs (issue 47: every FP8 row names its scaling
and which accumulation its reference used), the migration that adds them to a CSV written before them,
and the cuBLASLt row an fp8 step's ratio is read against.

The harness (common/harness/results.cpp, csv_header()) ends every row with two columns:
  scaling       fp8 rows: per_tensor or block. Empty for fp32 and bf16.
  accumulation  fp8 rows: what summed the row's products over K. The step's row: what the step does, as
                its registration says (kernels/steps.json: tensor_core, the wgmma accumulators alone for
                the whole of K; promoted, added into fp32 registers every K tile). A cuBLASLt row:
                default or fast (CUBLASLT_MATMUL_DESC_FAST_ACCUM off or on; cublasLt.h: with it on,
                "intermediate results will not periodically be promoted to a higher precision").
                Empty for fp32 and bf16.
The cuBLASLt rows of an fp8 run (common/harness/results.hpp): cublaslt_best (the step's scaling, default
accumulation), cublaslt_fast (per_tensor, fast) and cublaslt_stand_in (per_tensor, default: timed where
cuBLASLt has no block-scaled algorithm for the shape, at M = 1, on the same e4m3 data with scales of 1;
another product than the step's, so never checked and without an error).

  scripts/results_columns.py migrate [--check] [CSV ...]
        brings CSVs in the harness's columns (default: every results/*.csv and results/tuning/*.csv that
        is) to the current columns: missing harness columns are added where they belong (after the
        earlier ones, before a script's own, such as family), empty unless derived; scaling and
        accumulation are derived for fp8 rows from the kernel column and the step's registration
        (only where the row's name is the registered step's: else left empty). Cells already set are
        kept, so it can be run again (a second run changes nothing); a file it does not change is not
        rewritten. --check writes nothing and exits 1 naming the files a migration would change.
  scripts/results_columns.py header
        the columns the harness writes, comma-separated (make test compares them with csv_header())
"""
import argparse
import csv
import io
import pathlib
import sys

import steps as step_table

ROOT = pathlib.Path(__file__).resolve().parent.parent
COLUMNS = ("step,name,technique,dtype,m,n,k,mode,kernel,detail,ms,ms_min,ms_max,tflops,step_ratio,step_ratio_q25,"
           "step_ratio_q75,rounds,clock_mhz,clock_source,power_w,joules_per_gemm,tflop_per_j,sol_at_clock,"
           "clock_reasons,check,gpu,sm_count,l2_mib,max_sm_clock_mhz,power_limit_w,driver_cuda,runtime,cublas,date,"
           "rel_rms_err,scaling,accumulation").split(",")
BASE = COLUMNS[:COLUMNS.index("date") + 1]  # the first results' columns: what marks a CSV as the harness's
# The cuBLASLt kernels of an fp8 run: (scaling, or None for the step's; accumulation).
LT = {"cublaslt_best": (None, "default"), "cublaslt_fast": ("per_tensor", "fast"),
      "cublaslt_stand_in": ("per_tensor", "default")}
STAND_IN = "cublaslt_stand_in"
_STEPS = {}


def registered(root=ROOT):
    """The steps of root/kernels/steps.json by id (read once)."""
    if root not in _STEPS:
        _STEPS[root] = step_table.by_id(step_table.load(root))
    return _STEPS[root]


def harness_fields(fields):
    """The current columns for a CSV whose columns are `fields`: the script's own columns before the
    harness's (gpu_session.sh's promote_every) stay first, the harness's become COLUMNS, the script's
    after them (bench.py's family) stay after. None when `fields` are not the harness's (BASE in a run)."""
    if "step" not in fields:
        return None
    start = fields.index("step")
    if fields[start:start + len(BASE)] != BASE:
        return None
    end = start + len(BASE)
    while end < len(fields) and end - start < len(COLUMNS) and fields[end] == COLUMNS[end - start]:
        end += 1
    return fields[:start] + COLUMNS + [f for f in fields[end:] if f not in COLUMNS]


def derived(row, steps):
    """(scaling, accumulation) of one row as the harness would write them, from its kernel and its step's
    registration; ("", "") for an fp32 or bf16 row, and for an fp8 row whose step is not the registered
    one (another name) or whose kernel is none of the step and LT."""
    s = steps.get(row.get("step", ""))
    dtype = row.get("dtype") or (s.dtype if s else "")
    if dtype != "fp8" or s is None or (row.get("name") and row["name"] != s.name):
        return "", ""
    kernel = row.get("kernel", "")
    if kernel == "step":
        return s.scaling, s.accumulation
    if kernel in LT:
        scaling, accumulation = LT[kernel]
        return scaling or s.scaling, accumulation
    return "", ""


def filled(row, steps=None):
    """`row` (a dict of one CSV row) with the current harness columns in their order (harness_fields; a
    row of other columns keeps its own and gains the two at its end) and scaling and accumulation
    derived where they are empty."""
    steps = registered() if steps is None else steps
    fields = harness_fields(list(row)) or list(row) + [c for c in ("scaling", "accumulation") if c not in row]
    scaling, accumulation = derived(row, steps)
    out = {f: row.get(f) or "" for f in fields}
    out["scaling"] = out["scaling"] or scaling
    out["accumulation"] = out["accumulation"] or accumulation
    return out


def fp8_reference(group, me, steps=None):
    """(row, label): the cuBLASLt row of `group` (the rows of one process) that the fp8 step row `me` is
    read against, with the same accumulation: cublaslt_fast for a step whose accumulation is
    tensor_core, else cublaslt_best (the step's scaling, default accumulation); where that one was not
    timed, the per-tensor stand-in, labelled "per-tensor stand-in" (the label is "" otherwise).
    (None, "") when neither is there."""
    steps = registered() if steps is None else steps
    accumulation = me.get("accumulation") or derived(me, steps)[1]
    by_kernel = {r.get("kernel"): r for r in group if r.get("step") == me.get("step")}
    if accumulation == "tensor_core":
        return by_kernel.get("cublaslt_fast"), ""
    if "cublaslt_best" in by_kernel:
        return by_kernel["cublaslt_best"], ""
    return (by_kernel[STAND_IN], "per-tensor stand-in") if STAND_IN in by_kernel else (None, "")


def migrate_text(text, steps):
    """(new text, rows, fp8 rows filled) of a CSV's text; the text itself when nothing changes, None
    for a CSV not in the harness's columns. Keeps the file's line ends (\\r\\n or \\n)."""
    table = list(csv.reader(io.StringIO(text, newline="")))
    if not table or harness_fields(table[0]) is None:
        return None
    fields, new_fields = table[0], harness_fields(table[0])
    rows, changed, n_filled = [], new_fields != fields, 0
    for values in table[1:]:
        old = dict(zip(fields, values))
        new = filled(old, steps)
        n_filled += bool(new["scaling"] != old.get("scaling", "") or new["accumulation"] != old.get("accumulation", ""))
        changed |= n_filled > 0
        rows.append([new.get(f, "") for f in new_fields])
    if not changed:
        return text, len(rows), 0
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\r\n" if text.split("\n", 1)[0].endswith("\r") else "\n")
    w.writerow(new_fields)
    w.writerows(rows)
    return out.getvalue(), len(rows), n_filled


def migrate(paths, check, root=ROOT):
    """Migrates (or with `check`, judges) each CSV of `paths`. Returns the exit code: 1 when `check`
    finds a file to migrate, or a file cannot be read; prints one line per file."""
    steps, status = registered(root), 0
    for path in paths:
        path = pathlib.Path(path)
        shown = path.relative_to(root) if path.is_absolute() and path.is_relative_to(root) else path
        if (path.parent / ".bench-staging" / "COMMIT").exists():
            print(f"error: {path.parent}/.bench-staging/COMMIT: a benchmark was killed while committing: run "
                  f"`python3 scripts/results_io.py --recover {path.parent}` first")
            return 1
        try:
            with open(path, newline="") as f:
                text = f.read()
        except OSError as e:
            print(f"error: cannot read {path}: {e.strerror}")
            status = 1
            continue
        got = migrate_text(text, steps)
        if got is None:
            continue
        new, n_rows, n_filled = got
        if new == text:
            print(f"{shown}: current ({n_rows} rows)")
        elif check:
            print(f"{shown}: not in the current columns (`python3 scripts/results_columns.py migrate {path}`)")
            status = 1
        else:
            with open(path, "w", newline="") as f:
                f.write(new)
            print(f"{shown}: migrated ({n_rows} rows, scaling and accumulation derived for {n_filled} fp8 rows)")
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("migrate", help="bring results CSVs to the current columns")
    m.add_argument("csv", nargs="*", help="default: results/*.csv and results/tuning/*.csv")
    m.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is not current")
    m.add_argument("--root", default=str(ROOT), help="the repository (its kernels/steps.json and results/)")
    sub.add_parser("header", help="print the harness's columns")
    args = ap.parse_args()
    if args.cmd == "header":
        print(",".join(COLUMNS))
        return 0
    root = pathlib.Path(args.root)
    paths = args.csv or sorted((root / "results").glob("*.csv")) + sorted((root / "results" / "tuning").glob("*.csv"))
    return migrate(paths, args.check, root)


if __name__ == "__main__":
    sys.exit(main())
