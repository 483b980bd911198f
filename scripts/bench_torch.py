#!/usr/bin/env python3
"""make bench-torch: the series' last steps called from PyTorch, beside what PyTorch gives its users.

Two parts, one process, one GPU:

1. The per-call cost of the Python path (issue 48: "at most a few microseconds per call over the bare
   launch"). At a shape whose kernel takes a few microseconds, N calls back to back and one
   synchronize: the wall time per call is the host's cost (the GPU waits on the host). Measured for
   torch's F.linear, the step through gemm_steps.linear (out given, and out allocated), the same step
   through the bare C call (ctypes, arguments prepared once: the library's own cost plus the launch),
   and the FP8 pair (torch._scaled_mm, gemm_steps.linear_fp8). Rows with mode "overhead", us per call.

2. Paired kernel times over the sweep's decode and ragged families and three squares (2048^3,
   4096^3, 8192^3): the last bf16 step against torch.matmul (cuBLAS underneath) and
   torch.compile(mode="max-autotune") of the same matmul restricted to Inductor's Triton GEMM templates;
   the last FP8 steps (per-tensor and block-scaled) against torch._scaled_mm with the same scales and,
   for per-tensor scales, its max-autotune compile. Paired as the harness pairs (common/harness/timing.cu,
   time_paired): each round runs every contender once, in turn (reversed every other round), each launch
   after an L2 flush (a read of twice L2's size, as the harness's flush_l2), timed by CUDA events; and
   since a Python call costs more host time than a small kernel runs, each round first queues a GPU
   sleep about as long as the host needs to enqueue the round, so the events time the kernels and not
   the host (part 1 measures the host). The sleep is kept
   that short on purpose: a longer idle gap lets a power-capped GPU clock up, which favours whichever
   contender is bound by the clock (a 2 ms sleep per round moved torch.matmul at 8192^3 on an H100 from
   1536 to 1373 us and left the step's 1900 us where it was; docs/notebook/measuring.md). Ratio = contender's time / step's time per
   round (> 1: the step is faster); its median and quartiles over the rounds, the SM clock read from
   nvidia-smi after the shape. Rows with mode "paired".

3. After all timing, one call of each contender per shape under torch.profiler: the GPU kernels it
   launched, by name (cuBLAS's names spell their tile, stages and cluster), rows with mode "kernels".

Outputs: a CSV (--out; commit it as results/<gpu>_torch.csv) and one line per shape. The whole run keeps
inside --budget-s (default 540 s: one 10-minute remote call): torch.compile's autotuning takes seconds
per shape, so compiles stop first when the budget runs short (each skipped one is printed), then shapes.

    PYTHONPATH=python python3 scripts/bench_torch.py --out build/bench_torch.csv [--quick]

Needs PyTorch, an NVIDIA Hopper GPU and build/lib/libgemmsteps.so (make lib); without them it says which
is missing and exits with status 2. Exit status 1 when a step's result disagrees with torch's."""
import argparse
import csv
import datetime
import importlib.util
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Python puts this script's folder first on sys.path, where scripts/profile.py would stand in for the
# standard library's profile (which torch._dynamo imports through cProfile): take it out, and load the
# sweep's shapes by path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "scripts"]
sys.path.insert(0, str(ROOT / "python"))
_spec = importlib.util.spec_from_file_location("shape_sweep", ROOT / "scripts" / "shape_sweep.py")
shape_sweep = importlib.util.module_from_spec(_spec)  # the sweep's families: the same shapes as make bench-shapes
_spec.loader.exec_module(shape_sweep)

SQUARES = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192)]
FAMILIES = ("decode", "ragged", "square")
# A step's result is wrong past this relative RMS error against the reference (a fixed bound, not one
# relative to the other contenders', which a wrong reference would loosen): bf16 output rounding is
# about 2^-9, FP8's accumulation adds at most ~0.007 at the K here (docs/fp8.md, the accuracy lab).
WRONG = 2 ** -6
COLUMNS = ["gpu", "torch", "triton", "date", "mode", "dtype", "scaling", "family", "m", "n", "k", "contender",
           "detail", "ms", "ms_q25", "ms_q75", "tflops", "ratio", "ratio_q25", "ratio_q75", "rounds", "clock_mhz",
           "us_per_call", "rel_err", "note", "kernels"]


