"""Concept figures of the book's chapter "Every shape" (steps 24 on: small M, ragged edges, long K).

Sizes come from the kernels' constants (step_constants.constants): step 23's tile (BM x BN, m64 slabs
of WGMMA_M rows) and step 24's swapped tile (BM rows of B x SWAP_BN rows of A)."""
import matplotlib.pyplot as plt
from matplotlib.patches import Patch, Rectangle

import style
from hopper2 import SMS, grouped_order, library_split
from step_constants import constants, family

A, B = style.A_COLOR, style.B_COLOR
PAD = "#e4e4e4"  # zero fill: rows TMA fills with zeros past the matrix, computed all the same
M_EXAMPLE = 16   # the decode batch the figure draws (the chapter's 16 x 8192 x 8192)


def _tile(ax, x0, rows, cols, real_rows, real_cols, row_color, col_color, slab):
    """One consumer tile as wgmma sees it: `rows` on its M side (m64 slabs of `slab` rows outlined),
    `cols` on its N side; cells that are real on both sides are coloured by the operand that gives the
    rows, the others are zero fill. 1 unit = 1 element."""
    ax.add_patch(Rectangle((x0, 0), cols, rows, fc=PAD, ec="none"))
    ax.add_patch(Rectangle((x0, 0), real_cols, real_rows, fc=row_color, ec="none", alpha=0.55))
    for s0 in range(0, rows, slab):  # the m64 slabs: one wgmma accumulator fragment each
        ax.add_patch(Rectangle((x0, s0), cols, slab, fc="none", ec="black", lw=1.2))
        ax.text(x0 + cols + 2, s0 + slab / 2, f"m64 slab {s0 // slab}", va="center", fontsize=9)
    # The operands along the two sides: the rows of one (left), the rows of the other (top).
    ax.add_patch(Rectangle((x0 - 10, 0), 6, real_rows, fc=row_color, ec="none"))
    ax.add_patch(Rectangle((x0 - 10, real_rows), 6, rows - real_rows, fc=PAD, ec="none"))
    ax.add_patch(Rectangle((x0, -10), real_cols, 6, fc=col_color, ec="none"))
    ax.add_patch(Rectangle((x0 + real_cols, -10), cols - real_cols, 6, fc=PAD, ec="none"))


@style.figure("swap_ab_small_m",
              "Step 23 against step 24 at M = 16: in 23's 128x128 tile the 16 rows of A sit on wgmma's M "
              "side, so 112 of the 128 rows are zero fill; swapped, the 128 rows of B fill both m64 slabs "
              "and A's 16 rows are 16 of the 64 columns of an m64n64k16 wgmma (C^T, stored transposed)")
