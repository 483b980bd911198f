#!/usr/bin/env python3
"""Prints the results of a results/<gpu>.csv (paired burst rows; see scripts/bench.py) as Markdown:
one table per size in step order, each step's TFLOP/s and its paired ratio to cuBLAS (median
[interquartile range]), to cuBLASLt's best algorithm and to the best CUTLASS configuration, with
the SM clock measured beside the launches, power and TFLOP/J; then the references themselves; then
the sustained (power-capped) rows of <gpu>_sustained.csv and the stability lines of the .meta.json.
With --full FILE, writes that (between <!-- results:begin --> and <!-- results:end --> of FILE,
docs/results.md); with --readme FILE, writes there the front page's compact table instead: every
registered step in step order with its TFLOP/s and paired ratio to cuBLAS at each square size."""
import argparse
import csv
import json
import pathlib
import re
import sys

import results_columns
import steps as step_table

STEPS = step_table.by_id(step_table.load())
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def f(v, fmt="{:.1f}"):
    try:
        return fmt.format(float(v)) if v not in ("", None) else ""
    except ValueError:
        return ""


def best_cutlass(group):
    cut = [r for r in group if r["kernel"].startswith("cutlass") and r.get("tflops")]
    return max(cut, key=lambda r: float(r["tflops"])) if cut else None


def refuse_pending(csv_path):
    """A benchmark killed in the middle of its commit leaves results/ half moved until the next run (or
    scripts/results_io.py --recover) finishes it: no table is drawn from it meanwhile."""
    journal = pathlib.Path(csv_path).parent / ".bench-staging" / "COMMIT"
    if journal.exists():
        sys.exit(f"error: {journal} says a benchmark was killed while committing its files: run "
                 f"`python3 scripts/results_io.py --recover {journal.parent.parent}` first")


def rounds_of(rows):
    """The paired rounds of the step rows: "30", or "20–30" where runs differ."""
    r = sorted({int(x["rounds"]) for x in rows if x.get("kernel") == "step" and x.get("rounds")})
    return "?" if not r else str(r[0]) if len(r) == 1 else f"{r[0]}–{r[-1]}"


