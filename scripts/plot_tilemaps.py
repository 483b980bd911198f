#!/usr/bin/env python3
"""Draws docs/img/tilemap_05.png and docs/img/tilemap_08.png: who computes which element of a block
tile of C, and who loads which element of the A and B tiles into shared memory, in steps 05 (2D
block tiling) and 08 (warptiling).

Each figure is laid out like the product: the A tile (BM x BK) left of the C tile (BM x BN), rows
aligned, and the B tile (BK x BN) above it, columns aligned; every cell is coloured by the warp of
the thread that computes (C) or loads (A, B) it, and two example threads are outlined in all three
panels (black and white): the elements a thread loads are not the ones it reads back to compute.
The tile sizes are read from the steps' source by `scripts/sass/sass.py constants NN` (the same
evaluator the SASS rules use, through scripts/step_constants.py); THREADS and the loop counts are
the kernels' own expressions of those constants, and the index formulas restate the kernels' lines:
  05: C  `tcol = t % (BN / TN), trow = t / (BN / TN)`: the TM x TN tile at (trow * TM, tcol * TN);
      sA `i = t + it * THREADS, r = i / BK, c = i % BK` for it < BM * BK / THREADS;
      sB `i = t + it * THREADS, r = i / BN, c = i % BN` for it < BK * BN / THREADS.
  08: C  `row0 = warp / (BN / WN) * WM + lane / WTC * 4`, `col0 = warp % (BN / WN) * WN + lane % WTC * 4`,
      float4 groups strided by SM = 4 * WTR rows and SN = 4 * WTC columns;
      A  float4 (ra + it * RA, ca..ca+3), `ra = t / (BK / 4), ca = t % (BK / 4) * 4`, RA = THREADS / (BK / 4),
         it < A4 = BM * BK / 4 / THREADS, stored transposed into sAT[k][m];
      B  float4 (rb + it * RB, cb..cb+3), `rb = t / (BN / 4), cb = t % (BN / 4) * 4`, RB = THREADS / (BN / 4),
         it < B4 = BK * BN / 4 / THREADS.
Every map is checked to cover its tile exactly once. Needs matplotlib; no GPU and no build."""
import argparse
import pathlib

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from step_constants import constants  # noqa: E402

CMAP = plt.get_cmap("tab10")


def owners(cells_of, threads, rows, cols, what):
    """{(r, c): thread} from cells_of(t) -> [(r, c)], checked to cover rows x cols exactly once."""
    out = {}
    for t in range(threads):
        for rc in cells_of(t):
            assert rc not in out, f"{what}: element {rc} loaded or computed twice"
            out[rc] = t
    assert len(out) == rows * cols and all(0 <= r < rows and 0 <= c < cols for r, c in out), \
        f"{what}: the threads must cover the {rows}x{cols} tile exactly once"
    return out


