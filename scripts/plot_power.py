#!/usr/bin/env python3
"""Draws docs/img/power.png from results/<gpu>_series.csv (scripts/bench.py's sustained runs): the SM
clock (top panel) and the board power (bottom panel) NVML reported against time while a kernel ran
back to back at 8192^3 (or the largest size present), with the power limit marked.

Only a few bf16 runs are drawn, so that each line can be told apart: by default the steps with the role
power in scripts/step_roles.tsv (21 and 22, the pair the book compares), the last step of the bf16 ladder
(the highest step id: 23 as of this writing), and the cuBLAS reference measured in the last step's process (--steps and
--reference choose others). A step's precision is read from the sustained rows next to the series
(results/<gpu>_sustained.csv, column dtype); without that file every step counts. The legend gives each
run's numbers as that file has them: TFLOP/s, the mean NVML SM clock and the mean power (from the energy
counter) over the second, settled half of the run, shaded; a run without a sustained row gets the means
of its own samples over that half. Needs matplotlib."""
import argparse
import csv
import pathlib
import statistics
import sys

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)

import steps as step_table  # noqa: E402

# (colour, line style) per drawn run, in legend order: colour-blind-safe (Paul Tol's "bright").
STYLES = [("#ee6677", "-"), ("#4477aa", "--"), ("#228833", "-."), ("black", ":"), ("#ccbb44", "-"),
          ("#66ccee", "--"), ("#aa3377", "-.")]


step_key = step_table.sort_key  # '09b' sorts after '09' and before '10'


