"""Concept figure of the book's chapter "FP8" (step 30): what one-byte elements change in the K tile.

Sizes come from the kernels' constants (step_constants.constants): step 23's bf16 K tile (BK, WGMMA_K)
beside step 30's e4m3 one; the bytes per element are those of bf16 (2) and e4m3 (1)."""
import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

import style
from step_constants import constants, family

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
    c23, c30 = constants("23"), family("30")
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


# The promotion picture (steps 30 and 31). A timing model, not a measurement: one m64n128k32 wgmma takes
# 64 * 128 * 32 * 2 / 8192 = 64 SM clocks at FP8's 8192 dense FLOP per clock; 64 FADDs issue in about
# 64 clocks (one warp instruction per clock on each of the 4 SM sub-partitions); DRAIN is an assumed
# wgmma fill-and-drain latency, a guess to be replaced by a measurement.
WGMMA_CLOCKS = 64 * 128 * 32 * 2 // 8192
FADD_CLOCKS = 64
DRAIN = 40


def _lane(ax, y, spans, color, label):
    for x0, w, text in spans:
        ax.add_patch(Rectangle((x0, y), w, 0.8, fc=color, ec="black", lw=0.8, alpha=0.75))
        if text:
            ax.text(x0 + w / 2, y + 0.4, text, ha="center", va="center", fontsize=7.5)
    ax.text(-8, y + 0.4, label, ha="right", va="center", fontsize=9)


@style.figure("fp8_promotion",
              "Left, a timing model of one K tile of one consumer (not a measurement; 64 clocks per "
              "m64n128k32 wgmma at 8192 FLOP per clock, 64 FADDs, an assumed 40-clock drain): step 30 "
              "issues the 8 wgmmas of a K tile back to back and keeps one group in flight; step 31 "
              "drains the tensor cores after each slab's 4 wgmmas (wait_group 0), adds the 64 partial "
              "sums into fp32 registers on the CUDA cores, and only then starts the next group (scale-d "
              "= 0): the tensor cores idle during every promotion. Right, the modelled relative error "
              "of the accumulation alone (round to nearest at 14 significant bits, random signs): without "
              "promotion it grows with sqrt(K), promoted every 128 K it stays flat")
