#!/usr/bin/env python3
"""Draws docs/img/shapes.png from results/<gpu>_shapes.csv (`make bench-shapes`), any subset of its
steps and shapes.

Top: for every shape (x axis, grouped by family: decode, prefill, ragged, long K, short K; labelled
MxNxK), each step's paired ratio to the best reference of its process (the fastest of cuBLAS,
cuBLASLt's best of 8 and the CUTLASS configurations; above 1: the step is faster), one mark per step
with the interquartile range of the per-round ratios, lines at 1.0 and at 0.95 (issue 30's floor), and
each step's geometric mean over its timed shapes in the legend. A shape the step refused (exit 2) is an
x at the bottom. The ratio axes stop a little above CEILING (1.3): a mark above the top is an arrow
on the top edge, and a line in the corner gives their number and the highest ratio.

Bottom, the memory-bound view: for the shapes with M <= 32, the bytes of A, B and C (bf16, each moved
once) over the step's time, as a fraction of the HBM bandwidth, with the best reference of the same
process beside it and a line at 0.85 (issue 30's target). The bandwidth: a column hbm_tbps of the CSV
if the harness ever records one; else --hbm-tbps, by default 4.3 TB/s, the device-to-device copy
measured on the H200 (docs/machine.md; not one of the committed runs), named in the caption.

The random set (rows of family "random": issue 46's shapes, shape_sweep.random_shapes) is left out of
both and gets a third panel when the CSV has it: each step's ratio to the best reference against the
GEMM's FLOP (log scale), one marker per class of alignment, the same lines at 1.0 and 0.95. A held-out
draw (family "random-S": the same generator from seed S, bench.py --shapes --random-seed S) shares that
panel, its marks half filled (one fill style per seed) and its seed named in the legend and the title.
Needs matplotlib."""
import argparse
import csv
import pathlib
import sys

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)

import shape_sweep as sw  # noqa: E402

HBM_TBPS = 4.3
HBM_SOURCE = ("a device-to-device copy measured on this H200 (docs/machine.md; not one of the committed runs: "
              "the harness and results/ record no bandwidth)")
MEMORY_BOUND_M = 32
FLOOR, ROOF_TARGET = 0.95, 0.85  # issue 30: every shape >= 0.95x the best reference; M <= 32 >= 85 % of HBM
# The ratio panels stop here: a few shapes where the reference itself slows down (N % 8 != 0, 1.7-2.5x)
# would otherwise squeeze the 0.5-1.05 band every lesson is about. Those marks sit on the top edge as
# arrows (a marker no step or class uses), counted in a line in the panel's corner.
CEILING = 1.3


def ratio_limits(extent):
    """(bottom, top, pad) of a ratio panel holding the values `extent`: 6 % of the range as a margin,
    twice that below (the row of x marks), the range cut at CEILING."""
    top = min(max(extent), CEILING)
    pad = 0.06 * (top - min(extent))
    return min(extent) - 2 * pad, top + pad, pad


def clip_top(ax, points, hi_lim, pad):
    """Marks the (x, ratio, color) points above the panel's top hi_lim as arrows on its edge, and
    says in one line how many there are and the highest ratio."""
    over = [(x, y, color) for x, y, color in points if y > hi_lim]
    for x, y, color in over:
        ax.plot([x], [hi_lim - 0.35 * pad], marker=r"$\uparrow$", color=color, ms=9, zorder=5)
    if over:
        ax.text(0.995, 0.87, f"{len(over)} marks above {hi_lim:.2f}: arrows on the top edge "
                f"(up to {max(y for _, y, _ in over):.2f}x)", transform=ax.transAxes, ha="right", va="top",
                fontsize=7.5, bbox=dict(facecolor="white", edgecolor="none", alpha=0.8), zorder=6)