def swap_ab_small_m():
    c23, c24 = constants("23"), family("24")
    bm, bn, slab = c23["BM"], c23["BN"], c23["WGMMA_M"]
    sbm, sbn = c24["BM"], c24["SWAP_BN"]
    m = M_EXAMPLE
    fig, ax = plt.subplots(figsize=(11.5, 5.6))
    ax.set_aspect("equal")
    ax.axis("off")
    # Left: step 23, rows of A on wgmma's M side, rows of B on its N side.
    _tile(ax, 12, bm, bn, m, bn, A, B, slab)
    useful23 = m * bn / (bm * bn)
    ax.text(12 + bn / 2, -16, f"step 23: tile {bm}x{bn} of C\nwgmma m64n{bn}k16", ha="center", va="bottom", fontsize=11)
    ax.text(0, m / 2, f"A: {m} rows", ha="right", va="center", fontsize=9)
    ax.text(0, (m + bm) / 2, f"{bm - m} rows\nzero fill", ha="right", va="center", fontsize=9)
    ax.text(12 + bn / 2, bm + 8, f"{useful23:.1%} of the tensor work is C\n({m} of {bm} rows)",
            ha="center", va="top", fontsize=10)
    # Right: step 24, rows of B on wgmma's M side, rows of A on its N side: a tile of C^T.
    x1 = 12 + bn + 110
    _tile(ax, x1, sbm, sbn, sbm, m, B, A, slab)
    useful24 = m / sbn
    ax.text(x1 + sbn / 2, -16, f"step 24, M <= {c24['SWAP_MAX_M']}: tile {sbm}x{sbn} of C^T\nwgmma m64n{sbn}k16",
            ha="center", va="bottom", fontsize=11)
    ax.text(x1 - 12, sbm / 2, f"B: {sbm}\nrows", ha="right", va="center", fontsize=9)
    ax.text(x1 - 2, -7, f"A: {m} rows", ha="right", va="center", fontsize=9)
    ax.text(x1 + sbn / 2, sbm + 8, f"{useful24:.0%} of the tensor work is C\n(the rest: {sbn - m} columns of zero fill)",
            ha="center", va="top", fontsize=10)
    ax.set_xlim(-40, x1 + sbn + 40)
    ax.set_ylim(bm + 26, -40)
    ax.legend(handles=[Patch(fc=A, alpha=0.8, label="rows of A (C's rows)"), Patch(fc=B, alpha=0.8, label="rows of B (C's columns)"),
                       Patch(fc=PAD, label="zero fill: computed, thrown away")],
              loc="lower center", bbox_to_anchor=(0.5, -0.08), ncol=3, fontsize=9, frameon=False)
    return fig


SWAP_BN_M1 = 8  # tile_menu::swap_bn(1): the narrowest wgmma N that holds M = 1 (common/kernel_lib/tile_menu.hpp)


@style.figure("swap_to_m",
              "Step 26 against step 27 at M = 1: the same 128 rows of B per tile, but 26's tile of C^T is 64 "
              "columns wide (63 of them zero fill) and 27's is 8 (swap_bn(1)); the fp32 partial a split piece "
              "stores and the fixup reads back shrinks with it, 32 KB to 4 KB")