def table(csv_path):
    refuse_pending(csv_path)
    try:
        rows = [r for r in read(csv_path) if r.get("mode", "burst") == "burst"]
    except OSError as e:
        sys.exit(f"error: cannot read {csv_path}: {e.strerror}")
    if not rows or "kernel" not in rows[0]:
        sys.exit(f"error: {csv_path}: no rows in the paired format (scripts/bench.py writes it)")
    ok = [r for r in rows if r.get("tflops")]
    if not ok:
        sys.exit(f"error: {csv_path}: no step passed its check, nothing to tabulate")
    first = ok[0]
    meta_path = pathlib.Path(csv_path).with_suffix(".meta.json")
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    lines = [
        f"GPU: {first['gpu']} ({first['sm_count']} SMs, L2 {first['l2_mib']} MiB, max SM clock "
        f"{first['max_sm_clock_mhz']} MHz, power limit {first.get('power_limit_w') or '?'} W, clocks left as found); "
        f"driver {meta.get('driver_version', '?')} (CUDA {first['driver_cuda']}), CUDA runtime {first['runtime']}, "
        f"cuBLAS {first['cublas']}; measured {first['date']}. Square M = N = K. **Paired**: in each step's process "
        f"the step and every reference alternate launch by launch ({rounds_of(ok)} rounds, L2 flushed before "
        f"every launch); a ratio is the median of the per-round ratios (step speed / reference speed) with its "
        f"interquartile range. SM clock: median of a %clock64/%globaltimer probe run right after each launch; "
        f"W and TFLOP/J: NVML energy counter over {meta.get('energy_s', 0.25)} s of back-to-back launches of "
        f"that kernel alone.",
    ]
    shapes = sorted({(int(r["m"]), int(r["n"]), int(r["k"])) for r in rows})
    for shape in shapes:
        title = f"{shape[0]}^3" if len(set(shape)) == 1 else "x".join(map(str, shape))
        lines += ["", f"**{title}**", "",
                  "| step | technique | TFLOP/s | × cuBLAS [IQR] | × cuBLASLt best | × CUTLASS best | SM MHz | W | TFLOP/J | check |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
        by_step = {}
        for r in rows:
            if (int(r["m"]), int(r["n"]), int(r["k"])) == shape:
                by_step.setdefault(r["step"], []).append(r)
        for step in sorted(by_step):
            group = by_step[step]
            me = next((r for r in group if r["kernel"] == "step"), None)
            if me is None:
                continue
            if not me.get("tflops"):
                lines.append(f"| {step} {me['name']} | {me.get('technique', '')} | — | | | | | | | {me['check']} |")
                continue
            cub = next((r for r in group if r["kernel"] == "cublas"), None)
            lt = next((r for r in group if r["kernel"] == "cublaslt_best"), None)
            # fp8 where cuBLASLt had no block-scaled algorithm: the per-tensor stand-in, labelled
            stand_in = next((r for r in group if r["kernel"] == results_columns.STAND_IN), None) if lt is None else None
            cut = best_cutlass(group)
            ratio = (f"{float(cub['step_ratio']):.3f} [{f(cub['step_ratio_q25'], '{:.3f}')}–{f(cub['step_ratio_q75'], '{:.3f}')}]"
                     if cub else "")
            lt_cell = (f(lt["step_ratio"], "{:.3f}") if lt else
                       f"{f(stand_in['step_ratio'], '{:.3f}')} (per-tensor stand-in)" if stand_in else "")
            lines.append(
                f"| {step} {me['name']} | {me['technique']} | {f(me['tflops'])} | {ratio} | "
                f"{lt_cell} | {f(cut['step_ratio'], '{:.3f}') if cut else ''} | "
                f"{f(me['clock_mhz'], '{:.0f}')} | {f(me['power_w'], '{:.0f}')} | {f(me['tflop_per_j'], '{:.2f}')} | {me['check']} |")
        # The references, as measured in the process of the last step of each ladder.
        refs = []
        for dtype in ("fp32", "bf16", "fp8"):  # each ladder; step 00 is cuBLAS itself, no step of a ladder
            steps = [s for s in sorted(by_step, key=step_table.sort_key)
                     if by_step[s][0].get("dtype") == dtype and not (s in STEPS and STEPS[s].tile is None)
                     and any(r["kernel"] != "step" and r.get("tflops") for r in by_step[s])]
            if steps:
                refs += [r for r in by_step[steps[-1]] if r["kernel"] != "step" and r.get("tflops")]
        if refs:
            lines += ["", "| reference (in the process of) | dtype | TFLOP/s | SM MHz | W | TFLOP/J | detail |",
                      "|---|---|---:|---:|---:|---:|---|"]
            for r in refs:
                # an fp8 reference says its scaling and accumulation (results_columns.py) before its algorithm
                r = results_columns.filled(r, STEPS)
                how = f"{r['scaling']}, {r['accumulation']} accumulation: " if r["scaling"] else ""
                lines.append(f"| {r['kernel']} ({r['step']}) | {r['dtype']} | {f(r['tflops'])} | {f(r['clock_mhz'], '{:.0f}')} | "
                             f"{f(r['power_w'], '{:.0f}')} | {f(r['tflop_per_j'], '{:.2f}')} | {how}{r['detail']} |")
    sus_path = pathlib.Path(str(csv_path).replace(".csv", "_sustained.csv"))
    if sus_path.exists():
        sus = [r for r in read(sus_path) if r.get("tflops")]
        if sus:
            lines += ["", f"**Sustained** (each kernel alone, back to back without flushes, for {meta.get('sustained_s', '?')} s; "
                      "the second half, after the power limiter settled; clock and power: NVML mean):", "",
                      "| size | kernel | TFLOP/s | step / kernel | SM MHz | W | TFLOP/J | clock reasons |",
                      "|---:|---|---:|---:|---:|---:|---:|---|"]
            for r in sus:
                name = f"{r['step']} {r['name']}" if r["kernel"] == "step" else f"{r['kernel']} ({r['step']})"
                lines.append(f"| {r['m']} | {name} | {f(r['tflops'])} | {f(r['step_ratio'], '{:.3f}')} | "
                             f"{f(r['clock_mhz'], '{:.0f}')} | {f(r['power_w'], '{:.0f}')} | {f(r['tflop_per_j'], '{:.2f}')} | "
                             f"{r['clock_reasons']} |")
    for line in meta.get("stability", []):
        lines.append(f"\n{line}")
    for note in meta.get("notes", []):
        lines.append(f"\n{note}")
    return "\n".join(lines)


def compact(csv_path):
    """The front page's table: every registered step, in step order, with TFLOP/s and the paired ratio
    to cuBLAS [IQR] at each square size of the CSV ("—" where it has no row for the step)."""
    refuse_pending(csv_path)
    rows = [r for r in read(csv_path) if r.get("mode", "burst") == "burst"]
    ok = [r for r in rows if r.get("tflops")]
    if not ok:
        sys.exit(f"error: {csv_path}: no step passed its check, nothing to tabulate")
    first = ok[0]
    sizes = sorted({int(r["m"]) for r in rows if r["m"] == r["n"] == r["k"]})
    cells = {}  # (step, size) -> "TFLOP/s | ratio"
    for size in sizes:
        group = [r for r in rows if int(r["m"]) == int(r["n"]) == int(r["k"]) == size]
        for sid in {r["step"] for r in group}:
            me = next((r for r in group if r["step"] == sid and r["kernel"] == "step"), None)
            # fp8 steps: the paired ratio to cuBLASLt FP8 with the same accumulation (cuBLAS has no FP8
            # GEMM), or to the per-tensor stand-in where cuBLASLt had no block-scaled algorithm, labelled.
            label = ""
            if me is not None and me.get("dtype") == "fp8":
                cub, label = results_columns.fp8_reference(group, me, STEPS)
            else:
                cub = next((r for r in group if r["step"] == sid and r["kernel"] == "cublas"), None)
            if me is None or not me.get("tflops"):
                cells[sid, size] = f"{me['check'] if me else '—'} | "
                continue
            ratio = (f"{float(cub['step_ratio']):.3f} [{f(cub['step_ratio_q25'], '{:.3f}')}–{f(cub['step_ratio_q75'], '{:.3f}')}]"
                     + (f" ({label})" if label else "") if cub and sid != "00" else "")
            cells[sid, size] = f"{f(me['tflops'])} | {ratio}"
    dates = sorted({r["date"] for r in ok if r.get("date")})
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    lines = [f"{first['gpu']}, clocks left as found, measured {when} ([all the numbers](docs/results.md)). "
             f"Each step runs in its own process, alternating launch by launch with cuBLAS (L2 flushed before every "
             f"launch, {rounds_of(ok)} rounds); × cuBLAS is the median of the per-round speed ratios, with its "
             f"interquartile range. fp32 steps (01–09b) against cuBLAS SGEMM in strict FP32, bf16 steps (from 10) "
             f"against cuBLAS bf16, fp8 steps (30 on) against cuBLASLt FP8 with the same scaling and the same "
             f"accumulation (fast accumulation for a step without promotion, else the default; where cuBLASLt "
             f"has no block-scaled algorithm, against its per-tensor default, marked \"per-tensor stand-in\").", "",
             "| step | parent | technique | " + " | ".join(f"{s}³ TFLOP/s | × cuBLAS [IQR]" for s in sizes) + " |",
             "|---|---|---|" + "---:|---:|" * len(sizes)]
    for s in step_table.load():
        lines.append(f"| [{s.id}](kernels/{s.file}.cu) | {s.parent or '—'} | {s.technique} | "
                     + " | ".join(cells.get((s.id, size), "— | ") for size in sizes) + " |")
    return "\n".join(lines)


def rewrite(path, text, begin=BEGIN, end=END, what="the table"):
    """Replaces the text between the markers `begin` and `end` of `path` with `text` (also the shapes
    table's writer, scripts/shapes_table.py). Exits with one line when the file cannot be read or the
    markers are missing or out of order."""
    path = pathlib.Path(path)
    try:
        old = path.read_text()
    except OSError as e:
        sys.exit(f"error: cannot read {path}: {e.strerror}")
    if begin not in old or end not in old or old.index(begin) > old.index(end):
        sys.exit(f"error: {path}: markers {begin} ... {end} not found in that order")
    new = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: f"{begin}\n{text}\n{end}", old, flags=re.S)
    path.write_text(new)
    print(f"rewrote {what} in {path}")



