#!/usr/bin/env python3
"""Draws docs/img/roofline.png: the H200's roofline with every step of a results CSV on it.

x is the arithmetic intensity of the problem against DRAM, FLOP per byte of compulsory traffic
(2MNK over reading A and B once and writing C once: what any kernel must move at least); every step
of one size and precision therefore sits on one vertical line, and its height is what it reached.
Each point's step id and TFLOP/s are written beside its column (4096^3 to the left, 8192^3 to the
right), stacked downwards from the column's compute roof in the order of the points' heights, with a
leader line to the point, so that the labels of the points crowded below the roof stay readable.
The roofs: DRAM bandwidth (4.8 TB/s: NVIDIA H200 datasheet, https://www.nvidia.com/en-us/data-center/h200/;
4.3 TB/s: device-to-device copy measured on this GPU, docs/speed_of_light.md) and the compute peak,
drawn twice: at the datasheet clock (bf16 dense: 989 TFLOP/s in the same datasheet, which is
540,672 FLOP per clock = 132 SMs x 4 tensor cores x 1024 FLOP at 1.83 GHz; fp32 on CUDA cores:
132 SMs x 128 lanes x 2 = 33,792 FLOP per clock, 67 TFLOP/s at the 1.98 GHz boost clock) and
at the SM clock measured beside the step (the median over the CSV's step rows of that precision and
size), which under the 700 W cap is what the step could have had. Needs matplotlib."""
import argparse
import csv
import math
import pathlib
import statistics
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("error: plot_roofline.py needs matplotlib (scripts/docs_deps.sh says how to install it)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
FLOP_PER_CLOCK = {"fp32": 132 * 128 * 2, "bf16": 132 * 4 * 1024}  # H200: 132 SMs (x 4 tensor cores for bf16) = 540,672
ELEM_BYTES = {"fp32": 4, "bf16": 2}
DRAM_TBPS = {"datasheet": 4.8, "measured copy": 4.3}
DATASHEET_GHZ = {"bf16": 1.83, "fp32": 1.98}  # bf16: the clock behind the datasheet's 989 TFLOP/s; fp32: max boost


def intensity(dtype, m, n, k):
    b = ELEM_BYTES[dtype]
    return 2.0 * m * n * k / (b * (m * k + n * k + m * n))


def stack(wanted, top, gap):
    """Label heights (log10) for points at log10 heights `wanted`, sorted from the highest down: each
    label as near its point as it can be, at most `top`, and at least `gap` below the one above."""
    out = []
    for w in wanted:
        out.append(min(w, top if not out else out[-1] - gap))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "roofline.png"))
    args = ap.parse_args()
    with open(args.csv) as f:
        rows = [r for r in csv.DictReader(f) if r.get("tflops") and r.get("mode", "burst") == "burst"
                and r["kernel"] in ("step", "cublas")]
    if not rows:
        sys.exit(f"error: {args.csv}: no timed rows")
    ylim, xlim = (0.3, 3000), (1, 100000)
    fig, axes = plt.subplots(1, 2, figsize=(14, 7.5))
    fig.subplots_adjust(left=0.055, right=0.99, top=0.88, bottom=0.13, wspace=0.14)
    # Height of one label line in decades of the y axis (the axes' geometry is fixed above).
    ax_px = axes[0].get_position().height * fig.get_figheight() * fig.dpi
    fontsize = 7
    gap = (fontsize * 1.3 / 72 * fig.dpi) / ax_px * math.log10(ylim[1] / ylim[0])
    colors = {"fp32": "tab:blue", "bf16": "tab:red"}
    for ax, dtype in zip(axes, ("fp32", "bf16")):
        mine = [r for r in rows if r["dtype"] == dtype]
        xs = list(xlim)
        for name, tbps in DRAM_TBPS.items():
            ax.plot(xs, [x * tbps for x in xs], color="grey", linestyle="-" if name == "datasheet" else ":",
                    linewidth=1, label=f"DRAM {tbps} TB/s ({name})")
        ghz = DATASHEET_GHZ[dtype]
        peak = FLOP_PER_CLOCK[dtype] * ghz * 1e9 / 1e12
        ax.axhline(peak, color=colors[dtype], linewidth=1.2, label=f"compute peak at {ghz} GHz: {peak:.0f} TFLOP/s")
        sizes = sorted({int(r["m"]) for r in mine})
        for i, size in enumerate(sizes):
            at = [r for r in mine if int(r["m"]) == size]
            x = intensity(dtype, size, size, size)
            # The first column's labels go to its left, the others' to their right.
            left = i == 0 and len(sizes) > 1
            lx, ha = (x / 1.45, "right") if left else (x * 1.45, "left")
            top = math.log10(peak)
            clocks = [float(r["clock_mhz"]) for r in at if r["kernel"] == "step" and r.get("clock_mhz")]
            if clocks:
                mhz = statistics.median(clocks)
                roof = FLOP_PER_CLOCK[dtype] * mhz * 1e6 / 1e12
                ax.plot([x / 1.3, x * 1.3], [roof, roof], color="black", linestyle="--", linewidth=1)
                top = min(top - gap, math.log10(roof))
                # Just below its dashed line (which may lie on, or just under, the datasheet peak).
                ax.text(lx, roof / 10 ** (gap * 0.1), f"{size}^3 roof at {mhz:.0f} MHz: {roof:.0f}",
                        fontsize=fontsize, ha=ha, va="top", fontstyle="italic",
                        bbox=dict(facecolor="white", edgecolor="none", pad=0.5, alpha=0.85))
                top -= gap * 1.6
            points = sorted(((float(r["tflops"]), r["step"]) for r in at if r["kernel"] == "step"), reverse=True)
            ax.scatter([x] * len(points), [tf for tf, _ in points], s=14, color=colors[dtype], zorder=3)
            for (tf, sid), ly in zip(points, stack([math.log10(tf) for tf, _ in points], top, gap)):
                ax.annotate(f"{sid}: {tf:.0f}" if tf >= 10 else f"{sid}: {tf:.1f}", xy=(x, tf),
                            xytext=(lx, 10 ** ly), fontsize=fontsize, ha=ha, va="center",
                            arrowprops=dict(arrowstyle="-", color="grey", linewidth=0.5, shrinkA=1.5, shrinkB=2,
                                            relpos=(1.0, 0.5) if left else (0.0, 0.5)))
            cub = [float(r["tflops"]) for r in at if r["kernel"] == "cublas"]
            if cub:
                ax.scatter([x], [statistics.median(cub)], marker="x", s=30, color="black", zorder=4)
        ax.scatter([], [], s=14, color=colors[dtype], label="a step (label: step id: TFLOP/s)")
        ax.scatter([], [], marker="x", color="black", label="cuBLAS (median over the steps' processes)")
        ax.plot([], [], color="black", linestyle="--", label="compute roof at the measured clock")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
        ax.set_xlabel("FLOP per byte of compulsory DRAM traffic\n(A and B read once, C written once)")
        ax.set_ylabel("TFLOP/s")
        ax.set_title(f"{dtype} steps at " + " and ".join(f"{s}^3" for s in sizes)
                     + (" (left and right column)" if len(sizes) == 2 else ""), fontsize=10)
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle("The H200 roofline: every step sits far right of the ridge; what bounds it is the compute roof at the clock it got",
                 fontsize=10)
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
