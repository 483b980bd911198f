#!/usr/bin/env python3
"""Fault injection on the benchmark's writes (run by make test: tests/test_bench.cpp). The benchmark
(scripts/bench.py) runs here against stand-in step executables (this file, run as a step: they answer
the harness's command line and append rows as the real ones do) and a stand-in nvidia-smi, in a
scratch copy of results/; the faults are real signals, a full disk (injected), another process on the
GPU, a shape the GPU cannot hold, and a kill in the middle of the commit. After each, every file of
results/ must be whole and all from one run (each run stamps its own tag into its rows and, through
the stand-in nvidia-smi, its .meta.json). The twin (BENCH_UNSAFE_WRITES=1: each file written in place,
as the benchmark once did) must show the damage the same kill does then; if it did not, this test
could not tell.

The shapes cases (--cases shapes) run `bench.py --shapes` the same way: its plan (--dry-run, nothing
written), issue 46's random draw (shape_sweep.random_shapes: reproducible, its classes and ranges), then
a stubbed run of the sweep (--shapes-set sweep) whose stand-ins time every reference and refuse one
shape (exit 2), a stubbed run of the random set into the same results/ (the sweep's rows kept), and
then scripts/plot_shapes.py and scripts/shapes_table.py on that CSV and on small synthetic ones whose
best references, geometric means and worst shapes are computed here from their rows.

The held-out cases (--cases heldout) run `bench.py --shapes --shapes-set random --random-seed 4701` the
same way into a results/ that holds seed 46's rows: the draw's rows tagged family=random-4701, seed 46's
kept; shapes_table.py's block for that seed apart from the sweep's summary and seed 46's; plot_shapes.py
with both draws; and the refusals of a bad seed.

  tests/bench_faults.py --repo DIR --scratch DIR [--cases faults|shapes|heldout|all]
                                                     prints one line per case and "N passed, N failed"
"""
import argparse
import csv
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

STEPS = ["01_naive", "14_two_consumers", "23_pingpong_stream_k"]
HEADER = ("step,name,technique,dtype,m,n,k,mode,kernel,detail,ms,ms_min,ms_max,tflops,step_ratio,step_ratio_q25,"
          "step_ratio_q75,rounds,clock_mhz,clock_source,power_w,joules_per_gemm,tflop_per_j,sol_at_clock,"
          "clock_reasons,check,gpu,sm_count,l2_mib,max_sm_clock_mhz,power_limit_w,driver_cuda,runtime,cublas,date,"
          "rel_rms_err,scaling,accumulation")  # the harness's (scripts/results_columns.py header)


# The references of a stand-in run with STANDIN_REFS=all, as the real harness names them, and the step's
# paired ratio over each: cuBLASLt's best is the best reference (the smallest ratio) at every shape.
ALL_REFS = (("cublas", "0.9"), ("cublaslt_best", "0.8"), ("cutlass_coop_128x256x64_c2x1", "1.1"),
            ("cutlass_pingpong_128x128x64_c1x1", "1.2"))


def standin_step(argv):
    """A step executable: --check-only passes; a run appends its step and cuBLAS rows (STANDIN_REFS=all:
    every reference's) to --csv, tagged STANDIN_RUN, after STANDIN_SLEEP seconds; M = STANDIN_OOM_M is
    refused as out of memory and the shapes MxNxK of STANDIN_REFUSE (comma-separated) as unaligned,
    with exit 2."""
    a = {argv[i]: argv[i + 1] for i in range(1, len(argv) - 1) if argv[i].startswith("--")}
    name = pathlib.Path(argv[0]).name
    sid = name.split("_")[0]
    if "--check-only" in argv:
        return 0
    m, n, k = a.get("--m"), a.get("--n"), a.get("--k")
    if m == os.environ.get("STANDIN_OOM_M"):
        print(f"error: {name} refuses M={m} N={n} K={k}: out of device memory: 96 GiB needed, 80 GiB free",
              file=sys.stderr)
        return 2
    if f"{m}x{n}x{k}" in os.environ.get("STANDIN_REFUSE", "").split(","):
        print(f"error: {name} refuses M={m} N={n} K={k}: N must be a multiple of 8 (16-byte rows of C for TMA)",
              file=sys.stderr)
        return 2
    time.sleep(float(os.environ.get("STANDIN_SLEEP", "0")))
    tag = os.environ.get("STANDIN_RUN", "run")
    path = pathlib.Path(a["--csv"])
    new = not path.exists() or path.stat().st_size == 0
    with open(path, "a") as f:
        if new:
            f.write(HEADER + "\n")
        refs = ALL_REFS if os.environ.get("STANDIN_REFS") == "all" else ALL_REFS[:1]
        bad_ref = f"{m}x{n}x{k}" == os.environ.get("STANDIN_BADREF")  # cuBLASLt's best computes another C
        if bad_ref:
            refs = tuple(r for r in refs if r[0] != "cublaslt_best")
        for kernel, ratio in (("step", "1.0"), *refs):
            f.write(f"{sid},{name[len(sid) + 1:]},\"stand-in\",bf16,{m},{n},{k},burst,{kernel},{tag},1.0,1.0,1.0,1.0,"
                    f"{ratio},{ratio},{ratio},20,1500,probe,,,,,,pass,Stand-in GPU,132,60,1980,700,13.0,13.0,13.1.0,"
                    f"2026-12-02,,,\n")  # bf16: no error column, scaling or accumulation
    if bad_ref:
        print("reference dropped: cublaslt_best failed its check against cuBLAS and is not timed (9 elements "
              "outside tolerance, 0 writes past C, max |err| 0.5); the step's own check passed")
    return 0


