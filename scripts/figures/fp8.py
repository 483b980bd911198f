"""Concept figure of the book's chapter "FP8" (step 30): what one-byte elements change in the K tile.

Sizes come from the kernels' constants (step_constants.constants): step 23's bf16 K tile (BK, WGMMA_K)
beside step 30's e4m3 one; the bytes per element are those of bf16 (2) and e4m3 (1)."""
import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

import style
from step_constants import constants

SWIZZLE_ROW = 128  # bytes: one 128-byte swizzle span, the row TMA writes and wgmma's descriptor reads
E4M3_MAX = 448     # e4m3's largest finite value (common/harness/fp8.hpp, kE4m3Max)


def _row(ax, y, bk, elem_bytes, wgmma_k, label, color):
    """One K-major row of a shared-memory tile: BK elements of elem_bytes each, coloured by the wgmma
    K slice that reads them (1 unit = 1 byte)."""
    slices = bk // wgmma_k
    for s in range(slices):
        x0 = s * wgmma_k * elem_bytes
        ax.add_patch(Rectangle((x0, y), wgmma_k * elem_bytes, 1, fc=color, ec="black", lw=1.2,
                               alpha=0.35 + 0.5 * (s % 2)))
        ax.text(x0 + wgmma_k * elem_bytes / 2, y + 0.5, f"k{wgmma_k} slice {s}\n{wgmma_k} x {elem_bytes} B = "
                f"{wgmma_k * elem_bytes} B", ha="center", va="center", fontsize=8.5)
    for e in range(bk + 1):  # element boundaries: thin ticks along the bottom edge
        ax.plot([e * elem_bytes] * 2, [y, y + 0.12], color="black", lw=0.4)
    ax.text(-4, y + 0.5, label, ha="right", va="center", fontsize=10)


@style.figure("fp8_k_tile",
              "One row of a K tile in shared memory, bf16 (step 23) against e4m3 (step 30): the 128-byte "
              "swizzle row holds 64 bf16 or 128 e4m3, so BK doubles; the FP8 wgmma reads K = 32 one-byte "
              "elements where bf16's reads 16 two-byte ones, so a K tile is 4 wgmmas either way and the "
              "k-th slice starts 32 k bytes into the row. Right: e4m3's positive values on a log scale, and "
              "where per-tensor scaling puts a tensor's largest |x| (on 448)")
def fp8_k_tile():
    c23, c30 = constants("23"), constants("30")
    fig, (ax, axv) = plt.subplots(1, 2, figsize=(13, 3.4), gridspec_kw={"width_ratios": [2.2, 1]})
    ax.set_xlim(-70, SWIZZLE_ROW + 4)
    ax.set_ylim(-0.9, 3.2)
    ax.axis("off")
    assert c23["BK"] * 2 == SWIZZLE_ROW and c30["BK"] * 1 == SWIZZLE_ROW, "a K tile row is one 128-byte swizzle span"
    _row(ax, 1.8, c23["BK"], 2, c23["WGMMA_K"], f"step 23, bf16\nBK = {c23['BK']}, wgmma k{c23['WGMMA_K']}", style.BLUE)
    _row(ax, 0.2, c30["BK"], 1, c30["WGMMA_K"], f"step 30, e4m3\nBK = {c30['BK']}, wgmma k{c30['WGMMA_K']}", style.RED)
    for b in range(0, SWIZZLE_ROW + 1, 32):
        ax.text(b, -0.35, f"{b} B", ha="center", va="center", fontsize=8)
    ax.text(SWIZZLE_ROW / 2, -0.75, "one 128-byte swizzle row (a K-major tile row; 8 rows = 1024 B, the descriptor's stride)",
            ha="center", va="center", fontsize=9)
    # e4m3's positive finite values: 3 mantissa bits, exponents -6..8 (subnormals below 2^-6).
    values = sorted({m / 8 * 2.0 ** -6 for m in range(1, 8)} |
                    {(1 + m / 8) * 2.0 ** e for e in range(-6, 9) for m in range(8) if (1 + m / 8) * 2.0 ** e <= E4M3_MAX})
    axv.vlines(values, 0, 1, color=style.RED, lw=0.8)
    axv.set_xscale("log", base=2)
    axv.set_yticks([])
    axv.set_xlim(2.0 ** -10, 2.0 ** 10)
    axv.axvline(E4M3_MAX, color="black", lw=1.5)
    axv.set_ylim(0, 1.4)
    axv.text(E4M3_MAX, 1.08, "448 = amax / scale", ha="right", va="bottom", fontsize=9)
    axv.text(2.0 ** -9, 1.08, "2^-9 (smallest)", ha="left", va="bottom", fontsize=9)
    axv.set_title(f"the {len(values)} positive e4m3 values (8 per octave)", fontsize=10)
    return fig
