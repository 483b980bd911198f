#!/usr/bin/env python3
"""Draws docs/img/power.png from results/<gpu>_series.csv (scripts/bench.py's sustained runs): the SM
clock and the board power NVML reported against time while each kernel ran back to back at 8192^3
(or the largest size present), one colour per kernel, with the power limit. Needs matplotlib."""
import argparse
import csv
import pathlib
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("error: plot_power.py needs matplotlib (python3 -m pip install matplotlib)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv")
    ap.add_argument("--size", type=int, help="M of the runs to draw (default: the largest)")
    ap.add_argument("--limit-w", type=float, default=700.0)
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "power.png"))
    args = ap.parse_args()
    with open(args.csv) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"error: {args.csv}: no samples")
    size = args.size or max(int(r["m"]) for r in rows)
    runs = {}
    for r in rows:
        if int(r["m"]) == size:
            runs.setdefault((r["step"], r["kernel"]), []).append(r)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
    for (sid, kern), samples in sorted(runs.items()):
        t = [float(s["t_s"]) for s in samples]
        label = f"step {sid}" if kern == "step" else f"{kern} ({sid})"
        ax1.plot(t, [float(s["sm_clock_mhz"]) for s in samples], label=label, linewidth=1)
        ax2.plot(t, [float(s["power_w"]) for s in samples], label=label, linewidth=1)
    ax2.axhline(args.limit_w, color="red", linestyle="--", linewidth=0.8, label=f"power limit {args.limit_w:.0f} W")
    ax1.set_ylabel("SM clock (MHz, NVML)")
    ax2.set_ylabel("board power (W, NVML)")
    ax2.set_xlabel("seconds since the kernel started looping (NVML refreshes about every 100 ms)")
    ax1.set_title(f"Sustained {size}^3: each kernel back to back, clock and power as NVML saw them")
    ax1.legend(fontsize=7, ncol=3)
    ax2.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