def standin_smi(argv):
    """nvidia-smi: the queries bench.py makes; STANDIN_BUSY lists a compute process."""
    q = next((x for x in argv if x.startswith("--query")), "")
    if q.startswith("--query-compute-apps"):
        if os.environ.get("STANDIN_BUSY"):
            print("4242, python3")
        return 0
    if "driver_version" in q:
        print(os.environ.get("STANDIN_RUN", "run"))
    elif "name" in q:
        print("Stand-in GPU")
    else:
        print("1")
    return 0


class Case:
    def __init__(self, repo, scratch):
        self.repo, self.root = pathlib.Path(repo), pathlib.Path(scratch)
        self.build, self.out, self.smi = self.root / "build", self.root / "results", self.root / "smi"
        shutil.rmtree(self.root, ignore_errors=True)
        (self.build / "bin").mkdir(parents=True)
        self.smi.mkdir()
        for s in STEPS:
            self.link(self.build / "bin" / s)
        self.link(self.smi / "nvidia-smi")

    def link(self, path):
        # -S: no site module, a faster start (the stand-ins need only the standard library); the shapes cases
        # start some 250 of them.
        path.write_text(f"#!/bin/sh\nexec {sys.executable} -S {pathlib.Path(__file__).resolve()} \"$0\" \"$@\"\n")
        path.chmod(0o755)

    def env(self, **kv):
        e = dict(os.environ, PATH=f"{self.smi}:{os.environ['PATH']}")
        for k in ("BENCH_FAULT", "BENCH_UNSAFE_WRITES", "STANDIN_BUSY", "STANDIN_OOM_M", "STANDIN_SLEEP", "STANDIN_REFUSE",
                  "STANDIN_BADREF",
                  "STANDIN_REFS"):
            e.pop(k, None)
        e.update({k: str(v) for k, v in kv.items()})
        return e

    def cmd(self, *extra):
        return [sys.executable, str(self.repo / "scripts/bench.py"), "--build", str(self.build), "--out", str(self.out),
                "--sizes", "256", "512", "--sustained", "0", "--stability", "2", "--reps", "20", "--no-docs", *extra]

    def run(self, *extra, **env):
        return subprocess.run(self.cmd(*extra), env=self.env(**env), capture_output=True, text=True)

    def start(self, *extra, **env):
        return subprocess.Popen(self.cmd(*extra), env=self.env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)

    def snapshot(self):
        return {p.name: p.read_bytes() for p in sorted(self.out.glob("*")) if p.is_file()}

    def state(self):
        """(run tag of every result file, or the problem found): whole and from one run, or not."""
        tags = set()
        files = sorted(p for p in self.out.glob("*") if p.is_file())
        if not files:
            return "empty"
        for p in files:
            if p.suffix == ".json":
                try:
                    tags.add(json.loads(p.read_text())["driver_version"])
                except (ValueError, KeyError) as e:
                    return f"{p.name} is damaged ({e.__class__.__name__})"
                continue
            rows = list(csv.DictReader(open(p)))
            if p.name.endswith("_stability.csv"):
                want = len(STEPS[1:]) * 2 * 2  # bf16 steps x sizes x processes
                if len(rows) != want:
                    return f"{p.name} has {len(rows)} rows, not {want}"
                continue
            if len(rows) != len(STEPS) * 2 * 2 or any(None in r.values() or r.get("date") != "2026-12-02" for r in rows):
                return f"{p.name} is truncated ({len(rows)} rows)"
            tags |= {r["detail"] for r in rows}
        return f"one run: {tags.pop()}" if len(tags) == 1 else f"mixed runs: {sorted(tags)}"

    def pending(self):
        return (self.out / ".bench-staging").exists()


def wait_rows(case, n, proc, tag, limit=60):
    """Waits until `n` step rows of the running bench (run `tag`) are in its rows file."""
    rows = case.build / "bench_rows.csv"
    t0 = time.time()
    while time.time() - t0 < limit and proc.poll() is None:
        if rows.exists() and sum(1 for l in rows.read_text().splitlines() if f",step,{tag}," in l) >= n:
            return True
        time.sleep(0.05)
    return False