def first_line(e):
    """An exception's first line of message (an empty message, as a bare assert's, gives "")."""
    return (str(e).splitlines() or [""])[0]


def need(what):
    print(f"bench_torch.py: {what}", file=sys.stderr)
    sys.exit(2)


def shapes_of(families, quick):
    out = []
    for fam in families:
        if fam == "square":
            shapes = SQUARES[:2] if quick else SQUARES
        else:
            shapes = dict(shape_sweep.FAMILIES).get(fam)
            if shapes is None:
                need(f"no family {fam!r} (the sweep's: {', '.join(f for f, _ in shape_sweep.FAMILIES)}, or square)")
            if quick:
                shapes = [s for s in shapes if s[0] in (1, 128)] if fam == "decode" else shapes[:1]
        out += [(fam, s) for s in shapes]
    return out


def quartiles(v):
    q = statistics.quantiles(v, n=4, method="inclusive") if len(v) > 1 else [v[0]] * 3
    return q[0], statistics.median(v), q[2]


def sm_clock():
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits", "-i", "0"],
                           capture_output=True, text=True, timeout=10)
        return int(r.stdout.split()[0])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return ""


class Bench:
    def __init__(self, torch, gs, args):
        self.torch, self.gs, self.args = torch, gs, args
        self.start = time.monotonic()
        props = torch.cuda.get_device_properties(0)
        l2 = getattr(props, "L2_cache_size", 50 << 20) or (50 << 20)
        # 2x L2, as the harness flushes; flushed by reading it (flush()), never by writing: a write leaves
        # L2 full of dirty lines whose write-back to HBM lands inside the next timed kernel
        # (docs/notebook/measuring.md, "The flush was a memset"; this script wrote until 2026-12-06).
        self.flush_buf = torch.zeros(2 * l2 // 8, dtype=torch.int64, device="cuda")
        self.gen = torch.Generator(device="cuda").manual_seed(48)
        self.rows = []
        self.status = 0
        try:
            import triton
            triton_version = triton.__version__
        except ImportError:
            triton_version = ""
        self.meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton_version,
                     "date": datetime.date.today().isoformat()}
        self.compiled = {}
        self.timed = []  # (dtype, scaling, family, shape, contenders) of every shape timed: the kernel pass's work
        self.csv_file = open(args.out, "w", newline="")
        self.writer = csv.DictWriter(self.csv_file, fieldnames=COLUMNS, extrasaction="raise")
        self.writer.writeheader()

    def flush(self):
        """Evicts L2 by reading twice its size (a reduction whose one-element result is the only write)."""
        self.flush_buf.sum()

    def left(self):
        return self.args.budget_s - (time.monotonic() - self.start)

    def row(self, **kw):
        """One CSV row, written and flushed at once: a run stopped by its time limit keeps what it measured."""
        r = dict(self.meta)
        r.update(kw)
        self.rows.append(r)
        self.writer.writerow({c: r.get(c, "") for c in COLUMNS})
        self.csv_file.flush()

    # ---- part 1: per-call cost ---------------------------------------------------------------------
    def per_call_us(self, fn, calls):
        torch = self.torch
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        best = math.inf
        for _ in range(5):  # the least of five runs: host noise only ever adds
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
            best = min(best, (time.perf_counter() - t0) / calls * 1e6)
        return best

    def overhead(self):
        torch, gs, F = self.torch, self.gs, self.torch.nn.functional
        m, n, k = 16, 256, 256  # a kernel of a few microseconds: the host is what the loop waits on
        a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
        b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
        out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        step = gs.last_step("bf16")
        lib = gs._lib.load()
        need_ws = gs.workspace_bytes(step, m, n, k)
        ws = torch.zeros(max(need_ws, 16), dtype=torch.uint8, device="cuda")
        stream = torch.cuda.current_stream().cuda_stream
        sid = step.encode()
        args = (sid, m, n, k, a.data_ptr(), b.data_ptr(), out.data_ptr(), ws.data_ptr() if need_ws else None,
                need_ws, -1, stream)

        def bare():
            code = lib.gemm_steps_bf16(*args)
            if code:
                gs._lib.check(code, lib)
        calls = 2000 if not self.args.quick else 500
        q = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
        one = torch.ones(1, device="cuda")
        fp8_step = gs.last_step("fp8", "per_tensor")
        cases = [
            ("torch F.linear (torch.matmul)", lambda: F.linear(a, b)),
            ("torch.matmul, out given", lambda: torch.matmul(a, b.t(), out=out)),
            (f"gemm_steps.linear, out given (step {step})", lambda: gs.linear(a, b, out=out, step=step)),
            (f"gemm_steps.linear, out allocated (step {step})", lambda: gs.linear(a, b, step=step)),
            (f"bare C call gemm_steps_bf16 (step {step}, ctypes)", bare),
            # The package's layers alone, no launch: where its share of a call goes.
            ("  of which: the package's checks of a, b, out", lambda: [gs._arrays.matrix(t, nm, "bf16") for t, nm in
                                                                      ((a, "a"), (b, "b"), (out, "out"))]),
            ("  of which: one check and the call's stream and device", lambda: gs._placement(
                [gs._arrays.matrix(a, "a", "bf16")], None)),
            ("torch._scaled_mm per-tensor", lambda: torch._scaled_mm(q[0], q[1].t(), scale_a=one, scale_b=one,
                                                                       out_dtype=torch.bfloat16)),
            (f"gemm_steps.linear_fp8 per-tensor (step {fp8_step})",
             lambda: gs.linear_fp8(q[0], q[1], one, one, step=fp8_step)),
        ]
        print(f"# per-call cost at {m}x{n}x{k} (host-bound): the least of 5 loops of {calls} calls, us per call")
        for name, fn in cases:
            try:
                us = self.per_call_us(fn, calls)
            except Exception as e:  # noqa: BLE001  (a refusal or a torch without the op: say so, go on)
                print(f"  {name}: not measured ({type(e).__name__}: {first_line(e)[:120]})")
                self.row(mode="overhead", dtype="bf16", m=m, n=n, k=k, contender=name, note=f"not measured: {e}"[:200])
                continue
            print(f"  {name:<52} {us:7.2f} us")
            self.row(mode="overhead", dtype="fp8" if "fp8" in name or "scaled" in name else "bf16", m=m, n=n, k=k,
                     contender=name, us_per_call=f"{us:.2f}")

    # ---- part 2: paired kernel times ---------------------------------------------------------------
    def compiled_fn(self, key, fn):
        torch = self.torch
        if key not in self.compiled:
            # max-autotune without CUDA graphs: a graph replay copies its (non-static) inputs into the graph's
            # own buffers first, and that copy would land inside the events (torch/_inductor/cudagraph_trees.py).
            self.compiled[key] = torch.compile(fn, mode="max-autotune-no-cudagraphs", dynamic=False, fullgraph=True)
        return self.compiled[key]

    def paired(self, contenders, rounds):
        """contenders: [(name, fn)], the step first. Returns per contender its times (ms) per round.
        Each round opens with a GPU sleep as long as the host took to queue the round before (1.5x,
        counted at 2 GHz, above the SM clock), so the events time kernels and not the host; and no
        longer, since idle time lets a power-capped GPU clock up for the next launch (--sleep-cycles
        fixes it instead)."""
        torch = self.torch
        t0 = time.perf_counter()
        for _, fn in contenders:
            for _ in range(3):
                fn()
        host_s = (time.perf_counter() - t0) / 3
        torch.cuda.synchronize()
        ev = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
               for _ in contenders] for _ in range(rounds)]
        for r in range(rounds):
            cycles = self.args.sleep_cycles or int(min(max(1.5 * host_s * 2.0e9, 50_000), 20_000_000))
            torch.cuda._sleep(cycles)  # the host queues the round while the GPU sleeps
            t0 = time.perf_counter()
            order = range(len(contenders)) if r % 2 == 0 else reversed(range(len(contenders)))
            for i in order:
                self.flush()
                s, e = ev[r][i]
                s.record()
                contenders[i][1]()
                e.record()
            host_s = time.perf_counter() - t0
            torch.cuda.synchronize()
        return [[ev[r][i][0].elapsed_time(ev[r][i][1]) for r in range(rounds)] for i in range(len(contenders))]

    def report(self, dtype, scaling, fam, shape, contenders, times, errs, notes):
        m, n, k = shape
        clock = sm_clock()
        step_t = times[0]
        flop = 2.0 * m * n * k
        line = []
        for (name, _), t, err, note in zip(contenders, times, errs, notes):
            q25, med, q75 = quartiles(t)
            ratios = [tc / ts for tc, ts in zip(t, step_t)]
            r25, rmed, r75 = quartiles(ratios)
            self.row(mode="paired", dtype=dtype, scaling=scaling, family=fam, m=m, n=n, k=k, contender=name,
                     detail=note, ms=f"{med:.5f}", ms_q25=f"{q25:.5f}", ms_q75=f"{q75:.5f}",
                     tflops=f"{flop / med / 1e9:.1f}", ratio=f"{rmed:.4f}", ratio_q25=f"{r25:.4f}",
                     ratio_q75=f"{r75:.4f}", rounds=len(t), clock_mhz=clock,
                     rel_err="" if err is None else f"{err:.3g}")
            line.append(f"{name.split(' ')[0]} {med * 1e3:.1f}us" + ("" if name == contenders[0][0] else f" {rmed:.3f}x"))
        print(f"{dtype:>4} {scaling or '':<10} {fam:<7} {m}x{n}x{k}: " + ", ".join(line) + f" @ {clock} MHz")

    def rel_err(self, got, want):
        got, want = got.float(), want.float()
        return float((got - want).norm() / max(float(want.norm()), 1e-30))

    def refused(self, dtype, scaling, fam, shape, step):
        """Whether `step` refuses the shape; its reason recorded and printed."""
        m, n, k = shape
        why = self.gs.refusal(step, m, n, k)
        if why:
            self.row(mode="paired", dtype=dtype, scaling=scaling, family=fam, m=m, n=n, k=k, contender=f"step {step}",
                     note=f"refused: {why}")
            print(f"{'bf16' if dtype == 'bf16' else ' fp8 ' + scaling} {fam} {m}x{n}x{k}: step {step} refuses: {why}")
        return bool(why)

    def add_compiled(self, contenders, notes, key, fn, args, shape, what, note):
        """torch.compile's contender of `fn` on `args`, when the budget leaves room for its autotuning."""
        m, n, k = shape
        if self.left() <= self.args.compile_reserve_s:
            print(f"  torch.compile skipped at {m}x{n}x{k}: {self.left():.0f} s of the budget left")
            return
        try:
            t0 = time.monotonic()
            compiled = self.compiled_fn(key, fn)
            compiled(*args)
            self.torch.cuda.synchronize()
            contenders.append(("torch.compile", lambda f=compiled: f(*args)))
            notes.append(f"{note}; compiled in {time.monotonic() - t0:.0f} s")
        except Exception as e:  # noqa: BLE001  (a failed compile is reported, the others still run)
            print(f"  torch.compile{what} failed at {m}x{n}x{k}: {type(e).__name__}: {first_line(e)[:160]}")

    def check_and_time(self, dtype, scaling, fam, shape, step, contenders, notes, out, ref, against):
        """Every contender's result against `ref`; the step's (into `out`, filled with NaN first, so an
        element it does not write fails) past WRONG is recorded and not timed; else the paired rounds."""
        m, n, k = shape
        out.fill_(float("nan"))
        errs = []
        for _, call in contenders:
            r = call()
            errs.append(self.rel_err(out if r is None else r, ref))
        if not errs[0] <= WRONG:  # (a NaN fails too)
            print(f"  step {step} at {m}x{n}x{k}{f' ({scaling})' if scaling else ''}: relative error {errs[0]:.3g} "
                  f"against {against}: WRONG, not timed")
            self.status = 1
            self.row(mode="paired", dtype=dtype, scaling=scaling, family=fam, m=m, n=n, k=k, contender=f"step {step}",
                     rel_err=f"{errs[0]:.3g}", note="wrong: not timed")
            return
        times = self.paired(contenders, self.args.rounds)
        self.report(dtype, scaling, fam, shape, contenders, times, errs, notes)
        self.timed.append((dtype, scaling, fam, shape, contenders))

    # ---- part 3: which kernels each contender ran ----------------------------------------------------
    def kernel_pass(self):
        """After every timing (the profiler is never on while anything is timed): one call of each
        contender at each timed shape under torch.profiler, after an L2 flush, and the GPU kernels it
        launched with their durations, as rows with mode "kernels" (the column `kernels`: "name us; ...").
        cuBLAS's kernel names spell their configuration (nvjet_sm90_tst_<tile>_<BK>x<stages>_<cluster>_..., the
        tile of C^T that torch asks cuBLAS for: its first number runs along N),
        Inductor's name the Triton template; the durations are one unpaired launch each, for orientation,
        not a result."""
        torch = self.torch
        try:
            from torch.autograd import DeviceType
            from torch.profiler import ProfilerActivity, profile
        except ImportError as e:
            print(f"# kernel pass skipped: {e}")
            return
        print("# the kernels each contender launched (one call under torch.profiler, after all timing)")
        for dtype, scaling, fam, (m, n, k), contenders in self.timed:
            if self.left() < 5:
                print("# kernel pass stopped: the budget is spent")
                return
            for name, fn in contenders:
                try:
                    fn()  # once unprofiled: the workspace as the timed calls left it (no clear of another shape's)
                    self.flush()
                    torch.cuda.synchronize()
                    with profile(activities=[ProfilerActivity.CUDA]) as prof:
                        fn()
                        torch.cuda.synchronize()
                    ks = [(e.name, e.time_range.elapsed_us()) for e in prof.events()
                          if getattr(e, "device_type", None) == DeviceType.CUDA]
                except Exception as e:  # noqa: BLE001  (the profiler is orientation only: say so, go on)
                    ks = [(f"not profiled ({type(e).__name__}: {first_line(e)[:100]})", 0.0)]
                text = "; ".join(f"{kname[:200]} {us:.1f}us" for kname, us in ks)
                self.row(mode="kernels", dtype=dtype, scaling=scaling, family=fam, m=m, n=n, k=k, contender=name,
                         kernels=text)
                print(f"  {dtype} {scaling or ''} {m}x{n}x{k} {name}: {text}")

    def bf16_shape(self, fam, shape):
        torch, gs = self.torch, self.gs
        m, n, k = shape
        step = gs.last_step("bf16")
        if self.refused("bf16", "", fam, shape, step):
            return
        a = torch.randn(m, k, generator=self.gen, device="cuda").to(torch.bfloat16)
        b = torch.randn(n, k, generator=self.gen, device="cuda").to(torch.bfloat16)
        out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        contenders = [(f"step {step}", lambda: gs.linear(a, b, out=out, step=step)),
                      ("torch.matmul", lambda: torch.matmul(a, b.t()))]
        notes = ["gemm_steps.linear", "cuBLAS through torch"]
        if not self.args.no_compile:
            self.add_compiled(contenders, notes, "bf16", lambda x, y: torch.matmul(x, y.t()), (a, b), shape, "",
                              "max-autotune, Triton templates")
        self.check_and_time("bf16", "", fam, shape, step, contenders, notes, out, torch.matmul(a, b.t()),
                            "torch.matmul")

    def fp8_shape(self, fam, shape, scaling):
        torch, gs = self.torch, self.gs
        m, n, k = shape
        step = gs.last_step("fp8", scaling)
        if self.refused("fp8", scaling, fam, shape, step):
            return
        qa = (torch.randn(m, k, generator=self.gen, device="cuda")).to(torch.float8_e4m3fn)
        qb = (torch.randn(n, k, generator=self.gen, device="cuda")).to(torch.float8_e4m3fn)
        kb, nb = -(-k // 128), -(-n // 128)
        if scaling == "per_tensor":
            sa = torch.full((1,), 0.5, device="cuda")
            sb = torch.full((1,), 0.25, device="cuda")
            ta, tb = sa.reshape(()), sb.reshape(())
        else:  # sfa: ceil(K/128) x M (M contiguous); sfb: ceil(N/128) x ceil(K/128) (gemm_steps.linear_fp8)
            sa = torch.rand(kb, m, generator=self.gen, device="cuda") + 0.5
            sb = torch.rand(nb, kb, generator=self.gen, device="cuda") + 0.5
            ta, tb = sa.t(), sb.t()  # torch: 1x128 scales as M x ceil(K/128), 128x128 as ceil(K/128) x ceil(N/128)
        out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        contenders = [(f"step {step}", lambda: gs.linear_fp8(qa, qb, sa, sb, out=out, step=step, scaling=scaling))]
        notes = ["gemm_steps.linear_fp8"]

        def smm(x, y, s1, s2):
            return torch._scaled_mm(x, y.t(), scale_a=s1, scale_b=s2, out_dtype=torch.bfloat16)
        tries = [(ta, tb)]
        if scaling == "block":  # newer torch wants the 128x128 scales' rows padded to a multiple of 4 K blocks
            padded = torch.zeros(nb, -(-kb // 4) * 4, device="cuda")
            padded[:, :kb] = sb
            tries.insert(0, (ta, padded[:, :kb].t()))
        errors = []
        for ta_, tb_ in tries:
            try:
                smm(qa, qb, ta_, tb_)
                torch.cuda.synchronize()
                ta, tb = ta_, tb_
                contenders.append(("torch._scaled_mm", lambda x=ta_, y=tb_: smm(qa, qb, x, y)))
                notes.append("cuBLASLt through torch, the same scales")
                break
            except (RuntimeError, NotImplementedError, ValueError, TypeError) as e:
                errors.append(first_line(e)[:160])
        else:
            msg = " | ".join(errors)
            print(f"  torch._scaled_mm refuses {m}x{n}x{k} ({scaling}): {msg}")
            self.row(mode="paired", dtype="fp8", scaling=scaling, family=fam, m=m, n=n, k=k, contender="torch._scaled_mm",
                     note=f"refused: {msg}")
        if scaling == "per_tensor" and len(contenders) > 1 and not self.args.no_compile:
            self.add_compiled(contenders, notes, "fp8", smm, (qa, qb, ta, tb), shape, " of _scaled_mm",
                              "max-autotune of _scaled_mm, Triton templates")
        # The oracle: the dequantized product in fp32 (scales applied per block for block scaling).
        af, bf = qa.float(), qb.float()
        if scaling == "per_tensor":
            ref = (af @ bf.t()) * (sa * sb)
        else:
            rows_a = sa.t().repeat_interleave(128, dim=1)[:, :k]                  # M x K
            rows_b = sb.repeat_interleave(128, dim=0)[:n].repeat_interleave(128, dim=1)[:, :k]  # N x K
            ref = (af * rows_a) @ (bf * rows_b).t()
        self.check_and_time("fp8", scaling, fam, shape, step, contenders, notes, out, ref, "the fp32 oracle")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="build/bench_torch.csv", help="the CSV written (default %(default)s)")
    ap.add_argument("--families", default=",".join(FAMILIES), help="of the sweep's families, and square")
    ap.add_argument("--dtypes", default="bf16,fp8", help="bf16, fp8 (per-tensor and block-scaled)")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--budget-s", type=float, default=540.0)
    ap.add_argument("--compile-reserve-s", type=float, default=150.0,
                    help="no new torch.compile once less than this is left of the budget")
    ap.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    ap.add_argument("--sleep-cycles", type=int, default=0,
                    help="the GPU sleep that opens a round (0: as long as the host took to queue the last round)")
    ap.add_argument("--quick", action="store_true", help="a few shapes, for a check of the script")
    ap.add_argument("--no-kernels", action="store_true",
                    help="leave out the closing pass that names the kernels each contender launched (torch.profiler)")
    args = ap.parse_args()
    if args.rounds < 3:
        need("--rounds must be at least 3 (quartiles)")
    if not (math.isfinite(args.budget_s) and args.budget_s > 0):
        need(f"--budget-s must be a positive number of seconds, got {args.budget_s}")
    if not (math.isfinite(args.compile_reserve_s) and args.compile_reserve_s >= 0):
        need(f"--compile-reserve-s must be a number of seconds >= 0, got {args.compile_reserve_s}")
    if args.sleep_cycles < 0:
        need(f"--sleep-cycles must be >= 0 (0: sized from the host's time), got {args.sleep_cycles}")
    if not [f for f in args.families.split(",") if f.strip()]:
        need("--families names no family (the sweep's decode, ragged, ..., or square)")
    if not [d for d in args.dtypes.split(",") if d.strip()]:
        need("--dtypes names no dtype (bf16, fp8)")
    try:  # the CSV's place, made and checked before minutes of work go into it (Bench opens it)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a"):
            pass
    except OSError as e:
        need(f"cannot write --out {args.out}: {e.strerror or e}")
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    for d in dtypes:
        if d not in ("bf16", "fp8"):
            need(f"--dtypes: {d!r} is not bf16 or fp8")
    shapes = shapes_of([f.strip() for f in args.families.split(",") if f.strip()], args.quick)
    try:
        import torch
    except ImportError:
        need("needs PyTorch (pip install torch) and an NVIDIA Hopper GPU; no torch in this python3")
    if not torch.cuda.is_available():
        need("needs an NVIDIA GPU (Hopper): torch sees no CUDA device here")
    # (The budget's clock starts when the Bench is built, after torch and CUDA are up: --budget-s is the
    # measuring's, not the imports'.)
    import gemm_steps as gs
    try:
        gs.last_step("bf16")
    except gs.LibraryNotFoundError as e:
        need(str(e))
    if torch.cuda.get_device_capability() != (9, 0):
        need(f"the bf16 and fp8 steps run on compute capability 9.0; this GPU is {torch.cuda.get_device_name()}")
    torch.backends.cuda.matmul.allow_tf32 = False
    import torch._dynamo
    import torch._inductor.config as inductor_config
    inductor_config.max_autotune_gemm_backends = "TRITON"  # Inductor's Triton templates, not its cuBLAS fallback
    for name in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, name):  # one compile per shape (dynamic=False): past the default 8
            setattr(torch._dynamo.config, name, 1 << 16)

    bench = Bench(torch, gs, args)
    print(f"# {bench.meta['gpu']}, torch {bench.meta['torch']}, triton {bench.meta['triton']}, "
          f"budget {args.budget_s:.0f} s, {args.rounds} rounds")
    bench.overhead()
    jobs = [("bf16", None)] * ("bf16" in dtypes) + [("fp8", "per_tensor"), ("fp8", "block")] * ("fp8" in dtypes)
    reserve = 10 if args.no_kernels else 40  # the kernel pass's share of the budget: a few seconds for the profiler
    for fam, shape in shapes:  # shape-major: a budget that runs out leaves whole shapes, every dtype
        for dtype, scaling in jobs:
            if bench.left() < reserve:
                print(f"{dtype} {scaling or ''} {fam} {'x'.join(map(str, shape))}: skipped, the budget is spent")
                continue
            if dtype == "bf16":
                bench.bf16_shape(fam, shape)
            else:
                bench.fp8_shape(fam, shape, scaling)
    if not args.no_kernels:
        bench.kernel_pass()
    bench.csv_file.close()
    print(f"# {len(bench.rows)} rows -> {args.out} in {time.monotonic() - bench.start:.0f} s")
    return bench.status


if __name__ == "__main__":
    sys.exit(main())
