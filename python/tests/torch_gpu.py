#!/usr/bin/env python3
"""The package's GPU tests with PyTorch (scripts/gpu_session.sh torch): every registered step called
through gemm_steps on torch tensors, checked against torch.

  bf16 steps   against torch.matmul in fp32 (TF32 off) of the same bf16 inputs, rounded to bf16 once:
               random-normal inputs within the harness's tolerance (common/harness/compare.hpp:
               2 u_bf16 |want| + 16 u_fp32 K), small-integer inputs exactly (==); the largest difference
               from torch.matmul's own bf16 result is printed beside it (cuBLAS's bf16-output GEMM is
               not a tight reference on skinny long-K shapes, cublas.hpp says why).
  fp8 steps    against the dequantized product in fp64 (the harness's oracle and fp8 tolerance), and
               against torch._scaled_mm with the same scales where torch takes them: per-tensor scales,
               and the block scales (1 x 128 A, 128 x 128 B) where this torch accepts them; a shape or
               layout torch refuses is a skip that says so.
  fp32 steps   against torch.matmul in fp32 (TF32 off), alpha and beta included.
on ragged and small-M shapes (each step's refused shapes must raise RefusedError), then the calling
conventions: a non-default stream (the inputs written on it behind a sleep: a launch on another
stream would read them too early), an explicit stream=, tensor views with an offset (and one off a
16-byte boundary, refused), NaN-filled outputs with a guard band, a workspace reused across shapes and
steps, and two streams at once. Ends with "torch tests: N passed, N failed, N skipped"; exit 1 on a
failure, 2 when there is no torch or no GPU.
Usage: python3 python/tests/torch_gpu.py [--budget SECONDS] [--steps 29,35] [--quick]"""
import argparse
import math
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

U_BF16, U_FP32, U_FP8ACC = 2.0 ** -8, 2.0 ** -24, 2.0 ** -13

results = {"passed": 0, "failed": 0, "skipped": 0}
START = time.monotonic()
ARGS = None


def report(status, name, detail=""):
    results[status] += 1
    word = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}[status]
    print(f"{word} {name}{': ' + detail if detail else ''}", flush=True)


def case(name, fn):
    """Runs one check; fn returns a detail string (pass), or raises Skip / AssertionError / anything."""
    if time.monotonic() - START > ARGS.budget:
        report("skipped", name, f"past the --budget of {ARGS.budget:.0f} s")
        return
    try:
        detail = fn()
        report("passed", name, detail or "")
    except Skip as e:
        report("skipped", name, str(e))
    except AssertionError as e:
        report("failed", name, str(e))
    except Exception as e:  # noqa: BLE001 - a test harness: every other error is a failure, with its trace
        report("failed", name, f"{type(e).__name__}: {e}")
        traceback.print_exc(limit=3)


class Skip(Exception):
    pass


def close(got, want, tol, what):
    """Every element of got within tol (a tensor or a number) of want; NaN fails. Returns a summary."""
    got, want = got.double(), want.double()
    bad = ~((got - want).abs() <= tol)
    n = int(bad.sum())
    err = (got - want).abs()
    finite = err[torch.isfinite(err)]
    worst = float(finite.max()) if finite.numel() else float("nan")
    if n:
        idx = bad.nonzero()[0].tolist()
        t = tol if isinstance(tol, (int, float)) else float(tol[tuple(idx)])
        raise AssertionError(f"{what}: {n} of {got.numel()} elements outside tolerance; first at {tuple(idx)}: "
                             f"got {float(got[tuple(idx)]):.6g}, want {float(want[tuple(idx)]):.6g}, tol {t:.3g}")
    return f"max |err| {worst:.3g}"


# ---- Inputs ---------------------------------------------------------------------------------------
def bf16_inputs(m, n, k, exact, gen):
    if exact:  # small integers: exact in bf16, every partial sum exact in fp32 (|sum| <= 4 K < 2^24)
        a = torch.randint(-2, 3, (m, k), generator=gen, device="cuda").to(torch.bfloat16)
        b = torch.randint(-2, 3, (n, k), generator=gen, device="cuda").to(torch.bfloat16)
    else:
        a = torch.randn(m, k, generator=gen, device="cuda").to(torch.bfloat16)
        b = torch.randn(n, k, generator=gen, device="cuda").to(torch.bfloat16)
    return a, b