def fault_cases(args, case):
    """The faults on the writes of make bench (the module's docstring)."""
    c = Case(args.repo, args.scratch)
    r = c.run(STANDIN_RUN="A")
    case("a whole run commits every file", r.returncode == 0 and c.state() == "one run: A" and not c.pending(),
         f"exit {r.returncode}, {c.state()}")
    before = c.snapshot()

    for sig in (signal.SIGINT, signal.SIGTERM):
        tag = f"B{sig.value}"  # a tag of its own: the rows file still holds the last run's rows at first
        p = c.start(STANDIN_RUN=tag, STANDIN_SLEEP="0.3")
        wait_rows(c, 2, p, tag)
        os.killpg(p.pid, sig)
        out, err = p.communicate(timeout=60)
        case(f"{sig.name} mid-run leaves results/ as it was and says how to resume",
             c.snapshot() == before and not c.pending() and p.returncode == 130 and "--resume" in err
             and "runs: results/ is unchanged" in err, f"exit {p.returncode}, {c.state()}, said: {err.strip()[-160:]}")

    p = c.start(STANDIN_RUN="B", STANDIN_SLEEP="0.3")
    wait_rows(c, 2, p, "B")
    os.killpg(p.pid, signal.SIGKILL)
    p.communicate(timeout=60)
    case("SIGKILL mid-run leaves results/ as it was", c.snapshot() == before, c.state())
    r = c.run("--resume", "--reps", "25", STANDIN_RUN="B")
    case("--resume with other options than the interrupted run's is refused before anything runs",
         r.returncode == 2 and "other options" in r.stderr and c.snapshot() == before and "resuming:" not in r.stdout,
         f"exit {r.returncode}: {r.stderr.strip()[-160:]}")
    r = c.run("--resume", STANDIN_RUN="B")
    kept = r.returncode == 0 and "resuming:" in r.stdout
    case("--resume goes on from the finished runs and commits one whole run",
         kept and not c.pending() and c.state() == "one run: B", f"exit {r.returncode}, {c.state()}")
    c.run(STANDIN_RUN="A")
    before = c.snapshot()

    r = c.run(STANDIN_RUN="C", BENCH_FAULT="enospc-in-stage")
    case("a full disk while staging leaves results/ as it was", r.returncode == 1 and c.snapshot() == before
         and not c.pending() and "No space left on device" in r.stderr, f"exit {r.returncode}, {c.state()}")

    r = c.run(STANDIN_RUN="C", BENCH_FAULT="kill-in-commit")
    killed = r.returncode == -signal.SIGKILL
    journal = (c.out / ".bench-staging" / "COMMIT").exists()
    r2 = c.run(STANDIN_RUN="D")
    case("a kill inside the commit leaves a journal that the next run finishes first",
         killed and journal and "finished the commit of a run killed while committing" in r2.stdout
         and c.state() == "one run: D", f"killed={killed}, journal={journal}, then {c.state()}")
    before = c.snapshot()

    r = c.run(STANDIN_RUN="E", STANDIN_BUSY="1")
    case("another process on the GPU: refused before anything is written",
         r.returncode != 0 and "other processes are computing on the GPU" in r.stderr and c.snapshot() == before,
         f"exit {r.returncode}")
    r = c.run("--allow-busy-gpu", STANDIN_RUN="E", STANDIN_BUSY="1")
    case("--allow-busy-gpu runs anyway", r.returncode == 0 and c.state() == "one run: E", c.state())

    r = c.run(STANDIN_RUN="F", STANDIN_OOM_M="512")
    rows = list(csv.DictReader(open(c.out / "stand_in_gpu.csv")))
    refused = [x for x in rows if x["check"].startswith("REFUSED")]
    case("a shape past device memory is a REFUSED row and a note, not a failure",
         r.returncode == 0 and len(refused) == len(STEPS) and "out of device memory" in refused[0]["check"]
         and "refused 512x512x512" in (c.out / "stand_in_gpu.meta.json").read_text(), f"exit {r.returncode}")

    # The twin: the same kill inside the commit with the files written in place, as before the staging.
    c.run(STANDIN_RUN="A")
    r = c.run(STANDIN_RUN="G", BENCH_FAULT="kill-in-commit", BENCH_UNSAFE_WRITES="1")
    damaged = c.state()
    case("twin: written in place, the same kill leaves a damaged file (this check can fail)",
         r.returncode == -signal.SIGKILL and "truncated" in damaged, damaged)



def synthetic_rows():
    """A small shapes CSV in the harness's format (no family column, as an older CSV would have): steps 22
    and 23; 23 refuses 2050x2050x2048; 16x4096x4096 is no shape of the sweep ('other'). Returns (rows, the
    geometric mean of 23's ratios to its best reference)."""
    plan = {  # (step, m, n, k): {kernel: (ratio, q25, q75)}, or a refusal
        ("23", 1, 4096, 4096): {"cublas": (0.60, 0.59, 0.61), "cublaslt_best": (0.55, 0.54, 0.56),
                                "cutlass_coop_128x256x64_c2x1": (1.30, 1.29, 1.31)},
        ("23", 16, 4096, 4096): {"cublas": (0.70, 0.69, 0.71), "cublaslt_best": (0.72, 0.71, 0.73)},
        ("23", 2050, 2050, 2048): "REFUSED (N must be a multiple of 8)",
        ("23", 8192, 8192, 512): {"cublas": (1.02, 1.01, 1.03), "cublaslt_best": (0.98, 0.97, 0.99),
                                  "cutlass_coop_128x256x64_c2x1": (1.05, 1.04, 1.06)},
        ("22", 1, 4096, 4096): {"cublas": (0.50, 0.49, 0.51), "cublaslt_best": (0.52, 0.51, 0.53)},
        ("22", 2050, 2050, 2048): {"cublas": (0.96, 0.95, 0.97), "cublaslt_best": (0.97, 0.96, 0.98)},
    }
    fields = HEADER.split(",")
    rows = []
    for (sid, m, n, k), refs in plan.items():
        base = dict.fromkeys(fields, "")
        base.update(step=sid, name="stand_in", technique="stand-in", dtype="bf16", m=m, n=n, k=k, mode="burst",
                    rounds=30, gpu="Stand-in GPU", sm_count=132, date="2026-12-02")
        if isinstance(refs, str):
            rows.append(dict(base, kernel="step", check=refs))
            continue
        # 500 TFLOP/s, or 3.5 TB/s for A, B and C where that takes longer (the small M ones)
        ms = max(2.0 * m * n * k / 500e12, 2.0 * (m * k + n * k + m * n) / 3.5e12) * 1e3
        rows.append(dict(base, kernel="step", ms=ms, tflops=500, step_ratio=1, clock_mhz=1900, check="pass"))
        for kern, (r, q25, q75) in refs.items():
            rows.append(dict(base, kernel=kern, ms=ms * r, tflops=500 / r, step_ratio=r, step_ratio_q25=q25,
                             step_ratio_q75=q75, clock_mhz=1890, check="pass"))
    return rows, (0.55 * 0.70 * 0.98) ** (1 / 3)


