#!/usr/bin/env python3
"""Draws docs/img/swizzle.png: where TMA's 32-, 64- and 128-byte swizzles put each 16-byte chunk of a
tile, next to the unswizzled tile, and so which shared-memory banks each chunk lands in; and, below,
one row of a 128-byte-wide bf16 tile element by element, unswizzled and under the 128B swizzle.

The layout comes from the function the kernels use, gemm::swizzle::byte_offset (common/kernel_lib/swizzle.hpp),
printed by build/bin/swizzle_dump (scripts/swizzle_dump.cpp; `make build/bin/swizzle_dump`). Each
upper panel is a tile of 16 rows as TMA writes it (rows as wide as the swizzle span: 32, 64 or 128
bytes); cell (row, chunk) is coloured by its bank group g = (offset / 16) % 8 and labelled with the 4
banks it covers, 4g..4g+3 (a 16-byte chunk is 8 bf16 elements, 4 four-byte banks). A wgmma or
ldmatrix read of one 16-byte chunk column over 8 consecutive rows is conflict-free when those 8 cells
have 8 different colours; the outlined column shows chunk 0. The lower strips take one row (--row)
and give each bf16 element its bank, (offset / 4) % 32, from the element-wise dump
(`swizzle_dump ROWS 2`). The steps named as the 128B swizzle's users are those whose kernels build
128B-swizzled wgmma descriptors (make_desc_k_sw128 in kernels/*.cu). Needs matplotlib."""
import argparse
import csv
import io
import pathlib
import re
import subprocess
import sys

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)
from matplotlib.patches import Rectangle  # noqa: E402

BF16_BYTES = 2


def sw128_steps():
    """'11-21': the steps whose kernels call make_desc_k_sw128, as one range or a list."""
    ids = sorted(p.name.split("_", 1)[0] for p in (ROOT / "kernels").glob("*.cu")
                 if re.search(r"make_desc_k_sw128\s*\(", p.read_text()))
    if not ids:
        return "no step"
    nums = [int(re.match(r"\d+", s).group()) for s in ids]
    if all(s.isdigit() for s in ids) and nums == list(range(nums[0], nums[-1] + 1)):
        return f"{ids[0]}-{ids[-1]}" if len(ids) > 1 else ids[0]
    return ", ".join(ids)


def run(tool, *argv):
    text = subprocess.run([tool, *map(str, argv)], check=True, capture_output=True, text=True).stdout
    return [{k: int(v) for k, v in r.items()} for r in csv.DictReader(io.StringIO(text))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", default=str(ROOT / "build" / "bin" / "swizzle_dump"))
    ap.add_argument("--rows", type=int, default=16)
    ap.add_argument("--row", type=int, default=3, help="the row drawn element by element (default 3)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "swizzle.png"))
    args = ap.parse_args()
    if not pathlib.Path(args.tool).exists():
        sys.exit(f"error: {args.tool} not found: run `make build/bin/swizzle_dump` first")
    rows = run(args.tool, args.rows)
    elems = [r for r in run(args.tool, args.row + 1, BF16_BYTES) if r["row"] == args.row]
    users = sw128_steps()
    panels = [(0, "no swizzle,\n128-byte rows"), (128, f"128B swizzle (steps {users}:\nA, B and C boxes)"),
              (64, "64B swizzle,\n64-byte rows"), (32, "32B swizzle,\n32-byte rows")]
    cmap = plt.get_cmap("tab10")
    # Eight bank-group colours, dark enough for white text (tab10 without its grey, olive and cyan).
    colors = [cmap(i) for i in (0, 1, 2, 3, 4, 5, 6, 9)]
    fig = plt.figure(figsize=(13, 12.5))
    outer = fig.add_gridspec(2, 1, height_ratios=[args.rows, 5.2], hspace=0.22)
    top = outer[0].subgridspec(1, 4, width_ratios=[8, 8, 4, 2], wspace=0.25)
    for i, (span, title) in enumerate(panels):
        ax = fig.add_subplot(top[i])
        mine = [r for r in rows if r["span"] == span]
        width = (span or 128) // 16
        for r in mine:
            group = (r["offset"] // 16) % 8
            ax.add_patch(Rectangle((r["chunk"], r["row"]), 1, 1, facecolor=colors[group], edgecolor="white"))
            ax.text(r["chunk"] + 0.5, r["row"] + 0.5, f"{4 * group}-{4 * group + 3}", ha="center", va="center",
                    fontsize=7, color="white")
        # chunk column 0 over the first 8 rows: the cells one wgmma core-matrix read touches
        ax.add_patch(Rectangle((0, 0), 1, 8, fill=False, edgecolor="black", linewidth=2.2))
        if span in (0, 128):
            ax.add_patch(Rectangle((0, args.row), width, 1, fill=False, edgecolor="black", linewidth=1.2,
                                   linestyle="--"))
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
        if i == 0:
            ax.set_ylabel("row of the box (label: the 4 banks of the chunk)")
    # One row, element by element: bank (offset / 4) % 32 of each bf16 element.
    strips = outer[1].subgridspec(2, 1, hspace=1.0)
    for j, (span, name) in enumerate(((0, "unswizzled"), (128, "128B swizzle"))):
        ax = fig.add_subplot(strips[j])
        mine = sorted((r for r in elems if r["span"] == span), key=lambda r: r["elem"])
        for r in mine:
            bank = (r["offset"] // 4) % 32
            ax.add_patch(Rectangle((r["elem"], 0), 1, 1, facecolor=colors[bank // 4], edgecolor="white",
                                   linewidth=0.6))
            ax.text(r["elem"] + 0.5, 0.5, str(bank), ha="center", va="center", fontsize=6.5, color="white")
        n = len(mine)
        per_chunk = 16 // BF16_BYTES
        for c in range(0, n + 1, per_chunk):  # chunk boundaries
            ax.axvline(c, color="black", linewidth=1.2)
        ax.set_xlim(0, n)
        ax.set_ylim(1, 0)
        ax.set_yticks([])
        ax.set_xticks([e + 0.5 for e in range(0, n, 4)], [str(e) for e in range(0, n, 4)], fontsize=7)
        ax.set_title(f"row {args.row} (dashed above), {name}: the bank of each bf16 element "
                     f"(two elements share a 4-byte bank; black lines: 16-byte chunks)", fontsize=9, loc="left")
        if j == 1:
            ax.set_xlabel(f"element of row {args.row} (bf16, k within the 64-element tile row)", fontsize=8)
    fig.suptitle("TMA swizzle (gemm::swizzle::byte_offset): the banks each 16-byte chunk of a box lands in\n"
                 "(colour: bank group g, banks 4g..4g+3)", fontsize=11, y=0.99)
    fig.subplots_adjust(left=0.06, right=0.97, top=0.865, bottom=0.05)
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
