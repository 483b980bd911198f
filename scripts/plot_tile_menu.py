#!/usr/bin/env python3
"""Draws docs/img/tile_menu.png: which tile step 25's menu (common/kernel_lib/tile_menu.hpp) picks over
an M x N map, on the H200's 132 SMs, with the (M, N) of issue 30's sweep (scripts/shape_sweep.py)
marked. The picks come from the same C++ function the launcher calls, printed by
build/bin/tile_menu_dump (scripts/tile_menu_dump.cpp; `make tile-menu-figure` builds and runs both).
K does not enter the pick (the split of a long K is decided afterwards on the chosen grid).
Needs matplotlib."""
import argparse
import csv
import io
import pathlib
import subprocess
import sys

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from shape_sweep import SHAPES  # noqa: E402
from style import BLUE, GREEN, YELLOW  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", default=str(ROOT / "build" / "bin" / "tile_menu_dump"))
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--max", type=int, default=16384, help="largest M and N drawn")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "tile_menu.png"),
                    help="the PNG to write (default: the book's figure; give another path to experiment)")
    a = ap.parse_args()
    try:
        r = subprocess.run([a.tool, str(a.sms), str(a.max), str(a.max)], capture_output=True, text=True)
    except OSError as e:
        sys.exit(f"error: cannot run {a.tool} ({e.strerror}); `make tile-menu-figure` builds it")
    if r.returncode != 0:
        sys.exit(f"error: {a.tool} exited {r.returncode}: {r.stderr.strip()}")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    if not rows or "bn" not in rows[0]:
        sys.exit(f"error: {a.tool} printed no rows of m,n,swap,bn,... (is it build/bin/tile_menu_dump?)")
    ms = sorted({int(r["m"]) for r in rows})
    ns = sorted({int(r["n"]) for r in rows})
    code = {(int(r["m"]), int(r["n"])): (0 if r["swap"] == "1" else (1 if r["bn"] == "64" else 2)) for r in rows}
    grid = [[code[(m, n)] for n in ns] for m in ms]
    edges = lambda v: [v[0] * 0.9] + [(x * y) ** 0.5 for x, y in zip(v, v[1:])] + [v[-1] * 1.1]
    fig, ax = plt.subplots(figsize=(7.2, 5.4))
    cmap = ListedColormap([YELLOW, GREEN, BLUE])
    ax.pcolormesh(edges(ns), edges(ms), grid, cmap=cmap, vmin=-0.5, vmax=2.5, shading="flat")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    seen = set()
    for m, n, k in SHAPES:
        if (m, n) in seen or m > a.max or n > a.max:
            continue
        seen.add((m, n))
        ax.plot(n, m, "o", ms=5, mfc="white", mec="black", mew=0.8)
    ax.set_xlabel("N (columns of C)")
    ax.set_ylabel("M (rows of C: tokens)")
    ax.set_title(f"Step 25's tile menu on {a.sms} SMs (K does not enter the pick)")
    ax.legend(handles=[Patch(color=YELLOW, label="swapped 128 x 64 (C^T = B A^T), M <= 64"),
                       Patch(color=GREEN, label="128 x 64: twice the tiles, no more rounds (or few more)"),
                       Patch(color=BLUE, label="128 x 128 (step 23's tile)"),
                       plt.Line2D([], [], marker="o", ls="", mfc="white", mec="black", label="(M, N) of the issue-30 sweep")],
              loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=8, frameon=False)
    try:
        pathlib.Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(a.out, dpi=110, bbox_inches="tight")
    except OSError as e:
        sys.exit(f"error: cannot write {a.out}: {e.strerror}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
