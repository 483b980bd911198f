#!/usr/bin/env python3
"""Profiles one step and cuBLAS at the same shape with Nsight Compute and prints them side by side:
kernel time, SM clock, issue slots busy, tensor-pipe (or FMA-pipe) utilisation, L2 and DRAM
throughput, and the bytes per GEMM through L2 and read from / written to DRAM (totals over the
launches, which unlike the rates do not depend on the clock the launch got); `--metric NAME` adds any
raw ncu metric (summed over the launches when cuBLAS runs several kernels). Clocks are left as
found (`--clock-control none`): on the H200 the clock a kernel meets is part of its result.

An FP8 step is profiled beside cuBLASLt FP8 of its scaling, per-tensor or block (kernels/steps.json says
which), with default accumulation and the heuristic's first algorithm (`--profile-once cublaslt`): cuBLAS
has no FP8 GEMM. The column is headed with what ran. fp32 and bf16 steps are profiled beside cuBLAS.

Usage: scripts/profile.py STEP [--m M --n N --k K] [--build build] [--ncu ncu] [--out FILE] [--metric NAME ...]
(`make profile STEP=14 M=8192 N=8192 K=8192`); `--dry-run` prints the two ncu command lines and runs nothing.
       scripts/profile.py --roofline [--steps ID ...] --csv FILE [--m M --n N --k K]: every built step
(cuBLAS once per ladder, from its last step's binary) with only the roofline's metrics: time, clock, and the bytes
through L1, L2 and DRAM per GEMM; one CSV row each (scripts/plot_roofline.py draws it). The step binary checks its result first, then runs
the kernel once inside cudaProfilerStart/Stop (`--profile-once step|cublas`), so ncu sees exactly
one launch of the step (or of cuBLAS's kernels) and nothing of the harness."""
import argparse
import csv
import io
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# (label, ncu metric, unit conversion). Sections give the stable names; the raw metrics are the
# Hopper names (Nsight Compute's "Metrics Reference"; `ncu --query-metrics` lists them per GPU).
METRICS = [
    ("time (us)", "gpu__time_duration.sum", 1e-3),
    ("SM clock (MHz)", "sm__cycles_elapsed.avg.per_second", 1e-6),
    ("SM cycles (k)", "sm__cycles_elapsed.max", 1e-3),
    ("issue slots busy (%)", "sm__inst_issued.avg.pct_of_peak_sustained_active", 1),
    ("tensor pipe (%)", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", 1),
    ("FMA pipe (%)", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", 1),
    ("L2 throughput (%)", "lts__t_sectors.avg.pct_of_peak_sustained_elapsed", 1),
    ("DRAM throughput (GB/s)", "dram__bytes.sum.per_second", 1e-9),
    ("DRAM throughput (%)", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", 1),
    # Totals, for the bytes a kernel moves per GEMM (the rates above depend on its clock).
    ("L2 bytes (GB)", "lts__t_bytes.sum", 1e-9),
    ("DRAM read (GB)", "dram__bytes_read.sum", 1e-9),
    ("DRAM write (GB)", "dram__bytes_write.sum", 1e-9),
]


def ncu_command(ncu, binary, shape, what, metrics):
    """The ncu command line that profiles one launch of `what` (the step executable's --profile-once:
    "step", "cublas" or "cublaslt") at shape (M, N, K)."""
    return [ncu, "--clock-control", "none", "--profile-from-start", "off", "--csv", "--page", "raw",
            "--metrics", ",".join(m for _, m, _ in metrics), str(binary), "--m", str(shape[0]), "--n", str(shape[1]),
            "--k", str(shape[2]), "--profile-once", what]


def run_ncu(ncu, binary, shape, what, metrics):
    cmd = ncu_command(ncu, binary, shape, what, metrics)
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r, cmd


# How kernels/steps.json spells an fp8 step's scaling, and what the reference column says of it.
SCALING_LABELS = {"per_tensor": "per-tensor", "block": "block-scaled (1x128 A, 128x128 B)"}


def reference(step):
    """What a step is profiled beside, as (the harness's --profile-once value, the column's label), from its
    registration (a scripts/steps.py Step, or None for one kernels/steps.json does not list yet): cuBLAS for
    fp32 and bf16; for fp8, which cuBLAS has no GEMM of, cuBLASLt FP8, which the harness runs with the
    problem's scaling, the step's."""
    if step is None or step.dtype != "fp8":
        return "cublas", "cuBLAS"
    if step.scaling not in SCALING_LABELS:
        sys.exit(f"error: step {step.id}: kernels/steps.json gives scaling '{step.scaling}' "
                 f"(profile.py knows {', '.join(SCALING_LABELS)})")
    return "cublaslt", f"cuBLASLt FP8 {SCALING_LABELS[step.scaling]}"


def parse(stdout):
    """ncu --csv --page raw: a header row of metric names, a units row, then one row per kernel."""
    lines = [l for l in stdout.splitlines() if l.startswith('"')]
    if len(lines) < 3:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header, data = rows[0], rows[2:]
    return [dict(zip(header, d)) for d in data]


def number(v):
    try:
        return float(str(v).replace(",", ""))
    except ValueError:
        return None


# The roofline's metrics: one launch's time and clock, and the bytes it moved at each level.
ROOFLINE = [("time_us", "gpu__time_duration.sum", 1e-3), ("clock_mhz", "sm__cycles_elapsed.avg.per_second", 1e-6),
            ("l1_bytes", "l1tex__t_bytes.sum", 1), ("l2_bytes", "lts__t_bytes.sum", 1),
            ("dram_read_bytes", "dram__bytes_read.sum", 1), ("dram_write_bytes", "dram__bytes_write.sum", 1)]


def roofline(args):
    """One CSV row per step (and one for cuBLAS): the roofline's metrics, totals over the launches."""
    import steps as step_table
    bins = sorted((p for p in (pathlib.Path(args.build) / "bin").iterdir() if re.match(r"\d\d[a-z]?_", p.name)),
                  key=lambda p: step_table.sort_key(p.name.split("_")[0]))
    if args.steps:
        bins = [b for b in bins if b.name.split("_")[0] in args.steps]
    if not bins:
        sys.exit(f"error: no step binaries under {args.build}/bin")
    shape = (args.m, args.n, args.k)
    rows = []
    reg = step_table.by_id(step_table.load())
    lasts = []  # cuBLAS from the last binary of each ladder: SGEMM and the bf16 GEMM
    for dtype in ("fp32", "bf16"):
        ladder = [b for b in bins if reg.get(b.name.split("_")[0]) and reg[b.name.split("_")[0]].dtype == dtype]
        lasts += ladder[-1:]
    for b, what in [(b, "step") for b in bins] + [(b, "cublas") for b in lasts]:
        r, cmd = run_ncu(args.ncu, b, shape, what, ROOFLINE)
        kernels = parse(r.stdout) if r.returncode == 0 else []
        if not kernels:
            print(f"error: {' '.join(cmd)} exited {r.returncode}: {(r.stdout + r.stderr)[-400:]}", file=sys.stderr)
            rows.append({"step": b.name.split("_")[0] if what == "step" else "cublas", "name": b.name,
                         "error": f"exit {r.returncode}"})
            continue
        main_k = max(kernels, key=lambda k: number(k.get("gpu__time_duration.sum")) or 0)
        sid = b.name.split("_")[0]
        row = {"step": sid if what == "step" else f"cublas_{reg[sid].dtype}", "name": b.name if what == "step" else
               main_k.get("Kernel Name", "?")[:60], "m": args.m, "n": args.n, "k": args.k, "launches": len(kernels)}
        for label, metric, scale in ROOFLINE:
            v = sum(number(k.get(metric)) or 0 for k in kernels) if metric.endswith(".sum") else number(main_k.get(metric))
            row[label] = f"{v * scale:.1f}" if v is not None else ""
        rows.append(row)
        print(",".join(str(v) for v in row.values()), flush=True)
    fields = ["step", "name", "m", "n", "k", "launches"] + [l for l, _, _ in ROOFLINE] + ["error"]
    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.csv}")
    return 1 if any(r.get("error") for r in rows) else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", nargs="?")
    ap.add_argument("--roofline", action="store_true", help="every step's bytes per level into --csv (see above)")
    ap.add_argument("--steps", nargs="*", help="--roofline: only these step ids")
    ap.add_argument("--csv", help="--roofline: the CSV to write")
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--ncu", default=shutil.which("ncu") or "/usr/local/cuda/bin/ncu")
    ap.add_argument("--out", help="also write the table here")
    ap.add_argument("--metric", action="append", default=[],
                    help="one more raw ncu metric to read, by its name (repeatable; shown as is, summed over launches)")
    ap.add_argument("--dry-run", action="store_true", help="print the step's and the reference's ncu command lines; run nothing")
    args = ap.parse_args()
    if args.roofline:
        if not args.csv:
            ap.error("--roofline needs --csv FILE")
        return roofline(args)
    if not args.step:
        ap.error("name a STEP (or --roofline)")
    bins = [p for p in (pathlib.Path(args.build) / "bin").glob(f"{args.step}_*") if p.is_file()]
    if len(bins) != 1:
        sys.exit(f"error: no single {pathlib.Path(args.build) / 'bin'}/{args.step}_* binary (found {len(bins)}): "
                 f"run `make {args.step}` first (or pass --build)")
    import steps as step_table
    registered = step_table.by_id(step_table.load()).get(args.step)
    if registered is None:
        print(f"note: step {args.step} is not in kernels/steps.json yet (make steps-json): profiled beside cuBLAS",
              file=sys.stderr)
    ref_what, ref_label = reference(registered)
    shape = (args.m, args.n, args.k)
    builtin = {m for _, m, _ in METRICS}
    extra = [(name, name, 1) for name in dict.fromkeys(args.metric) if name not in builtin]
    raw = {name for name, _, _ in extra}  # shown unscaled, summed over the launches
    sides = (("step", "step", bins[0].name), ("reference", ref_what, ref_label))
    if args.dry_run:
        for side, what, label in sides:
            print(f"{side} ({label}): {shlex.join(ncu_command(args.ncu, bins[0], shape, what, list(METRICS) + extra))}")
        return 0
    if not shutil.which(args.ncu) and not pathlib.Path(args.ncu).exists():
        sys.exit(f"error: ncu not found ({args.ncu}): install Nsight Compute or pass --ncu")
    table = {}
    for side, what, _ in sides:
        metrics = list(METRICS) + extra
        r, cmd = run_ncu(args.ncu, bins[0], shape, what, metrics)
        # A metric this GPU or ncu version does not know fails the whole run: drop it and say so.
        while r.returncode != 0 and (bad := re.search(r"Failed to find metric ([\w.]+)", r.stdout + r.stderr)):
            print(f"note: ncu has no metric {bad.group(1)} here; dropped", file=sys.stderr)
            metrics = [x for x in metrics if x[1] != bad.group(1)]
            r, cmd = run_ncu(args.ncu, bins[0], shape, what, metrics)
        if r.returncode != 0:
            sys.stderr.write(r.stdout[-3000:] + r.stderr[-3000:])
            sys.exit(f"error: {' '.join(cmd)} exited {r.returncode}")
        kernels = parse(r.stdout)
        if not kernels:
            sys.exit(f"error: ncu profiled no kernel for {what} (output: {r.stdout[-500:]})")
        # cuBLAS may launch more than one kernel (e.g. a split-K reduction): totals (the built-in
        # metrics named *.sum: time and bytes) and every --metric add up; rates (and cycles) are those
        # of the longest kernel.
        main_k = max(kernels, key=lambda k: number(k.get("gpu__time_duration.sum")) or 0)
        col = {"kernel": main_k.get("Kernel Name", "?")[:60], "launches": str(len(kernels))}
        for label, metric, scale in metrics:
            if metric.endswith(".sum") or metric in raw:
                v = sum(number(k.get(metric)) or 0 for k in kernels)
            else:
                v = number(main_k.get(metric))
            if v is None:
                col[label] = ""
            elif metric in raw and float(v).is_integer():  # a raw count: every digit
                col[label] = f"{v:.0f}"
            else:
                col[label] = f"{v * scale:.1f}"
        table[side] = col
    labels = ["kernel", "launches"] + [l for l, _, _ in METRICS + extra]
    out = [f"ncu --clock-control none, {bins[0].name} vs {ref_label} at M={args.m} N={args.n} K={args.k}", "",
           f"| metric | {bins[0].name} | {ref_label} |", "|---|---:|---:|"]
    for l in labels:
        out.append(f"| {l} | {table['step'].get(l, '')} | {table['reference'].get(l, '')} |")
    text = "\n".join(out)
    print(text)
    if args.out:
        pathlib.Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