def fp8_promotion():
    c30, c31 = family("30"), family("31")
    k_steps = c31["BK"] // c31["WGMMA_K"]
    slabs = c31["BM"] // c31["WGMMA_M"]
    every = c31["PROMOTE_EVERY"]
    assert c30["BK"] == c31["BK"] and c30["WGMMA_K"] == c31["WGMMA_K"], "31 changes the accumulation, not the tile"
    fig, (ax, axe) = plt.subplots(1, 2, figsize=(13, 3.6), gridspec_kw={"width_ratios": [2.2, 1]})
    # Step 30: 8 wgmmas back to back.
    spans30 = [(j * WGMMA_CLOCKS, WGMMA_CLOCKS, f"s{j % slabs} k{j // slabs}") for j in range(k_steps * slabs)]
    _lane(ax, 3.2, spans30, style.RED, "step 30\ntensor cores")
    # Step 31: per slab and group, the wgmmas, the drain, the FADDs.
    t, tc_spans, cuda_spans = 0, [], []
    for s in range(slabs):
        for g in range(k_steps // every):
            for k in range(every):
                tc_spans.append((t, WGMMA_CLOCKS, f"s{s} k{g * every + k}"))
                t += WGMMA_CLOCKS
            t += DRAIN
            cuda_spans.append((t, FADD_CLOCKS, f"{c31['WGMMA_N'] // 2} FADD\nslab {s}"))
            t += FADD_CLOCKS
    _lane(ax, 1.6, tc_spans, style.RED, "step 31\ntensor cores")
    _lane(ax, 0.6, cuda_spans, style.BLUE, "step 31\nCUDA cores")
    ax.set_xlim(-90, t + 20)
    ax.set_ylim(0.2, 4.4)
    ax.set_yticks([])
    ax.set_xlabel("SM clocks within one K tile (model)")
    ax.spines[["left", "top", "right"]].set_visible(False)
    ax.text(k_steps * slabs * WGMMA_CLOCKS, 4.15, f"{k_steps * slabs * WGMMA_CLOCKS} clocks", ha="right", fontsize=8)
    ax.text(t, 2.55, f"{t} clocks", ha="right", fontsize=8)
    # The error model: each k32 addition rounds the running sum (size ~ sqrt(32 j) after j steps) to 14
    # significant bits; promotion restarts the sum every 4 k32 steps and adds it in fp32.
    u = 2.0 ** -14 / 3 ** 0.5  # RMS rounding error of round-to-nearest at spacing 2^-13, relative
    ks = [2 ** e for e in range(7, 15)]
    plain = [u * (sum(32 * j for j in range(1, k // 32 + 1)) / k) ** 0.5 for k in ks]
    group = sum(32 * j for j in range(1, every + 1))
    promoted = [u * ((k // (32 * every)) * group / k) ** 0.5 for k in ks]
    axe.plot(ks, plain, "o-", color=style.RED, label="tensor cores only (step 30)")
    axe.plot(ks, promoted, "s-", color=style.BLUE, label=f"promoted every {every * 32} K (step 31)")
    axe.set_xscale("log", base=2)
    axe.set_yscale("log", base=2)
    axe.set_xlabel("K")
    axe.set_ylabel("relative RMS error (model)")
    axe.legend(fontsize=8)
    axe.set_title("accumulation error alone, modelled", fontsize=10)
    return fig


@style.figure("fp8_overlap",
              "A timing model of two K tiles of one block (not a measurement; the clocks of the "
              "promotion figure: 64 per m64n128k32 wgmma, 64 FFMAs of one slab, an assumed 40-clock "
              "drain). Step 32: one ping-pong consumer runs its 128 x 128 tile, one slab group at a "
              "time, and every group ends in a drain and 64 FFMAs during which the tensor cores idle "
              "(the other consumer waits for its turn). Step 34: the two consumers share the tile, a "
              "slab each; K tile kt's wgmmas go into one of two accumulator sets while the FFMAs of "
              "K tile kt - 1 read the other (wait_group 1), so the tensor cores always have a group queued")
def fp8_overlap():
    c32, c34 = family("32"), family("34")
    k_steps = c34["BK"] // c34["WGMMA_K"]
    slabs = c32["BM"] // c32["WGMMA_M"]
    assert c32["BK"] == c34["BK"] and c32["BM"] == c34["BM"] and c32["BN"] == c34["BN"], "34 changes the schedule, not the tile"
    tiles = 2
    fig, ax = plt.subplots(figsize=(13, 3.9))
    # Step 32: per K tile and slab, 4 wgmmas, the drain, the FFMAs, the next slab.
    t, tc32, cu32 = 0, [], []
    for kt in range(tiles):
        for s in range(slabs):
            for k in range(k_steps):
                tc32.append((t, WGMMA_CLOCKS, f"s{s} k{k}" if k == 0 else ""))
                t += WGMMA_CLOCKS
            t += DRAIN
            cu32.append((t, FADD_CLOCKS, f"FFMA\nkt{kt} s{s}"))
            t += FADD_CLOCKS
    end32 = t
    _lane(ax, 4.0, tc32, style.RED, "step 32\ntensor cores")
    _lane(ax, 3.0, cu32, style.BLUE, "step 32\nCUDA cores")
    # Step 34: the tensor pipe runs both consumers' groups back to back (8 wgmmas per K tile); each
    # consumer's FFMAs of K tile kt start once kt's group is issued and kt - 1's has completed.
    t, tc34, cu34 = 0, [], {0: [], 1: []}
    for kt in range(tiles):
        start = t
        for k in range(k_steps):
            for c in range(slabs):  # the two consumers' wgmmas interleave on the shared pipe
                tc34.append((t, WGMMA_CLOCKS, f"c{c} k{k}" if k == 0 else ""))
                t += WGMMA_CLOCKS
        for c in range(slabs):
            if kt > 0:  # kt - 1's partial, promoted while kt's wgmmas run
                cu34[c].append((start + DRAIN + c * FADD_CLOCKS, FADD_CLOCKS, f"FFMA kt{kt - 1}\nc{c}"))
    for c in range(slabs):  # the last K tile's promotion after its own group
        cu34[c].append((t + DRAIN + c * FADD_CLOCKS, FADD_CLOCKS, f"FFMA kt{tiles - 1}\nc{c}"))
    end34 = t
    _lane(ax, 1.6, tc34, style.RED, "step 34\ntensor cores")
    _lane(ax, 0.6, cu34[0], style.BLUE, "step 34\nconsumer 0")
    _lane(ax, -0.4, cu34[1], style.BLUE, "step 34\nconsumer 1")
    ax.text(end32, 4.95, f"{end32} clocks for {tiles} K tiles", ha="right", fontsize=8)
    ax.text(end34, 2.55, f"{end34} clocks of wgmmas for {tiles} K tiles", ha="right", fontsize=8)
    ax.set_xlim(-110, end32 + 20)
    ax.set_ylim(-0.6, 5.2)
    ax.set_yticks([])
    ax.set_xlabel("SM clocks (model)")
    ax.spines[["left", "top", "right"]].set_visible(False)
    return fig
