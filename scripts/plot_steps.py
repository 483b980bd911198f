#!/usr/bin/env python3
"""Draws docs/img/steps.png from a results CSV (scripts/bench.py's paired rows): TFLOP/s per step in
step order at each size on a log axis, fp32 and bf16 ladders together, each step's bar with the
interquartile range of its paired ratio to cuBLAS scaled to TFLOP/s, and the references measured
in the same processes drawn as lines. Needs matplotlib."""
import argparse
import csv
import pathlib
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("error: plot_steps.py needs matplotlib (python3 -m pip install matplotlib)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "steps.png"))
    args = ap.parse_args()
    with open(args.csv) as f:
        rows = [r for r in csv.DictReader(f) if r.get("tflops") and r.get("mode", "burst") == "burst"]
    if not rows:
        sys.exit(f"error: {args.csv}: no timed rows")
    sizes = sorted({int(r["m"]) for r in rows})
    steps = sorted({(r["step"], r["name"]) for r in rows if r["kernel"] == "step"})
    fig, axes = plt.subplots(1, len(sizes), figsize=(7 * len(sizes), 5.5), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        xs, ys, lo, hi, colors = [], [], [], [], []
        for i, (sid, name) in enumerate(steps):
            me = next((r for r in rows if r["step"] == sid and int(r["m"]) == size and r["kernel"] == "step"), None)
            cub = next((r for r in rows if r["step"] == sid and int(r["m"]) == size and r["kernel"] == "cublas"), None)
            if me is None:
                continue
            tf = float(me["tflops"])
            xs.append(i)
            ys.append(tf)
            # The spread of the paired ratio, as TFLOP/s at the reference's median.
            if cub and cub.get("step_ratio_q25"):
                ref = float(cub["tflops"])
                lo.append(max(tf - float(cub["step_ratio_q25"]) * ref, 0))
                hi.append(max(float(cub["step_ratio_q75"]) * ref - tf, 0))
            else:
                lo.append(0)
                hi.append(0)
            colors.append("#4477aa" if sid < "10" else "#cc6677")
        ax.bar(xs, ys, color=colors, yerr=[lo, hi], capsize=2)
        for x, y in zip(xs, ys):
            ax.text(x, y * 1.08, f"{y:.0f}" if y >= 10 else f"{y:.1f}", ha="center", fontsize=7)
        for ladder, style in (("fp32", ":"), ("bf16", "--")):
            for kernel, color in (("cublas", "black"), ("cublaslt_best", "gray")):
                refs = [r for r in rows if r["kernel"] == kernel and r["dtype"] == ladder and int(r["m"]) == size]
                if refs:
                    last = max(refs, key=lambda r: r["step"])
                    ax.axhline(float(last["tflops"]), color=color, linestyle=style, linewidth=1,
                               label=f"{kernel} {ladder} ({float(last['tflops']):.0f}, process of {last['step']})")
            cut = [r for r in rows if r["kernel"].startswith("cutlass") and r["dtype"] == ladder and int(r["m"]) == size]
            if cut:  # the faster configuration, in the process of the last step (like the other lines)
                last_step = max(r["step"] for r in cut)
                best = max((r for r in cut if r["step"] == last_step), key=lambda r: float(r["tflops"]))
                ax.axhline(float(best["tflops"]), color="green", linestyle=style, linewidth=1,
                           label=f"CUTLASS best ({float(best['tflops']):.0f}, process of {best['step']})")
        ax.set_yscale("log")
        ax.set_xticks(range(len(steps)))
        ax.set_xticklabels([f"{s} {n}" for s, n in steps], rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("TFLOP/s (log)")
        ax.set_title(f"M = N = K = {size}: fp32 (blue) and bf16 (red) steps, paired with the references")
        ax.legend(fontsize=6, loc="upper left")
    fig.tight_layout()
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
