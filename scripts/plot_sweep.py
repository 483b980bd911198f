#!/usr/bin/env python3
"""Draws docs/img/sweep.png from results/<gpu>_sweep.csv: for every shape of the sweep, the last step
of each ladder against each reference measured paired in the same process (ratio > 1: the step is
faster), with the interquartile range of the per-round ratios as error bars. The bars start at parity
(1.0, the thick line): each bar's length is how much faster (up) or slower (down) the step ran, and the
y range is the data's own, padded, so no bar is cut off and none is lengthened by a baseline below
the data (at least 0.9-1.1, so that a difference of a few per cent stays a short bar). The legend
sits outside the plot, right of it. Needs matplotlib."""
import argparse
import csv
import pathlib
import sys

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)

MIN_HALF_RANGE = 0.1  # the y axis spans at least 1 - 0.1 .. 1 + 0.1


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
    fig, axes = plt.subplots(len(steps), 1, figsize=(15, 4.2 * len(steps)), squeeze=False)
    colors = plt.get_cmap("tab10")
    for ax, sid in zip(axes[:, 0], steps):
        mine = [r for r in rows if r["step"] == sid]
        shapes = []
        for r in mine:
            key = (int(r["m"]), int(r["n"]), int(r["k"]))
            if key not in shapes:
                shapes.append(key)
        kernels = sorted({r["kernel"] for r in mine if r["kernel"] != "step"})
        width = 0.8 / max(len(kernels), 1)
        extent = [1.0]
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
                extent += [v - lo[-1], v + hi[-1]]
            # Bars from parity: bottom 1.0, height ratio - 1 (negative: the step is slower).
            ax.bar(xs, [y - 1.0 for y in ys], bottom=1.0, width=width, yerr=[lo, hi], capsize=2,
                   color=colors(j % 10), label=f"step {sid} / {kern}", error_kw=dict(linewidth=0.8))
        step_tf = {(int(r["m"]), int(r["n"]), int(r["k"])): float(r["tflops"]) for r in mine if r["kernel"] == "step"}
        ax.axhline(1.0, color="black", linewidth=1.6, zorder=3)
        ax.text(1.002, 1.0, "1.0: parity", transform=ax.get_yaxis_transform(), va="center", ha="left",
                fontsize=8, fontweight="bold")
        ax.set_xticks(range(len(shapes)))
        ax.set_xticklabels([f"{m}x{n}x{k}\n{step_tf.get((m, n, k), 0):.0f} TF/s" for m, n, k in shapes], fontsize=7,
                           rotation=20, ha="right")
        ax.set_xlim(-0.6, len(shapes) - 0.4)
        ax.set_ylabel("step speed / reference speed\n(paired; bars start at 1.0)")
        # The data's range, padded, but never less than 0.9-1.1: a 2 % difference is not drawn as a tall bar.
        pad = 0.08 * (max(extent) - min(extent))
        ax.set_ylim(min(min(extent) - pad, 1 - MIN_HALF_RANGE), max(max(extent) + pad, 1 + MIN_HALF_RANGE))
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_title(f"step {sid} ({mine[0]['name']}) against the references, per shape (above 1.0: the step is faster)",
                     fontsize=10)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.045, 1.0), borderaxespad=0)
    fig.tight_layout()
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
