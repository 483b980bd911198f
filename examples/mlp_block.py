#!/usr/bin/env python3
"""A transformer MLP block's forward with the series' last bf16 step, beside torch.matmul.

    h = silu(x @ W_gate.T) * (x @ W_up.T)      x: tokens x d_model, W_gate, W_up: d_ff x d_model
    y = h @ W_down.T                           W_down: d_model x d_ff

(the SwiGLU MLP of Llama-style models; the default sizes are Llama-3-8B's, d_model 4096, d_ff 14336).
Each projection is one C = A @ B.T, the steps' layout: gemm_steps.linear(x, W) is
torch.nn.functional.linear(x, W) without a bias. The script checks both forwards against an fp32
reference, then times them alternating launch by launch (CUDA events, median of --reps), for a
decode batch and a prefill batch.

    PYTHONPATH=python python3 examples/mlp_block.py [--tokens 1,16,128,2048] [--step 29] [--reps 50]

Needs PyTorch and an NVIDIA Hopper GPU (the bf16 steps run on compute capability 9.0 only); without
them it says so and exits with status 2."""
import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))


def need(what):
    print(f"mlp_block.py: {what}", file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", default="1,16,128,2048", help="batch sizes (rows of x), comma-separated")
    ap.add_argument("--d-model", type=int, default=4096)
    ap.add_argument("--d-ff", type=int, default=14336)
    ap.add_argument("--step", default=None, help="a bf16 step id (default: the last one)")
    ap.add_argument("--reps", type=int, default=50, help="timed forwards of each kind")
    args = ap.parse_args()

    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        need("needs PyTorch (pip install torch) and an NVIDIA GPU; no torch in this python3")
    if not torch.cuda.is_available():
        need("needs an NVIDIA GPU (Hopper: H100 or H200): torch sees no CUDA device here")
    import gemm_steps as gs
    try:
        step = args.step or gs.last_step("bf16")
    except gs.LibraryNotFoundError as e:
        need(str(e))
    cc = torch.cuda.get_device_capability()
    info = {s.id: s for s in gs.steps()}.get(step)
    if info is None or info.dtype != "bf16":
        need(f"step {step!r} is not a bf16 step")
    if info.required_cc and cc[0] * 10 + cc[1] != info.required_cc:
        need(f"step {step} runs on compute capability {info.required_cc // 10}.{info.required_cc % 10} only; "
             f"this GPU ({torch.cuda.get_device_name()}) is {cc[0]}.{cc[1]}")

    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator(device="cuda").manual_seed(0)
    d, f = args.d_model, args.d_ff
    # Weights as nn.Linear keeps them (out_features x in_features), scaled to keep activations ~1.
    w_gate = (torch.randn(f, d, generator=gen, device="cuda") / d ** 0.5).to(torch.bfloat16)
    w_up = (torch.randn(f, d, generator=gen, device="cuda") / d ** 0.5).to(torch.bfloat16)
    w_down = (torch.randn(d, f, generator=gen, device="cuda") / f ** 0.5).to(torch.bfloat16)

    def mlp_torch(x):
        return F.linear(F.silu(F.linear(x, w_gate)) * F.linear(x, w_up), w_down)  # torch.matmul(x, W.T)

    def mlp_steps(x):
        return gs.linear(F.silu(gs.linear(x, w_gate, step=step)) * gs.linear(x, w_up, step=step), w_down, step=step)

    def mlp_fp32(x):
        xf = x.float()
        return F.linear(F.silu(F.linear(xf, w_gate.float())) * F.linear(xf, w_up.float()), w_down.float())

    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, step {step} ({info.name}), "
          f"d_model {d}, d_ff {f}, bf16 in and out, fp32 accumulation")
    print(f"{'tokens':>7} {'rel err torch':>14} {'rel err step':>13} {'torch ms':>9} {'step ms':>8} "
          f"{'step TFLOP/s':>13} {'x torch':>8}")
    status = 0
    for tokens in (int(t) for t in args.tokens.split(",")):
        x = torch.randn(tokens, d, generator=gen, device="cuda").to(torch.bfloat16)
        ref = mlp_fp32(x)
        errs = []
        for fn in (mlp_torch, mlp_steps):
            y = fn(x).float()
            errs.append(float((y - ref).norm() / ref.norm()))  # relative RMS error against fp32
        # bf16 intermediates round h and y: both paths land near 2^-8 relative; a wrong result is ~1.
        if errs[1] > 4 * max(errs[0], 2 ** -9):
            print(f"tokens {tokens}: the step's forward is off: relative error {errs[1]:.3g}, torch's {errs[0]:.3g}")
            status = 1
        for _ in range(3):  # warm-up: cuBLAS heuristics, the step's workspace, caches
            mlp_torch(x), mlp_steps(x)
        times = {mlp_torch: [], mlp_steps: []}
        for _ in range(args.reps):  # alternating, as the harness pairs a step with its references
            for fn in (mlp_torch, mlp_steps):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn(x)
                end.record()
                end.synchronize()
                times[fn].append(start.elapsed_time(end))
        t_torch, t_step = statistics.median(times[mlp_torch]), statistics.median(times[mlp_steps])
        flops = 2.0 * tokens * d * f * 3
        print(f"{tokens:>7} {errs[0]:>14.3g} {errs[1]:>13.3g} {t_torch:>9.3f} {t_step:>8.3f} "
              f"{flops / t_step / 1e9:>13.1f} {t_torch / t_step:>8.3f}")
    print("# ms: median of the forward (three GEMMs and the SiLU-gated product); x torch > 1: the step is faster")
    return status


if __name__ == "__main__":
    sys.exit(main())
