#!/usr/bin/env python3
"""Draws docs/img/steps.png from a results CSV (scripts/bench.py's paired rows): TFLOP/s per step in
step order at each size on a log axis, fp32 and bf16 ladders together, and the references measured
in the same processes drawn as lines.

Each bar is labelled, inside the bar (above it when the bar is too short), with its TFLOP/s and the
spread of its paired ratio to cuBLAS: the width of the interquartile range of the per-round ratios,
in % of their median (on a log axis that spread, a fraction of a per cent, is far thinner than a
line, so it is written out; the error bars are drawn too). A step that has no row at a size is
marked "not run", with the reason when the notes of the results' .meta.json give one (bench.py
writes "<step>_<name> skipped at <size>: <why>"). Needs matplotlib."""
import argparse
import csv
import json
import math
import pathlib
import re
import sys

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)

COLORS = {"fp32": "#4477aa", "bf16": "#cc6677"}


def step_key(sid):
    m = re.match(r"(\d+)(.*)", sid)
    return (int(m.group(1)), m.group(2)) if m else (10**9, sid)


def skipped(csv_path):
    """{(step, size): reason} from the notes of the .meta.json beside the CSV."""
    meta = pathlib.Path(csv_path).with_suffix(".meta.json")
    if not meta.exists():
        return {}
    out = {}
    for note in json.loads(meta.read_text()).get("notes", []):
        m = re.match(r"(\w+?)_\S*\s+skipped at (\d+)(?::\s*(.*))?$", note)
        if m:
            out[(m.group(1), int(m.group(2)))] = re.sub(r"\s*\(.*\)\s*$", "", m.group(3) or "")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "steps.png"))
    args = ap.parse_args()
    with open(args.csv) as f:
        rows = [r for r in csv.DictReader(f) if r.get("tflops") and r.get("mode", "burst") == "burst"]
    if not rows:
        sys.exit(f"error: {args.csv}: no timed rows")
    notes = skipped(args.csv)
    sizes = sorted({int(r["m"]) for r in rows})
    steps = sorted({(r["step"], r["name"], r["dtype"]) for r in rows if r["kernel"] == "step"},
                   key=lambda s: step_key(s[0]))
    ylim = (0.3, 1e4)  # the decade above ~1000 TFLOP/s holds the legend
    decades = math.log10(ylim[1] / ylim[0])
    fig, axes = plt.subplots(1, len(sizes), figsize=(8 * len(sizes), 6.5), squeeze=False, sharey=True)
    placed = []
    for ax, size in zip(axes[0], sizes):
        xs, ys, lo, hi, colors, labels = [], [], [], [], [], []
        for i, (sid, name, dtype) in enumerate(steps):
            me = next((r for r in rows if r["step"] == sid and int(r["m"]) == size and r["kernel"] == "step"), None)
            cub = next((r for r in rows if r["step"] == sid and int(r["m"]) == size and r["kernel"] == "cublas"), None)
            if me is None:
                why = notes.get((sid, size))
                # No value: the whole slot hatched (not a bar of any height), with the reason.
                ax.axvspan(i - 0.4, i + 0.4, facecolor="none", edgecolor="lightgrey", hatch="//", linewidth=0)
                ax.text(i, ylim[0] * 1.4, "not run" + (f": {why}" if why else ""), rotation=90, ha="center",
                        va="bottom", fontsize=7, color="black",
                        bbox=dict(facecolor="white", edgecolor="none", pad=1.0))
                continue
            tf = float(me["tflops"])
            xs.append(i)
            ys.append(tf)
            text = f"{tf:.0f}" if tf >= 10 else f"{tf:.1f}"
            # The spread of the paired ratio, as TFLOP/s at the reference's median.
            if cub and cub.get("step_ratio_q25") and float(cub["step_ratio"]) > 0:
                ref, q25, q75 = float(cub["tflops"]), float(cub["step_ratio_q25"]), float(cub["step_ratio_q75"])
                lo.append(max(tf - q25 * ref, 0))
                hi.append(max(q75 * ref - tf, 0))
                iqr = 100 * (q75 - q25) / float(cub["step_ratio"])
                text += f"  IQR {iqr:.1f}%" if iqr >= 0.05 else "  IQR <0.1%"
            else:
                lo.append(0)
                hi.append(0)
            colors.append(COLORS.get(dtype, "grey"))
            labels.append(text)
        ax.bar(xs, ys, color=colors, yerr=[lo, hi], capsize=3, error_kw=dict(linewidth=0.8))
        placed.append((ax, xs, ys, labels, colors))
        for ladder, style in (("fp32", ":"), ("bf16", "--")):
            for kernel, color in (("cublas", "black"), ("cublaslt_best", "gray")):
                refs = [r for r in rows if r["kernel"] == kernel and r["dtype"] == ladder and int(r["m"]) == size]
                if refs:
                    last = max(refs, key=lambda r: step_key(r["step"]))
                    ax.axhline(float(last["tflops"]), color=color, linestyle=style, linewidth=1,
                               label=f"{kernel} {ladder} ({float(last['tflops']):.0f}, process of {last['step']})")
            cut = [r for r in rows if r["kernel"].startswith("cutlass") and r["dtype"] == ladder and int(r["m"]) == size]
            if cut:  # the faster configuration, in the process of the last step (like the other lines)
                last_step = max((r["step"] for r in cut), key=step_key)
                best = max((r for r in cut if r["step"] == last_step), key=lambda r: float(r["tflops"]))
                ax.axhline(float(best["tflops"]), color="green", linestyle=style, linewidth=1,
                           label=f"CUTLASS best {ladder} ({float(best['tflops']):.0f}, process of {best['step']})")
        ax.set_yscale("log")
        ax.set_ylim(*ylim)
        ax.set_xlim(-0.6, len(steps) - 0.4)
        ax.set_xticks(range(len(steps)))
        ax.set_xticklabels([f"{s} {n}" for s, n, _ in steps], rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("TFLOP/s (log)")
        ax.set_title(f"M = N = K = {size}: fp32 (blue) and bf16 (red) steps, paired with the references", fontsize=10)
        ax.legend(fontsize=7, loc="upper left", ncol=2, title="references (lines)", title_fontsize=7)
    fig.text(0.5, 0.005, "bar labels: TFLOP/s, then the width of the interquartile range of the step's per-round "
             "speed ratio to cuBLAS (paired in one process), in % of its median", ha="center", fontsize=8)
    fig.tight_layout(rect=(0, 0.025, 1, 1))
    # Each label inside its bar, reading down from just below the top, where it fits (measured once the
    # layout is final); above the bar where it does not.
    renderer = fig.canvas.get_renderer()
    for ax, xs, ys, labels, colors in placed:
        for x, y, text, color in zip(xs, ys, labels, colors):
            # The box, in the bar's colour, hides a reference line where it crosses the label.
            t = ax.text(x, y / 10 ** (0.012 * decades), text, rotation=90, ha="center", va="top", fontsize=7,
                        color="white", bbox=dict(facecolor=color, edgecolor="none", pad=0.8))
            bottom_px = ax.transData.transform((x, ylim[0]))[1]
            if t.get_window_extent(renderer).y0 < bottom_px + 3:
                t.set_position((x, y * 10 ** (0.01 * decades)))
                t.set_va("bottom")
                t.set_color("black")
                t.get_bbox_patch().set_facecolor("white")
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