def fp8_quantize(x, block_rows, block_cols):
    """x (R x C fp32) in e4m3 with one scale per block_rows x block_cols block (real = q * scale):
    (q, scales as a ceil(R/br) x ceil(C/bc) tensor)."""
    r, c = x.shape
    rb, cb = -(-r // block_rows), -(-c // block_cols)
    pad = torch.zeros(rb * block_rows, cb * block_cols, device=x.device)
    pad[:r, :c] = x
    blocks = pad.view(rb, block_rows, cb, block_cols)
    amax = blocks.abs().amax(dim=(1, 3)).clamp(min=1e-12)
    scale = amax / 448.0  # e4m3's largest finite value
    q = (blocks / scale[:, None, :, None]).view(rb * block_rows, cb * block_cols)[:r, :c]
    return q.to(torch.float8_e4m3fn), scale.float()


def dequant(q, scale, block_rows, block_cols):
    r, c = q.shape
    s = scale.repeat_interleave(block_rows, 0)[:r].repeat_interleave(block_cols, 1)[:, :c]
    return q.double() * s.double()


def fp8_inputs(m, n, k, scaling, gen):
    a = torch.randn(m, k, generator=gen, device="cuda")
    b = torch.randn(n, k, generator=gen, device="cuda")
    if scaling == "per_tensor":
        qa, sa = fp8_quantize(a, m, k)
        qb, sb = fp8_quantize(b, n, k)
        want = dequant(qa, sa, m, k) @ dequant(qb, sb, n, k).T
        return qa, qb, sa.reshape(1), sb.reshape(1), want
    qa, sa_rows = fp8_quantize(a, 1, 128)     # m x ceil(k/128): one scale per row and K block
    qb, sb = fp8_quantize(b, 128, 128)        # ceil(n/128) x ceil(k/128)
    want = dequant(qa, sa_rows, 1, 128) @ dequant(qb, sb, 128, 128).T
    sfa = sa_rows.t().contiguous()            # ceil(k/128) x m, m contiguous (registry.hpp)
    return qa, qb, sfa, sb.contiguous(), want


# ---- Shapes ---------------------------------------------------------------------------------------
# Ragged M and N, small M (decode), a K tail, K % 16 == 8 (step 28's padded copies), a full square.
BF16_SHAPES = [(1, 256, 512), (8, 1000, 1024), (13, 384, 264), (64, 4096, 2048), (127, 200, 264),
               (200, 136, 4104), (777, 1029, 520), (1024, 1024, 1024), (2048, 2048, 4104), (0, 64, 64),
               (64, 64, 100)]
FP8_SHAPES = [(1, 256, 512), (16, 1024, 2048), (64, 2048, 1024), (100, 300, 640), (127, 200, 272),
              (777, 1029, 512), (1024, 1024, 1024), (2048, 2048, 2048), (64, 64, 72)]
FP32_SHAPES = [(1, 256, 512), (13, 384, 264), (127, 200, 264), (777, 1029, 520), (512, 512, 512), (64, 64, 61)]
QUICK = 4  # --quick: the first shapes only


def shapes(all_shapes):
    return all_shapes[:QUICK] + [s for s in all_shapes if 0 in s or s[2] in (100, 72, 61)] if ARGS.quick else all_shapes


def refused_case(step, m, n, k, fn):
    why = gs.refusal(step, m, n, k)
    if why is None:
        return False
    def check():
        try:
            fn()
        except gs.RefusedError as e:
            return "refused as declared: " + str(e).split(": ", 1)[-1][:80]
        raise AssertionError(f"the step declares it refuses this shape ({why}), but the call ran")
    case(f"step {step} {m}x{n}x{k} refused", check)
    return True


def cc_skip(e):
    if isinstance(e, gs.RefusedError) and "compute capability" in str(e):
        raise Skip(str(e))
    raise e


# ---- bf16 -----------------------------------------------------------------------------------------
def bf16_step(step):
    gen = torch.Generator(device="cuda").manual_seed(int(step, 36))
    for m, n, k in shapes(BF16_SHAPES):
        if refused_case(step, m, n, k, lambda: gs.linear(torch.empty(m, k, dtype=torch.bfloat16, device="cuda"),
                                                         torch.empty(n, k, dtype=torch.bfloat16, device="cuda"),
                                                         step=step)):
            continue
        for exact in (True, False):
            def check():
                a, b = bf16_inputs(m, n, k, exact, gen)
                buf = torch.full((m + 1, n), float("nan"), dtype=torch.bfloat16, device="cuda")  # a guard row
                out = buf[:m]
                try:
                    gs.linear(a, b, out=out, step=step)
                except gs.RefusedError as e:
                    cc_skip(e)
                torch.cuda.synchronize()
                want = torch.matmul(a.float(), b.float().T).to(torch.bfloat16)
                assert torch.isnan(buf[m:].float()).all(), "a write past the end of out (the guard row changed)"
                if exact:
                    diff = int((out.float() != want.float()).sum())
                    assert diff == 0, f"exact inputs: {diff} of {m * n} elements differ from torch.matmul"
                    return "exact: equal to torch.matmul"
                tol = 2 * U_BF16 * want.double().abs() + 16 * U_FP32 * k
                s = close(out, want, tol, "vs torch.matmul (fp32, rounded)")
                vs_bf16 = float((out.float() - torch.matmul(a, b.T).float()).abs().max())
                return f"{s}; max |diff| from torch.matmul's bf16 result {vs_bf16:.3g}"
            case(f"bf16 step {step} {m}x{n}x{k} {'exact' if exact else 'random'}", check)


# ---- fp8 ------------------------------------------------------------------------------------------
def scaled_mm(qa, qb, sa, sb, scaling):
    """torch._scaled_mm with the same scales, or Skip naming why torch does not take them."""
    fn = getattr(torch, "_scaled_mm", None)
    if fn is None:
        raise Skip(f"this torch ({torch.__version__}) has no torch._scaled_mm")
    m, k = qa.shape
    n = qb.shape[0]
    if scaling == "per_tensor":
        tries = [("per-tensor", sa.reshape(()), sb.reshape(()))]
    else:
        # 1 x 128 A: an M x ceil(K/128) view with strides (1, M) (our sfa, transposed); 128 x 128 B:
        # scale_b.t() is ceil(N/128) x ceil(K/128), K blocks contiguous, its rows padded to a multiple
        # of 4 (newer torch) or not (older).
        kb, nb = sa.shape[0], sb.shape[0]
        l4 = -(-kb // 4) * 4
        padded = torch.zeros(nb, l4, device="cuda")
        padded[:, :kb] = sb
        tries = [("block, padded 128x128 rows", sa.t(), padded[:, :kb].t()), ("block", sa.t(), sb.t())]
    errors = []
    for what, scale_a, scale_b in tries:
        try:
            r = fn(qa, qb.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)
            return (r[0] if isinstance(r, tuple) else r), what
        except (RuntimeError, NotImplementedError, ValueError, TypeError) as e:
            errors.append(f"{what}: {str(e).splitlines()[0][:160]}")
    raise Skip(f"torch._scaled_mm ({torch.__version__}) refuses {m}x{n}x{k} with these scales: " + " | ".join(errors))


def fp8_step(step, scaling):
    gen = torch.Generator(device="cuda").manual_seed(int(step, 36))
    for m, n, k in shapes(FP8_SHAPES):
        def run_refused():
            qa = torch.zeros(m, k, device="cuda").to(torch.float8_e4m3fn)
            qb = torch.zeros(n, k, device="cuda").to(torch.float8_e4m3fn)
            if scaling == "per_tensor":
                sa = sb = torch.ones(1, device="cuda")
            else:
                sa = torch.ones(-(-k // 128), m, device="cuda")
                sb = torch.ones(-(-n // 128), -(-k // 128), device="cuda")
            gs.linear_fp8(qa, qb, sa, sb, step=step, scaling=scaling)
        if refused_case(step, m, n, k, run_refused):
            continue
        state = {}

        def check():
            qa, qb, sa, sb, want64 = fp8_inputs(m, n, k, scaling, gen)
            buf = torch.full((m + 1, n), float("nan"), dtype=torch.bfloat16, device="cuda")
            out = buf[:m]
            try:
                gs.linear_fp8(qa, qb, sa, sb, out=out, step=step, scaling=scaling)
            except gs.RefusedError as e:
                cc_skip(e)
            torch.cuda.synchronize()
            assert torch.isnan(buf[m:].float()).all(), "a write past the end of out (guard row changed)"
            want = want64.to(torch.bfloat16).double()
            tol = 2 * U_BF16 * want.abs() + 16 * U_FP8ACC * math.sqrt(k) * math.sqrt(math.ceil(k / 32))
            state.update(qa=qa, qb=qb, sa=sa, sb=sb, out=out.clone(), want=want, tol=tol)
            return close(out, want, tol, "vs the fp64 dequantized product") + " (fp64 oracle)"
        case(f"fp8 step {step} ({scaling}) {m}x{n}x{k} vs oracle", check)

        def vs_torch():
            if "out" not in state:
                raise Skip("the oracle check did not run")
            ref, what = scaled_mm(state["qa"], state["qb"], state["sa"], state["sb"], scaling)
            torch.cuda.synchronize()
            # Both are within tol of the oracle when both are right: they agree within twice that.
            s = close(state["out"], ref, 2 * state["tol"], f"vs torch._scaled_mm ({what})")
            return f"{s} (torch._scaled_mm, {what})"
        case(f"fp8 step {step} ({scaling}) {m}x{n}x{k} vs torch._scaled_mm", vs_torch)


# ---- fp32 -----------------------------------------------------------------------------------------
def fp32_step(step):
    gen = torch.Generator(device="cuda").manual_seed(int(step, 36))
    for m, n, k in shapes(FP32_SHAPES):
        if refused_case(step, m, n, k, lambda: gs.sgemm(torch.empty(m, k, device="cuda"), torch.empty(k, n, device="cuda"),
                                                        step=step)):
            continue
        def check():
            a = torch.randn(m, k, generator=gen, device="cuda")
            b = torch.randn(k, n, generator=gen, device="cuda")
            c0 = torch.randn(m, n, generator=gen, device="cuda")
            out = c0.clone()
            gs.sgemm(a, b, out=out, alpha=1.5, beta=-0.5, step=step)
            torch.cuda.synchronize()
            want = 1.5 * torch.matmul(a.double(), b.double()) - 0.5 * c0.double()
            tol = 16 * U_FP32 * k * 1.5 + 4 * U_FP32 * (0.5 * c0.double()).abs()
            return close(out, want, tol, "vs torch.matmul (fp64) with alpha 1.5, beta -0.5")
        case(f"fp32 step {step} {m}x{n}x{k} alpha/beta", check)


# ---- Calling conventions --------------------------------------------------------------------------
def conventions(bf16_last, fp8_block_last):
    gen = torch.Generator(device="cuda").manual_seed(7)
    m, n, k = 300, 520, 1024

    def reference(a, b):
        return torch.matmul(a.float(), b.float().T).to(torch.bfloat16)

    def tol(want):
        return 2 * U_BF16 * want.double().abs() + 16 * U_FP32 * k

    def non_default_stream():
        a_real, b = bf16_inputs(m, n, k, False, gen)
        a = torch.zeros_like(a_real)
        s = torch.cuda.Stream()
        torch.cuda.synchronize()
        with torch.cuda.stream(s):
            torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time ahead of the copy, on s alone
            a.copy_(a_real)                 # a is right only for work ordered after this on s
            out = gs.linear(a, b, step=bf16_last)
            queued = not s.query()          # still behind the sleep: the call did not wait for it
        s.synchronize()
        assert queued, "the stream was idle right after the call: the call synchronized (or the sleep was too short)"
        return close(out, reference(a_real, b), tol(reference(a_real, b)), "on torch.cuda.stream(s)") + \
            "; ran behind the stream's own work (queued, then right)"
    case("stream: torch's current stream (a non-default one)", non_default_stream)

    def explicit_stream():
        a_real, b = bf16_inputs(m, n, k, False, gen)
        a = torch.zeros_like(a_real)
        s = torch.cuda.Stream()
        torch.cuda.synchronize()
        out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        with torch.cuda.stream(s):
            torch.cuda._sleep(100_000_000)
            a.copy_(a_real)
        gs.linear(a, b, out=out, step=bf16_last, stream=s)  # the current stream is the default one here
        s.synchronize()
        want = reference(a_real, b)
        return close(out, want, tol(want), "stream=s")
    case("stream: stream= argument", explicit_stream)

    def offset_views():
        a_real, b_real = bf16_inputs(m, n, k, False, gen)
        big_a = torch.full((m + 3, k), float("nan"), dtype=torch.bfloat16, device="cuda")
        big_a[3:] = a_real
        a = big_a[3:]                                   # storage offset 3 * K elements (16-byte aligned)
        flat = torch.full((n * k + 40,), float("nan"), dtype=torch.bfloat16, device="cuda")
        b = flat[24:24 + n * k].view(n, k)              # offset 48 bytes
        b.copy_(b_real)
        out_big = torch.full((m + 7, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        out = out_big[5:5 + m]                          # offset 5 * N elements
        assert a.storage_offset() and b.storage_offset() and out.storage_offset()
        gs.linear(a, b, out=out, step=bf16_last)
        torch.cuda.synchronize()
        want = reference(a_real, b_real)
        assert torch.isnan(out_big[:5].float()).all() and torch.isnan(out_big[5 + m:].float()).all(), \
            "out's neighbours in the storage were written"
        return close(out, want, tol(want), "views with offsets") + "; neighbours untouched"
    case("views: a, b and out with storage offsets", offset_views)

    def misaligned_view():
        flat = torch.zeros(m * k + 8, dtype=torch.bfloat16, device="cuda")
        a = flat[3:3 + m * k].view(m, k)  # 6 bytes off: not 16-byte aligned
        b = torch.zeros(n, k, dtype=torch.bfloat16, device="cuda")
        try:
            gs.linear(a, b, step=bf16_last)
        except ValueError as e:
            assert "a's data pointer" in str(e), str(e)
            return "ValueError: " + str(e)[:90]
        raise AssertionError("a view 6 bytes off a 16-byte boundary was accepted")
    case("views: an offset off a 16-byte boundary is a ValueError", misaligned_view)

    def argument_errors():
        a, b = bf16_inputs(64, 64, 128, False, gen)
        checks = [(lambda: gs.linear(a.cpu(), b), ValueError, "a is on cpu"),
                  (lambda: gs.linear(a.float(), b), TypeError, "a has dtype torch.float32"),
                  (lambda: gs.linear(a, b.T), ValueError, "b must be row-major"),
                  (lambda: gs.linear(a, b[:, :100]), ValueError, "b must be row-major and packed"),
                  (lambda: gs.linear(a, b[:, :100].contiguous()), ValueError, "b has 100 columns"),
                  (lambda: gs.linear(a, b, out=torch.empty(64, 64, device="cuda")), TypeError, "out has dtype"),
                  (lambda: gs.linear(a, b, step="35"), gs.InvalidArgumentError, "computes in fp8"),
                  (lambda: gs.linear(a[:, :100].contiguous(), b[:, :100].contiguous()), gs.RefusedError, "K % 8")]
        for fn, exc, text in checks:
            try:
                fn()
            except exc as e:
                assert text in str(e), f"{exc.__name__} without {text!r}: {e}"
                continue
            raise AssertionError(f"no {exc.__name__} ({text})")
        return f"{len(checks)} bad calls raised, each naming its argument"
    case("arguments: torch tensors of the wrong device, dtype, layout, shape, step", argument_errors)

    def workspace_reuse():
        # The cached workspace of one stream serves shapes and steps in turn: split-K partials, stream-K
        # counters and step 28's padded copies (K % 16 == 8) each leave it for the next.
        plan = [(bf16_last, 64, 4096, 4096), (bf16_last, 2048, 2048, 4104), ("28", 200, 136, 4104),
                (bf16_last, 8, 1000, 1024), ("23", 777, 1029, 520), (bf16_last, 64, 4096, 4096)]
        worst = 0.0
        for rep in range(3):
            for step, mm, nn, kk in plan:
                a, b = bf16_inputs(mm, nn, kk, True, gen)
                out = gs.linear(a, b, step=step)
                torch.cuda.synchronize()
                want = reference(a, b)
                bad = int((out.float() != want.float()).sum())
                assert bad == 0, f"round {rep}, step {step} {mm}x{nn}x{kk}: {bad} elements differ (exact inputs)"
                worst = max(worst, bad)
        return f"{3 * len(plan)} calls over {len(plan)} shapes, all exact"
    case("workspace: one cached workspace reused across shapes and steps", workspace_reuse)

    def two_streams():
        s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
        work = [((64, 4096, 4096), s1), ((2048, 2048, 4104), s2)]
        inputs = [bf16_inputs(mm, nn, kk, True, gen) for (mm, nn, kk), _ in work]
        torch.cuda.synchronize()
        outs = []
        for rep in range(4):
            for ((mm, nn, kk), s), (a, b) in zip(work, inputs):
                with torch.cuda.stream(s):
                    outs.append((gs.linear(a, b, step=bf16_last), a, b))
        torch.cuda.synchronize()
        for out, a, b in outs:
            assert torch.equal(out, reference(a, b)), "a result differs (exact inputs) with two streams in flight"
        return f"{len(outs)} calls on two streams at once, each its own workspace, all exact"
    case("workspace: two streams in flight at once", two_streams)

    def fp8_views():
        mm, nn, kk = 256, 384, 1024
        qa, qb, sfa, sfb, want64 = fp8_inputs(mm, nn, kk, "block", gen)
        flat = torch.zeros(mm * kk + 64, device="cuda").to(torch.float8_e4m3fn)
        a = flat[32:32 + mm * kk].view(mm, kk)
        a.copy_(qa)
        out = gs.linear_fp8(a, qb, sfa, sfb, step=fp8_block_last)
        torch.cuda.synchronize()
        want = want64.to(torch.bfloat16).double()
        return close(out, want, 2 * U_BF16 * want.abs() + 16 * U_FP8ACC * math.sqrt(kk) * math.sqrt(kk / 32),
                     "fp8 with an offset view of A")
    case("views: fp8 A as a view with an offset (block scales)", fp8_views)


def main():
    global ARGS, torch, gs
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=420.0, help="stop starting checks after this many seconds")
    ap.add_argument("--steps", default="", help="comma-separated step ids (default: every registered step)")
    ap.add_argument("--quick", action="store_true", help="fewer shapes per step")
    ARGS = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("torch tests: no torch in this python3 (pip install torch); nothing run")
        print("torch tests: 0 passed, 0 failed, 1 skipped")
        return 2
    import gemm_steps as gs_module
    gs = gs_module
    if not torch.cuda.is_available():
        print("torch tests: torch sees no CUDA device; nothing run")
        print("torch tests: 0 passed, 0 failed, 1 skipped")
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"# torch {torch.__version__} (CUDA {torch.version.cuda}), {torch.cuda.get_device_name()}, "
          f"cc {'.'.join(map(str, torch.cuda.get_device_capability()))}; library {gs.library_path()}", flush=True)
    all_steps = gs.steps()
    chosen = [s for s in all_steps if not ARGS.steps or s.id in ARGS.steps.split(",")]
    for s in chosen:
        if s.dtype == "bf16":
            bf16_step(s.id)
        elif s.dtype == "fp8":
            fp8_step(s.id, s.scaling)
        else:
            fp32_step(s.id)
    conventions(gs.last_step("bf16"), gs.last_step("fp8", "block"))
    print(f"# {time.monotonic() - START:.0f} s")
    print(f"torch tests: {results['passed']} passed, {results['failed']} failed, {results['skipped']} skipped")
    return 1 if results["failed"] else 0


torch = gs = None

if __name__ == "__main__":
    sys.exit(main())
