#!/usr/bin/env python3
"""Draws docs/img/tilemap_05.png and docs/img/tilemap_08.png: who computes (and, for 05, who loads)
which element of a block tile, in steps 05 (2D block tiling) and 08 (warptiling).

The tile sizes are read from the steps' source by `scripts/sass/sass.py constants NN` (the same
evaluator the SASS rules use); the index formulas restate the kernels' own lines, cited in each
panel's caption: 05 `tcol = t % (BN / TN), trow = t / (BN / TN)` and its sA load loop `i = t + it *
THREADS, r = i / BK, c = i % BK`; 08 `row0 = warp / (BN / WN) * WM + lane / WTC * 4`, `col0 = warp %
(BN / WN) * WN + lane % WTC * 4`, float4 groups strided by SM = 4 * WTR rows and SN = 4 * WTC columns.
Needs matplotlib; no GPU and no build."""
import argparse
import pathlib
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("error: plot_tilemaps.py needs matplotlib (python3 -m pip install matplotlib)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from step_constants import constants  # noqa: E402


def grid(ax, rows, cols, owner, cmap, title, xlabel, ylabel):
    for r in range(rows):
        for c in range(cols):
            ax.add_patch(Rectangle((c, r), 1, 1, facecolor=cmap(owner(r, c) % 10), edgecolor="none"))
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)


def outline(ax, cells, color, label):
    for (r, c) in cells:
        ax.add_patch(Rectangle((c, r), 1, 1, fill=False, edgecolor=color, linewidth=1.4))
    ax.plot([], [], color=color, linewidth=2, label=label)


def step05(out):
    k = constants("05")
    BM, BN, BK, TM, TN = k["BM"], k["BN"], k["BK"], k["TM"], k["TN"]
    threads = (BM // TM) * (BN // TN)
    cmap = plt.get_cmap("tab10")
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 6.5), gridspec_kw={"width_ratios": [BN, BK * 3]})
    owner = lambda r, c: (r // TM * (BN // TN) + c // TN) // 32  # warp of the thread that computes C[r][c]
    grid(a, BM, BN, owner, cmap, f"step 05: the {BM}x{BN} block tile of C, coloured by warp;\n"
         f"thread t computes the {TM}x{TN} tile at (t / (BN/TN), t % (BN/TN)) ({threads} threads)",
         "column of the block tile", "row")
    for t, color in ((0, "black"), (17, "white")):
        tr, tc = t // (BN // TN), t % (BN // TN)
        outline(a, [(tr * TM + i, tc * TN + j) for i in range(TM) for j in range(TN)], color, f"thread {t}")
    a.legend(fontsize=8, loc="lower right")
    loader = lambda r, c: ((r * BK + c) % threads) // 32  # sA[r][c] is element i = r*BK + c, loaded by t = i % THREADS
    grid(b, BM, BK, loader, cmap, f"its sA tile ({BM}x{BK}), coloured by the warp\nthat loads it "
         f"(i = t + it*{threads}: r = i/{BK}, c = i%{BK})", "k", "row")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")


def step08(out):
    k = constants("08")
    BM, BN, WM, WN, TM, TN = k["BM"], k["BN"], k["WM"], k["WN"], k["TM"], k["TN"]
    WTR, WTC = WM // TM, WN // TN
    SM, SN = 4 * WTR, 4 * WTC
    warps = (BM // WM) * (BN // WN)
    cmap = plt.get_cmap("tab10")

    def cells(warp, lane):
        row0 = warp // (BN // WN) * WM + lane // WTC * 4
        col0 = warp % (BN // WN) * WN + lane % WTC * 4
        return [(row0 + a * SM + i, col0 + b * SN + j) for a in range(TM // 4) for i in range(4)
                for b in range(TN // 4) for j in range(4)]

    owner = {}
    for w in range(warps):
        for lane in range(32):
            for rc in cells(w, lane):
                owner[rc] = w
    assert len(owner) == BM * BN, "the thread tiles must cover the block tile exactly once"
    fig, ax = plt.subplots(figsize=(8.5, 8.5))
    grid(ax, BM, BN, lambda r, c: owner[(r, c)], cmap,
         f"step 08: the {BM}x{BN} block tile -> {warps} warp tiles of {WM}x{WN} (colour) -> 32 lanes as\n"
         f"{WTR}x{WTC} thread tiles of {TM}x{TN}, in float4 groups {SM} rows / {SN} columns apart",
         "column of the block tile", "row")
    for (w, lane), color in (((1, 0), "black"), ((1, 9), "white")):
        outline(ax, cells(w, lane), color, f"warp {w}, lane {lane}")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")


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