def rewrite_block(book, name, body, check, command):
    """The chapter `book`'s generated block `name`: what stands between `<!-- {name}:table -->` and
    `<!-- /{name} -->` becomes `body` (the FP8 outliers and the PyTorch tables). With `check`, writes
    nothing and returns 1 when the block is not `body` (`command` says how to rewrite it); else 0.
    Exits with one line when the chapter cannot be read or has no such block."""
    book = pathlib.Path(book)
    try:
        text = book.read_text(encoding="utf-8")
    except OSError as e:
        sys.exit(f"error: cannot read {book}: {e.strerror}")
    m = re.search(rf"(<!-- {name}:table -->\n)(.*?)(<!-- /{name} -->)", text, re.S)
    if not m:
        sys.exit(f"error: {book}: no <!-- {name}:table --> ... <!-- /{name} --> block")
    if m.group(2) == body:
        print(f"{book}: the {name} block is current")
        return 0
    if check:
        print(f"{book}: the {name} block is not what the CSV says ({command})")
        return 1
    book.write_text(text[:m.start(2)] + body + text[m.end(2):], encoding="utf-8")
    print(f"wrote the {name} block of {book}")
    return 0

def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--readme", help="write the compact table of the first CSV into this file (README.md)")
    ap.add_argument("--full", help="write the full tables into this file (docs/results.md)")
    args = ap.parse_args()
    text = "\n\n".join(table(c) for c in args.csv)
    try:
        print(text, flush=True)
    except BrokenPipeError:  # e.g. `| head`: the reader left; still rewrite the files below
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if args.full:
        rewrite(args.full, text)
    if args.readme:
        rewrite(args.readme, compact(args.csv[0]))


if __name__ == "__main__":
    main()
