#!/usr/bin/env python3
"""Draws docs/img/swizzle.png: where TMA's 32-, 64- and 128-byte swizzles put each 16-byte chunk of a
tile, next to the unswizzled tile, and so which of the 8 groups of 4 banks each chunk lands in.

The layout comes from the function the kernels use, gemm::swizzle::byte_offset (common/swizzle.hpp),
printed by build/bin/swizzle_dump (scripts/swizzle_dump.cpp; `make build/bin/swizzle_dump`). Each
panel is a tile of 16 rows as TMA writes it (rows as wide as the swizzle span: 32, 64 or 128 bytes);
cell (row, chunk) is coloured by its bank group, (offset / 16) % 8: bank group g is banks 4g..4g+3.
A wgmma or ldmatrix read of one 16-byte chunk column over 8 consecutive rows is conflict-free when
those 8 cells have 8 different colours; the outlined column shows chunk 0. Needs matplotlib."""
import argparse
import csv
import io
import pathlib
import subprocess
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("error: plot_swizzle.py needs matplotlib (python3 -m pip install matplotlib)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", default=str(ROOT / "build" / "bin" / "swizzle_dump"))
    ap.add_argument("--rows", type=int, default=16)
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "swizzle.png"))
    args = ap.parse_args()
    if not pathlib.Path(args.tool).exists():
        sys.exit(f"error: {args.tool} not found: run `make build/bin/swizzle_dump` first")
    text = subprocess.run([args.tool, str(args.rows)], check=True, capture_output=True, text=True).stdout
    rows = [{k: int(v) for k, v in r.items()} for r in csv.DictReader(io.StringIO(text))]
    panels = [(0, "no swizzle,\n128-byte rows"), (128, "128B swizzle (steps 11-17:\nA, B and C boxes)"),
              (64, "64B swizzle,\n64-byte rows"), (32, "32B swizzle,\n32-byte rows")]
    cmap = plt.get_cmap("tab10")
    fig, axes = plt.subplots(1, 4, figsize=(13, 7), gridspec_kw={"width_ratios": [8, 8, 4, 2]})
    for ax, (span, title) in zip(axes, panels):
        mine = [r for r in rows if r["span"] == span]
        width = (span or 128) // 16
        for r in mine:
            group = (r["offset"] // 16) % 8
            ax.add_patch(Rectangle((r["chunk"], r["row"]), 1, 1, facecolor=cmap(group), edgecolor="white"))
            ax.text(r["chunk"] + 0.5, r["row"] + 0.5, str(group), ha="center", va="center", fontsize=8,
                    color="white")
        # chunk column 0 over the first 8 rows: the cells one wgmma core-matrix read touches
        ax.add_patch(Rectangle((0, 0), 1, 8, fill=False, edgecolor="black", linewidth=2.2))
        groups = sorted({(r["offset"] // 16) % 8 for r in mine if r["chunk"] == 0 and r["row"] < 8})
        verdict = "8 bank groups:\nconflict-free" if len(groups) == 8 else \
            f"{len(groups)} bank group(s):\n{8 // len(groups)}-way conflict"
        ax.set_title(f"{title}\nchunk 0, rows 0-7 ->\n{verdict}", fontsize=9)
        ax.set_xlim(0, width)
        ax.set_ylim(args.rows, 0)
        ax.set_xticks([c + 0.5 for c in range(width)], [str(c) for c in range(width)], fontsize=7)
        ax.set_yticks([r + 0.5 for r in range(args.rows)], [str(r) for r in range(args.rows)], fontsize=7)
        ax.set_xlabel("16-byte chunk\n(8 bf16)", fontsize=8)
        ax.set_aspect("equal")
    axes[0].set_ylabel("row of the box")
    fig.suptitle("TMA swizzle (gemm::swizzle::byte_offset): the bank group g (banks 4g..4g+3)\n"
                 "each 16-byte chunk of a box lands in", fontsize=11)
    fig.tight_layout()
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