def measured_bandwidth(csv_path):
    """A bandwidth the CSV itself carries (a column hbm_tbps), or None."""
    with open(csv_path) as f:
        vals = {r.get("hbm_tbps") for r in csv.DictReader(f)} - {None, ""}
    try:
        return float(sorted(vals)[0]) if vals else None
    except ValueError:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "shapes.png"))
    ap.add_argument("--hbm-tbps", type=float, default=None, help=f"HBM bandwidth (default {HBM_TBPS}: {HBM_SOURCE})")
    args = ap.parse_args()
    if sw.pending_commit(args.csv):
        sys.exit(f"error: a benchmark was killed while committing into {pathlib.Path(args.csv).parent}: run "
                 f"`python3 scripts/results_io.py --recover {pathlib.Path(args.csv).parent}` first")
    res = sw.read_results(args.csv)
    if not res:
        sys.exit(f"error: {args.csv}: no step rows")
    in_csv = measured_bandwidth(args.csv)
    if args.hbm_tbps:
        tbps, source = args.hbm_tbps, "given with --hbm-tbps"
    elif in_csv:
        tbps, source = in_csv, "measured by the harness (the CSV's hbm_tbps)"
    else:
        tbps, source = HBM_TBPS, HBM_SOURCE

    rand = [r for r in res if sw.is_random_family(r["family"])]
    all_res, res = res, [r for r in res if not sw.is_random_family(r["family"])]  # the random draws: their own panel
    shapes = sorted({(r["m"], r["n"], r["k"]) for r in res},
                    key=lambda s: sw.shape_key(next(r for r in res if (r["m"], r["n"], r["k"]) == s)))
    fam = {(r["m"], r["n"], r["k"]): r["family"] for r in res}
    steps = sorted({r["step"] for r in all_res}, key=sw.step_key)
    names = {r["step"]: r["name"] for r in all_res}
    colors, markers = plt.get_cmap("tab10"), "osD^v<>p*h"
    width = max(10.0, 0.42 * len(shapes) + 3)
    if rand:
        fig, (ax, bx, rx) = plt.subplots(3, 1, figsize=(width, 15.5), gridspec_kw={"height_ratios": [3, 2, 2.5]})
    else:
        fig, (ax, bx) = plt.subplots(2, 1, figsize=(width, 10.5), gridspec_kw={"height_ratios": [3, 2]})

    # --- top: ratio to the best reference, per shape --------------------------------------------------
    xs = {s: i for i, s in enumerate(shapes)}
    offset = {sid: (j - (len(steps) - 1) / 2) * min(0.6 / max(len(steps), 1), 0.2) for j, sid in enumerate(steps)}
    extent = [FLOOR, 1.0]
    untimed = []  # (step, its index, its results without a ratio): drawn once the y range is known
    above = []  # (x, ratio, color) of every mark: those past CEILING are drawn on the top edge
    for j, sid in enumerate(steps):
        mine = [r for r in res if r["step"] == sid]
        if not mine:
            continue
        ok = [r for r in mine if r["ratio"] is not None]
        gm = sw.geomean([r["ratio"] for r in ok])
        lost = len(mine) - len(ok)
        lab = (f"step {sid} {names[sid]}: geomean {gm:.3f}x over {len(ok)} shapes" if gm else f"step {sid} {names[sid]}: no timed shape")
        lab += f" ({lost} not timed)" if lost else ""
        x = [xs[(r["m"], r["n"], r["k"])] + offset[sid] for r in ok]
        y = [r["ratio"] for r in ok]
        lo = [max(r["ratio"] - (r["q25"] if r["q25"] is not None else r["ratio"]), 0) for r in ok]
        hi = [max((r["q75"] if r["q75"] is not None else r["ratio"]) - r["ratio"], 0) for r in ok]
        extent += [v - a for v, a in zip(y, lo)] + [v + b for v, b in zip(y, hi)]
        above += [(xx, v, colors(j % 10)) for xx, v in zip(x, y)]
        ax.errorbar(x, y, yerr=[lo, hi], fmt=markers[j % len(markers)], color=colors(j % 10), ms=6, capsize=2,
                    elinewidth=0.9, label=lab, zorder=3)
        bad = [r for r in mine if r["ratio"] is None]
        if bad:
            untimed.append((sid, j, bad))
    lo_lim, hi_lim, pad = ratio_limits(extent)
    ax.set_ylim(lo_lim, hi_lim)
    clip_top(ax, above, hi_lim, pad)
    for sid, j, bad in untimed:
        ax.plot([xs[(r["m"], r["n"], r["k"])] + offset[sid] for r in bad], [lo_lim + pad * 0.8] * len(bad), "x",
                color=colors(j % 10), ms=9, mew=2, zorder=4)
    if untimed:
        ax.plot([], [], "x", color="grey", ms=9, mew=2, label="not timed: refused by the step (exit 2) or failed")
    ax.axhline(1.0, color="black", linewidth=1.5, zorder=2, label="1.0: level with the best reference")
    ax.axhline(FLOOR, color="black", linewidth=1.0, linestyle="--", zorder=2, label=f"{FLOOR}: issue 30's floor")
    families(ax, shapes, fam, lo_lim, hi_lim)
    ax.set_xticks(range(len(shapes)))
    ax.set_xticklabels([sw.label(*s) for s in shapes], rotation=90, fontsize=7)
    ax.set_xlim(-0.6, len(shapes) - 0.4)
    ax.set_ylabel("step speed / best reference speed\n(paired, median of rounds, IQR bars)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title("Each step against the best reference of its own process (the fastest of cuBLAS, cuBLASLt best-of-8 "
                 "and CUTLASS)\nabove 1: the step is faster", fontsize=10, loc="left")
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: (not labels[i].startswith("step "), i))  # the steps first
    ax.legend([handles[i] for i in order], [labels[i] for i in order], fontsize=7.5, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    if not shapes:
        ax.cla()
        ax.text(0.5, 0.5, f"no shape of the sweep in {pathlib.Path(args.csv).name}", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()

    # --- bottom: M <= 32, fraction of the HBM bandwidth ----------------------------------------------
    small = [s for s in shapes if s[0] <= MEMORY_BOUND_M]
    if not small:
        bx.text(0.5, 0.5, f"no shape of the sweep with M <= {MEMORY_BOUND_M} in {pathlib.Path(args.csv).name}",
                ha="center", va="center", transform=bx.transAxes)
        bx.set_axis_off()
    else:
        sx = {s: i for i, s in enumerate(small)}
        top = 1.0
        for j, sid in enumerate(steps):
            mine = [r for r in res if r["step"] == sid and (r["m"], r["n"], r["k"]) in sx and r["ms"]]
            frac = [sw.gemm_bytes(r["m"], r["n"], r["k"]) / (r["ms"] * 1e-3) / (tbps * 1e12) for r in mine]
            ref = [(r, sw.gemm_bytes(r["m"], r["n"], r["k"]) / (r["best_ms"] * 1e-3) / (tbps * 1e12))
                   for r in mine if r["best_ms"]]
            top = max([top] + frac + [f for _, f in ref])
            bx.plot([sx[(r["m"], r["n"], r["k"])] + offset[sid] for r in mine], frac, markers[j % len(markers)],
                    color=colors(j % 10), ms=6, label=f"step {sid}", zorder=3)
            bx.plot([sx[(r["m"], r["n"], r["k"])] + offset[sid] for r, _ in ref], [f for _, f in ref],
                    markers[j % len(markers)], mfc="none", color="grey", ms=7,
                    label=f"best reference in step {sid}'s process", zorder=2)
        bx.axhline(1.0, color="black", linewidth=1.2, label=f"{tbps} TB/s")
        bx.axhline(ROOF_TARGET, color="black", linewidth=1.0, linestyle="--", label=f"{ROOF_TARGET}: issue 30's target")
        bx.set_ylim(0, top * 1.08)
        bx.set_xticks(range(len(small)))
        bx.set_xticklabels([sw.label(*s) for s in small], rotation=90, fontsize=7)
        bx.set_xlim(-0.6, len(small) - 0.4)
        bx.set_ylabel(f"(A + B + C bytes) / time\n/ {tbps} TB/s")
        bx.grid(True, axis="y", alpha=0.3)
        bx.set_title(f"Memory-bound view, M <= {MEMORY_BOUND_M}: achieved bytes per second as a fraction of the HBM "
                     f"bandwidth", fontsize=10, loc="left")
        bx.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    if rand:
        random_panel(rx, rand, steps, colors)
    fig.text(0.01, 0.005, f"HBM bandwidth {tbps} TB/s: {source}. Bytes: bf16 A (M x K), B (N x K) and C (M x N), "
             f"each moved once; data: {pathlib.Path(args.csv).name}.", fontsize=7.5, ha="left", va="bottom", wrap=True)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110, bbox_inches="tight")
    print(f"wrote {args.out}")


# A held-out draw's marks (family "random-S"): the class's marker, half filled, one fill style per seed in
# seed order; seed 46's set keeps the full (and, for N % 8 != 0, hollow) marks.
HELD_OUT_FILLS = ("bottom", "left", "top", "right")


def random_panel(rx, rand, steps, colors):
    """The random draws (seed 46's set, and any held-out draw, half filled): ratio to the best reference
    against 2MNK (log x), a color per step (as above), a marker per class; a shape not timed (refused or
    failed) is an x at the bottom."""
    marks = dict(zip(sw.RANDOM_CLASSES, "o^s"))
    seeds = [sw.random_seed_of(f) for f in sorted({r["family"] for r in rand}, key=sw.random_family_key)]
    held = [seed for seed in seeds if seed != sw.RANDOM_SEED]
    fills = {seed: HELD_OUT_FILLS[i % len(HELD_OUT_FILLS)] for i, seed in enumerate(held)}
    extent = [FLOOR, 1.0]
    above = []  # (2MNK, ratio, color): those past CEILING on the top edge
    for seed in seeds:
        draw = [r for r in rand if sw.random_seed_of(r["family"]) == seed]
        for j, sid in enumerate(steps):
            for cls in (*sw.RANDOM_CLASSES, None):
                ok = [r for r in draw if r["step"] == sid and r["ratio"] is not None
                      and sw.random_class(r["m"], r["n"], r["k"]) == cls]
                if not ok:
                    continue
                extent += [r["ratio"] for r in ok]
                above += [(2.0 * r["m"] * r["n"] * r["k"], r["ratio"], colors(j % 10)) for r in ok]
                style = (dict(mfc="none" if cls == "N%8!=0" else colors(j % 10)) if seed == sw.RANDOM_SEED
                         else dict(fillstyle=fills[seed], mfc=colors(j % 10), mfcalt="white"))
                rx.plot([2.0 * r["m"] * r["n"] * r["k"] for r in ok], [r["ratio"] for r in ok], marks.get(cls, "*"),
                        color=colors(j % 10), ms=5, alpha=0.8, zorder=3, **style)
    lo, hi, pad = ratio_limits(extent)
    rx.set_ylim(lo, hi)
    clip_top(rx, above, hi, pad)
    for j, sid in enumerate(steps):
        bad = [r for r in rand if r["step"] == sid and r["ratio"] is None]
        rx.plot([2.0 * r["m"] * r["n"] * r["k"] for r in bad], [lo + pad * 0.8] * len(bad), "x", color=colors(j % 10),
                ms=8, mew=2, zorder=4)
    for j, sid in enumerate(steps):
        if any(r["step"] == sid for r in rand):
            rx.plot([], [], "s", color=colors(j % 10), label=f"step {sid}")
    for cls in sw.RANDOM_CLASSES:
        rx.plot([], [], marks[cls], color="grey", mfc="none" if cls == "N%8!=0" else "grey",
                label=f"{cls}: {sw.RANDOM_CLASS_MEANING[cls]}")
    for seed in held:
        rx.plot([], [], "o", color="grey", fillstyle=fills[seed], mfc="grey", mfcalt="white",
                label=f"half filled ({fills[seed]}): the held-out draw from seed {seed}")
    if any(r["ratio"] is None for r in rand):
        rx.plot([], [], "x", color="grey", ms=8, mew=2, label="not timed: refused by the step (exit 2) or failed")
    rx.axhline(1.0, color="black", linewidth=1.5, zorder=2)
    rx.axhline(FLOOR, color="black", linewidth=1.0, linestyle="--", zorder=2)
    rx.set_xscale("log")
    rx.set_xlabel("FLOP per GEMM (2MNK)")
    rx.set_ylabel("step speed / best reference speed\n(paired, median of rounds)")
    rx.grid(True, alpha=0.3)

    def n_shapes(seed):
        return len({(r["m"], r["n"], r["k"]) for r in rand if sw.random_seed_of(r["family"]) == seed})

    parts = ([f"The random set (issue 46): {n_shapes(sw.RANDOM_SEED)} shapes drawn from seed {sw.RANDOM_SEED}"]
             if sw.RANDOM_SEED in seeds else [])
    parts += [f"{'the' if parts else 'The'} held-out draw from seed {seed}: {n_shapes(seed)} shapes" for seed in held]
    rx.set_title(" and ".join(parts) + ", drawn at random; the same ratio, against the size of the GEMM",
                 fontsize=10, loc="left")
    rx.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def families(ax, shapes, fam, lo, hi):
    """Separators between the families and their names above the marks."""
    start = 0
    for i in range(1, len(shapes) + 1):
        if i == len(shapes) or fam[shapes[i]] != fam[shapes[start]]:
            if i < len(shapes):
                ax.axvline(i - 0.5, color="grey", linewidth=0.8, alpha=0.6)
            name = fam[shapes[start]] if i - start > 2 else fam[shapes[start]].replace(" ", "\n")  # narrow: two lines
            ax.text((start + i - 1) / 2, hi - 0.02 * (hi - lo), name, ha="center", va="top", fontsize=8.5,
                    fontweight="bold", color="dimgrey")
            start = i


if __name__ == "__main__":
    main()
