#!/usr/bin/env python3
"""The benchmark. Every built step runs in its own process at each size; inside it the step and its
references (cuBLAS; cuBLASLt best of its top heuristic algorithms; for bf16 the CUTLASS Hopper
kernels) alternate launch by launch after the same L2 flush, and every row carries the SM clock
measured beside the launches, the power and the energy per GEMM (NVML). A ratio is the median of
the per-pair ratios, with its interquartile range.

  scripts/bench.py                    every step at 4096^3 and 8192^3 (burst), plus the sustained
                                      (power-capped) state of the last step of each ladder and its
                                      references, and the 5-process stability of the last bf16 step
                                      (both also for the --also steps: those with the role
                                      bench-also in scripts/step_roles.tsv)
                                      -> results/<gpu>.csv, _sustained.csv, _series.csv, _stability.csv
  scripts/bench.py --sweep            the last step of each ladder over square 2048-16384 and
                                      transformer-layer shapes -> results/<gpu>_sweep.csv
  scripts/bench.py --waves            the last bf16 step against cuBLAS at M = K = 4096 and N = 256 ..
                                      8192 in steps of one tile column (wave quantization)
                                      -> results/<gpu>_waves_<step>.csv
  scripts/bench.py --shapes           the last bf16 step and the shapes-also steps over every shape a
                                      transformer runs (scripts/shape_sweep.py: decode M = 1-256,
                                      prefill, ragged, long and short K), each paired with cuBLAS,
                                      cuBLASLt best-of-8 and CUTLASS -> results/<gpu>_shapes.csv;
                                      then issue 46's random set (102 shapes from a committed seed,
                                      rows of family "random"); --shapes-set sweep|random runs one
                                      set and keeps the other's rows of that file; it prints its plan
                                      and an estimate of its time first (--dry-run: only that, no GPU)
  scripts/bench.py --shapes --shapes-set random --random-seed S
                                      a held-out draw: the same generator from seed S instead of 46,
                                      rows of family "random-S" (shapes_table.py reports them apart);
                                      the file's other rows (the sweep's, seed 46's) are kept
Options: --build DIR --out DIR --sizes N.. --steps ID.. --reps R --sustained S --stability P
A step that fails its check gets a FAIL row with no timing and makes the script exit 1; a step that
refuses a shape (exit 2, e.g. more memory than the GPU has) gets a REFUSED row and a note. Step 01 is
skipped at a size where one launch would take over --max-launch-s seconds (estimated from the
previous size, time ~ n^3), and the notes say so.
Faults: nothing reaches results/ before the run has finished (scripts/results_io.py stages every
file and commits them together, and a killed commit is finished by the next run); an interrupted run
(Ctrl-C, SIGTERM) or a full disk leaves results/ as it was and says how many runs finished; --resume
goes on from them. It refuses to start while other processes compute on the GPU (--allow-busy-gpu)."""
import argparse
import csv
import datetime
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import results_columns
import results_io
import shape_sweep
import steps as step_table
import tune

ROOT = pathlib.Path(__file__).resolve().parent.parent
STEPS = step_table.by_id(step_table.load())
STEP_RE = re.compile(r"^(\d\d[a-z]?)_")

# Shapes of the sweep (M, N, K): square, then GEMMs of transformer layers (a 4096-wide model with a
# 14336 MLP, 16384 tokens; a wide 28672 projection), then one N that is not a multiple of 256 and
# one M that is not a multiple of 128 (the tiles' edges).
SWEEP = [(s, s, s) for s in (2048, 4096, 6144, 8192, 12288, 16384)] + [
    (16384, 4096, 4096), (16384, 14336, 4096), (16384, 4096, 14336), (8192, 28672, 4096),
    (8192, 8000, 8192), (8000, 8192, 8192)]

# Wave quantization (--waves): M = K = 4096 and N from one 256-column tile to 32 of them; with the
# 128 x 256 tile that is 32 to 1024 tiles, 0.24 to 7.8 waves of 132 blocks.
WAVES_MK = 4096
WAVES_N = [256 * j for j in range(1, 33)]


def step_id(path):
    m = STEP_RE.match(path.name)
    return m.group(1) if m else None


def is_fp32(sid):
    """From the step's registration (.dtype)."""
    return STEPS[sid].dtype == "fp32"


def is_bf16(sid):
    """From the step's registration (.dtype): the bf16 ladder, whose last step the sweeps run (fp8 steps
    have their own references and are timed only at the square sizes)."""
    return STEPS[sid].dtype == "bf16"


def steps_in(build):
    """The step executables of build/bin whose step kernels/steps.json lists, in step order; others (left
    over from a step since renamed) are named and skipped."""
    found = [p for p in (build / "bin").iterdir() if step_id(p) and os.access(p, os.X_OK)]
    for p in found:
        if step_id(p) not in STEPS:
            print(f"note: {p} is no step of kernels/steps.json: skipped (a stale binary? `make clean` removes it)")
    return sorted((p for p in found if step_id(p) in STEPS), key=lambda p: step_table.sort_key(step_id(p)))


def nvidia_smi(query):
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                             capture_output=True, text=True, check=True).stdout
        return out.strip().splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"


