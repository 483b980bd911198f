"""Concept figures of the book's Hopper part 1 (steps 10-14: wgmma, TMA, the mbarrier ring, warp
specialization, two consumers and setmaxnreg). Sizes come from the kernels' constants
(step_constants.constants), the accumulator layout from common/kernel_lib/ptx/epilogue.cuh, the
swizzle from common/kernel_lib/swizzle.hpp (restated below), register counts from docs/resources.md
(ptxas -v) and the timeline's lengths from the committed pipeline traces in results/traces/."""
import functools
import gzip
import json
import re
import statistics
from collections import defaultdict

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import ConnectionPatch, FancyArrowPatch, Patch, Rectangle

import style
from step_constants import constants

A, B, C = style.A_COLOR, style.B_COLOR, style.C_COLOR
LIGHT = {A: "#c6d6ea", B: "#f9d0d6", C: "#bfe0c5"}  # pale versions of the operand colours
WAIT, LOAD, IDLE = "#ee9944", style.CYAN, "#dddddd"  # timeline colours: waiting, a TMA in flight, other
BF16 = 2
SM_REGISTERS = 65536  # 32-bit registers per SM (kernels/14_two_consumers.cu's static_assert uses it)


@functools.lru_cache(maxsize=None)
def k(step):
    return constants(step)


def box(ax, x, y, w, h, face, edge="black", lw=0.8, alpha=1.0, z=1, **kw):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=face, edgecolor=edge, linewidth=lw, alpha=alpha, zorder=z, **kw))


def arrow(ax, p, q, color="black", lw=1.4, style_="-|>", rad=0.0, z=5, ms=14):
    ax.add_patch(FancyArrowPatch(p, q, arrowstyle=style_, mutation_scale=ms, color=color, lw=lw, zorder=z,
                                 connectionstyle=f"arc3,rad={rad}"))