def sustained_info(series_path):
    """({step: dtype}, max SM clock in MHz or None, {(step, kernel, m): row}) from the sustained rows beside
    the series CSV."""
    p = pathlib.Path(series_path)
    side = p.with_name(p.name.replace("_series.csv", "_sustained.csv"))
    if side == p or not side.exists():
        return {}, None, {}
    with open(side) as f:
        rows = list(csv.DictReader(f))
    dtypes = {r["step"]: r["dtype"] for r in rows if r.get("dtype")}
    clocks = [float(r["max_sm_clock_mhz"]) for r in rows if r.get("max_sm_clock_mhz")]
    by_run = {(r["step"], r["kernel"], int(r["m"])): r for r in rows if r.get("m")}
    return dtypes, (max(clocks) if clocks else None), by_run


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--size", type=int, help="M of the runs to draw (default: the largest)")
    ap.add_argument("--limit-w", type=float, default=700.0)
    ap.add_argument("--dtype", default="bf16", help="precision of the steps drawn (default bf16)")
    power = [s.id for s in reversed(step_table.with_role(step_table.load(), "power"))]
    ap.add_argument("--steps", nargs="*", default=power,
                    help=f"steps drawn besides the last one of the precision (default, the role power in "
                         f"scripts/step_roles.tsv: {' '.join(power)})")
    ap.add_argument("--reference", default="cublas",
                    help="reference kernel drawn from the last step's process (default cublas; '' for none)")
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
    dtypes, max_clock, sustained = sustained_info(args.csv)
    steps = sorted({sid for sid, kern in runs if kern == "step" and dtypes.get(sid, args.dtype) == args.dtype},
                   key=step_key)
    if not steps:
        sys.exit(f"error: {args.csv}: no {args.dtype} step at {size}")
    last = steps[-1]
    missing = [s for s in args.steps if (s, "step") not in runs]
    if missing:
        print(f"plot_power.py: {args.csv} has no {size}^3 series of step {', '.join(missing)}: not drawn",
              file=sys.stderr)
    chosen = [(s, "step") for s in sorted(set(args.steps) - {last}, key=step_key) if (s, "step") in runs]
    chosen.append((last, "step"))
    if args.reference and (last, args.reference) in runs:
        chosen.append((last, args.reference))

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(12, 7.4), sharex=True)
    t_end = max(float(s["t_s"]) for run in chosen for s in runs[run])
    dates = {sustained[(sid, kern, size)]["date"] for sid, kern in chosen if (sid, kern, size) in sustained}
    for (sid, kern), (color, style) in zip(chosen, STYLES):
        samples = sorted(runs[(sid, kern)], key=lambda s: float(s["t_s"]))
        t = [float(s["t_s"]) for s in samples]
        mhz = [float(s["sm_clock_mhz"]) for s in samples]
        watts = [float(s["power_w"]) for s in samples]
        shown = {"cublas": "cuBLAS", "cublaslt_best": "cuBLASLt best"}.get(kern, kern)
        name = f"step {sid}" if kern == "step" else f"{shown} (in step {sid}'s process)"
        row = sustained.get((sid, kern, size))
        if row:  # the sustained CSV's numbers: TFLOP/s, mean clock and mean power over the settled half
            label = (f"{name}: {float(row['tflops']):.0f} TFLOP/s, mean {float(row['clock_mhz']):.0f} MHz, "
                     f"{float(row['power_w']):.0f} W" + (f" (run of {row['date']})" if len(dates) > 1 else ""))
        else:  # no sustained row: the means of this run's own samples over its second half
            half = [(c, w) for ts, c, w in zip(t, mhz, watts) if ts >= t[-1] / 2]
            label = (f"{name}: mean {statistics.mean(c for c, _ in half):.0f} MHz, "
                     f"{statistics.mean(w for _, w in half):.0f} W (its samples)")
        lw = 1.6 if style != ":" else 1.9
        # NVML holds each value until its next refresh: draw the samples as steps, not as slopes.
        ax1.plot(t, mhz, color=color, linestyle=style, linewidth=lw, drawstyle="steps-post", label=label)
        ax2.plot(t, watts, color=color, linestyle=style, linewidth=lw, drawstyle="steps-post")
    for ax in (ax1, ax2):  # the second half of the run: what the sustained CSV's means cover
        ax.axvspan(t_end / 2, t_end, color="#eeeeee", zorder=0)
    ax1.text(t_end * 0.75, 0.9, "settled half: the legend's means", transform=ax1.get_xaxis_transform(),
             ha="center", va="top", fontsize=8.5, color="#555555")
    ax2.axhline(args.limit_w, color="#bb0000", linewidth=1.2, alpha=0.8)
    ax2.text(1.0, args.limit_w, f" power limit\n {args.limit_w:.0f} W", transform=ax2.get_yaxis_transform(),
             color="#bb0000", fontsize=8, va="center", ha="left")
    if max_clock:
        ax1.axhline(max_clock, color="grey", linewidth=1.0, alpha=0.8)
        ax1.text(1.0, max_clock, f" max SM clock\n {max_clock:.0f} MHz", transform=ax1.get_yaxis_transform(),
                 color="grey", fontsize=8, va="center", ha="left")
        lo, hi = ax1.get_ylim()
        ax1.set_ylim(lo, max(hi, max_clock + 40))
    lo, hi = ax2.get_ylim()
    ax2.set_ylim(lo, max(hi, args.limit_w + 20))
    for ax in (ax1, ax2):
        ax.grid(True, alpha=0.3)
    ax1.set_ylabel("SM clock (MHz, NVML)")
    ax2.set_ylabel("board power (W, NVML)")
    ax2.set_xlabel("seconds since the kernel started looping (NVML refreshes about every 100 ms)")
    ax1.set_title(f"Sustained {size}^3, {args.dtype}: each kernel looped on its own, clock and power as NVML saw them\n"
                  f"legend: TFLOP/s, mean SM clock and mean power over the settled half "
                  f"({pathlib.Path(args.csv).name.replace('_series.csv', '_sustained.csv')})", fontsize=11)
    ax1.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.04), ncol=2, frameon=False,
               title="runs of different dates: compare each step with the cuBLAS of its own run" if len(dates) > 1
               else None, title_fontsize=8)
    fig.tight_layout()
    fig.subplots_adjust(hspace=0.32, right=0.89)
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