def synthetic_random_rows(shape_sweep):
    """Step 23's rows at the first 21 shapes of the committed random draw (7 per class), tagged
    family=random: distinct best ratios from 0.80 to 1.06 (a permutation, so each class has shapes on
    both sides of 0.95), cuBLAS 0.05 above the best (cuBLASLt's best), and the first shape of class
    K%16==8 refused. Returns (rows, {class: [(m, n, k, ratio or None, clock)]})."""
    fields = HEADER.split(",") + ["family"]
    rows, expect = [], {}
    for i, (m, n, k, cls) in enumerate(shape_sweep.random_shapes()[:21]):
        base = dict.fromkeys(fields, "")
        base.update(step="23", name="stand_in", technique="stand-in", dtype="bf16", m=m, n=n, k=k, mode="burst",
                    rounds=30, gpu="Stand-in GPU", sm_count=132, date="2026-12-02", family="random")
        if cls == "K%16==8" and cls not in expect:
            rows.append(dict(base, kernel="step", check="REFUSED (K % 16 == 8 is not taken)"))
            expect.setdefault(cls, []).append((m, n, k, None, None))
            continue
        best, clock = round(0.80 + 0.013 * ((i * 8) % 21), 3), 1800 + i
        rows.append(dict(base, kernel="step", ms=1.0, tflops=500, step_ratio=1, clock_mhz=clock, check="pass"))
        for kern, r in (("cublas", best + 0.05), ("cublaslt_best", best)):
            rows.append(dict(base, kernel=kern, ms=r, tflops=500 / r, step_ratio=f"{r:.3f}",
                             step_ratio_q25=f"{r - 0.01:.3f}", step_ratio_q75=f"{r + 0.01:.3f}", clock_mhz=1890,
                             check="pass"))
        expect.setdefault(cls, []).append((m, n, k, best, clock))
    return rows, expect


def expected_class_lines(shape_sweep, expect):
    """The per-class summary shapes_table.py should print for synthetic_random_rows, from the data."""
    import math
    out = []
    for cls, group in expect.items():
        ok = [g for g in group if g[3] is not None]
        gm = math.exp(sum(math.log(g[3]) for g in ok) / len(ok))
        at = sum(g[3] >= 0.95 for g in ok)
        worst = sorted(ok, key=lambda g: g[3])[:5]
        line = (f"- {cls} ({shape_sweep.RANDOM_CLASS_MEANING[cls]}): {len(group)} shapes, geometric mean {gm:.3f}× the "
                f"best reference over {len(ok)} timed; at or above 0.95× on {at} of {len(ok)} ({100 * at / len(ok):.0f}%)")
        line += "".join(f"; not timed: {m}x{n}x{k} (REFUSED (K % 16 == 8 is not taken))"
                        for m, n, k, r, _ in group if r is None)
        line += ". Worst five: " + "; ".join(f"{m}x{n}x{k} {r:.3f} [{r - 0.01:.3f}–{r + 0.01:.3f}] at {c} MHz (against "
                                             f"cublaslt_best)" for m, n, k, r, c in worst) + "."
        out.append(line)
    return out


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def refused_of(drawn):
    """The shape the stand-ins refuse in a random draw's run: the draw's first N%8!=0 shape, as MxNxK."""
    return next(f"{m}x{n}x{k}" for m, n, k, cls in drawn if cls == "N%8!=0")


def run_random_draw(c, argv, path, drawn, tag):
    """bench.py `argv` (a --shapes-set random run) with stand-ins that tag their rows `tag` and refuse
    refused_of(drawn): (the process, the CSV's rows after it, the rows this run wrote (the refusal
    included), the shapes of its step rows)."""
    odd = refused_of(drawn)
    r = subprocess.run(argv, env=c.env(STANDIN_RUN=tag, STANDIN_REFS="all", STANDIN_REFUSE=odd), capture_output=True,
                       text=True)
    rows = list(csv.DictReader(open(path))) if path.exists() else []
    new = [x for x in rows if x["detail"] == tag or (x["check"].startswith("REFUSED") and x["step"] == "23"
                                                     and f"{x['m']}x{x['n']}x{x['k']}" == odd)]
    return r, rows, new, [(int(x["m"]), int(x["n"]), int(x["k"])) for x in new if x["kernel"] == "step"]