def canvas(w, h, xlim, ylim):
    """A figure with one bare axes in data units, y growing downwards (rows of a tile)."""
    fig, ax = plt.subplots(figsize=(w, h))
    ax.set_xlim(*xlim)
    ax.set_ylim(ylim[1], ylim[0])
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def resources(step):
    """{'regs': int, 'blocks': int} of step `step` from the generated docs/resources.md (ptxas -v)."""
    for line in (style.ROOT / "docs" / "resources.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 8 and cells[0] == step:
            return {"regs": int(cells[2]), "blocks": int(re.match(r"\d+", cells[8]).group())}
    raise SystemExit(f"error: docs/resources.md has no row for step {step}")


# ---------------------------------------------------------------------------------------------------
# The two pure functions the figures draw, restated from the C++ they mirror.

def swizzle128(linear):
    """gemm::swizzle::byte_offset<128> (common/kernel_lib/swizzle.hpp): the 16-byte chunk index (bits
    4-6) XOR the 128-byte row index (bits 7-9)."""
    return linear ^ (((linear >> 7) & 7) << 4)


def fragment_position(warp, lane, i):
    """(row, column) in the 64 x N accumulator of accumulator d[i] of lane `lane` of warp `warp` of the
    warpgroup, as ptx::store_d_fragment_bf16 (common/kernel_lib/ptx/epilogue.cuh) stores it: j = i / 4
    picks the 8-column block, h = (i / 2) % 2 the row half, i % 2 the column of the pair."""
    j, h = i // 4, (i // 2) % 2
    return 16 * warp + lane // 4 + 8 * h, 8 * j + 2 * (lane % 4) + i % 2


# ---------------------------------------------------------------------------------------------------
def wgmma_shape(step):
    """(BM, BN, BK, WM, WN, WK) of a step's wgmma: the tile and the m64nNk16 instruction. Step 11 names no
    WGMMA_M / WGMMA_N: its one wgmma.m64n64k16 per k16 slice covers the whole 64 x 64 tile
    (static_assert(BM == 64) and the wgmma_m64n64k16_bf16 call in kernels/11_wgmma_tma.cu)."""
    c = k(step)
    if "WGMMA_M" in c:
        return c["BM"], c["BN"], c["BK"], c["WGMMA_M"], c["WGMMA_N"], c["WGMMA_K"]
    src = next((style.ROOT / "kernels").glob(f"{step}_*.cu")).read_text()
    assert c["BM"] == 64 and f"wgmma_m64n{c['BN']}k16" in src, f"step {step}: not one m64n{c['BN']} wgmma per slice"
    return c["BM"], c["BN"], c["BK"], 64, c["BN"], c["WGMMA_K"]


def draw_wgmma_operands(step):
    """One K tile of step `step`'s wgmmas: sA and sB in shared memory, the k16 slices, D in registers, the
    descriptors. Drawn for step 11 (one wgmma per slice) and step 12 (two: one per 64-row half)."""
    BM, BN, BK, WM, WN, WK = wgmma_shape(step)
    halves = BM // WM
    row_bytes = BK * BF16
    kk_show, i_show = 1, 0  # the wgmma highlighted: k16 slice 1 (of the 64-row half 0)
    gap = 64
    xa, xb, xd = 0, BK + gap, 2 * BK + 2 * gap
    x_lo, x_hi, y_lo, y_hi = -50, xd + BN + (4 if BN > 100 else 24), -38, max(BM, BN) + 4
    W = 13.0
    h_top = W * 0.96 * (y_hi - y_lo) / (x_hi - x_lo)  # inches of the operand drawing at equal aspect
    H = h_top + 5.0
    fig = plt.figure(figsize=(W, H))
    ax = fig.add_axes((0.02, (4.4) / H, 0.96, h_top / H))
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_hi, y_lo)
    ax.set_aspect("equal")
    ax.axis("off")
    # sA and sB as they lie in shared memory: one 128-byte row per M (N) index, k along the row.
    for x0, rows, col in ((xa, BM, A), (xb, BN, B)):
        box(ax, x0, 0, BK, rows, LIGHT[col], lw=1.2)
        for s in range(1, BK // WK):
            ax.plot([x0 + s * WK] * 2, [0, rows], color=col, lw=0.8, ls="--", zorder=2)
        for s in range(BK // WK):
            ax.text(x0 + (s + 0.5) * WK, -2, f"kk={s}\n+{s * WK * BF16} B", ha="center", va="bottom", fontsize=8.5)
    for i in range(1, halves):
        ax.plot([xa, xa + BK], [i * WM] * 2, color=A, lw=1.6, zorder=2)
    box(ax, xa + kk_show * WK, i_show * WM, WK, WM, A, lw=1.6, z=3)
    box(ax, xb + kk_show * WK, 0, WK, BN, B, lw=1.6, z=3)
    ax.text(xa + BK / 2, -20, f"sA: {BM} rows (m) x {BK} bf16\nK-major: a row = {row_bytes} bytes of k",
            ha="center", va="bottom", fontsize=10.5, fontweight="bold", color=A)
    ax.text(xb + BK / 2, -20, f"sB: {BN} rows (n) x {BK} bf16\nK-major too: row n holds B[n][k]",
            ha="center", va="bottom", fontsize=10.5, fontweight="bold", color=B)
    if halves > 1:
        for i in range(halves):
            ax.text(xa - 3, (i + 0.5) * WM, f"half i={i}\nrows\n{i * WM}-{(i + 1) * WM - 1}", ha="right",
                    va="center", fontsize=9)
    else:
        ax.text(xa - 3, BM / 2, f"rows\n0-{BM - 1}", ha="right", va="center", fontsize=9)
    for x0, h, name in ((xa, WM, f"A slice {WM} x {WK}"), (xb, BN, f"B slice {WN} x {WK}")):
        ax.text(x0 + (kk_show + 0.5) * WK, (i_show * WM if x0 == xa else 0) + h / 2, name, ha="center",
                va="center", fontsize=9.5, color="white", fontweight="bold", zorder=4, rotation=90)
    # The accumulators: one m64nN fragment per 64-row half, in registers.
    per_thread = WM * WN // 128
    for i in range(halves):
        name = f"acc[{i}]" if halves > 1 else "acc"
        box(ax, xd, i * WM, BN, WM, C if i == i_show else LIGHT[C], lw=1.6 if i == i_show else 1.0,
            z=3 if i == i_show else 1)
        text = (f"{name}: rows {i * WM}-{(i + 1) * WM - 1}, {WN} columns\n"
                f"{per_thread} fp32 registers in each\nof the warpgroup's 128 threads" if BN > 100 else
                f"{name}:\nrows {i * WM}-{(i + 1) * WM - 1},\n{WN} columns\n\n{per_thread} fp32 registers\n"
                f"in each of the\nwarpgroup's\n128 threads")
        ax.text(xd + BN / 2, (i + 0.5) * WM, text, ha="center", va="center", fontsize=10,
                color="white" if i == i_show else "black", zorder=4)
    ax.text(xd + BN / 2, -20, f"D: the {BM}x{BN} tile, fp32,\nin registers (never in shared memory)",
            ha="center", va="bottom", fontsize=10.5, fontweight="bold", color=C)
    ax.text((xb + BK + xd) / 2, BM / 2, "+=", ha="center", va="center", fontsize=24)
    ax.text((xa + BK + xb) / 2, BM / 2, "×", ha="center", va="center", fontsize=24)
    # What the highlighted instruction does and how its descriptors are made.
    tx = fig.add_axes((0.04, 2.05 / H, 0.92, 2.1 / H))
    tx.axis("off")
    if halves > 1:
        which = f"kk={kk_show}, i={i_show}"
        a_desc = (f"desc_a = make_desc_k_sw128(s.a + i*{WM}*{BK} + kk*{WK})   "
                  f"start + i*{WM * row_bytes} B + kk*{WK * BF16} B")
        loop = (f"per K tile: for kk in 0..{BK // WK - 1}, for i in 0..{halves - 1}: one wgmma  =  "
                f"{BK // WK * halves} HGMMA.64x{WN}x16 in the SASS, issued by one warpgroup (128 threads)")
    else:
        which = f"kk={kk_show}"
        a_desc = (f"desc_a = make_desc_k_sw128(s.a + kk*{WK})              start + kk*{WK * BF16} B  "
                  f"(all {BM} rows of sA)")
        loop = (f"per K tile: for kk in 0..{BK // WK - 1}: one wgmma  =  {BK // WK} HGMMA.64x{WN}x16 in the SASS, "
                f"issued by one warpgroup (128 threads)")
    lines = [
        (f"the dark slices: wgmma.mma_async.m64n{WN}k16 with {which}:   "
         f"D[m][n] += Σ(k in slice kk) A[m][k]·B[n][k]", "black", None),
        (a_desc, A, "monospace"),
        (f"desc_b = make_desc_k_sw128(s.b + kk*{WK})              start + kk*{WK * BF16} B  (all {BN} rows of sB)",
         B, "monospace"),
        (loop, "black", None),
    ]
    for n, (text, col, fam) in enumerate(lines):
        tx.text(0, 1 - 0.25 * n, text, ha="left", va="top", fontsize=10.5, color=col, family=fam,
                transform=tx.transAxes)
    # The 64-bit descriptor, bit 63 on the left.
    dx = fig.add_axes((0.04, 0.15 / H, 0.92, 1.75 / H))
    dx.set_xlim(-0.2, 64.2)
    dx.set_ylim(-2.6, 2.2)
    dx.axis("off")
    fields = [(62, 63, "swizzle\n1 = 128B"), (49, 51, "base offset\n0"),
              (32, 45, "stride byte offset >> 4 = 64\n(1024 B = 8 rows x 128 B)"),
              (16, 29, "leading byte offset >> 4 = 1\n(unused: swizzled K-major)"),
              (0, 13, "start address >> 4\n(+2 per kk = 32 B)")]
    named = {b for lo, hi, _ in fields for b in range(lo, hi + 1)}
    for b in range(64):
        if b not in named:
            box(dx, 63 - b, 0, 1, 1, "white", edge="#999999", lw=0.5)
    for lo, hi, text in fields:
        x, w = 63 - hi, hi - lo + 1
        box(dx, x, 0, w, 1, style.GREY if lo == 16 else style.YELLOW, lw=1.2, z=2)
        if w >= 10:
            dx.text(x + w / 2, 0.5, text, ha="center", va="center", fontsize=9.5, zorder=3)
        else:
            dx.text(x + w / 2, -0.15, text, ha="center", va="top", fontsize=9.5)
        dx.text(x + 0.5, 1.05, str(hi), ha="center", va="bottom", fontsize=8, color="#444444")
        if w > 1:
            dx.text(x + w - 0.5, 1.05, str(lo), ha="center", va="bottom", fontsize=8, color="#444444")
    dx.text(0, 1.7, "the 64-bit matrix descriptor of each operand (ptx::make_desc_k_sw128, "
            "common/kernel_lib/ptx/wgmma.cuh), bit 63 on the left; white bits are 0",
            ha="left", va="bottom", fontsize=10, fontweight="bold")
    per_slice = "one wgmma per slice" if halves == 1 else f"{halves} wgmmas per slice"
    fig.suptitle(f"A wgmma reads two K-major slices from shared memory through descriptors and accumulates "
                 f"in registers\n(step {step}: m64n{WN}k16; a K tile of {BK} is {BK // WK} k16 slices, "
                 f"{per_slice})", fontsize=13, y=1 - 0.08 / H)
    return fig


@style.figure("wgmma_operands",
              "One wgmma.m64n64k16 of step 11: a 64x16 slice of A and a 64x16 slice of B, both K-major in "
              "shared memory and named by 64-bit descriptors, accumulate into the 64x64 fp32 tile held in the "
              "warpgroup's registers (32 values per thread); a 64-wide K tile is four k16 slices, 32 bytes "
              "apart, one wgmma each")
def wgmma_operands():
    return draw_wgmma_operands("11")


@style.figure("wgmma_operands_12",
              "One K tile of step 12: two wgmma.m64n128k16 per k16 slice, one per 64-row half of the 128x128 "
              "tile; each reads a 64x16 slice of A and the 128x16 slice of B (K-major, through descriptors) and "
              "accumulates into its own 64x128 fp32 fragment, 64 registers per thread")
def wgmma_operands_12():
    return draw_wgmma_operands("12")


# ---------------------------------------------------------------------------------------------------
@style.figure("wgmma_fragment",
              "Which accumulators of step 11's wgmma.m64n64k16 each thread holds (the layout "
              "ptx::store_d_fragment_bf16 stores): 32 fp32 per thread; warp w owns rows 16w..16w+15; lane l "
              "holds two adjacent columns 2(l%4), +1 in rows l/4 and l/4+8 of every 8-column block, so "
              "d[4j..4j+3] are block j's four values (T5 and T37, lane 5 of warps 0 and 1, marked)")
def wgmma_fragment():
    _, _, _, WM, WN, _ = wgmma_shape("11")
    per_thread = WM * WN // 128
    owner = {}
    for warp in range(4):
        for lane in range(32):
            for i in range(per_thread):
                rc = fragment_position(warp, lane, i)
                assert rc not in owner, f"two threads store {rc}"
                owner[rc] = (warp, lane, i)
    assert len(owner) == WM * WN, "the fragment must cover the 64 x N tile"
    warp_face = ["#d9eedd", "#a9d8b1", "#d9eedd", "#a9d8b1"]
    pale = ["#f1f8f2", "#d4ecd8", "#f1f8f2", "#d4ecd8"]  # alternate column pairs, per warp
    marked = {(0, 5): style.PURPLE, (1, 5): style.YELLOW}  # (warp, lane) picked out in both panels
    dark = {(0, 5)}  # marked threads written in white
    R, W = 32, 16  # the enlarged corner: warps 0 and 1, columns 0-15
    fig = plt.figure(figsize=(14.5, 13.2))
    # Left, top: the whole 64 x N fragment, by warp, with the marked threads' cells.
    ov = fig.add_axes((0.09, 0.5, 0.4, 0.41))
    ov.set_xlim(-0.5, WN + 0.5)
    ov.set_ylim(WM + 0.5, -0.5)
    ov.set_aspect("equal")
    ov.axis("off")
    for warp in range(4):
        box(ov, 0, 16 * warp, WN, 16, warp_face[warp], edge="none")
        ov.text(-1.5, 16 * warp + 8, f"warp {warp}\nrows {16 * warp}-{16 * warp + 15}\nT{32 * warp}-T{32 * warp + 31}",
                ha="right", va="center", fontsize=10)
    for j in range(WN // 8 + 1):
        ov.plot([8 * j] * 2, [0, WM], color="white", lw=0.8)
    for (r, col), (warp, lane, i) in owner.items():
        if (warp, lane) in marked:
            box(ov, col, r, 1, 1, marked[(warp, lane)], edge="none", z=3)
    box(ov, 0, 0, WN, WM, "none", lw=1.2, z=4)
    box(ov, 0, 0, W, R, "none", lw=2.2, z=5)
    ov.text(WN / 2, -1.5, f"the whole {WM} x {WN} accumulator of step 11's m64n{WN}k16\n"
            f"(white lines: the {WN // 8} blocks of 8 columns)", ha="center", va="bottom", fontsize=10.5)
    fig.text(0.05, 0.27,
             f"Each thread holds {per_thread} fp32 ({WM} x {WN} / 128 threads):\n"
             f"float acc[BN / 2] = acc[{WN // 2}] in kernels/11_wgmma_tma.cu.\n\n"
             "T5 (purple, warp 0) and T37 (yellow, warp 1):\nthe same lane 5, so the same cells,\n"
             "16 rows apart: two adjacent columns in 2 rows\nof every 8-column block, all across the tile.\n"
             "Black square: the corner enlarged right.\n\n"
             "lane l of warp w holds d[i] at\n"
             "  row    16w + l/4 + 8*((i/2) % 2)\n"
             "  column 8*(i/4) + 2*(l % 4) + i % 2\n"
             "so d[4j .. 4j+3] lie in block j:\n"
             "  d[4j], d[4j+1]   row l/4,   columns c, c+1\n"
             "  d[4j+2], d[4j+3] row l/4+8, columns c, c+1\n"
             "  with c = 8j + 2*(l % 4)\n"
             "Each pair d[2p], d[2p+1] is two adjacent\ncolumns: one bf16x2 store in the epilogue.",
             fontsize=10.5, va="center", ha="left", family="monospace")
    # Right: warps 0 and 1, rows 0-31, columns 0-15, each cell labelled with its thread and accumulator.
    zx = fig.add_axes((0.53, 0.01, 0.46, 0.93))
    zx.set_xlim(-1.0, W + 0.1)
    zx.set_ylim(R + 0.1, -4.3)
    zx.set_aspect("equal")
    zx.axis("off")
    for r in range(R):
        for col in range(W):
            warp, lane, i = owner[(r, col)]
            face = marked.get((warp, lane), warp_face[warp] if (col // 2) % 2 == 0 else pale[warp])
            white = (warp, lane) in dark
            box(zx, col, r, 1, 1, face, edge="#888888", lw=0.5)
            zx.text(col + 0.5, r + 0.34, f"T{32 * warp + lane}", ha="center", va="center", fontsize=8.5,
                    fontweight="bold", color="white" if white else "black")
            zx.text(col + 0.5, r + 0.74, f"d{i}", ha="center", va="center", fontsize=7.5,
                    color="white" if white else "#333333")
    for x in (0, 8, 16):
        zx.plot([x, x], [0, R], color="black", lw=2)
    for y in (0, 16, 32):
        zx.plot([0, W], [y, y], color="black", lw=2)
    for y in (8, 24):
        zx.plot([0, W], [y, y], color="black", lw=1.2, ls="--")
    for j in range(2):
        zx.text(8 * j + 4, -0.7, f"block j={j}: columns {8 * j}-{8 * j + 7}, d{4 * j}..d{4 * j + 3}",
                ha="center", va="bottom", fontsize=10)
    for col in range(W):
        zx.text(col + 0.5, -0.08, str(col), ha="center", va="bottom", fontsize=8, color="#555555")
    for r in range(R):
        zx.text(-0.12, r + 0.5, str(r), ha="right", va="center", fontsize=8, color="#555555")
    for warp in range(2):
        zx.text(-0.75, 16 * warp + 8, f"warp {warp}", rotation=90, ha="center", va="center", fontsize=10.5,
                fontweight="bold")
    zx.text(W / 2, -1.75, "the corner enlarged: rows 0-31 (warps 0 and 1), columns 0-15\n"
            "cell: thread T, accumulator d[i]; below each dashed line\nthe 8 rows above repeat with d[i+2]",
            ha="center", va="bottom", fontsize=10)
    fig.suptitle(f"Step 11's wgmma accumulator fragment: which of the {WM} x {WN} fp32 values each of the "
                 f"warpgroup's 128 threads holds\n(the layout ptx::store_d_fragment_bf16 stores, "
                 "common/kernel_lib/ptx/epilogue.cuh)", fontsize=13, y=0.995)
    return fig


# ---------------------------------------------------------------------------------------------------
@style.figure("tma_box",
              "A tensor map's box: TMA copies a BM x BK block of A (step 11: 64 rows x 64 bf16, one K tile) "
              "from global memory into shared memory and applies the 128-byte swizzle on the way: row r's "
              "16-byte chunk c lands at chunk c XOR (r % 8), so a wgmma's k16 slice (two chunks) is spread "
              "over all eight chunk positions of each 8-row group")
def tma_box():
    c = k("11")
    BM, BK, WK = c["BM"], c["BK"], c["WGMMA_K"]
    assert c["TILE_BYTES"] == (BM + c["BN"]) * BK * BF16  # both boxes count on the one full barrier
    row_bytes = BK * BF16
    chunks = row_bytes // 16  # 16-byte chunks per tile row: 8 bf16 each
    per_chunk = 16 // BF16
    show_rows = 16
    kk_show = 1
    slice_chunks = {kk_show * WK * BF16 // 16 + q for q in range(WK * BF16 // 16)}  # chunks of k16 slice kk
    cmap = plt.get_cmap("tab10")
    chunk_face = [cmap(i) for i in (0, 1, 2, 3, 4, 5, 6, 9)]
    fig = plt.figure(figsize=(14, 8.6))
    # (a) A in global memory: a grid of BM x BK boxes, the one TMA copies now.
    g = fig.add_axes((0.01, 0.12, 0.25, 0.7))
    tiles_m, tiles_k = 4, 6
    g.set_xlim(-0.6, tiles_k + 0.1)
    g.set_ylim(tiles_m + 1.1, -0.45)
    g.set_aspect(BM / BK)  # a box drawn BM tall by BK wide
    g.axis("off")
    bm, bk = 1, 2
    for i in range(tiles_m):
        for j in range(tiles_k):
            box(g, j, i, 1, 1, LIGHT[A], edge="white", lw=1.5)
    box(g, bk, bm, 1, 1, A, lw=2, z=3)
    box(g, bk, bm, 1, show_rows / BM, style.YELLOW, lw=1, z=4)
    g.text(tiles_k / 2, -0.1, "A in global memory\n(row-major M x K, in BM x BK boxes)",
           ha="center", va="bottom", fontsize=10.5, fontweight="bold")
    g.text(tiles_k / 2, tiles_m + 0.1, f"K (contiguous) →\n\nthe dark box: K tile kt = {bk} of block row {bm},\n"
           f"TMA coordinates (k, row) = (kt*{BK}, m0)\n= ({bk * BK}, {bm * BM}); yellow: its rows 0-{show_rows - 1}",
           ha="center", va="top", fontsize=9.5)
    g.text(-0.1, tiles_m / 2, "M →", rotation=90, ha="right", va="center", fontsize=10)
    # (b) the box's first rows as they are in global memory, and (c) where TMA puts them.
    panels = []
    for n, (x0, title) in enumerate(((0.33, f"the box's rows 0-{show_rows - 1}, as in global memory\n"
                                            f"(each row: {row_bytes} bytes = {chunks} chunks of 16 B)"),
                                     (0.66, f"the same rows in shared memory,\nafter TMA's 128-byte swizzle"))):
        ax = fig.add_axes((x0, 0.1, 0.3, 0.72))
        ax.set_xlim(-1.4, chunks + 0.1)
        ax.set_ylim(show_rows + 2.2, -1.6)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(title, fontsize=10.5, fontweight="bold")
        panels.append(ax)
        for r in range(show_rows):
            for cc in range(chunks):  # logical chunk cc of row r: elements k = 8cc .. 8cc+7
                if n == 0:
                    pos = cc
                else:  # gemm::swizzle::byte_offset<128>, restated as swizzle128 above
                    off = swizzle128(r * row_bytes + 16 * cc)
                    assert off // row_bytes == r
                    pos = (off % row_bytes) // 16
                box(ax, pos, r, 1, 1, chunk_face[cc], edge="white", lw=1)
                ax.text(pos + 0.5, r + 0.5, f"k{per_chunk * cc}", ha="center", va="center", fontsize=8.5,
                        color="white", fontweight="bold" if cc in slice_chunks else None)
                if cc in slice_chunks:
                    box(ax, pos + 0.06, r + 0.06, 0.88, 0.88, "none", edge="black", lw=2.0, z=3)
            ax.text(-0.15, r + 0.5, f"{r}", ha="right", va="center", fontsize=8.5,
                    color="black" if n == 0 else "#333333")
        for cc in range(chunks):
            ax.text(cc + 0.5, -0.15, f"{cc}", ha="center", va="bottom", fontsize=8.5, color="#555555")
        ax.text(chunks / 2, -0.85, "16-byte chunk position", ha="center", va="bottom", fontsize=9)
        ax.plot([0, chunks], [8, 8], color="black", lw=1.5, ls="--", zorder=4)
        ax.text(-1.2, show_rows / 2, "row of the box", rotation=90, ha="center", va="center", fontsize=9)
    panels[0].text(chunks / 2, show_rows + 0.3,
                   f"cell label: the chunk's first k (8 bf16: k..k+7)\n"
                   f"outlined: wgmma k16 slice kk={kk_show} (k {kk_show * WK}-{kk_show * WK + WK - 1}), "
                   f"chunks {min(slice_chunks)}-{max(slice_chunks)}", ha="center", va="top", fontsize=9.5)
    panels[1].text(chunks / 2, show_rows + 0.3,
                   f"chunk c of row r → chunk c XOR (r % 8); rows {show_rows}-{BM - 1} repeat\n"
                   f"the pattern every 8 rows (1024 B), so the box starts 1024-B aligned",
                   ha="center", va="top", fontsize=9.5)
    for yg, yp in ((bm, 0), (bm + show_rows / BM, show_rows)):  # the yellow strip, enlarged in (b)
        fig.add_artist(ConnectionPatch((bk + 1, yg), (0, yp), coordsA="data", coordsB="data", axesA=g,
                                       axesB=panels[0], color="#999999", lw=1, ls="--"))
    fig.text(0.645, 0.47, "TMA\n→", ha="center", va="center", fontsize=15, fontweight="bold", color=A)
    fig.text(0.5, 0.04,
             f"One cp.async.bulk.tensor.2d (UTMALDG in the SASS) per box: {BM} x {BK} bf16 = "
             f"{BM * row_bytes // 1024} KB; A's and B's boxes arrive on the one full mbarrier as "
             f"TILE_BYTES = {c['TILE_BYTES']} bytes.\n"
             "Byte offset in shared memory = linear ^ (((linear >> 7) & 7) << 4): "
             "gemm::swizzle::byte_offset<128> (common/kernel_lib/swizzle.hpp).",
             ha="center", va="center", fontsize=10.5)
    fig.suptitle(f"TMA writes a {BM} x {BK} box of A into shared memory with the 128-byte swizzle: "
                 "row r's chunk c goes to chunk c XOR (r % 8)\n(step 11's box; B's "
                 f"{c['BN']} x {BK} box is swizzled the same way)", fontsize=13, y=0.985)
    return fig


# ---------------------------------------------------------------------------------------------------
@style.figure("mbarrier_ring",
              "Step 13's ring of STAGES = 4 stages, each with a full and an empty mbarrier: K tile kt uses stage "
              "kt % 4 in round kt / 4; the consumer waits for full[s] with parity round & 1, the producer for "
              "empty[s] with the opposite parity, which a fresh barrier grants at once, so the first four "
              "loads go out without waiting")
def mbarrier_ring():
    c = k("13")
    S, BM, BN, BK, WARPS = c["STAGES"], c["BM"], c["BN"], c["BK"], c["CONSUMER_WARPS"]
    stage_bytes = c["STAGE_BYTES"]
    assert stage_bytes == (BM + BN) * BK * BF16
    n_kt = 3 * S
    stage_face = [style.CYAN, style.YELLOW, "#99ddaa", "#ddaacc"]
    fig = plt.figure(figsize=(14, 11))
    # Top: the ring and its two barriers per stage.
    top = fig.add_axes((0.02, 0.64, 0.96, 0.28))
    top.set_xlim(-3.2, 4 * S + 3.2)
    top.set_ylim(4.4, -2.0)
    top.axis("off")
    for s in range(S):
        x = 4 * s + 0.3
        box(top, x, 0, 3.4, 1.6, stage_face[s], lw=1.2)
        top.text(x + 1.7, 0.8, f"stage {s}\nsA[{s}] {BM * BK * BF16 // 1024} KB + sB[{s}] {BN * BK * BF16 // 1024} KB",
                 ha="center", va="center", fontsize=10)
        box(top, x, 2.0, 1.6, 0.9, "white", lw=1.2)
        top.text(x + 0.8, 2.45, f"full[{s}]", ha="center", va="center", fontsize=10, fontweight="bold")
        box(top, x + 1.8, 2.0, 1.6, 0.9, "white", lw=1.2)
        top.text(x + 2.6, 2.45, f"empty[{s}]", ha="center", va="center", fontsize=10, fontweight="bold")
    top.text(-3.1, 0.8, "producer\n(thread 0 of\nwarpgroup 0)", ha="left", va="center", fontsize=10.5,
             fontweight="bold")
    top.text(4 * S + 3.1, 0.8, "consumer\n(warpgroup 1,\n4 warps)", ha="right", va="center", fontsize=10.5,
             fontweight="bold")
    top.text(2 * S, 3.25,
             f"full[s]: 1 arrival (the producer's arrive.expect_tx) + {stage_bytes} bytes from the two TMA copies "
             f"complete a phase: \"the stage's K tile has landed\"\n"
             f"empty[s]: {WARPS} arrivals (lane 0 of each consumer warp, after its wgmma.wait_group 0) complete a "
             f"phase: \"the stage may be overwritten\"", ha="center", va="top", fontsize=10)
    for s in range(S - 1):
        arrow(top, (4 * s + 3.75, 0.8), (4 * s + 4.25, 0.8), lw=1.6)
    arrow(top, (4 * (S - 1) + 2.0, -0.02), (1.6, -0.02), lw=1.6, rad=0.08)
    top.text(2 * S, -1.3, f"after stage {S - 1} the ring wraps to stage 0: the round goes up by one and the "
             "parity each wait tests flips", ha="center", va="bottom", fontsize=10.5)
    # Bottom: what each K tile waits for.
    ax = fig.add_axes((0.02, 0.04, 0.96, 0.58))
    ax.set_xlim(-6.2, n_kt + 0.1)
    rows = ["K tile kt", "stage s = kt % 4", "round r = kt / 4",
            "producer: wait empty[s],\nparity (r & 1) ^ 1",
            "producer: expect_tx + 2 TMA\n→ full[s] completes phase r",
            "consumer: wait full[s],\nparity r & 1",
            f"consumer: wgmmas, then {WARPS} warps\narrive → empty[s] completes phase r"]
    heights = [0.7, 0.7, 0.7, 1.3, 1.3, 1.3, 1.3]
    ys = [sum(heights[:i]) for i in range(len(rows))]
    ax.set_ylim(ys[-1] + heights[-1] + 1.4, -0.1)
    ax.axis("off")
    for i, (label, y, h) in enumerate(zip(rows, ys, heights)):
        ax.text(-0.15, y + h / 2, label, ha="right", va="center", fontsize=10,
                fontweight="bold" if i in (3, 5) else None)
    for kt in range(n_kt):
        s, r = kt % S, kt // S
        cells = [(str(kt), "white", 11), (str(s), stage_face[s], 11), (str(r), "white", 11),
                 (f"parity {(r & 1) ^ 1}" + ("\nat once" if r == 0 else f"\nafter kt {kt - S}"),
                  stage_face[s], 9),
                 (f"full[{s}]\nphase {r}", "white", 9),
                 (f"parity {r & 1}\nfull[{s}]", stage_face[s], 9),
                 (f"empty[{s}]\nphase {r}", "white", 9)]
        for (text, face, fs), y, h in zip(cells, ys, heights):
            box(ax, kt, y, 1, h, face, edge="#777777", lw=0.6)
            ax.text(kt + 0.5, y + h / 2, text, ha="center", va="center", fontsize=fs)
        ax.plot([kt + 0.5] * 2, [ys[4] + heights[4] - 0.05, ys[5] + 0.05], color="#555555", lw=1)
    for r in range(n_kt // S):
        ax.plot([S * r] * 2, [0, ys[-1] + heights[-1]], color="black", lw=2.2, zorder=4)
    ax.plot([n_kt] * 2, [0, ys[-1] + heights[-1]], color="black", lw=2.2, zorder=4)
    kt = 1  # one example: the consumer's release of K tile 1 lets the producer refill stage 1 with K tile 5
    arrow(ax, (kt + 0.8, ys[6] + 0.2), (kt + S + 0.2, ys[3] + heights[3] - 0.15), color=style.PURPLE, lw=2.2,
          rad=-0.2, ms=16)
    ax.text(n_kt / 2, ys[-1] + heights[-1] + 0.2,
            f"purple arrow (one of many): the consumer's release of K tile kt lets the producer refill that stage "
            f"with K tile kt + {S}.\nwait(parity p) returns once the barrier's phase of parity p has completed; "
            "a fresh barrier "
            "is in phase 0, so waiting for parity 1 returns at once.\nA barrier's phase r completes in round r, "
            "so the consumer's parity is r & 1; the producer's wait in round r needs phase r - 1 of empty[s].",
            ha="center", va="top", fontsize=10)
    fig.suptitle(f"Step 13's ring: {S} stages, a full and an empty mbarrier each; K tile kt waits on stage kt % {S} "
                 f"with the parity of its round\n(kernels/13_warp_specialization.cu; steps 15 on carry the same "
                 "stage and phase in pipe::PipeState)", fontsize=13, y=0.985)
    return fig


# ---------------------------------------------------------------------------------------------------
def trace_path(step):
    return style.ROOT / "results" / "traces" / f"nvidia_h200_trace_{step}_8192.json.gz"


@functools.lru_cache(maxsize=None)
def trace_medians(step, first_kt=3):
    """Median lengths (microseconds) of a committed 8192^3 trace's intervals over K tiles >= first_kt (the
    first ones include the cold start): 'wait full', 'wgmma', 'producer: wait empty', and the gaps between
    one interval of a warpgroup and its next ('wait->mma', 'mma->wait', 'producer' between two waits)."""
    events = json.loads(gzip.decompress(trace_path(step).read_bytes()))["traceEvents"]
    lengths, lanes = defaultdict(list), defaultdict(list)
    for e in events:
        lanes[(e["pid"], e["args"]["block"], e["args"]["wg"])].append(e)
        if e["args"]["kt"] >= first_kt:
            lengths[e["name"]].append(e["dur"])
    for lane in lanes.values():
        lane.sort(key=lambda e: e["ts"])
        for a, b in zip(lane, lane[1:]):
            if a["args"]["kt"] < first_kt:
                continue
            gap = b["ts"] - a["ts"] - a["dur"]
            pair = (a["name"], b["name"])
            if pair == ("wait full", "wgmma"):
                lengths["wait->mma"].append(gap)
            elif pair == ("wgmma", "wait full"):
                lengths["mma->wait"].append(gap)
            elif pair == ("producer: wait empty", "producer: wait empty"):
                lengths["producer"].append(gap)
    return {name: statistics.median(v) for name, v in lengths.items()}


def bench_tflops(step, size=8192):
    """TFLOP/s of step `step` at size^3 in the committed bench (results/nvidia_h200.csv, the step's row)."""
    import csv
    with open(style.ROOT / "results" / "nvidia_h200.csv") as f:
        for r in csv.DictReader(f):
            if r["step"] == step and r["kernel"] == "step" and int(r["m"]) == size:
                return float(r["tflops"])
    raise SystemExit(f"error: results/nvidia_h200.csv has no row for step {step} at {size}")


@style.figure("one_stage_vs_ring",
              "Schematic timelines of ONE block of each step, each interval drawn at its median length in the "
              "committed 8192^3 traces: step 12 issues a K tile's TMA, waits for it, runs the wgmmas, "
              "synchronizes and only then loads the next tile; step 13's producer keeps up to STAGES = 4 loads "
              "ahead, so the consumer finds each stage full. Per SM, step 12 runs three such blocks and step 13 "
              "one: measured, step 13 is 0.85x step 12 at 8192^3")
def one_stage_vs_ring():
    S = k("13")["STAGES"]
    m12, m13 = trace_medians("12"), trace_medians("13")
    load = m12["wait full"]  # step 12 issues right before it waits: its wait is the load's latency
    window = 9.0
    # Step 12: issue, wait (= the load), wgmma, fence + __syncthreads + next issue.
    s12 = {"load": [], "wait": [], "mma": [], "other": []}
    t, kt = 0.0, 0
    while t < window:
        s12["load"].append((t, load, kt))
        s12["wait"].append((t, load, kt))
        t += load + m12["wait->mma"]
        s12["mma"].append((t, m12["wgmma"], kt))
        t += m12["wgmma"]
        s12["other"].append((t, m12["mma->wait"], kt))
        t += m12["mma->wait"]
        kt += 1
    # Step 13: the producer waits for empty[s] (at once in round 0), issues, moves on; the consumer waits
    # for full[s] (at least the median wait of a stage already full), runs the wgmmas, releases the stage.
    s13 = {"load": [], "wait": [], "mma": [], "empty": [], "issue": [], "other": []}
    landed, released = {}, {}
    p, c, kt = 0.0, 0.0, 0
    while c < window:
        for pk in range(len(landed), kt + S):  # the producer runs as far ahead as the ring allows
            if pk >= S:
                if pk - S not in released:
                    break
                if released[pk - S] > p:
                    s13["empty"].append((p, released[pk - S] - p, pk))
                    p = released[pk - S]
            s13["issue"].append(p)
            s13["load"].append((p, load, pk))
            landed[pk] = p + load
            p += m13["producer"]
        start = c
        c = max(c + m13["wait full"], landed[kt])
        s13["wait"].append((start, c - start, kt))
        c += m13["wait->mma"]
        s13["mma"].append((c, m13["wgmma"], kt))
        c += m13["wgmma"]
        released[kt] = c
        s13["other"].append((c, m13["mma->wait"], kt))
        c += m13["mma->wait"]
        kt += 1
    blocks12, blocks13 = resources("12")["blocks"], resources("13")["blocks"]
    fig, axes = plt.subplots(2, 1, figsize=(14, 9.0), sharex=True, gridspec_kw={"height_ratios": [2, 3.4]})

    def bars(ax, items, y, h, face, label_kt=False, color="black", fs=8.5):
        for start, length, kt_ in items:
            if start >= window:
                continue
            ax.broken_barh([(start, min(length, window - start))], (y - h / 2, h), facecolors=face,
                           edgecolors="black", linewidth=0.6)
            if label_kt and start + length / 2 < window:
                ax.text(start + length / 2, y, str(kt_), ha="center", va="center", fontsize=fs, color=color)

    done = lambda sched: sum(1 for start, length, _ in sched["mma"] if start + length <= window)
    ax = axes[0]
    bars(ax, s12["load"], 1, 0.5, LOAD, label_kt=True)
    bars(ax, s12["wait"], 0, 0.6, WAIT)
    bars(ax, s12["mma"], 0, 0.6, C, label_kt=True, color="white", fs=9.5)
    bars(ax, s12["other"], 0, 0.6, IDLE)
    ax.set_yticks([0, 1], ["warpgroup\n(all 128 threads)", "TMA load\nin flight"], fontsize=10)
    ax.set_ylim(-0.7, 1.6)
    ax.set_title(f"step 12, ONE of the {blocks12} blocks on an SM, one stage: load → wait → wgmma → __syncthreads, "
                 f"one K tile at a time\n(this block: {done(s12)} K tiles in {window:.0f} µs; the SM's other "
                 f"{blocks12 - 1} blocks can run their wgmmas during its waits)", fontsize=11.5, loc="left")
    ax = axes[1]
    for s in range(S):
        bars(ax, [b for b in s13["load"] if b[2] % S == s], 1 + s * 0.55, 0.45, LOAD, label_kt=True)
    bars(ax, s13["empty"], 1 + S * 0.55 + 0.2, 0.5, style.GREY)
    for x in s13["issue"]:
        if x < window:
            ax.plot([x, x], [1 + S * 0.55 - 0.05, 1 + S * 0.55 + 0.5], color="black", lw=1.6)
    bars(ax, s13["wait"], 0, 0.6, WAIT)
    bars(ax, s13["mma"], 0, 0.6, C, label_kt=True, color="white", fs=9.5)
    bars(ax, s13["other"], 0, 0.6, IDLE)
    ax.set_yticks([0] + [1 + s * 0.55 for s in range(S)] + [1 + S * 0.55 + 0.2],
                  ["consumer\nwarpgroup"] + [f"load into stage {s}" for s in range(S)]
                  + ["producer (thread 0)"], fontsize=10)
    ax.set_ylim(-0.7, 1 + S * 0.55 + 0.7)
    ax.set_title(f"step 13, the ONLY block on its SM ({blocks13} per SM), a ring of {S} stages: the producer "
                 f"issues as soon as a stage is empty\n(this block: {done(s13)} K tiles in {window:.0f} µs; "
                 f"nothing else on the SM fills its gaps)", fontsize=11.5, loc="left")
    ax.set_xlim(0, window)
    ax.set_xlabel("time (µs) from the block's first load", fontsize=10)
    handles = [Patch(facecolor=LOAD, edgecolor="black", label="TMA load in flight (number: K tile)"),
               Patch(facecolor=WAIT, edgecolor="black", label="wait full[s]"),
               Patch(facecolor=C, edgecolor="black", label="wgmmas of a K tile"),
               Patch(facecolor=IDLE, edgecolor="black", label="fences, arrive on empty / __syncthreads + issue"),
               Patch(facecolor=style.GREY, edgecolor="black", label="producer: wait empty[s]"),
               Line2D([], [], color="black", lw=1.6, label="producer: expect_tx + 2 TMA issued")]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=9.5, frameon=False, bbox_to_anchor=(0.5, 0.0))
    fig.text(0.5, 0.005,
             "Schematic, not to scale beyond these medians (µs) of the 8192³ traces, K tiles ≥ 3 "
             "(results/traces/nvidia_h200_trace_{12,13}_8192.json.gz):\n"
             f"step 12: wait {m12['wait full']:.3f}, wgmma {m12['wgmma']:.3f}, gaps {m12['wait->mma']:.3f} + "
             f"{m12['mma->wait']:.3f};  step 13: wait {m13['wait full']:.3f}, wgmma {m13['wgmma']:.3f}, gaps "
             f"{m13['wait->mma']:.3f} + {m13['mma->wait']:.3f}, producer between issues {m13['producer']:.3f}.\n"
             f"The loads are not traced: each is drawn as long as step 12's median wait. Blocks per SM: "
             f"docs/resources.md. The SM as a whole, all its blocks: docs/img/trace_12_13_8192.png.",
             ha="center", va="top", fontsize=9.5)
    ratio = bench_tflops("13") / bench_tflops("12")
    words = {1: "one", 2: "two", 3: "three", 4: "four"}
    fig.suptitle("One stage serializes load and math; a ring lets the producer load ahead — drawn for "
                 f"one block; per SM, step 12 runs {words.get(blocks12, blocks12)}\n(step 13: "
                 f"{words.get(blocks13, blocks13)}), and measured, step 13 is {ratio:.2f}x step 12 at 8192³ "
                 "(results/nvidia_h200.csv)", fontsize=13, y=0.995)
    fig.tight_layout(rect=(0, 0.08, 1, 0.97))
    return fig


# ---------------------------------------------------------------------------------------------------
@style.figure("setmaxnreg_split",
              "Step 14's register file: at launch the 384 threads get 168 registers each (the cap of "
              "__launch_bounds__(384, 1)); then the producer warpgroup gives registers back (setmaxnreg.dec "
              "40) and the two consumer warpgroups take them (setmaxnreg.inc 232), room for their 128 "
              "accumulators each")
def setmaxnreg_split():
    c = k("14")
    threads, prod, cons, n_cons = c["THREADS"], c["PRODUCER_REGS"], c["CONSUMER_REGS"], c["CONSUMERS"]
    launch = resources("14")["regs"]  # ptxas -v, as docs/resources.md reports it
    assert launch == SM_REGISTERS // threads // 8 * 8, "the launch count is the cap 65536 / THREADS, down to 8"
    acc = c["WGMMA_M"] * c["WGMMA_N"] // 128  # fp32 accumulators per consumer thread
    wg = 128
    fig, ax = plt.subplots(figsize=(14, 6.2))
    ax.set_xlim(-9000, SM_REGISTERS + 1500)
    ax.set_ylim(4.4, -0.75)
    ax.axis("off")
    y_launch, y_after = 0.0, 2.9
    room = f"room for its {acc} accumulators + {cons - acc} more"
    rows = [(y_launch, "at launch", [("warpgroup 0\n(producer)", launch, style.GREY),
                                     ("warpgroup 1\n(consumer 0)", launch, LIGHT[C]),
                                     ("warpgroup 2\n(consumer 1)", launch, LIGHT[C])]),
            (y_after, "after setmaxnreg", [("producer", prod, style.GREY), (f"consumer 0: {room}", cons, C),
                                           (f"consumer 1: {room}", cons, C)])]
    for y, title, segs in rows:
        x = 0
        ax.text(-500, y + 0.5, title, ha="right", va="center", fontsize=11.5, fontweight="bold")
        for name, regs, face in segs:
            w = wg * regs
            box(ax, x, y, w, 1, face, lw=1.2)
            inside = f"{name}\n128 threads x {regs} = {w}" if w > 10000 else f"{regs}"
            ax.text(x + w / 2, y + 0.5, inside, ha="center", va="center", fontsize=10.5,
                    color="white" if face == C else "black")
            x += w
        free = SM_REGISTERS - x
        box(ax, x, y, free, 1, "white", edge="#999999", lw=0.8, hatch="//")
        ax.text(SM_REGISTERS + 300, y + 0.5, f"{free}\nunused", ha="left", va="center", fontsize=9.5)
    ax.text(0, y_after + 1.15, f"producer: 128 threads x {prod} = {wg * prod} (one thread issues the TMA copies; "
            "it needs few registers)", ha="left", va="top", fontsize=10)
    ax.text(SM_REGISTERS / 2, -0.15, f"the SM's {SM_REGISTERS} 32-bit registers, all given to one block of "
            f"{threads} threads", ha="center", va="bottom", fontsize=11)
    arrow(ax, (wg * launch / 2, y_launch + 1.05), (wg * prod / 2, y_after - 0.05), color=style.PURPLE, lw=2)
    ax.text((wg * launch + wg * prod) / 4, (y_launch + 1 + y_after) / 2, f"setmaxnreg.dec {prod}\n"
            f"SASS: USETMAXREG.DEALLOC 0x{prod:x}", ha="center", va="center", fontsize=10, color=style.PURPLE,
            zorder=6, bbox=dict(facecolor="white", edgecolor=style.PURPLE, boxstyle="round,pad=0.3"))
    for i in range(n_cons):
        x0 = wg * launch * (1 + i) + wg * launch / 2
        x1 = wg * prod + wg * cons * i + wg * cons / 2
        arrow(ax, (x0, y_launch + 1.05), (x1, y_after - 0.05), color=style.PURPLE, lw=2)
    ax.text(wg * launch * 2.5 + 1200, y_launch + 1.75, f"setmaxnreg.inc {cons}\nSASS: USETMAXREG.TRY_ALLOC "
            f"0x{cons:x}\n(waits until the block's pool\nhas the registers)", ha="left", va="center", fontsize=10,
            color=style.PURPLE, zorder=6,
            bbox=dict(facecolor="white", edgecolor=style.PURPLE, boxstyle="round,pad=0.3"))
    fig.suptitle(f"Step 14 moves registers to the warpgroups that hold accumulators: {threads} x {launch} at "
                 f"launch, then {prod} / {cons} / {cons} per thread\n"
                 f"{launch} = {SM_REGISTERS} / {threads} rounded down to a multiple of 8 (ptxas: {launch} "
                 f"registers, docs/resources.md);  128 x ({prod} + {n_cons} x {cons}) = "
                 f"{wg * (prod + n_cons * cons)} ≤ {SM_REGISTERS}", fontsize=12.5, y=0.99)
    return fig


# ---------------------------------------------------------------------------------------------------
@style.figure("two_consumers",
              "Step 14's 128x256 tile: two consumer warpgroups each own a 64-row slab of A and of C and read "
              "the whole shared B stage; per K tile each issues four wgmma.m64n256k16 (one per k16 slice) into "
              "its own 128 accumulators per thread")
def two_consumers():
    c = k("14")
    BM, BN, BK, WM, WN, WK = c["BM"], c["BN"], c["BK"], c["WGMMA_M"], c["WGMMA_N"], c["WGMMA_K"]
    S, n_cons, warps = c["STAGES"], c["CONSUMERS"], c["CONSUMER_WARPS"]
    assert BM == n_cons * WM and WN == BN
    a_kb, b_kb = BM * BK * BF16 // 1024, BN * BK * BF16 // 1024
    assert (a_kb + b_kb) * 1024 == c["STAGE_BYTES"]
    gap = 14
    xa, xc, yb, yc = 0, BK + gap, 0, BK + gap
    fig, ax = canvas(14, 7.6, (-112, xc + BN + 22), (-24, yc + BM + 20))
    shade = [(A, C, "white"), (LIGHT[A], LIGHT[C], "black")]  # consumer 0 dark, consumer 1 light
    # B stage above C, drawn as K x N (each column is one K-major row of sB in shared memory).
    box(ax, xc, yb, BN, BK, LIGHT[B], lw=1.2)
    for s in range(1, BK // WK):
        ax.plot([xc, xc + BN], [yb + s * WK] * 2, color=B, lw=0.8, ls="--")
    box(ax, xc, yb + WK, BN, WK, B, lw=1.4, z=3)
    ax.text(xc + BN / 2, yb - 3, f"sB[st]: {BN} x {BK} bf16 = {b_kb} KB, shared by both consumers\n"
            f"(drawn K down, N across; in shared memory each column is one K-major row)", ha="center",
            va="bottom", fontsize=10, color=B, fontweight="bold")
    for s in range(BK // WK):
        ax.text(xc + BN + 2, yb + (s + 0.5) * WK, f"kk={s}", ha="left", va="center", fontsize=9)
    ax.text(xc + BN / 2, yb + 1.5 * WK, f"k16 slice kk=1: every wgmma of both consumers reads all {BN} columns",
            ha="center", va="center", fontsize=9.5, color="white", zorder=4)
    # A stage left of C, its two slabs; C's two halves.
    for i in range(n_cons):
        fa, fc, tc = shade[i]
        box(ax, xa, yc + i * WM, BK, WM, fa, lw=1.2)
        box(ax, xc, yc + i * WM, BN, WM, fc, lw=1.2)
        for s in range(1, BK // WK):
            ax.plot([xa + s * WK] * 2, [yc + i * WM, yc + (i + 1) * WM], color="white" if i == 0 else A, lw=0.8,
                    ls="--")
        box(ax, xa + WK, yc + i * WM, WK, WM, "none", lw=2.2, z=3)
        ax.text(xa + BK / 2, yc + (i + 0.5) * WM, f"slab {i}\nrows\n{i * WM}-{(i + 1) * WM - 1}", ha="center",
                va="center", fontsize=9.5, color=tc, zorder=4,
                bbox=dict(facecolor=fa, edgecolor="none", pad=1))
        ax.text(xc + BN / 2, yc + (i + 0.5) * WM,
                f"consumer {i} (warpgroup {i + 1}): rows {i * WM}-{(i + 1) * WM - 1} x {BN} columns of C\n"
                f"{WM * WN // 128} fp32 accumulators per thread, in registers\n"
                f"per K tile: {BK // WK} x wgmma.m64n{WN}k16, one per k16 slice",
                ha="center", va="center", fontsize=10.5, color=tc)
        ax.text(xa - 4, yc + (i + 0.5) * WM,
                f"consumer {i}\n(warpgroup {i + 1})\nreads slab {i}\nof sA[st] and\nall of sB[st]",
                ha="right", va="center", fontsize=10, fontweight="bold")
    ax.text(xa + BK / 2, yc - 3, f"sA[st]: {BM} x {BK}\n= {a_kb} KB\n(outlined: kk=1)", ha="center",
            va="bottom", fontsize=10, color=A, fontweight="bold")
    ax.text(xc + BN / 2, yc + BM + 4,
            f"descriptors: A = s.a[st] + slab*{BK} + kk*{WK} (slab = 0 or {WM}),  B = s.b[st] + kk*{WK} "
            f"(the same for both)\none stage = {a_kb} + {b_kb} = {a_kb + b_kb} KB, {S} stages; "
            f"empty[st] needs {warps} arrivals (4 warps x {n_cons} consumers) before the producer refills it",
            ha="center", va="top", fontsize=10)
    fig.suptitle(f"Step 14: two consumer warpgroups split a {BM} x {BN} tile by rows and share each B stage",
                 fontsize=13, y=0.93)
    return fig