def panel(ax, rows, cols, owner, title, xlabel, ylabel):
    for (r, c), t in owner.items():
        ax.add_patch(Rectangle((c, r), 1, 1, facecolor=CMAP(t // 32 % 10), edgecolor="none"))
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)


def outline(ax, cells, color, width=1.4):
    for (r, c) in cells:
        ax.add_patch(Rectangle((c, r), 1, 1, fill=False, edgecolor=color, linewidth=width))


def figure(name, BM, BN, BK, threads, c_of, a_of, b_of, examples, titles, out, cell):
    """The A | C layout with B above C, every element a square of `cell` inches; examples:
    [(thread, colour, label)]."""
    c_own = owners(c_of, threads, BM, BN, f"step {name} C")
    a_own = owners(a_of, threads, BM, BK, f"step {name} A")
    b_own = owners(b_of, threads, BK, BN, f"step {name} B")
    left, gap, right, bottom, top = 0.75, 0.12, 0.45, 1.05, 1.45  # inches
    W = left + (BK + BN) * cell + gap + right
    H = bottom + (BM + BK) * cell + gap + top
    fig = plt.figure(figsize=(W, H))
    box = lambda x, y, w, h: fig.add_axes([x / W, y / H, w / W, h / H])  # noqa: E731
    ax_a = box(left, bottom, BK * cell, BM * cell)
    ax_c = box(left + BK * cell + gap, bottom, BN * cell, BM * cell)
    ax_b = box(left + BK * cell + gap, bottom + BM * cell + gap, BN * cell, BK * cell)
    panel(ax_a, BM, BK, a_own, "", "k", "row of the block tile (m)")
    panel(ax_b, BK, BN, b_own, "", "", "k")
    panel(ax_c, BM, BN, c_own, "", "column of the block tile (n)", "")
    ax_b.xaxis.set_ticks_position("top")
    ax_c.tick_params(labelleft=False)
    ax_a.set_xticks(range(0, BK + 1, 4))
    ax_b.set_yticks(range(0, BK + 1, 4))
    ax_a.text(BK / 2, -0.6, "A", ha="center", va="bottom", fontsize=12, fontweight="bold")
    ax_b.text(BN + 0.6 * BK / 8 + 0.3, BK / 2, "B", ha="left", va="center", fontsize=12, fontweight="bold")
    ax_c.text(BN / 2, BM / 2, "C", ha="center", va="center", fontsize=28, fontweight="bold", color="white",
              alpha=0.5)
    for t, color, _ in examples:
        for ax, own in ((ax_a, a_own), (ax_b, b_own), (ax_c, c_own)):
            outline(ax, [rc for rc, who in own.items() if who == t], color)
    warps = (threads + 31) // 32
    handles = [Rectangle((0, 0), 1, 1, facecolor=CMAP(w % 10)) for w in range(warps)]
    labels = [f"warp {w} (threads {32 * w}-{32 * w + 31})" for w in range(warps)]
    # Each example as it looks in the panels: a square of its warp's colour with its outline (a legend patch is
    # too flat for a white outline to show; a square marker is not).
    handles += [Line2D([], [], linestyle="none", marker="s", markersize=14, markerfacecolor=CMAP(t // 32 % 10),
                       markeredgecolor=color, markeredgewidth=2.6) for t, color, _ in examples]
    labels += [f"{label} ({color} outline)" for _, color, label in examples]
    fig.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.3 / W, 0.05 / H), fontsize=8, ncol=3,
               frameon=False)
    fig.text(0.5, 1 - 0.12 / H, titles[0], fontsize=11, va="top", ha="center")
    fig.text(0.25 / W, 1 - 0.5 / H, titles[1], fontsize=8, va="top", ha="left", family="monospace")
    fig.savefig(out, dpi=100)
    plt.close(fig)
    print(f"wrote {out}")


def step05(out):
    k = constants("05")
    BM, BN, BK, TM, TN = k["BM"], k["BN"], k["BK"], k["TM"], k["TN"]
    threads = (BM // TM) * (BN // TN)  # Tiles::THREADS

    def c_of(t):
        trow, tcol = t // (BN // TN), t % (BN // TN)
        return [(trow * TM + i, tcol * TN + j) for i in range(TM) for j in range(TN)]

    def a_of(t):
        return [((t + it * threads) // BK, (t + it * threads) % BK) for it in range(BM * BK // threads)]

    def b_of(t):
        return [((t + it * threads) // BN, (t + it * threads) % BN) for it in range(BK * BN // threads)]

    ex = [(0, "black", "thread 0"), (17, "white", "thread 17")]
    text = (f"C (right): thread t computes the {TM}x{TN} tile at (t / (BN/TN) * TM, t % (BN/TN) * TN)"
            f" = (t / {BN // TN} * {TM}, t % {BN // TN} * {TN})\n"
            f"sA (left, {BM}x{BK}): it < {BM * BK // threads}: i = t + it*{threads}, sA[i / {BK}][i % {BK}]"
            f"  (consecutive threads, consecutive k)\n"
            f"sB (top, {BK}x{BN}): it < {BK * BN // threads}: i = t + it*{threads}, sB[i / {BN}][i % {BN}]"
            f"  (consecutive threads, consecutive n)")
    figure("05", BM, BN, BK, threads, c_of, a_of, b_of, ex,
           (f"step 05: who computes the {BM}x{BN} block tile of C and who loads its sA and sB tiles "
            f"({threads} threads, colour: warp)", text), out, 0.13)


def step08(out):
    k = constants("08")
    BM, BN, BK, WM, WN, TM, TN = k["BM"], k["BN"], k["BK"], k["WM"], k["WN"], k["TM"], k["TN"]
    WTR, WTC = WM // TM, WN // TN
    SM, SN = 4 * WTR, 4 * WTC
    threads = (BM // WM) * (BN // WN) * 32  # Tiles::THREADS
    A4, B4 = BM * BK // 4 // threads, BK * BN // 4 // threads
    RA, RB = threads // (BK // 4), threads // (BN // 4)

    def c_of(t):
        warp, lane = t // 32, t % 32
        row0 = warp // (BN // WN) * WM + lane // WTC * 4
        col0 = warp % (BN // WN) * WN + lane % WTC * 4
        return [(row0 + a * SM + i, col0 + b * SN + j) for a in range(TM // 4) for i in range(4)
                for b in range(TN // 4) for j in range(4)]

    def a_of(t):
        ra, ca = t // (BK // 4), t % (BK // 4) * 4
        return [(ra + it * RA, ca + j) for it in range(A4) for j in range(4)]

    def b_of(t):
        rb, cb = t // (BN // 4), t % (BN // 4) * 4
        return [(rb + it * RB, cb + j) for it in range(B4) for j in range(4)]

    ex = [(32 + 0, "black", "warp 1, lane 0 (thread 32)"), (32 + 9, "white", "warp 1, lane 9 (thread 41)")]
    text = (f"C (right): {BM // WM}x{BN // WN} warp tiles of {WM}x{WN}; lanes as {WTR}x{WTC} thread tiles of "
            f"{TM}x{TN}, in float4 groups {SM} rows / {SN} columns apart\n"
            f"A (left, {BM}x{BK}, stored transposed in sAT[k][m]): float4 (ra + it*{RA}, ca..ca+3), "
            f"ra = t / {BK // 4}, ca = t % {BK // 4} * 4, it < {A4}\n"
            f"B (top, {BK}x{BN}): float4 (rb + it*{RB}, cb..cb+3), rb = t / {BN // 4}, cb = t % {BN // 4} * 4, "
            f"it < {B4}")
    figure("08", BM, BN, BK, threads, c_of, a_of, b_of, ex,
           (f"step 08: who computes the {BM}x{BN} block tile of C and who loads its A and B tiles "
            f"({threads} threads, colour: warp)", text), out, 0.072)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", default=str(ROOT / "docs" / "img"))
    args = ap.parse_args()
    out = pathlib.Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    step05(out / "tilemap_05.png")
    step08(out / "tilemap_08.png")


if __name__ == "__main__":
    main()