def shapes_cases(args, case):
    """bench.py --shapes with stand-ins (plan, a stubbed run with a refused shape), then the figure and the
    table on its CSV and on a small synthetic one."""
    c = Case(args.repo, pathlib.Path(args.scratch) / "shapes")
    sys.path.insert(0, str(c.repo / "scripts"))
    import shape_sweep
    base = [sys.executable, str(c.repo / "scripts/bench.py"), "--build", str(c.build), "--out", str(c.out), "--shapes",
            "--steps", "14", "23", "--shapes-also", "14", "--no-docs"]
    want = len(shape_sweep.SHAPES) * 2
    drawn = shape_sweep.random_shapes()
    r = subprocess.run(base + ["--dry-run"], env=c.env(), capture_output=True, text=True)
    ok = (r.returncode == 0 and f"{want + 2 * len(drawn)} processes" in r.stdout and "estimated time: about" in r.stdout
          and all(f in r.stdout for f, _ in shape_sweep.FAMILIES) and "20 rounds (not 30) at 16384x14336x4096" in r.stdout
          and all(f"  {cls:8s} {len(drawn) // 3:2d} shapes x 2 steps" in r.stdout for cls in shape_sweep.RANDOM_CLASSES)
          and "the random set" in next((l for l in r.stdout.splitlines() if l.startswith("estimated")), "")
          and not (c.out.exists() and any(c.out.iterdir())))
    case("--shapes --dry-run prints the plan and its estimate and writes nothing", ok,
         next((l for l in r.stdout.splitlines() if l.startswith("estimated")), "") if ok
         else f"exit {r.returncode}: {(r.stdout + r.stderr).strip()[-300:]}")
    r = subprocess.run(base[:6] + ["--dry-run"], env=c.env(), capture_output=True, text=True)
    case("--dry-run without --shapes is refused", r.returncode == 2 and "--dry-run plans a --shapes run" in r.stderr,
         f"exit {r.returncode}")
    r = subprocess.run(base[:6] + ["--shapes-set", "random", "--dry-run"], env=c.env(), capture_output=True, text=True)
    r2 = subprocess.run(base + ["--shapes-set", "random-ish", "--dry-run"], env=c.env(), capture_output=True, text=True)
    case("--shapes-set without --shapes, or naming no set, is refused",
         r.returncode == 2 and "--shapes-set chooses the shapes of a --shapes run" in r.stderr
         and r2.returncode == 2 and "invalid choice: 'random-ish'" in r2.stderr, f"exit {r.returncode}, {r2.returncode}")

    # Issue 46's draw, as a pure function: reproducible, a third per class, in range, none of the sweep's.
    again, other = shape_sweep.random_shapes(shape_sweep.RANDOM_SEED), shape_sweep.random_shapes(shape_sweep.RANDOM_SEED + 1)
    by_class = {cls: [d for d in drawn if d[3] == cls] for cls in shape_sweep.RANDOM_CLASSES}
    conditions = {"aligned": lambda n, k: k % 16 == 0 and n % 8 == 0, "K%16==8": lambda n, k: k % 16 == 8 and n % 8 == 0,
                  "N%8!=0": lambda n, k: n % 8 != 0 and k % 16 == 0}
    shapes = [d[:3] for d in drawn]
    lo, hi = shape_sweep.RANDOM_NK
    try:
        shape_sweep.random_shapes(count=100)
        refused_count = False
    except ValueError as e:
        refused_count = "multiple of 3" in str(e)
    problems = [what for what, bad in (
        ("not reproducible", again != drawn or shape_sweep.RANDOM_SHAPES != shapes),
        ("another seed draws the same", other == drawn),
        ("fewer than 100", len(drawn) < 100),
        ("classes not a third each", len(by_class) != 3 or any(len(g) != len(drawn) // 3 for g in by_class.values())
         or len(drawn) % 3),
        ("a class's condition broken", any(not conditions[cls](n, k) for m, n, k, cls in drawn)),
        ("random_class disagrees", any(shape_sweep.random_class(m, n, k) != cls for m, n, k, cls in drawn)),
        ("out of range", any(not (1 <= m <= 16384 and lo <= n <= hi and lo <= k <= hi and k % 8 == 0)
                             for m, n, k in shapes)),
        ("not spread over the log range", not (0.3 < sum(m <= 128 for m, _, _ in shapes) / len(shapes) < 0.7)),
        ("a duplicate", len(set(shapes)) != len(shapes)),
        ("a shape of the sweep", set(shapes) & set(shape_sweep.SHAPES)),
        ("family_of does not say random", any(shape_sweep.family_of(*s) != "random" for s in shapes)),
        ("a count not a multiple of 3 is not refused", not refused_count)) if bad]
    case("random_shapes: the committed seed's draw is reproducible, at least 100 shapes, a third per class each meeting "
         "its condition, in range, none of the sweep's",
         not problems, f"{len(drawn)} shapes, {', '.join(f'{c} {len(g)}' for c, g in by_class.items())}"
         + (f"; {', '.join(problems)}" if problems else ""))

    refused = "2050x2050x2048"
    r = subprocess.run(base + ["--shapes-set", "sweep"], env=c.env(STANDIN_RUN="S", STANDIN_REFS="all",
                                                                   STANDIN_REFUSE=refused),
                       capture_output=True, text=True)
    path = c.out / "stand_in_gpu_shapes.csv"
    rows = list(csv.DictReader(open(path))) if path.exists() else []
    steps = {(x["step"], int(x["m"]), int(x["n"]), int(x["k"])) for x in rows if x["kernel"] == "step"}
    plan = {(s, *shp) for shp in shape_sweep.SHAPES for s in ("14", "23")}
    bad = [x for x in rows if None in x.values() or None in x
           or x.get("family") != shape_sweep.family_of(int(x["m"]), int(x["n"]), int(x["k"]))]
    refusals = [x for x in rows if x["check"].startswith("REFUSED")]
    timed = [x for x in rows if x["kernel"] == "step" and x.get("tflops")]
    per = {}
    for x in rows:
        per[(x["step"], x["m"], x["n"], x["k"])] = per.get((x["step"], x["m"], x["n"], x["k"]), 0) + 1
    case("--shapes with stand-ins writes a well-formed CSV: every step at every shape, each timed one with its "
         "four references, a family per row",
         r.returncode == 0 and steps == plan and not bad and len(timed) == want - 2
         and all(v == 5 for (s, m, n, k), v in per.items() if f"{m}x{n}x{k}" != refused) and not c.pending(),
         f"exit {r.returncode}, {len(steps)} of {len(plan)} step rows, {len(bad)} bad rows"
         + ("" if r.returncode == 0 else f"; {r.stderr.strip()[-200:]}"))
    case("--shapes: a shape a step refuses (exit 2) is a REFUSED row with the reason, and a note",
         len(refusals) == 2 and {f"{x['m']}x{x['n']}x{x['k']}" for x in refusals} == {refused}
         and all("multiple of 8" in x["check"] for x in refusals) and f"refused {refused}" in r.stdout,
         f"{len(refusals)} refused rows")
    case("--shapes-set sweep runs no random shape",
         r.returncode == 0 and not any(x["family"] == "random" or (int(x["m"]), int(x["n"]), int(x["k"])) in set(shapes)
                                       for x in rows) and "the random set (issue 46" not in r.stdout
         and f"over the sweep's {len(shape_sweep.SHAPES)} shapes: {want} processes" in r.stdout,
         f"{sum(x['family'] == 'random' for x in rows)} random rows")
    big = "--m 16384 --n 14336 --k 4096 --reps 20"
    case("--shapes: 20 rounds at 1 TFLOP or more, --reps (30) elsewhere, and each process's time printed",
         big in r.stdout and "--m 1 --n 4096 --k 4096 --reps 30" in r.stdout and f"[{want}/{want}]" in r.stdout,
         "" if big in r.stdout else "no 20-round run of 16384x14336x4096")

    # A reference that computes another C than cuBLAS (the harness drops it with a labelled line and
    # exits 0, as with cuBLASLt's split-K algorithm at 2050x2050x2048 on the H200): a row for that
    # reference and a note; the step's own rows stand and the run is not failed.
    c2 = Case(args.repo, pathlib.Path(args.scratch) / "badref")
    base2 = [a if a != str(c.build) else str(c2.build) for a in base]
    base2 = [a if a != str(c.out) else str(c2.out) for a in base2]
    r2 = subprocess.run(base2[:base2.index("--steps")] + ["--steps", "23", "--no-docs", "--shapes-set", "sweep"],
                        env=c2.env(STANDIN_RUN="B", STANDIN_REFS="all", STANDIN_BADREF=refused),
                        capture_output=True, text=True)
    rows2 = list(csv.DictReader(open(c2.out / "stand_in_gpu_shapes.csv"))) if (c2.out / "stand_in_gpu_shapes.csv").exists() else []
    at = [x for x in rows2 if f"{x['m']}x{x['n']}x{x['k']}" == refused]
    case("--shapes: a reference that fails its check (the harness's labelled line) is a row for that reference and a note, "
         "not a failed step",
         r2.returncode == 0 and any(x["kernel"] == "cublaslt_best" and x["check"] == "FAIL (reference, not timed)" for x in at)
         and any(x["kernel"] == "step" and x["check"] == "pass" and x.get("tflops") for x in at)
         and not any(x["kernel"] == "step" and x["check"].startswith("FAIL") for x in rows2)
         and "reference cublaslt_best failed its check against cuBLAS and was not timed" in r2.stdout,
         f"exit {r2.returncode}, {len(at)} rows at {refused}" + ("" if r2.returncode == 0 else f"; {r2.stderr.strip()[-200:]}"))

    # The random set into the same results/: its rows tagged family=random, the sweep's rows of the run
    # above kept as they were; one random shape refused.
    sweep_rows = rows
    rnd = base[:base.index("--steps")] + ["--steps", "23", "--no-docs", "--shapes-set", "random"]
    r, rows, new, got = run_random_draw(c, rnd, path, drawn, "R")
    case("--shapes-set random with stand-ins: every random shape once, its rows tagged family=random, the sweep's "
         "rows of the file kept",
         r.returncode == 0 and sorted(got) == sorted(shapes) and all(x["family"] == "random" for x in new)
         and [x for x in rows if x not in new] == sweep_rows and len(rows) == len(sweep_rows) + len(new)
         and any(x["check"].startswith("REFUSED") for x in new) and f"[{len(drawn)}/{len(drawn)}]" in r.stdout
         and "the random set (issue 46" in r.stdout and "the sweep (issue 30)" not in r.stdout,
         f"exit {r.returncode}, {len(got)} random step rows, {len(rows) - len(new)} of {len(sweep_rows)} sweep rows kept"
         + ("" if r.returncode == 0 else f"; {r.stderr.strip()[-200:]}"))
    r = subprocess.run(rnd[:-1] + ["sweep", "--resume"], env=c.env(STANDIN_RUN="R"), capture_output=True, text=True)
    case("--resume refuses the rows of another --shapes-set",
         r.returncode == 2 and "--shapes-set random then, sweep now" in r.stderr and "resuming:" not in r.stdout,
         f"exit {r.returncode}: {r.stderr.strip()[-160:]}")

    table = [sys.executable, str(c.repo / "scripts/shapes_table.py")]
    t = subprocess.run(table + [str(path)], capture_output=True, text=True) if path.exists() else None
    case("shapes_table.py on the stubbed CSV: the best reference is cuBLASLt's (ratio 0.8), refusals named",
         t is not None and t.returncode == 0 and "geometric mean 0.800× the best reference over 37 shapes" in t.stdout
         and f"not timed: {refused} (REFUSED" in t.stdout and "| cublaslt_best | 0.800" in t.stdout
         and "**step 14 two_consumers**: geometric mean 0.800× the best reference over 37 shapes" in t.stdout
         and f"- N%8!=0 (N % 8 != 0, K % 16 == 0): 34 shapes, geometric mean 0.800× the best reference over 33 timed; "
             f"at or above 0.95× on 0 of 33 (0%); not timed: {refused_of(drawn)} (REFUSED" in t.stdout,
         "" if t and t.returncode == 0 else (t.stdout + t.stderr)[-300:] if t else "no CSV")

    syn_rows, gm = synthetic_rows()
    syn = c.root / "synthetic_shapes.csv"
    write_csv(syn, syn_rows)
    md = c.root / "results.md"
    md.write_text("# Results\n\nbefore\n\n<!-- shapes:begin -->\nnot measured yet\n<!-- shapes:end -->\n\nafter\n")
    t = subprocess.run(table + [str(syn), "--full", str(md)], capture_output=True, text=True)
    text = md.read_text()
    case("shapes_table.py on a small synthetic CSV: geomean, worst five in order with IQR and clock, the "
         "refused shape, only between its markers",
         t.returncode == 0 and f"geometric mean {gm:.3f}× the best reference over 3 shapes" in text
         and "Worst five: 1x4096x4096 0.550 [0.540–0.560] at 1900 MHz (against cublaslt_best); "
             "16x4096x4096 0.700 [0.690–0.710]" in text
         and "not timed: 2050x2050x2048 (REFUSED (N must be a multiple of 8))" in text
         and "| 23 | other | 16x4096x4096 |" in text and "| 22 | ragged | 2050x2050x2048 | 500.0 | cublas | 0.960" in text
         and text.startswith("# Results\n\nbefore\n") and text.endswith("<!-- shapes:end -->\n\nafter\n")
         and "not measured yet" not in text, "" if t.returncode == 0 else (t.stdout + t.stderr)[-300:])

    # The synthetic CSV with step 23's rows at 21 shapes of the random draw: the sweep's summaries as without
    # them, and per class the numbers computed here from the rows.
    rand_rows, expect = synthetic_random_rows(shape_sweep)
    both = c.root / "synthetic_random.csv"
    write_csv(both, [dict(x, family="") for x in syn_rows] + rand_rows)
    t0 = subprocess.run(table + [str(syn)], capture_output=True, text=True)
    t = subprocess.run(table + [str(both)], capture_output=True, text=True)
    sweep_lines = [l for l in t0.stdout.splitlines() if l.startswith("**step")]
    shown = [l for l in t.stdout.splitlines() if l.startswith("- ")]
    want_lines = expected_class_lines(shape_sweep, expect)
    rows_shown = [l for l in t.stdout.splitlines() if l.startswith("| 23 | ") and l.split(" | ")[1] in expect]
    case("shapes_table.py on a synthetic CSV with random rows: per class the number of shapes, geometric mean, share at "
         ">= 0.95x and worst five; the sweep's summary as without them",
         t.returncode == 0 and len(sweep_lines) == 2 and all(l in t.stdout.splitlines() for l in sweep_lines)
         and shown == want_lines and len(rows_shown) == 21 and "**step 23 stand_in, the random set** (21 shapes" in t.stdout,
         "" if t.returncode == 0 and shown == want_lines else
         f"exit {t.returncode}; got {shown[:1]}, want {want_lines[:1]}; {t.stderr.strip()[-200:]}")

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        case("plot_shapes.py: not drawn, matplotlib is not installed (scripts/docs_deps.sh)", True)
        return
    plot = [sys.executable, str(c.repo / "scripts/plot_shapes.py")]
    outs = []
    write_csv(c.root / "random_only.csv", rand_rows)
    for src, name in ((syn, "synthetic.png"), (path, "stubbed.png"), (c.root / "random_only.csv", "random_only.png")):
        p = subprocess.run(plot + [str(src), "--out", str(c.root / name)], capture_output=True, text=True)
        outs.append((p, c.root / name))
    # A subset without any M <= 32 shape: the memory-bound panel says so instead of failing.
    write_csv(c.root / "large_only.csv", [x for x in syn_rows if int(x["m"]) > 32])
    p = subprocess.run(plot + [str(c.root / "large_only.csv"), "--out", str(c.root / "large.png")], capture_output=True, text=True)
    outs.append((p, c.root / "large.png"))
    case("plot_shapes.py draws the synthetic CSV, the stubbed one (with the random set's panel), one with random rows "
         "only and a subset without M <= 32",
         all(p.returncode == 0 and f.exists() and f.read_bytes()[:4] == b"\x89PNG" for p, f in outs),
         "; ".join(f"exit {p.returncode} {p.stderr.strip()[-150:]}" for p, _ in outs if p.returncode))


HELD_OUT_SEED = 4701  # any seed but seed 46 and tune.py's DRAW_SEED (4601)


def heldout_cases(args, case):
    """bench.py --shapes --random-seed (a held-out draw) with stand-ins, and the table and the figure of a
    CSV that holds it beside seed 46's set and the sweep."""
    c = Case(args.repo, pathlib.Path(args.scratch) / "heldout")
    sys.path.insert(0, str(c.repo / "scripts"))
    import shape_sweep
    seed, fam = HELD_OUT_SEED, f"random-{HELD_OUT_SEED}"
    drawn = shape_sweep.random_shapes(seed)
    shapes = [d[:3] for d in drawn]
    base = [sys.executable, str(c.repo / "scripts/bench.py"), "--build", str(c.build), "--out", str(c.out), "--shapes",
            "--steps", "23", "--no-docs", "--shapes-set", "random", "--random-seed", str(seed)]

    problems = [what for what, bad in (
        ("random_family", shape_sweep.random_family() != "random" or shape_sweep.random_family(seed) != fam),
        ("random_seed_of", shape_sweep.random_seed_of("random") != 46 or shape_sweep.random_seed_of(fam) != seed),
        ("is_random_family", not shape_sweep.is_random_family(fam)
         or any(shape_sweep.is_random_family(f) for f in ("decode", "other", "random-46", "random-x", "", None))),
        ("the same shapes as seed 46's", set(shapes) & set(shape_sweep.RANDOM_SHAPES)),
        ("a shape of the sweep", set(shapes) & set(shape_sweep.SHAPES))) if bad]
    case(f"random_family, random_seed_of, is_random_family name the draws; seed {seed} draws other shapes than seed "
         f"46's", not problems, ", ".join(problems))

    r = subprocess.run(base + ["--dry-run"], env=c.env(), capture_output=True, text=True)
    case(f"--random-seed {seed} --dry-run: the plan names the seed and the family, and writes nothing",
         r.returncode == 0 and f"102 random shapes (seed {seed}: a held-out draw, family {fam})" in r.stdout
         and f"a held-out draw (seed {seed}, rows of family {fam}" in r.stdout
         and f"the held-out draw (seed {seed})" not in r.stdout.split("estimated")[0]
         and not (c.out.exists() and any(c.out.iterdir())),
         "" if r.returncode == 0 else f"exit {r.returncode}: {(r.stdout + r.stderr).strip()[-300:]}")

    # results/ holds seed 46's set and a sweep shape (synthetic rows, as bench.py writes them): both kept.
    syn_rows, _ = synthetic_rows()
    rand_rows, expect = synthetic_random_rows(shape_sweep)
    c.out.mkdir(parents=True, exist_ok=True)
    path = c.out / "stand_in_gpu_shapes.csv"
    old = [dict(x, family=shape_sweep.family_of(int(x["m"]), int(x["n"]), int(x["k"]))) for x in syn_rows] + rand_rows
    write_csv(path, old)
    old = list(csv.DictReader(open(path)))  # as bench.py reads them back
    r, rows, new, got = run_random_draw(c, base, path, drawn, "H")

    def key(x):
        return x["step"], x["family"], int(x["m"]), int(x["n"]), int(x["k"]), x["kernel"], x["step_ratio"], x["check"]
    kept = sorted(key(x) for x in rows if x not in new)
    case(f"--shapes-set random --random-seed {seed} with stand-ins: every shape of the draw once, its rows tagged "
         f"family={fam}, the rows of seed 46's set and of the sweep kept",
         r.returncode == 0 and sorted(got) == sorted(shapes) and all(x["family"] == fam for x in new)
         and kept == sorted(key(x) for x in old) and any(x["check"].startswith("REFUSED") for x in new)
         and f"[{len(drawn)}/{len(drawn)}]" in r.stdout and "the random set (issue 46" not in r.stdout
         and "the sweep's and the other random draws' rows" in r.stdout,
         f"exit {r.returncode}, {len(got)} step rows of the draw, {len(kept)} of {len(old)} rows kept"
         + ("" if r.returncode == 0 else f"; {r.stderr.strip()[-200:]}"))
    r = subprocess.run(base[:-1] + [str(seed + 1), "--resume"], env=c.env(STANDIN_RUN="H"), capture_output=True,
                       text=True)
    case("--resume refuses the rows of another --random-seed",
         r.returncode == 2 and f"--random-seed {seed} then, {seed + 1} now" in r.stderr and "resuming:" not in r.stdout,
         f"exit {r.returncode}: {r.stderr.strip()[-160:]}")

    # The table: the sweep's summary as without any random rows, seed 46's block as without the held-out
    # draw, and a block of the draw's own naming its seed, per class the numbers of its rows.
    table = [sys.executable, str(c.repo / "scripts/shapes_table.py")]
    only46 = c.root / "seed46.csv"
    write_csv(only46, old)
    t46 = subprocess.run(table + [str(only46)], capture_output=True, text=True)
    t = subprocess.run(table + [str(path)], capture_output=True, text=True)
    lines = t.stdout.splitlines()
    head = f", the held-out draw from seed {seed}** ({len(drawn)} shapes"
    at = next((i for i, l in enumerate(lines) if l.startswith("**step 23 ") and head in l), None)
    classes = lines[at + 2:at + 5] if at is not None else []
    # seed 46's CSV's table up to its shape-by-shape tables, but its first line (the file's name, rounds)
    summaries = t46.stdout.split("\n\n| step | family |")[0].split("\n", 1)[-1]
    case(f"shapes_table.py: a block naming seed {seed} apart from the sweep's summary and seed 46's block, per "
         f"class the draw's shapes; the sweep's summary and seed 46's block as without it",
         t.returncode == 0 and t46.returncode == 0 and at is not None and summaries in t.stdout
         and t.stdout.index(summaries) < t.stdout.index(f"A held-out draw (family {fam}")
         and f"drawn from seed {seed} (`shape_sweep.random_shapes`" in t.stdout
         and f"This file holds {len(drawn)} of its {len(drawn)} shapes." in t.stdout
         and [l.split(":")[0] for l in classes] == [f"- {cls} ({shape_sweep.RANDOM_CLASS_MEANING[cls]})"
                                                    for cls in shape_sweep.RANDOM_CLASSES]
         and all(f"{len(drawn) // 3} shapes, geometric mean 0.800×" in l for l in classes)
         and f"The held-out draw from seed {seed}, shape by shape:" in t.stdout,
         "" if t.returncode == 0 and at is not None else
         f"exit {t.returncode}, block {'found' if at is not None else 'missing'}; {(t.stdout + t.stderr)[-300:]}")

    # Bad seeds: argparse's one line and exit 2, never a traceback; a seed without --shapes, one with the
    # sweep alone and tune.py's DRAW_SEED are refused by name.
    bad = []
    for value, said in (("x", "'x' is not an integer"), ("-1", "-1 is negative"), ("4.5", "'4.5' is not an integer"),
                        ("4601", "DRAW_SEED")):
        r = subprocess.run(base[:-1] + [value, "--dry-run"], env=c.env(), capture_output=True, text=True)
        if r.returncode != 2 or "--random-seed" not in r.stderr or said not in r.stderr or "Traceback" in r.stderr:
            bad.append(f"{value}: exit {r.returncode}, {r.stderr.strip()[-120:]}")
    for extra, said in ((["--random-seed", "5"], "pass --shapes"),
                        (["--shapes", "--shapes-set", "sweep", "--random-seed", "5"], "--shapes-set sweep runs none")):
        r = subprocess.run(base[:6] + extra + ["--dry-run"], env=c.env(), capture_output=True, text=True)
        if r.returncode != 2 or said not in r.stderr:
            bad.append(f"{' '.join(extra)}: exit {r.returncode}, {r.stderr.strip()[-120:]}")
    case("a bad --random-seed (not an integer, negative, tune.py's DRAW_SEED, without --shapes or with the sweep "
         "alone) exits 2 with one line naming it", not bad, "; ".join(bad))

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        case("plot_shapes.py: not drawn, matplotlib is not installed (scripts/docs_deps.sh)", True)
        return
    png = c.root / "heldout.png"
    p = subprocess.run([sys.executable, str(c.repo / "scripts/plot_shapes.py"), str(path), "--out", str(png)],
                       capture_output=True, text=True)
    case(f"plot_shapes.py draws seed 46's set and the draw from seed {seed} in the random panel",
         p.returncode == 0 and png.exists() and png.read_bytes()[:4] == b"\x89PNG", p.stderr.strip()[-200:])


def main():
    if len(sys.argv) > 1 and not sys.argv[1].startswith("--"):  # called as a stand-in
        name = pathlib.Path(sys.argv[1]).name
        return (standin_smi if name == "nvidia-smi" else standin_step)(sys.argv[1:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--cases", choices=("faults", "shapes", "heldout", "all"), default="all")
    args = ap.parse_args()
    results = []

    def case(name, ok, detail=""):
        results.append(ok)
        print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)

    if args.cases in ("faults", "all"):
        fault_cases(args, case)
    if args.cases in ("shapes", "all"):
        shapes_cases(args, case)
    if args.cases in ("heldout", "all"):
        heldout_cases(args, case)
    shutil.rmtree(args.scratch, ignore_errors=True)
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