def swap_to_m():
    c = family("27")
    bm, wide, slab = c["BM"], c["SWAP_BN"], c["WGMMA_M"]
    narrow, m = SWAP_BN_M1, 1
    scale = 1.6  # columns drawn wider than rows, so the 8-column tile stays visible
    fig, ax = plt.subplots(figsize=(11.5, 5.8))
    ax.set_aspect("equal")
    ax.axis("off")
    x0 = 30
    for x, cols, title in ((x0, wide, f"step 26: tile {bm}x{wide} of C^T\nwgmma m64n{wide}k16"),
                           (x0 + wide * scale + 120, narrow, f"step 27: tile {bm}x{narrow} of C^T\nwgmma m64n{narrow}k16")):
        w = cols * scale
        ax.add_patch(Rectangle((x, 0), w, bm, fc=PAD, ec="none"))
        ax.add_patch(Rectangle((x, 0), m * scale, bm, fc=B, ec="none", alpha=0.55))
        for s0 in range(0, bm, slab):
            ax.add_patch(Rectangle((x, s0), w, slab, fc="none", ec="black", lw=1.2))
        ax.add_patch(Rectangle((x - 10, 0), 6, bm, fc=B, ec="none"))
        ax.add_patch(Rectangle((x, -10), m * scale, 6, fc=A, ec="none"))
        ax.add_patch(Rectangle((x + m * scale, -10), w - m * scale, 6, fc=PAD, ec="none"))
        ax.text(x + w / 2, -16, title, ha="center", va="bottom", fontsize=11)
        acc = (bm // slab) * cols // 2
        part_kb = bm * cols * 4 / 1024
        abox_kb = cols * c["BK"] * 2 / 1024
        ax.text(x + w / 2, bm + 8,
                f"A box {cols} rows: {abox_kb:g} KB a stage\n{acc} accumulators a thread\n"
                f"fp32 partial a piece: {part_kb:g} KB",
                ha="center", va="top", fontsize=10)
    ax.text(x0 - 12, bm / 2, f"B: {bm}\nrows", ha="right", va="center", fontsize=9)
    ax.set_xlim(-10, x0 + wide * scale + 120 + narrow * scale + 90)
    ax.set_ylim(bm + 46, -44)
    ax.legend(handles=[Patch(fc=A, alpha=0.8, label="A's one row (C's row)"), Patch(fc=B, alpha=0.8, label="rows of B (C's columns)"),
                       Patch(fc=PAD, label="zero fill: written by TMA, computed, stored, thrown away")],
              loc="lower center", bbox_to_anchor=(0.5, -0.06), ncol=3, fontsize=9, frameon=False)
    return fig


K_RAGGED = 5000   # the sweep's ragged K: a row pitch of 10000 bytes, 16 bytes past a multiple of 32
PITCH_ELEMS = 64  # tile_menu::kPitchElems: step 28 pads the copies' pitch to a multiple of 64 bf16
SECTOR, LINE = 32, 128  # bytes: an L2 sector and a 128-byte line (four sectors)


@style.figure("pad_pitch",
              "Step 28: the bytes one K tile's TMA box reads from four consecutive rows of A at K = 5000 (a "
              "pitch of 10000 bytes, left) and from step 28's padded copy (pitch 10112 bytes, right), over the "
              "32-byte L2 sectors they touch; at 10000 bytes every other row starts 16 bytes into a sector "
              "and touches five sectors, and all but one row in eight cross a 128-byte line")
def pad_pitch():
    c = family("28")
    row_bytes = c["BK"] * 2  # one K tile of one row: 64 bf16, the 128-byte swizzle span
    padded = (K_RAGGED + PITCH_ELEMS - 1) // PITCH_ELEMS * PITCH_ELEMS
    rows = 4
    fig, axes = plt.subplots(1, 2, figsize=(12, 2.9))
    for ax, pitch_elems, title in ((axes[0], K_RAGGED, f"K = {K_RAGGED}: pitch {2 * K_RAGGED} B"),
                                   (axes[1], padded, f"step 28's copy: pitch {2 * padded} B (padded_pitch)")):
        pitch = 2 * pitch_elems
        ax.set_title(title, fontsize=11)
        ax.axis("off")
        total = 0
        for r in range(rows):
            start = r * pitch           # the box row of K tile 0; later K tiles add 128 bytes, same offsets
            off = start % LINE          # drawn relative to the 128-byte line the row starts in
            first, last = start // SECTOR, (start + row_bytes - 1) // SECTOR
            sectors = last - first + 1
            lines = (start + row_bytes - 1) // LINE - start // LINE + 1
            total += sectors
            y = -r * 1.6
            for s in range(2 * LINE // SECTOR):  # two lines of sectors
                x = s * SECTOR
                touched = first <= (start - off) // SECTOR + s <= last
                ax.add_patch(Rectangle((x, y), SECTOR, 1, fc=style.YELLOW if touched else "white",
                                       ec="black", lw=0.6, alpha=0.5 if touched else 1))
            ax.add_patch(Rectangle((LINE, y - 0.15), 0.8, 1.3, fc="black", ec="none"))  # the line boundary
            ax.add_patch(Rectangle((off, y + 0.25), row_bytes, 0.5, fc=A, ec="none"))
            ax.text(-6, y + 0.5, f"row {r}", ha="right", va="center", fontsize=9)
            ax.text(2 * LINE + 6, y + 0.5, f"{sectors} sectors, {lines} line{'s' if lines > 1 else ''}",
                    ha="left", va="center", fontsize=9)
        ax.text(LINE, 1.5, f"{total} sectors for {rows} rows of {row_bytes} B", ha="center", va="bottom", fontsize=10)
        ax.set_xlim(-40, 2 * LINE + 90)
        ax.set_ylim(-rows * 1.6 - 0.6, 2.6)
    fig.legend(handles=[Patch(fc=A, label=f"the {row_bytes} bytes TMA reads (64 bf16 of K)"),
                        Patch(fc=style.YELLOW, alpha=0.5, label="a 32-byte sector it touches"),
                        Patch(fc="black", label="128-byte line boundary")],
               loc="lower center", bbox_to_anchor=(0.5, -0.10), ncol=3, fontsize=9, frameon=False)
    return fig


L2_SHAPE = (1024, 1024, 65536)  # the sweep's long-K shape of step 26's lesson


@style.figure("split_segments",
              "Step 26 at 1024 x 1024 x 65536: where each block starts in K, for the 8 tiles that share A's "
              "first row panel (top) and the 8 that share B's first column panel (bottom); stream-K's even "
              "share (left, 132 blocks) starts them at scattered K offsets, so few blocks read the same part "
              "of a panel at once; equal segments (right, 2 per tile, 128 blocks) start every tile's blocks "
              "at K tile 0 and 512, so 8 blocks read each part of a panel together and L2 serves it once")
def split_segments():
    c = family("26")
    m, n, k = L2_SHAPE
    bm, bn, bk, group_m = c["BM"], c["BN"], c["BK"], c["GROUP_M"]
    tiles_m, tiles_n, k_tiles = m // bm, n // bn, k // bk
    tiles = tiles_m * tiles_n
    s = SMS // tiles  # tile_menu::split_factor: floor(SMs / tiles) equal segments
    coord = grouped_order(tiles_m, tiles_n, group_m)
    # Step 26's first version: stream-K's even share of every tile (fewer tiles than SMs, worth it).
    stream_k = library_split(tiles, k_tiles, SMS, True, c["MIN_PIECE"])

    def pieces_stream_k():
        for b in range(stream_k.blocks):
            for i, (t, kt0, kt1) in enumerate(stream_k.pieces(b)):
                yield t, kt0, kt1, i == 0

    def pieces_split_k():
        seg = k_tiles // s
        for b in range(tiles * s):
            t, j = b // s, b % s
            yield t, j * seg, (j + 1) * seg if j < s - 1 else k_tiles, True

    fig, axes = plt.subplots(2, 2, figsize=(12, 6.4), sharex=True)
    for row, (panel, label) in enumerate(((0, "A's row panel 0: tile column"), (1, "B's column panel 0: tile row"))):
        for col, (pieces, title) in enumerate(((list(pieces_stream_k()), f"stream-K's even share: {SMS} blocks"),
                                               (list(pieces_split_k()), f"equal segments: {s} per tile, {tiles * s} blocks"))):
            ax = axes[row][col]
            if row == 0:
                ax.set_title(title, fontsize=11)
            starts = set()
            for t, kt0, kt1, first in pieces:
                if coord[t][panel] != 0:  # not a tile of this panel
                    continue
                y = coord[t][1 - panel]
                ax.add_patch(Rectangle((kt0, y - 0.3), kt1 - kt0, 0.6, fc=A if first else style.GREY,
                                       ec="white", lw=1.5, alpha=0.8))
                if first:
                    ax.plot([kt0], [y], marker="o", color="black", ms=5)
                    starts.add(kt0)
            ax.text(k_tiles / 2, tiles_n + 0.1, f"{len(starts)} distinct starting K tiles", ha="center", va="top", fontsize=9)
            ax.set_xlim(0, k_tiles)
            ax.set_ylim(tiles_n + 0.5, -0.6)
            ax.set_yticks(range(tiles_n))
            if col == 0:
                ax.set_ylabel(label)
            if row == 1:
                ax.set_xlabel(f"K tile (of {k_tiles})")
    fig.legend(handles=[Patch(fc=A, alpha=0.8, label="a block's first piece: it starts at the dot, at time 0"),
                        Patch(fc=style.GREY, alpha=0.8, label="a block's later piece (after its first)")],
               loc="lower center", bbox_to_anchor=(0.5, -0.04), ncol=2, fontsize=9, frameon=False)
    return fig
