#!/usr/bin/env python3
"""Draws docs/img/roofline.png: the H200's roofline with every step of a results CSV on it.

x is the arithmetic intensity of the problem against DRAM, FLOP per byte of compulsory traffic
(2MNK over reading A and B once and writing C once: what any kernel must move at least); every step
of one size and precision therefore sits on one vertical line, and its height is what it reached.
The roofs: DRAM bandwidth (4.8 TB/s datasheet; 4.3 TB/s measured device-to-device copy,
../shared/ANCHORS.md) and the compute peak, drawn twice: at the datasheet clock (bf16 dense: 540,672
FLOP per clock on 132 SMs, 989 TFLOP/s at 1.83 GHz; fp32 on CUDA cores: 33,792 FLOP per clock, 67
TFLOP/s at the 1.98 GHz boost clock) and
at the SM clock measured beside the step (the median over the CSV's step rows of that precision and
size), which under the 700 W cap is what the step could have had. Needs matplotlib."""
import argparse
import csv
import pathlib
import statistics
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("error: plot_roofline.py needs matplotlib (python3 -m pip install matplotlib)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
FLOP_PER_CLOCK = {"fp32": 132 * 128 * 2, "bf16": 540672}  # H200: 132 SMs
ELEM_BYTES = {"fp32": 4, "bf16": 2}
DRAM_TBPS = {"datasheet": 4.8, "measured copy": 4.3}
DATASHEET_GHZ = {"bf16": 1.83, "fp32": 1.98}  # bf16: the clock behind the datasheet's 989 TFLOP/s; fp32: max boost


def intensity(dtype, m, n, k):
    b = ELEM_BYTES[dtype]
    return 2.0 * m * n * k / (b * (m * k + n * k + m * n))


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
    fig, axes = plt.subplots(1, 2, figsize=(13, 6))
    colors = {"fp32": "tab:blue", "bf16": "tab:red"}
    for ax, dtype in zip(axes, ("fp32", "bf16")):
        mine = [r for r in rows if r["dtype"] == dtype]
        xs = [1, 30000]
        for name, tbps in DRAM_TBPS.items():
            ax.plot(xs, [x * tbps for x in xs], color="grey", linestyle="-" if name == "datasheet" else ":",
                    linewidth=1, label=f"DRAM {tbps} TB/s ({name})")
        ghz = DATASHEET_GHZ[dtype]
        peak = FLOP_PER_CLOCK[dtype] * ghz * 1e9 / 1e12
        ax.axhline(peak, color=colors[dtype], linewidth=1.2, label=f"peak at {ghz} GHz: {peak:.0f} TFLOP/s")
        for i, size in enumerate(sorted({int(r["m"]) for r in mine})):
            at = [r for r in mine if int(r["m"]) == size]
            x = intensity(dtype, size, size, size)
            clocks = [float(r["clock_mhz"]) for r in at if r["kernel"] == "step" and r.get("clock_mhz")]
            if clocks:
                mhz = statistics.median(clocks)
                roof = FLOP_PER_CLOCK[dtype] * mhz * 1e6 / 1e12
                ax.plot([x / 1.3, x * 1.3], [roof, roof], color="black", linestyle="--", linewidth=1)
                ax.text(x * 1.35, roof * (1.12 if i % 2 == 0 else 0.9), f"{size}^3: {roof:.0f} at {mhz:.0f} MHz",
                        fontsize=7, va="bottom" if i % 2 == 0 else "top")
            for r in at:
                if r["kernel"] == "step":
                    tf = float(r["tflops"])
                    ax.scatter([x], [tf], s=14, color=colors[dtype], zorder=3)
                    ax.text(x / 1.1, tf, r["step"], fontsize=6, ha="right", va="center")
            cub = [float(r["tflops"]) for r in at if r["kernel"] == "cublas"]
            if cub:
                ax.scatter([x], [statistics.median(cub)], marker="x", s=30, color="black", zorder=4)
        ax.scatter([], [], marker="x", color="black", label="cuBLAS (median over the steps' processes)")
        ax.plot([], [], color="black", linestyle="--", label="compute roof at the measured clock")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(1, 30000)
        ax.set_ylim(0.3, 3000)
        ax.set_xlabel("FLOP per byte of compulsory DRAM traffic\n(A and B read once, C written once)")
        ax.set_ylabel("TFLOP/s")
        ax.set_title(f"{dtype} steps at 4096^3 (left point) and 8192^3 (right)", fontsize=10)
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("The H200 roofline: every step sits far right of the ridge; what bounds it is the compute roof at the clock it got",
                 fontsize=10)
    fig.tight_layout()
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