def slug_of(gpu):
    s = "".join(c.lower() if c.isalnum() else "_" for c in gpu).strip("_")
    while "__" in s:
        s = s.replace("__", "_")
    return s


def read_rows(path):
    if not path.exists():
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def run_step(binary, m, n, k, reps, csv_path, extra=(), refs=None):
    """Runs one step process; returns (exit code, stdout, stderr)."""
    # fp8: cuBLASLt FP8 (default and fast accumulation) is its reference; cuBLAS has no FP8 GEMM.
    dtype = STEPS[step_id(binary)].dtype
    refs = refs or {"fp32": "cublas,cublaslt", "fp8": "cublaslt"}.get(dtype, "cublas,cublaslt,cutlass")
    cmd = [str(binary), "--m", str(m), "--n", str(n), "--k", str(k), "--reps", str(reps), "--refs", refs,
           "--csv", str(csv_path), *extra]
    print("$", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    sys.stdout.flush()
    return r.returncode, r.stdout, r.stderr


class Interrupted(Exception):
    """SIGINT or SIGTERM during the runs: nothing of this run reaches results/."""


def on_signal(signum, _frame):
    raise Interrupted(signal.Signals(signum).name)


def run_one(binary, m, n, k, reps, tmp, extra, refs, failures, extra_rows, notes):
    """One step process whose rows go to `tmp`. A failure becomes a FAIL row and a line of `failures`;
    a refusal (exit 2: a shape the step or this GPU cannot take, e.g. out of device memory) becomes a
    REFUSED row and a note, not a failure. Returns the exit code."""
    code, out, err = run_step(binary, m, n, k, reps, tmp, extra, refs)
    dropped = dropped_references(out)
    if code == 2:
        why = (err.strip().splitlines() or ["exit 2"])[-1].removeprefix("error: ")
        notes.append(f"{binary.name} refused {m}x{n}x{k}: {why}")
        extra_rows.append(fail_row(binary, m, n, k, code, f"REFUSED ({why})"))
    elif code == 0 and dropped:
        # The step passed and was timed; a reference computed another C than cuBLAS (or the fp64 oracle)
        # and was dropped (the harness's "reference dropped:" line): a row and a note for that reference.
        # The rows go to `tmp` beside the run's own, so that a --resume (which skips this run) keeps them.
        notes += [f"{binary.name} at {m}x{n}x{k}: reference {ref} failed its check against {oracle} and was not timed "
                  f"(the step passed)" for ref, oracle in dropped]
        append_rows(tmp, [{**fail_row(binary, m, n, k, 0, "FAIL (reference, not timed)"), "kernel": ref}
                          for ref, _ in dropped])
    if code not in (0, 2):
        failures.append(f"{binary.name} at {m}x{n}x{k}: exit {code}")
        extra_rows.append(fail_row(binary, m, n, k, code))
    return code


REF_DROPPED = re.compile(r"^reference dropped: (\S+) failed its check against (cuBLAS|the fp64 oracle) and is not timed", re.M)


def dropped_references(out):
    """(reference, oracle) for each reference a step process dropped for a wrong C: the labelled line of
    common/harness/measure.cpp's drop_failed_references on the step's stdout."""
    return REF_DROPPED.findall(out)


def append_rows(path, rows):
    """Appends `rows` to the CSV at `path` (it exists: the step process wrote its rows there), in its
    header's columns, empty where a row has no value."""
    with open(path) as f:
        fields = next(csv.reader(f))
    with open(path, "a", newline="") as f:
        csv.DictWriter(f, fieldnames=fields, extrasaction="ignore", restval="", lineterminator="\n").writerows(rows)


def run_signature(args):
    """What must match for --resume to go on from an interrupted run: the mode and every option that
    chooses the runs or their rows (not --resume itself, --no-docs, --allow-busy-gpu, --out)."""
    keep = {k: v for k, v in sorted(vars(args).items()) if k not in ("resume", "no_docs", "allow_busy_gpu", "out")}
    return json.dumps(keep, sort_keys=True, default=str)


def step_passed(tmp, binary, m, n, k):
    """True when `tmp` holds this run's timed step row with a passing check."""
    return any(r.get("kernel") == "step" and r.get("step") == step_id(binary) and (r.get("check") or "").startswith("pass") and
               (int(r["m"]), int(r["n"]), int(r["k"])) == (m, n, k) for r in read_rows(tmp))


def done_runs(tmp):
    """(step, m, n, k) of the runs whose step row is already in `tmp` (--resume skips them)."""
    return {(r["step"], int(r["m"]), int(r["n"]), int(r["k"])) for r in read_rows(tmp) if r.get("kernel") == "step"}


def run_shapes(runs, args, tmp, stage, suffix, refs, done, reps_of=None, decorate=None, keep=None):
    """Runs each (binary, m, n, k) of `runs` once (no energy runs), with `refs` (None: the step's default
    references) and reps_of(m, n, k) rounds (default --reps), and stages every row, passed through
    decorate(row) if given, as <gpu>_<suffix>.csv; with keep(row), the rows of the file already in --out
    (decorated likewise) for which keep is true are staged too, before this run's. Returns (its name,
    failures, notes)."""
    failures, notes, extra_rows = [], [], []
    for i, (b, m, n, k) in enumerate(runs):
        if (step_id(b), m, n, k) in done:
            continue
        progress(i, len(runs))
        reps = reps_of(m, n, k) if reps_of else args.reps
        t0 = time.monotonic()
        run_one(b, m, n, k, reps, tmp, ["--energy-s", "0"], refs, failures, extra_rows, notes)
        if reps_of:
            print(f"[{i + 1}/{len(runs)}] {b.name} {m}x{n}x{k}: {time.monotonic() - t0:.1f} s", flush=True)
    rows = [results_columns.filled(r) for r in read_rows(tmp) + extra_rows]  # FAIL rows: scaling too
    if not rows:
        sys.exit("no step produced a result")
    if decorate:
        rows = [decorate(r) for r in rows]
    name = f"{slug_of(next((r['gpu'] for r in rows if r.get('gpu')), 'gpu'))}_{suffix}.csv"
    if keep:
        # rows of a file from before the scaling and accumulation columns gain them (results_columns.py)
        old = (results_columns.filled(r) for r in read_rows(stage.out / name))
        kept = [r for r in (decorate(r) if decorate else r for r in old) if keep(r)]
        if kept:
            print(f"kept {len(kept)} rows of the committed {name} (the shapes this run does not take)", flush=True)
        rows = kept + rows
    stage.csv(name, rows)
    return name, failures, notes


PROGRESS = {"done": 0, "of": 0, "t0": time.monotonic()}


def progress(i, total):
    PROGRESS["done"], PROGRESS["of"] = i, total


def fail_row(binary, m, n, k, code, check=None):
    return {"step": step_id(binary), "name": binary.name[len(step_id(binary)) + 1:], "m": m, "n": n, "k": k,
            "mode": "burst", "kernel": "step", "check": check or f"FAIL (exit {code})"}


SHAPES_SETS = ("all", "sweep", "random")


def random_seed_arg(text):
    """--random-seed's value: an integer >= 0 (the seed of shape_sweep.random_shapes), else argparse's
    error (exit 2)."""
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer (the seed of the random draw, e.g. 4701)")
    if seed < 0:
        raise argparse.ArgumentTypeError(f"{seed} is negative (a seed is an integer >= 0)")
    return seed


def shapes_family(args):
    """family(m, n, k) of a --shapes run's rows: the drawn set's family (shape_sweep.random_family of
    --random-seed) for a shape of that draw, else shape_sweep.family_of (the sweep's family, "random"
    for a shape of seed 46's set, or "other")."""
    drawn = {(m, n, k) for m, n, k, _ in shape_sweep.random_shapes(args.random_seed)}
    fam = shape_sweep.random_family(args.random_seed)
    return lambda m, n, k: fam if (m, n, k) in drawn else shape_sweep.family_of(m, n, k)


def shapes_plan(bins, args):
    """The runs of --shapes, (binary, m, n, k) shape by shape (the steps of one shape back to back, so
    they meet the same thermal state): the last bf16 step and the --shapes-also steps over
    shape_sweep.SHAPES, then over the random set (shape_sweep.random_shapes(--random-seed), in the order
    drawn), as --shapes-set chooses. Prints them, family by family and class by class, with the rounds,
    the seed and the estimated time."""
    bf16 = [b for b in bins if is_bf16(step_id(b))]
    if not bf16:
        sys.exit("error: --shapes needs a bf16 step (the shapes are bf16 GEMMs)")
    swept = [b for b in bf16 if b == bf16[-1] or step_id(b) in args.shapes_also]
    for sid in args.shapes_also:  # named, but not run: say why instead of dropping it
        if sid not in {step_id(b) for b in swept}:
            why = ("not a bf16 step (the shapes are bf16 GEMMs)" if sid in STEPS and not is_bf16(sid)
                   else "not among the built steps selected (--steps, build/bin)")
            print(f"note: --shapes-also {sid}: {why}; not run")
    sweep = args.shapes_set in ("all", "sweep")
    seed = args.random_seed
    held = seed != shape_sweep.RANDOM_SEED  # a held-out draw, not issue 46's set
    drawn = shape_sweep.random_shapes(seed) if args.shapes_set in ("all", "random") else []
    shapes = (shape_sweep.SHAPES if sweep else []) + [(m, n, k) for m, n, k, _ in drawn]
    runs = [(b, m, n, k) for (m, n, k) in shapes for b in swept]

    def seconds(group):
        return sum(shape_sweep.plan_seconds(m, n, k, shape_sweep.reps_for(m, n, k, args.reps))
                   for (m, n, k) in group) * len(swept)

    sets = " and ".join(([f"the sweep's {len(shape_sweep.SHAPES)} shapes"] if sweep else []) +
                        ([f"{len(drawn)} random shapes (seed {seed}"
                          + (f": a held-out draw, family {shape_sweep.random_family(seed)})" if held else ")")]
                         if drawn else []))
    print(f"--shapes (--shapes-set {args.shapes_set}): steps {' '.join(step_id(b) for b in swept)} (the last bf16 "
          f"step, and shapes-also) over {sets}: {len(runs)} processes, each paired with cuBLAS, cuBLASLt best-of-8 "
          f"and CUTLASS")
    subtotals = []
    if sweep:
        print("  the sweep (issue 30), by family:")
        for fam, group in shape_sweep.FAMILIES:
            few = [shape_sweep.label(*s) for s in group if shape_sweep.reps_for(*s, args.reps) < args.reps]
            print(f"  {fam:8s} {len(group):2d} shapes x {len(swept)} steps, about {seconds(group):4.0f} s"
                  + (f"; {shape_sweep.MIN_REPS} rounds (not {args.reps}) at {', '.join(few)}" if few else ""))
        subtotals.append(("the sweep", seconds(shape_sweep.SHAPES)))
    if drawn:
        lo, hi = shape_sweep.RANDOM_NK
        what = (f"a held-out draw (seed {seed}, rows of family {shape_sweep.random_family(seed)}; issue 46's generator"
                if held else f"the random set (issue 46: seed {seed}")
        print(f"  {what}, M log-uniform {shape_sweep.RANDOM_M[0]}-{shape_sweep.RANDOM_M[1]}, N and K log-uniform "
              f"{lo}-{hi}, K % 8 == 0), by class:")
        for cls in shape_sweep.RANDOM_CLASSES:
            group = [(m, n, k) for m, n, k, c in drawn if c == cls]
            few = sum(shape_sweep.reps_for(*s, args.reps) < args.reps for s in group)
            print(f"  {cls:8s} {len(group):2d} shapes x {len(swept)} steps, about {seconds(group):4.0f} s "
                  f"({shape_sweep.RANDOM_CLASS_MEANING[cls]})"
                  + (f"; {shape_sweep.MIN_REPS} rounds (not {args.reps}) at {few} of them" if few else ""))
        subtotals.append((f"the held-out draw (seed {seed})" if held else "the random set",
                          seconds([s[:3] for s in drawn])))
    longest = max(shapes, key=lambda s: shape_sweep.plan_seconds(*s, shape_sweep.reps_for(*s, args.reps)))
    print(f"  the longest process: about {shape_sweep.plan_seconds(*longest, shape_sweep.reps_for(*longest, args.reps)):.0f}"
          f" s, at {shape_sweep.label(*longest)}")
    total = sum(secs for _, secs in subtotals)
    print(f"estimated time: about {total / 60:.1f} min ({total:.0f} s"
          + (f": {', '.join(f'{what} {secs:.0f} s' for what, secs in subtotals)}" if len(subtotals) > 1 else "")
          + "; a plan from assumed per-process costs in scripts/shape_sweep.py, not a measurement: each run below "
            "prints its real time)", flush=True)
    return runs


def stability(binary, sizes, processes, reps, tmp):
    """Runs `binary` in `processes` separate processes per size, cuBLAS as the only reference, and
    reports the spread of the paired ratio and of cuBLAS's own speed across processes. Returns
    (summary lines, rows)."""
    rows = []
    for size in sizes:
        for proc in range(processes):
            tmp.unlink(missing_ok=True)
            code, _, _ = run_step(binary, size, size, size, reps, tmp, ["--energy-s", "0"], refs="cublas")
            got = [r for r in read_rows(tmp) if r["mode"] == "burst"]
            if code != 0 or len(got) != 2:
                rows.append({"step": step_id(binary), "size": size, "process": proc + 1, "check": f"FAIL (exit {code})"})
                continue
            step, ref = got
            rows.append({"step": step_id(binary), "size": size, "process": proc + 1,
                         "step_tflops": step["tflops"], "cublas_tflops": ref["tflops"],
                         "ratio": ref["step_ratio"], "ratio_q25": ref["step_ratio_q25"],
                         "ratio_q75": ref["step_ratio_q75"], "step_clock_mhz": step["clock_mhz"],
                         "cublas_clock_mhz": ref["clock_mhz"], "clock_reasons": ref["clock_reasons"],
                         "date": ref["date"]})
    tmp.unlink(missing_ok=True)
    lines = []
    for size in sizes:
        ok = [r for r in rows if r["size"] == size and "ratio" in r]
        if not ok:
            continue
        ratios = [float(r["ratio"]) for r in ok]
        cub = [float(r["cublas_tflops"]) for r in ok]
        lines.append(f"stability {step_id(binary)} vs cuBLAS at {size}^3 over {len(ok)} processes: paired ratio "
                     f"{min(ratios):.3f}-{max(ratios):.3f} (spread {100 * (max(ratios) / min(ratios) - 1):.1f}%), "
                     f"cuBLAS alone {min(cub):.0f}-{max(cub):.0f} TFLOP/s (spread {100 * (max(cub) / min(cub) - 1):.1f}%)")
    return lines, rows


def run_stability(bf16, args, build):
    """The stability runs: each bf16 step of --also and the last bf16 step, in args.stability processes
    per size. Returns (summary lines, rows)."""
    stab_bins = [b for b in bf16 if step_id(b) in args.also] + [bf16[-1]]
    lines, rows = [], []
    for b in dict.fromkeys(stab_bins):
        l, r = stability(b, args.sizes, max(args.stability, 1), args.reps, build / "bench_stability.csv")
        lines += l
        rows += r
    return lines, rows


def busy_gpu():
    """Other processes computing on the GPU (nvidia-smi's compute apps), as "pid name" strings."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,process_name", "--format=csv,noheader"],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    return [l.strip() for l in out.splitlines() if l.strip()]


def redraw(out, slug, args, what):
    """After a commit: the tables and figures that show the committed files."""
    if args.no_docs:
        if what == "bench":
            subprocess.run([sys.executable, str(ROOT / "scripts" / "results_table.py"), str(out / f"{slug}.csv")], check=False)
        return
    if what == "shapes":  # the figure first (if matplotlib is there): the table links it only once it exists
        try:
            import matplotlib  # noqa: F401
            subprocess.run([sys.executable, str(ROOT / "scripts" / "plot_shapes.py"), str(out / f"{slug}_shapes.csv")],
                           check=False)
        except ImportError:
            print("matplotlib not installed: docs/img/shapes.png not drawn (scripts/docs_deps.sh says how to install it)")
        subprocess.run([sys.executable, str(ROOT / "scripts" / "shapes_table.py"), str(out / f"{slug}_shapes.csv"),
                        "--full", str(ROOT / "docs" / "results.md")], check=False)
        return
    if what in ("bench", "stability"):
        subprocess.run([sys.executable, str(ROOT / "scripts" / "results_table.py"), str(out / f"{slug}.csv"),
                        "--readme", str(ROOT / "README.md"), "--full", str(ROOT / "docs" / "results.md")], check=False)
        subprocess.run([sys.executable, str(ROOT / "scripts" / "book_numbers.py"), "--csv",
                        str((out / f"{slug}.csv").resolve())], check=False)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib not installed: figures not redrawn (scripts/docs_deps.sh says how to install it)")
        return
    if what == "bench":
        subprocess.run([sys.executable, str(ROOT / "scripts" / "plot_steps.py"), str(out / f"{slug}.csv")], check=False)
    elif what == "sweep":
        subprocess.run([sys.executable, str(ROOT / "scripts" / "plot_sweep.py"), str(out / f"{slug}_sweep.csv")], check=False)


def announce_writes(args, out, bins):
    """Says, before the first run, which files this run will (re)write and which of them git tracks."""
    slug = slug_of(nvidia_smi("name"))
    if args.sweep:
        files = [out / f"{slug}_sweep.csv"] + ([] if args.no_docs else [ROOT / "docs" / "img" / "sweep.png"])
    elif args.shapes:
        files = [out / f"{slug}_shapes.csv"] + ([] if args.no_docs else [ROOT / "docs" / "img" / "shapes.png",
                                                                         ROOT / "docs" / "results.md"])
        held = args.random_seed != shape_sweep.RANDOM_SEED
        if args.shapes_set != "all" or held:
            other = {"sweep": "random draws'", "random": "sweep's and the other random draws'",
                     "all": "other random draws'"}[args.shapes_set]
            print(f"--shapes-set {args.shapes_set}"
                  + (f" --random-seed {args.random_seed} (rows of family {shape_sweep.random_family(args.random_seed)})"
                     if held else "")
                  + f": the {other} rows of {out / f'{slug}_shapes.csv'}, if any, are kept")
    elif args.waves:
        last_bf16 = [b for b in bins if is_bf16(step_id(b))][-1:]
        files = [out / f"{slug}_waves_{step_id(b)}.csv" for b in last_bf16]
    else:
        files = [out / f"{slug}{suffix}" for suffix in (".csv", "_sustained.csv", "_series.csv", "_stability.csv", ".meta.json")]
        if not args.no_docs:
            files += [ROOT / "README.md", ROOT / "docs" / "results.md", ROOT / "docs" / "img" / "steps.png",
                      ROOT / "docs" / "*.md (their measured blocks)"]
    tracked = set()
    try:
        listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--", *map(str, files)], capture_output=True,
                                text=True, check=True).stdout.split()
        tracked = {(ROOT / f).resolve() for f in listed}
    except (OSError, subprocess.CalledProcessError):
        pass
    names = [f"{f.relative_to(ROOT) if f.is_relative_to(ROOT) else f}{' (tracked)' if f.resolve() in tracked else ''}"
             for f in files]
    print("this run writes: " + ", ".join(names) + ("; README.md and docs/results.md only between their "
                                                     "results markers" if ROOT / "README.md" in files else "")
          + ("; docs/results.md only between its shapes markers" if args.shapes and not args.no_docs else ""), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--out", default=str(ROOT / "results"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192])
    ap.add_argument("--steps", nargs="+", help="step ids (default: all built)")
    ap.add_argument("--reps", type=int, default=30, help="paired rounds per process (>= 20)")
    ap.add_argument("--sustained", type=float, default=3.0,
                    help="seconds of back-to-back launches per kernel for the last step of each ladder (0: skip)")
    ap.add_argument("--stability", type=int, default=5, help="processes for the stability runs (0: skip)")
    ap.add_argument("--stability-only", action="store_true",
                    help="only the stability runs, added to the .meta.json and _stability.csv of an earlier run "
                         "in --out (a bench split over two calls of a time-limited machine)")
    also = [s.id for s in step_table.with_role(STEPS.values(), "bench-also")]
    sweep_also = [s.id for s in step_table.with_role(STEPS.values(), "sweep-also")]
    ap.add_argument("--also", nargs="*", default=also,
                    help=f"steps that get the sustained and stability runs besides the last of each ladder (default, "
                         f"the role bench-also in scripts/step_roles.tsv: {' '.join(also)}; stability is run for bf16 "
                         f"steps only)")
    ap.add_argument("--sweep", action="store_true", help="the shape sweep instead of the step table")
    ap.add_argument("--waves", action="store_true",
                    help="wave quantization: the last bf16 step at M = K = 4096 and every N = 256 j up to 8192")
    shapes_also = [s.id for s in step_table.with_role(STEPS.values(), "shapes-also")]
    ap.add_argument("--shapes", action="store_true",
                    help="issue 30's sweep (scripts/shape_sweep.py) instead of the step table")
    ap.add_argument("--shapes-also", nargs="*", default=shapes_also,
                    help=f"steps run by --shapes besides the last bf16 step (default, the role shapes-also in "
                         f"scripts/step_roles.tsv: {' '.join(shapes_also)})")
    ap.add_argument("--shapes-set", choices=SHAPES_SETS, default=None,
                    help="with --shapes: which shapes, the sweep then the random set (all, the default), or one of "
                         "them (its rows replace that set's in results/<gpu>_shapes.csv, the other set's rows are "
                         "kept): a time-limited machine runs them as separate calls, each going on with --resume")
    ap.add_argument("--random-seed", type=random_seed_arg, default=None, metavar="S",
                    help=f"with --shapes: the seed of the random draw (default {shape_sweep.RANDOM_SEED}, issue 46's "
                         f"set, rows of family {shape_sweep.RANDOM_FAMILY}); another seed is a held-out draw whose rows "
                         f"are of family random-S (e.g. {shape_sweep.random_family(4701)}) and are reported apart; the "
                         f"file's rows of the other draws are kept")
    ap.add_argument("--dry-run", action="store_true",
                    help="with --shapes: print the runs and the estimated time, run nothing, write nothing")
    ap.add_argument("--sweep-also", nargs="*", default=sweep_also,
                    help=f"steps swept besides the last of each ladder (default, the role sweep-also in "
                         f"scripts/step_roles.tsv: {' '.join(sweep_also)})")
    ap.add_argument("--max-launch-s", type=float, default=1.0)
    ap.add_argument("--no-docs", action="store_true", help="do not rewrite the README table and figures")
    ap.add_argument("--resume", action="store_true",
                    help="go on from the runs an interrupted invocation (same options) finished: their rows in "
                         "BUILD/bench_rows.csv are kept and those runs are skipped")
    ap.add_argument("--allow-busy-gpu", action="store_true",
                    help="run even when other processes compute on the GPU (their work is timed with ours)")
    args = ap.parse_args()
    # From here on Ctrl-C and SIGTERM raise Interrupted: before the runs start it only stops the script
    # (nothing was written yet); during them, prepare_and_run() throws the stage away and says how to resume.
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        return prepare_and_run(args, ap)
    except Interrupted as e:
        print(f"interrupted ({e}) before the first run: nothing was written", file=sys.stderr)
        return 130


def prepare_and_run(args, ap):
    """Checks the build, the GPU and results/, then runs (run()) with the stage."""
    if args.reps < 20:
        ap.error("--reps must be at least 20 (the harness reports a median of at least 20 launches)")
    for opt, ids in (("--steps", args.steps), ("--also", args.also), ("--sweep-also", args.sweep_also),
                     ("--shapes-also", args.shapes_also)):
        unknown = [i for i in ids or [] if i not in STEPS]
        if unknown:
            print(f"error: bench.py {opt}: no step '{unknown[0]}' (steps: {' '.join(STEPS)})", file=sys.stderr)
            sys.exit(2)
    build = pathlib.Path(args.build)
    if not (build / "bin").is_dir():
        sys.exit(f"error: {build}/bin does not exist: run `make` first (or pass --build)")
    bins = [b for b in steps_in(build) if not args.steps or step_id(b) in args.steps]
    if not bins:
        sys.exit(f"error: no step binaries under {build}/bin" + (f" for steps {' '.join(args.steps)}: run `make`"
                                                                 if args.steps else ""))
    if sum((args.sweep, args.waves, args.shapes, args.stability_only)) > 1:
        ap.error("--sweep, --waves, --shapes and --stability-only are separate runs: pass one")
    if args.shapes_set and not args.shapes:
        ap.error("--shapes-set chooses the shapes of a --shapes run: pass --shapes")
    if args.random_seed is not None and not args.shapes:
        ap.error("--random-seed chooses the random draw of a --shapes run: pass --shapes")
    if args.random_seed not in (None, shape_sweep.RANDOM_SEED) and args.shapes_set == "sweep":
        ap.error(f"--random-seed {args.random_seed} chooses a random draw and --shapes-set sweep runs none: "
                 f"drop one of them")
    if args.random_seed == tune.DRAW_SEED:  # its shapes are rows of the tuning table: not held out
        ap.error(f"--random-seed {tune.DRAW_SEED} is scripts/tune.py's DRAW_SEED: the tuning table measured that "
                 f"draw's shapes, so they are not held out; pick another seed")
    if args.shapes:
        args.shapes_set = args.shapes_set or "all"  # before run_signature: --resume refuses another set
        args.random_seed = shape_sweep.RANDOM_SEED if args.random_seed is None else args.random_seed
    if args.dry_run:
        if not args.shapes:
            ap.error("--dry-run plans a --shapes run: pass --shapes")
        shapes_plan(bins, args)
        return 0
    # No GPU: every step would refuse with "no CUDA device" and the run would write FAIL rows. Ask the
    # first binary once (a tiny check-only run) and stop before anything is written.
    probe = subprocess.run([str(bins[0]), "--m", "64", "--n", "64", "--k", "64", "--check-only"],
                           capture_output=True, text=True)
    if probe.returncode != 0 and "no CUDA device" in probe.stderr:
        why = probe.stderr.strip().splitlines()[-1].removeprefix("error: ")
        sys.exit(f"error: {why}; make bench needs an NVIDIA GPU (nothing was written)")
    # Another process on the GPU would share its SMs and power with every timed launch.
    others = busy_gpu()
    if others and not args.allow_busy_gpu:
        sys.exit(f"error: other processes are computing on the GPU ({'; '.join(others)}): their work would be "
                 f"timed with every step; wait for them, or pass --allow-busy-gpu (nothing was written)")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if (said := results_io.recover(out)):
        print(f"note: {said}")
    announce_writes(args, out, bins)
    tmp, series, signature = build / "bench_rows.csv", build / "bench_series.csv", build / "bench_run.json"
    if args.resume and tmp.exists():
        # The kept rows are only worth going on from with the same options (a --shapes run's rows are not a
        # step table's): refuse before anything is run or written.
        kept = signature.read_text() if signature.exists() else None
        if kept != run_signature(args):
            old, new = (json.loads(kept) if kept else {}), json.loads(run_signature(args))
            diff = ", ".join(f"--{k.replace('_', '-')} {old.get(k)} then, {new[k]} now" for k in new if old.get(k) != new[k])
            print(f"error: bench.py --resume: the rows in {tmp} are from a run with other options "
                  f"({diff or 'unknown'}); pass the same options, or start again without --resume", file=sys.stderr)
            return 2
    if not args.resume:
        tmp.unlink(missing_ok=True)
        series.unlink(missing_ok=True)
        signature.write_text(run_signature(args))
    done = done_runs(tmp) if args.resume else set()
    if done:
        print(f"resuming: {len(done)} runs of the interrupted run are kept from {tmp}")
    fp32 = [b for b in bins if is_fp32(step_id(b)) and STEPS[step_id(b)].tile is not None]  # not 00, cuBLAS itself
    bf16 = [b for b in bins if is_bf16(step_id(b))]
    last = [x[-1] for x in (fp32, bf16) if x]
    stage = results_io.Stage(out)
    try:
        return run(args, build, bins, fp32, bf16, last, out, tmp, series, stage, done)
    except (Interrupted, OSError) as e:
        stage.abandon()
        what = f"interrupted ({e})" if isinstance(e, Interrupted) else f"stopped by an error of the system: {e}"
        print(f"\n{what} after {PROGRESS['done']} of {PROGRESS['of']} runs: results/ is unchanged. The rows of the "
              f"finished runs are in {tmp}; `python3 scripts/bench.py --resume` with the same options goes on from "
              f"them.", file=sys.stderr)
        return 130 if isinstance(e, Interrupted) else 1


def run(args, build, bins, fp32, bf16, last, out, tmp, series, stage, done):
    """The runs of one invocation, staged; committed at the end. Returns the exit code."""
    if args.sweep:
        swept = [b for b in bins if b in last or step_id(b) in args.sweep_also]
        name, failed, notes = run_shapes([(b, m, n, k) for (m, n, k) in SWEEP for b in swept], args, tmp, stage,
                                         "sweep", None, done)
        print(f"\nwrote {out}/: {', '.join(stage.commit())}")
        for line in notes:
            print(line)
        redraw(out, name[: -len("_sweep.csv")], args, "sweep")
        return finish(failed)

    if args.shapes:
        runs = shapes_plan(bins, args)
        # The rows of the sets this run takes are replaced; the committed file's other rows stay (a row's
        # set is its family): the random draws' with --shapes-set sweep, all but this draw's with random,
        # and the other random draws' (seed 46's, or a held-out one's) with all.
        fam, family = shape_sweep.random_family(args.random_seed), shapes_family(args)
        keep = {"sweep": lambda r: shape_sweep.is_random_family(r.get("family")),
                "random": lambda r: r.get("family") != fam,
                "all": lambda r: shape_sweep.is_random_family(r.get("family")) and r.get("family") != fam}[args.shapes_set]
        name, failed, notes = run_shapes(runs, args, tmp, stage, "shapes", None, done,
                                         reps_of=lambda m, n, k: shape_sweep.reps_for(m, n, k, args.reps),
                                         decorate=lambda r: dict(r, family=r.get("family") or family(
                                             int(r["m"]), int(r["n"]), int(r["k"]))), keep=keep)
        print(f"\nwrote {out}/: {', '.join(stage.commit())} ({time.monotonic() - PROGRESS['t0']:.0f} s)")
        for line in notes:
            print(line)
        redraw(out, name[: -len("_shapes.csv")], args, "shapes")
        return finish(failed)

    if args.waves:
        if not bf16:
            sys.exit("error: --waves needs a bf16 step")
        _, failed, notes = run_shapes([(bf16[-1], WAVES_MK, n, WAVES_MK) for n in WAVES_N], args, tmp, stage,
                                      f"waves_{step_id(bf16[-1])}", "cublas", done)
        print(f"\nwrote {out}/: {', '.join(stage.commit())}")
        return finish(failed)

    if args.stability_only:
        meta_files = sorted(out.glob("*.meta.json"))
        if len(meta_files) != 1:
            sys.exit(f"error: --stability-only needs exactly one .meta.json from an earlier run in {out}")
        meta = json.loads(meta_files[0].read_text())
        slug = meta_files[0].name[: -len(".meta.json")]
        stab_lines, stab_rows = run_stability(bf16, args, build)
        stage.csv(f"{slug}_stability.csv", stab_rows)
        meta["stability"] = stab_lines
        stage.text(meta_files[0].name, json.dumps(meta, indent=2) + "\n")
        print(f"\nwrote {out}/: {', '.join(stage.commit())}")
        for line in stab_lines:
            print(line)
        redraw(out, slug, args, "stability")
        return 0

    failures, notes, extra_rows = [], [], []
    last_ms = {}
    planned = [(size, b) for size in args.sizes for b in bins]
    for i, (size, b) in enumerate(planned):
        progress(i, len(planned))
        if (step_id(b), size, size, size) in done:
            mine = [r for r in read_rows(tmp) if r["step"] == step_id(b) and int(r["m"]) == size and r["kernel"] == "step"]
            if mine and mine[-1].get("ms"):
                last_ms[b.name] = (size, float(mine[-1]["ms"]))
            continue
        prev = last_ms.get(b.name)
        if prev is not None and prev[1] * (size / prev[0]) ** 3 / 1e3 > args.max_launch_s:
            notes.append(f"{b.name} skipped at {size}: one launch would take about "
                         f"{prev[1] * (size / prev[0]) ** 3 / 1e3:.1f} s (from {prev[1]:.0f} ms at {prev[0]})")
            print(notes[-1], flush=True)
            continue
        extra = []
        if (b in last or step_id(b) in args.also) and args.sustained > 0:
            extra = ["--sustained", str(args.sustained), "--series", str(series)]
        if run_one(b, size, size, size, args.reps, tmp, extra, None, failures, extra_rows, notes) != 0:
            continue
        mine = [r for r in read_rows(tmp) if r["step"] == step_id(b) and int(r["m"]) == size and r["kernel"] == "step"]
        if mine:
            last_ms[b.name] = (size, float(mine[-1]["ms"]))
    progress(len(planned), len(planned))

    rows = [results_columns.filled(r) for r in read_rows(tmp) + extra_rows]  # FAIL rows: scaling too
    if not rows:
        sys.exit("no step produced a result")
    gpu = next((r["gpu"] for r in rows if r.get("gpu")), "gpu")
    slug = slug_of(gpu)
    stage.csv(f"{slug}.csv", [r for r in rows if r.get("mode") == "burst"])
    sustained = [r for r in rows if r.get("mode") == "sustained"]
    if sustained:
        stage.csv(f"{slug}_sustained.csv", sustained)
    if series.exists():
        stage.text(f"{slug}_series.csv", series.read_text())
    stab_lines = []
    if args.stability > 0 and bf16:
        stab_lines, stab_rows = run_stability(bf16, args, build)
        stage.csv(f"{slug}_stability.csv", stab_rows)
    meta = {
        "gpu": gpu,
        "driver_version": nvidia_smi("driver_version"),
        "max_sm_clock_mhz": nvidia_smi("clocks.max.sm"),
        "power_limit": nvidia_smi("power.limit"),
        "date": datetime.date.today().isoformat(),
        "clocks": "left as found (never locked or changed)",
        "rounds": args.reps,
        "sustained_s": args.sustained,
        "energy_s": 0.6,
        "notes": notes,
        "stability": stab_lines,
        "failures": failures,
    }
    stage.text(f"{slug}.meta.json", json.dumps(meta, indent=2) + "\n")  # the last file of the run
    print(f"\nwrote {out}/: {', '.join(stage.commit())}")
    redraw(out, slug, args, "bench")
    for line in stab_lines:
        print(line)
    return finish(failures)


def finish(failures):
    """Exit 1, naming them, when runs failed; else 0."""
    if failures:
        print("FAILED:", "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
