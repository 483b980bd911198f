#!/usr/bin/env python3
"""Draws docs/img/sweep.png from results/<gpu>_sweep.csv: for every shape of the sweep, the last step
of each ladder against each reference measured paired in the same process (ratio > 1: the step is
faster), with the interquartile range of the per-round ratios as error bars. Needs matplotlib."""
import argparse
import csv
import pathlib
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("error: plot_sweep.py needs matplotlib (python3 -m pip install matplotlib)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "sweep.png"))
    args = ap.parse_args()
    with open(args.csv) as f:
        rows = [r for r in csv.DictReader(f) if r.get("tflops") and r.get("mode", "burst") == "burst"]
    if not rows:
        sys.exit(f"error: {args.csv}: no timed rows")
    steps = sorted({r["step"] for r in rows})
    fig, axes = plt.subplots(len(steps), 1, figsize=(13, 4.2 * len(steps)), squeeze=False)
    for ax, sid in zip(axes[:, 0], steps):
        mine = [r for r in rows if r["step"] == sid]
        shapes = []
        for r in mine:
            key = (int(r["m"]), int(r["n"]), int(r["k"]))
            if key not in shapes:
                shapes.append(key)
        kernels = sorted({r["kernel"] for r in mine if r["kernel"] != "step"})
        width = 0.8 / max(len(kernels), 1)
        for j, kern in enumerate(kernels):
            xs, ys, lo, hi = [], [], [], []
            for i, shp in enumerate(shapes):
                r = next((r for r in mine if (int(r["m"]), int(r["n"]), int(r["k"])) == shp and r["kernel"] == kern), None)
                if r is None:
                    continue
                v = float(r["step_ratio"])
                xs.append(i - 0.4 + width * (j + 0.5))
                ys.append(v)
                lo.append(max(v - float(r["step_ratio_q25"] or v), 0))
                hi.append(max(float(r["step_ratio_q75"] or v) - v, 0))
            ax.bar(xs, ys, width=width, yerr=[lo, hi], capsize=2, label=f"step {sid} / {kern}")
        step_tf = {(int(r["m"]), int(r["n"]), int(r["k"])): float(r["tflops"]) for r in mine if r["kernel"] == "step"}
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(shapes)))
        ax.set_xticklabels([f"{m}x{n}x{k}\n{step_tf.get((m, n, k), 0):.0f} TF/s" for m, n, k in shapes], fontsize=7,
                           rotation=20, ha="right")
        ax.set_ylabel("step speed / reference speed (paired)")
        lows = [float(r["step_ratio"]) for r in mine if r["kernel"] != "step"]
        ax.set_ylim(min(0.5, min(lows) - 0.05), max(1.2, max(lows) + 0.05))
        ax.set_title(f"step {sid} ({mine[0]['name']}) against the references, per shape")
        ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
