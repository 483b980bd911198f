"""Concept figures of the book's chapter "FP8" (steps 30 on): what one-byte elements change in the K tile,
promotion and its overlap, which block scale multiplies which accumulator, and what the tensor core's
accumulator keeps.

Sizes come from the kernels' constants (step_constants.constants, family): step 23's bf16 K tile (BK,
WGMMA_K) beside step 30's e4m3 one; the bytes per element are those of bf16 (2) and e4m3 (1). The block
scales' mapping restates the lines of family/mainloop.cuh it draws (SCALE_CODE, checked against the file)
over the D fragment of hopper1.fragment_position, and lists what steps 32-36's configurations
(step_constants.configurations) load. The accumulator's width is the accuracy lab's committed output
(results/nvidia_h200_fp8_accumulator.md), checked against the harness's kUnitRoundoffFp8Accum; the
promotion figure models the error of that truncation and puts the lab's measured errors beside it
(results/nvidia_h200_fp8_lab.csv)."""
import csv
import math
import re

import matplotlib.pyplot as plt
from matplotlib.patches import Patch, Rectangle

import style
from step_constants import constants, family

SWIZZLE_ROW = 128  # bytes: one 128-byte swizzle span, the row TMA writes and wgmma's descriptor reads
E4M3_MAX = 448     # e4m3's largest finite value (common/harness/fp8.hpp, kE4m3Max)


def e4m3_values():
    """e4m3's positive finite values: 3 mantissa bits, exponents -6..8 (subnormals below 2^-6)."""
    return sorted({m / 8 * 2.0 ** -6 for m in range(1, 8)} |
                  {(1 + m / 8) * 2.0 ** e for e in range(-6, 9) for m in range(8) if (1 + m / 8) * 2.0 ** e <= E4M3_MAX})


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
    values = e4m3_values()
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


# The accuracy lab's errors against K (scripts/gpu_session.sh lab): each FP8 step at 256 x 256 x K.
LAB_ERRORS = style.ROOT / "results" / "nvidia_h200_fp8_lab.csv"


def lab_errors(path=LAB_ERRORS):
    """{step id: [(K, relative RMS error against the fp64 oracle)]}: each FP8 step's own rows of the lab."""
    out = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["kernel"] == "step" and r["rel_rms_err"]:
                out.setdefault(r["step"], []).append((int(r["k"]), float(r["rel_rms_err"])))
    return out


def accumulation_error(k_max, bits, every, n=512, seed=47):
    """The modelled relative RMS error of an FP8 GEMM's accumulation at K = 128, 256, ..., k_max, over n
    outputs of N(0, 1) inputs quantized to e4m3 (a per-tensor scale that puts 5, about the largest of such
    a tensor, on 448). Each k32 wgmma aligns the accumulator and its 32 products to the largest one's
    exponent and drops every bit of each below 2^-bits of it, toward zero, before it adds them (the lab's
    finding: truncation, not rounding); without promotion (step 30) that accumulator holds the whole of K,
    with it (step 31) it restarts every `every` k32 wgmmas and is added into an fp32 sum. Each output is
    one sequential sum, so the sum after K products is a sample at K. Returns {K: (tensor cores only,
    promoted, the same two as the harness measures them)}: against the exact sum of the same products,
    then with the result and the fp64 oracle each rounded once to bf16 after the scales (as an
    expectation: rel_bf16)."""
    import numpy as np  # matplotlib's own dependency
    rng = np.random.default_rng(seed)
    grid = np.array([0.0] + e4m3_values())
    scale = 5.0 / E4M3_MAX

    def quantize(x):  # e4m3(x / scale): the nearer grid value, saturated at 448
        a = np.minimum(np.abs(x) / scale, E4M3_MAX)
        i = np.clip(np.searchsorted(grid, a), 1, len(grid) - 1)
        return np.sign(x) * np.where(a - grid[i - 1] < grid[i] - a, grid[i - 1], grid[i])

    def add(acc, p):  # one k32 wgmma: acc (n) plus the products p (n x 32), truncated as the lab measured
        terms = np.concatenate([acc[:, None], p], axis=1)
        big = np.abs(terms).max(axis=1)
        step = np.exp2(np.floor(np.log2(np.where(big > 0, big, 1.0))) - bits)[:, None]
        return (np.trunc(terms / step) * step).sum(axis=1)

    def rel(got, want):
        return float(np.sqrt(np.sum((got - want) ** 2) / np.sum(want ** 2)))

    def rel_bf16(got, want):
        # The same once both are rounded to bf16 (8 significant bits: a spacing of 2^(e - 7) at want's
        # exponent e), as its expectation over where want falls between two bf16 values: an error of
        # (m + f) spacings becomes m spacings with probability 1 - f and m + 1 with f. (Sampling the
        # roundings instead makes a curve as noisy as the few outputs whose rounding flips.)
        spacing = np.exp2(np.floor(np.log2(np.abs(want))) - 7)
        m, f = np.divmod(np.abs(got - want) / spacing, 1.0)
        return float(np.sqrt(np.sum(spacing ** 2 * ((1 - f) * m ** 2 + f * (m + 1) ** 2)) / np.sum(want ** 2)))

    exact, plain, group = np.zeros(n), np.zeros(n), np.zeros(n)
    promoted = np.zeros(n, dtype=np.float32)
    out = {}
    for g in range(k_max // 32):
        p = quantize(rng.standard_normal((n, 32))) * quantize(rng.standard_normal((n, 32)))
        exact += p.sum(axis=1)  # e4m3 products have at most 8 significant bits: fp64 sums them exactly enough
        plain, group = add(plain, p), add(group, p)
        if (g + 1) % every == 0:
            promoted = (promoted + group.astype(np.float32)).astype(np.float32)
            group[:] = 0
        k = 32 * (g + 1)
        if k >= 128 and k & (k - 1) == 0:
            s = scale * scale
            out[k] = (rel(plain, exact), rel(promoted.astype(np.float64), exact),
                      rel_bf16(plain * s, exact * s), rel_bf16(promoted.astype(np.float64) * s, exact * s))
    return out


@style.figure("fp8_promotion",
              "Left, a timing model of one K tile of one consumer (not a measurement; 64 clocks per "
              "m64n128k32 wgmma at 8192 FLOP per clock, 64 FADDs, an assumed 40-clock drain): step 30 "
              "issues the 8 wgmmas of a K tile back to back and keeps one group in flight; step 31 "
              "drains the tensor cores after each slab's 4 wgmmas (wait_group 0), adds the 64 partial "
              "sums into fp32 registers on the CUDA cores, and only then starts the next group (scale-d "
              "= 0): the tensor cores idle during every promotion. Right, the relative RMS error of the "
              "accumulation against K, modelled with the truncation the accuracy lab measured on the H200 "
              "(results/nvidia_h200_fp8_accumulator.md: each k32 wgmma drops every bit of its addends below "
              "2^-13 of the largest, 14 significant bits) on N(0, 1) inputs quantized to e4m3: solid, the "
              "sum alone; dashed, as the harness measures it, the result and the fp64 oracle each rounded "
              "to bf16; markers, the lab's measured errors of steps 30 and 31 at 256 x 256 x K "
              "(results/nvidia_h200_fp8_lab.csv). Without promotion the error grows with K; promoted every "
              "128 K the sum's error stays flat, and what the check sees is the bf16 roundings it flips. "
              "Step 30's measured points at K = 16384 and 65536 lie below its curve because stream-K "
              "splits its K there")
def fp8_promotion():
    c30, c31 = family("30"), family("31")
    k_steps = c31["BK"] // c31["WGMMA_K"]
    slabs = c31["BM"] // c31["WGMMA_M"]
    every = c31["PROMOTE_EVERY"]
    assert c30["BK"] == c31["BK"] and c30["WGMMA_K"] == c31["WGMMA_K"], "31 changes the accumulation, not the tile"
    fig, (ax, axe) = plt.subplots(1, 2, figsize=(13, 4.0), gridspec_kw={"width_ratios": [1.9, 1]})
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
    # The error model: the truncation the lab measured, on modelled sums (accumulation_error), beside
    # the lab's measured errors.
    _, bits = lab_accumulator()  # the bits below the leading one the lab saw kept (13: 14 significant)
    model = accumulation_error(2 ** 16, bits, every)
    ks = sorted(model)
    for col, (sid, color, what) in enumerate((("30", style.RED, "tensor cores only"),
                                              ("31", style.BLUE, f"promoted every {every * 32} K"))):
        axe.plot(ks, [model[k][col] for k in ks], "-", color=color, label=f"step {sid}, {what}: the sum (model)")
        axe.plot(ks, [model[k][2 + col] for k in ks], "--", color=color, label=f"step {sid}: as checked, in bf16 (model)")
        pts = sorted(lab_errors().get(sid, []))
        axe.plot([k for k, _ in pts], [e for _, e in pts], "o" if sid == "30" else "s", color=color, mfc="none",
                 ls="none", label=f"step {sid}: measured (H200)")
    axe.set_xscale("log", base=2)
    axe.set_yscale("log", base=10)
    axe.set_xlabel("K")
    axe.set_ylabel("relative RMS error")
    axe.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    axe.set_title(f"accumulation error: the lab's truncation ({bits + 1} significant bits) modelled, and measured",
                  fontsize=9.5)
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


# ---- Block scales (step 32 on): which sfa and sfb multiply which accumulator -----------------------------
MAINLOOP = "common/kernel_lib/family/mainloop.cuh"
# The lines of the kernel library this picture restates; it refuses to draw once they change, so that a
# changed mapping is redrawn by hand rather than shown wrong. (The D fragment itself is hopper1's
# fragment_position, ptx::store_d_fragment_bf16's layout.)
SCALE_CODE = [
    "const int row0 = o.m0 + 16 * ((threadIdx.x % 128) / 32) + (threadIdx.x % 32) / 4;",  # warp's 16 rows, lane / 4
    "const int row = row0 + slab_row<C>(i, me) + 8 * h;",                                  # h: the fragment's second row
    "b = p.sfb + int64_t(o.tile_n) * p.k_tiles;",                                          # the tile's one row of sfb
    "const float sb = __ldg(b + kb);",
    "sc[i][h] = (a[i][h] ? __ldg(a[i][h] + kb * stride) : 0.0f) * sb;",
    "acc[r] += C::spec.scales == Scales::block ? tc[r] * sc[BlockScales<C>::scale_index(r)] : tc[r];",
    "static __device__ __forceinline__ constexpr int scale_index(int r) { return SWAP ? 2 * (r / 4) + r % 2 : (r / 2) % 2; }",
]
WARP, LANE = 1, 5  # the thread picked out (T37), as in the wgmma_fragment figure
SC_COLORS = {(0, 0): style.PURPLE, (0, 1): style.YELLOW, (1, 0): style.CYAN, (1, 1): style.GREEN}  # sc[i][h]


def _slabs(spec):
    """m64 slabs of the tile one consumer computes (config.hpp's slabs(): ping-pong all, cooperative half)."""
    bm = int(spec.get("bm", "128"))
    return bm // 64 if spec.get("consumers", "pingpong") == "pingpong" else bm // 128


@style.figure("fp8_block_scales",
              "Block scales (step 32 on) for one K tile kb of a 128 x 128 tile: every row i of A has its own "
              "sfa[kb][i] (1 x 128), the whole tile shares one sfb[n / 128][kb] (BN = 128: one block of B), so "
              "the K tile's partial in row i is multiplied by sfa[kb][i] * sfb as it is promoted. Which rows a "
              "thread holds comes from the wgmma D fragment: warp w has 16 rows of each m64 slab, lane l the "
              "rows 16w + l/4 and +8, two adjacent columns in every 8; so thread T37 (warp 1, lane 5) loads 4 "
              "sfa values (2 rows x 2 slabs) and one sfb, and accumulator r takes sc[slab][(r/2) % 2]")
def fp8_block_scales():
    from hopper1 import fragment_position
    from step_constants import configurations
    code = (style.ROOT / MAINLOOP).read_text()
    stale = [line for line in SCALE_CODE if line not in code]
    assert not stale, f"{MAINLOOP} no longer has {stale}: redraw fp8_block_scales (scripts/figures/fp8.py) for the new mapping"
    c = family("32")
    bm, bn, bk, wm = c["BM"], c["BN"], c["BK"], c["WGMMA_M"]
    assert bk == 128 and bn == 128, "one scale block per K tile and one block of B per tile: the picture's premise"
    slabs, frag = bm // wm, bn // 2
    mine = {}  # (row, col) of the tile -> (slab, h, r) for T37
    for i in range(slabs):
        for r in range(frag):
            row, col = fragment_position(WARP, LANE, r)
            mine[(i * wm + row, col)] = (i, (r // 2) % 2, r)
    rows_of = sorted({(rc[0], v[0], v[1]) for rc, v in mine.items()})  # (row, slab, h): the 4 sfa T37 loads
    fig = plt.figure(figsize=(16, 10))
    ax = fig.add_axes((0.0, 0.12, 0.46, 0.88))
    ax.set_aspect("equal")
    ax.axis("off")
    x0, y0 = 34, 26  # the tile's corner; 1 unit = 1 element
    ax.set_xlim(-2, x0 + bn + 4)
    ax.set_ylim(y0 + bm + 26, -4)
    # sfb: one value over the tile's 128 columns.
    ax.add_patch(Rectangle((x0, y0 - 14), bn, 8, fc=style.RED, ec="black", lw=1, alpha=0.55))
    ax.text(x0 + bn / 2, y0 - 10, f"sfb[n0 / {bn}][kb]: one scale for all {bn} columns (a {bn} x {bk} block of B)",
            ha="center", va="center", fontsize=9)
    # sfa: one value per row.
    for r in range(bm):
        hit = [v for v in rows_of if v[0] == r]
        color = SC_COLORS[(hit[0][1], hit[0][2])] if hit else "#c6d6ea"
        ax.add_patch(Rectangle((x0 - 12, y0 + r), 8, 1, fc=color, ec="black" if hit else "white", lw=0.8 if hit else 0.2))
    ax.text(x0 - 8, y0 - 2, f"sfa[kb][m0 + i]:\none per row\n(1 x {bk} of A)", ha="right", va="bottom", fontsize=9)
    # The tile, its slabs and warp bands, and T37's accumulators.
    ax.add_patch(Rectangle((x0, y0), bn, bm, fc="#eef5ef", ec="none"))
    for s in range(slabs):
        for w in range(4):
            ax.add_patch(Rectangle((x0, y0 + s * wm + 16 * w), bn, 16, fc="#d9eedd" if w % 2 else "#eef5ef", ec="none"))
            ax.text(x0 + bn + 1.5, y0 + s * wm + 16 * w + 8, f"warp {w}", va="center", fontsize=7.5)
        ax.add_patch(Rectangle((x0, y0 + s * wm), bn, wm, fc="none", ec="black", lw=1.4))
        ax.text(x0 - 14, y0 + s * wm + wm / 2, f"slab {s}\nrows\n{s * wm}-{s * wm + wm - 1}",
                ha="right", va="center", fontsize=9)
    for (row, col), (i, h, _) in mine.items():
        ax.add_patch(Rectangle((x0 + col, y0 + row), 1, 1, fc=SC_COLORS[(i, h)], ec="none"))
    for row, i, h in rows_of:
        ax.annotate("", xy=(x0 - 0.5, y0 + row + 0.5), xytext=(x0 - 4, y0 + row + 0.5),
                    arrowprops=dict(arrowstyle="-|>", color="black", lw=0.8))
        ax.text(x0 - 27, y0 + row + 0.5, f"row {row}: sc[{i}][{h}]", ha="right", va="center", fontsize=8, color="black")
    ax.text(x0 + bn / 2, y0 + bm + 3,
            f"one K tile (kb) of step 32's {bm} x {bn} tile: the coloured cells\nare T{32 * WARP + LANE}'s {slabs * frag} "
            f"accumulators (warp {WARP}, lane {LANE}: rows 16w + l/4\nand +8 of each slab, columns 8j + 2(l%4) and +1)",
            ha="center", va="top", fontsize=9.5)
    # Right, top: the corner of warp 1's band, lane and register of each accumulator.
    az = fig.add_axes((0.47, 0.36, 0.27, 0.62))
    az.set_aspect("equal")
    az.axis("off")
    band = 16 * WARP
    for lane in range(32):
        for r in range(4):  # the first 8-column block: d[0..3] of every lane
            row, col = fragment_position(WARP, lane, r)
            h = (r // 2) % 2
            face = SC_COLORS[(0, h)] if lane == LANE else ("#f4f4f4" if h == 0 else "#e2e2e2")
            az.add_patch(Rectangle((col, row - band), 1, 1, fc=face, ec="white", lw=0.8))
            az.text(col + 0.5, row - band + 0.5, f"l{lane} r{r}", ha="center", va="center", fontsize=6.8)
    for row in range(16):
        az.text(-0.3, row + 0.5, f"{band + row}", ha="right", va="center", fontsize=7)
    for col in range(8):
        az.text(col + 0.5, -0.3, f"{col}", ha="center", va="bottom", fontsize=7)
    az.set_xlim(-2.2, 8.2)
    az.set_ylim(16.2, -2.6)
    az.text(4, -1.6, f"warp {WARP}'s rows {band}-{band + 15}, columns 0-7 (lane l, register r)",
            ha="center", va="bottom", fontsize=8.5)
    # Right, top right: which configuration holds how many slabs a consumer, so how many sfa per K tile.
    at = fig.add_axes((0.75, 0.36, 0.25, 0.62))
    at.axis("off")
    groups = {}  # (consumers, BM) -> the configurations of steps 32-36 that have them
    for step in ("32", "33", "34", "35", "36"):
        for cfg in configurations(step):
            if cfg["fields"].get("scales") == "block":
                key = (cfg["fields"].get("consumers", "pingpong"), int(cfg["fields"].get("bm", bm)))
                groups.setdefault(key, []).append(f"{step} {cfg['name']}")
    lines = ["what a thread loads per K tile:", ""]
    for (kind, tile_m), names in groups.items():
        s = _slabs({"consumers": kind, "bm": str(tile_m)})
        lines += [", ".join(names) + ":", f"  {kind}, BM = {tile_m}",
                  f"  {s} slab{'s' if s > 1 else ''} a consumer", f"  -> {2 * s} sfa + 1 sfb", ""]
    lines += ["(cooperative: consumer c holds", " slab c, rows 64c + the same", " fragment rows)"]
    at.text(0.0, 0.93, "\n".join(lines), ha="left", va="top", fontsize=9.5, family="monospace", transform=at.transAxes)
    # Right, bottom: T37's registers, and the promotion that scales them.
    ar = fig.add_axes((0.47, 0.0, 0.52, 0.33))
    ar.axis("off")
    ar.set_xlim(-9, frag + 1)
    ar.set_ylim(9.5, -1.8)
    for i in range(slabs):
        y = 1 + 3.2 * i
        for r in range(frag):
            h = (r // 2) % 2
            ar.add_patch(Rectangle((r, y), 1, 1.2, fc=SC_COLORS[(i, h)], ec="white", lw=0.6))
            if r % 4 == 0:
                ar.text(r + 0.1, y + 1.45, f"{r}", ha="left", va="top", fontsize=6.5)
        ar.text(-0.5, y + 0.6, f"slab {i}:\ntc[r], acc[{i}][r]", ha="right", va="center", fontsize=8.5)
    ar.text(frag / 2, -0.3, f"T{32 * WARP + LANE}'s {frag} tensor-core sums per slab, r = 0 .. {frag - 1}: "
            "(r / 2) % 2 picks the row, so the scale", ha="center", va="bottom", fontsize=9)
    ar.text(-8.5, 7.6,
            "the promotion, per K tile kb and slab i (mainloop.cuh):\n"
            "  sc[i][h]   = sfa[kb][row(i, h)] * sfb[n0 / 128][kb]   h = 0, 1: the two rows\n"
            "  acc[i][r] += tc[r] * sc[i][(r / 2) % 2]               an FFMA, in fp32",
            ha="left", va="top", fontsize=9.5, family="monospace")
    return fig



# The code the swapped picture draws (step 40): where warp 1 of the producer warpgroup copies a K tile's scales in the
# stage, which of them a consumer thread reads, and which scale multiplies which accumulator.
PRODUCER = "common/kernel_lib/family/producer.cuh"
SWAP_SCALE_CODE = {
    PRODUCER: ["for (int i = int(threadIdx.x % 32); i < C::BN + SLAB_SCALES; i += 32) {",
               "if (col < p.N) src = p.sfa + int64_t(kt) * p.N + col, bytes = 4;",
               "if (row < p.M) src = p.sfb + int64_t(row / 128) * p.k_tiles + kt, bytes = 4;",
               "ptx::cp_async_4(ptx::smem_addr(&s.scales[st][i]), src, bytes);",
               "ptx::cp_async_mbarrier_arrive_noinc(&s.full[st]);"],
    MAINLOOP: ["const float* col = &s.scales[st][2 * (threadIdx.x % 4)];",
               "const float sb = s.scales[st][C::BN + slab_row<C>(i, me) / kWgmmaM];",
               "const float2 a2 = *reinterpret_cast<const float2*>(col + 8 * (c / 2));",
               "static __device__ __forceinline__ constexpr int scale_index(int r) { return SWAP ? 2 * (r / 4) + r % 2 : (r / 2) % 2; }"],
}
SWAP_W = 32  # the picture's tile: 64 rows of B by 32 columns (A's rows), step 40's middle width


@style.figure("fp8_block_scale_swap",
              "Block scales of a swapped tile (step 40) for one K tile kb: the kernel computes C^T = B A^T on "
              "64 rows of B (one slab, inside one 128-row block of B: one sfb value) by W columns that are rows "
              "of A, each with its own sfa[kb][m]. Thread T37 (warp 1, lane 5) holds columns 8j + 2(l%4) and "
              "+1, so W/4 sfa values, read from the stage where the producer warp's lanes copied the K tile's "
              "W sfa values and the slab's sfb (4-byte cp.async, each lane's full-barrier arrive fired as its copies land); "
              "accumulator r takes sc[2(r/4) + r%2]")
def fp8_block_scale_swap():
    from hopper1 import fragment_position
    from step_constants import configurations
    for path, lines in SWAP_SCALE_CODE.items():
        code = (style.ROOT / path).read_text()
        stale = [line for line in lines if line not in code]
        assert not stale, f"{path} no longer has {stale}: redraw fp8_block_scale_swap (scripts/figures/fp8.py)"
    cfg = [c for c in configurations("40") if c["fields"].get("swap") == "true"]
    assert cfg and cfg[0]["fields"].get("scales") == "block" and SWAP_W in cfg[0]["param_values"], \
        "step 40's swapped block-scaled tiles: the picture's premise"
    wm, w = 64, SWAP_W
    frag, sc_n = w // 2, w // 4
    colors = plt.get_cmap("tab10")
    mine = {}  # (row, col) of the tile -> scale_index(r)
    for r in range(frag):
        mine[fragment_position(WARP, LANE, r)] = 2 * (r // 4) + r % 2
    cols = {col: c for (_, col), c in mine.items()}  # T37's columns -> its scale register
    fig = plt.figure(figsize=(16, 8.5))
    ax = fig.add_axes((0.0, 0.05, 0.5, 0.93))
    ax.set_aspect("equal")
    ax.axis("off")
    x0, y0 = 22, 16
    ax.set_xlim(-2, x0 + w + 14)
    ax.set_ylim(y0 + wm + 14, -3)
    # sfa: one value per column (a row of A), above the tile.
    for col in range(w):
        hit = col in cols
        ax.add_patch(Rectangle((x0 + col, y0 - 7), 1, 4, fc=colors(cols[col]) if hit else "#c6d6ea",
                               ec="black" if hit else "white", lw=0.6 if hit else 0.3))
    ax.text(x0 + w / 2, y0 - 8, f"sfa[kb][m0 + j]: one per column, j = 0 .. {w - 1} (columns are rows of A)",
            ha="center", va="bottom", fontsize=9)
    # sfb: one value for the slab (its 64 rows lie in one 128-row block of B).
    ax.add_patch(Rectangle((x0 - 7, y0), 4, wm, fc=style.RED, ec="black", lw=1, alpha=0.55))
    ax.text(x0 - 8, y0 + wm / 2, "sfb[n0 / 128][kb]:\none for the\nslab's 64 rows\n(rows of B)",
            ha="right", va="center", fontsize=9)
    ax.add_patch(Rectangle((x0, y0), w, wm, fc="#eef5ef", ec="none"))
    for wp in range(4):
        ax.add_patch(Rectangle((x0, y0 + 16 * wp), w, 16, fc="#d9eedd" if wp % 2 else "#eef5ef", ec="none"))
        ax.text(x0 + w + 1, y0 + 16 * wp + 8, f"warp {wp}", va="center", fontsize=8)
    ax.add_patch(Rectangle((x0, y0), w, wm, fc="none", ec="black", lw=1.4))
    for (row, col), c in mine.items():
        ax.add_patch(Rectangle((x0 + col, y0 + row), 1, 1, fc=colors(c), ec="none"))
    for col, c in sorted(cols.items()):
        ax.annotate("", xy=(x0 + col + 0.5, y0 + 16 * WARP), xytext=(x0 + col + 0.5, y0 - 3),
                    arrowprops=dict(arrowstyle="-|>", color=colors(c), lw=0.7))
    ax.text(x0 + w / 2, y0 + wm + 2,
            f"one K tile (kb) of step 40's swapped 64 x {w} tile of C^T: the coloured cells are\n"
            f"T{32 * WARP + LANE}'s {frag} accumulators (warp {WARP}, lane {LANE}: rows 16w + l/4 and +8, columns\n"
            f"8j + 2(l%4) and +1), each column's colour its sfa value: {sc_n} of them a thread",
            ha="center", va="top", fontsize=9.5)
    # Right, top: the stage's scales and the producer lanes that copy them.
    asg = fig.add_axes((0.52, 0.55, 0.47, 0.4))
    asg.axis("off")
    n_floats = w + 4
    asg.set_xlim(-1, n_floats + 1)
    asg.set_ylim(9, -3)
    for i in range(n_floats):
        if i < w:
            face = colors(cols[i]) if i in cols else "#c6d6ea"
        elif i == w:
            face = style.RED
        else:
            face = "#f0f0f0"
        asg.add_patch(Rectangle((i, 0), 1, 2, fc=face, ec="white", lw=0.5, alpha=0.55 if i == w else 1))
        if i % 4 == 0 or i == w:
            asg.text(i + 0.5, 2.4, f"{i}", ha="center", va="top", fontsize=7)
        if i < w + 1:
            asg.text(i + 0.5, -0.3, f"l{i % 32}", ha="center", va="bottom", fontsize=5.5, rotation=90)
    asg.text(0, -2.6, f"s.scales[st][0 .. {n_floats - 1}]: the stage's scales, copied by warp 1's lanes "
             f"(lane l: floats l, l + 32, ...)", ha="left", va="bottom", fontsize=9)
    asg.text(0, 3.6,
             "producer warpgroup's warp 1, per stage (producer.cuh):\n"
             f"  lane l copies sfa[kb][m0 + l] (l < {w}), lane {w % 32} sfb[n0 / 128][kb]\n"
             "  by 4-byte cp.async (zero past M or N), then cp.async.mbarrier.arrive.noinc,\n"
             "  fired as its copies land (every lane, copy or not): the full barrier\n"
             "  expects 1 + 32 arrivals and the boxes' bytes",
             ha="left", va="top", fontsize=9, family="monospace")
    # Right, bottom: T37's registers and the scale each takes.
    ar = fig.add_axes((0.52, 0.05, 0.47, 0.42))
    ar.axis("off")
    ar.set_xlim(-7, frag + 1)
    ar.set_ylim(8, -2)
    for r in range(frag):
        c = 2 * (r // 4) + r % 2
        ar.add_patch(Rectangle((r, 0.5), 1, 1.4, fc=colors(c), ec="white", lw=0.6))
        ar.text(r + 0.5, 2.2, f"{r}", ha="center", va="top", fontsize=7)
        ar.text(r + 0.5, 3.1, f"sc{c}", ha="center", va="top", fontsize=6.5, rotation=90)
    ar.text(-0.5, 1.2, "tc[r],\nacc[0][r]", ha="right", va="center", fontsize=8.5)
    ar.text(frag / 2, -0.2, f"T{32 * WARP + LANE}'s {frag} tensor-core sums: r picks its column, so its scale, "
            "2(r/4) + r%2", ha="center", va="bottom", fontsize=9)
    ar.text(-6.5, 5.0,
            "after the stage's full-barrier wait (mainloop.cuh's load_ring):\n"
            "  sc[c]   = sfa[kb][m0 + 8(c/2) + 2(l%4) + c%2] * sfb   c = 0 .. W/4 - 1,\n"
            "            two adjacent sfa in one 8-byte LDS\n"
            "  acc[r] += tc[r] * sc[2(r/4) + r%2]                    an FFMA, in fp32",
            ha="left", va="top", fontsize=9, family="monospace")
    return fig

# ---- The FP8 tensor core's accumulator: what it keeps (the accuracy lab) and what promotion does ---------
LAB_RESULT = "results/nvidia_h200_fp8_accumulator.md"  # build/bin/lab_fp8_accumulator's output on the H200
COMPARE_HPP = "common/harness/compare.hpp"             # kUnitRoundoffFp8Accum: the tolerance's assumption
FP32_BITS = 24      # fp32's significand: 23 stored bits and the implicit leading one (IEEE 754)
E4M3_MANTISSA = 3   # e4m3's stored mantissa bits: a product of two has up to 2 x (1 + 3) = 8 significant bits
LONG_K = 8192       # the chapter's long K (8192^3): one running sum over all of it, step 30


def lab_accumulator():
    """The lab's measurement, read from its committed output: ({placement: {"+": [status by e],
    "-": [...]}}, the largest e every placement and sign kept): status "kept", "lost" or what arrived."""
    text = (style.ROOT / LAB_RESULT).read_text()
    out, cur = {}, None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("e  +s kept?"):
            cur = lines[i - 1].strip()
            out[cur] = {"+": [], "-": []}
            continue
        m = re.match(r"^\s*(\d+)\s+(\S+)\s+\S+\s+(\S+)\s+\S+\s*$", line)
        if cur and m:
            assert int(m.group(1)) == len(out[cur]["+"]), f"{LAB_RESULT}: e out of order under {cur!r}"
            out[cur]["+"].append(m.group(2))
            out[cur]["-"].append(m.group(3))
    kept_to = [int(x) for x in re.findall(r"kept every e up to: \+s (-?\d+), -s (-?\d+)", text) for x in x]
    if not out or not kept_to:
        raise SystemExit(f"error: {LAB_RESULT}: no measurement read (scripts/gpu_session.sh lab writes it)")
    return out, min(kept_to)


def _bits(ax, y, hi, lo, color, label, positions, alpha=0.8, text=None, hatch=None):
    """Bit cells for the powers 2^hi .. 2^lo on row y (x = the column of each power in `positions`)."""
    for p in range(hi, lo - 1, -1):
        x = positions.index(p)
        ax.add_patch(Rectangle((x, y), 1, 0.8, fc=color, ec="black", lw=0.5, alpha=alpha, hatch=hatch))
        if text:
            ax.text(x + 0.5, y + 0.4, text, ha="center", va="center", fontsize=7)
    ax.text(-0.4, y + 0.4, label, ha="right", va="center", fontsize=8.5)


def _bit_axis(ax, positions, y):
    for x, p in enumerate(positions):
        if p % 2 == 0 or len(positions) < 26:
            ax.text(x + 0.5, y, f"{p}", ha="center", va="bottom", fontsize=7)
    ax.text(-0.4, y, "power of 2:", ha="right", va="bottom", fontsize=8)


@style.figure("fp8_accumulator",
              "What the FP8 tensor core's fp32 accumulator keeps. Top, the accuracy lab's measurement on the "
              "H200 (2^16 plus one product 2^(16-e), in five placements, both signs): the small product "
              "survives up to e = 13 and is lost from e = 14, inside a wgmma and across wgmmas alike: 14 "
              "significant bits where fp32 has 24. Bottom left, what that means at the bit level: the addend is "
              "shifted to the larger sum's exponent and cut below its 14th bit (2^16 - 2^2 fits in 14 bits and "
              "is lost all the same: truncation, not rounding). Bottom right, why promotion helps: restarted "
              "every 128 of K, the tensor cores' running sum stays near sqrt(128) and its 14 bits reach low "
              "enough for a whole product; one sum over K = 8192 is near sqrt(8192), 3 bits higher, and cuts "
              "the product's lowest bits; the promoted fp32 sum keeps 24")
def fp8_accumulator():
    lab, kept_e = lab_accumulator()
    kept = kept_e + 1  # significant bits: the leading one and kept_e bits below it
    assumed = re.search(r"kUnitRoundoffFp8Accum\s*=\s*1\.0\s*/\s*(\d+)\.0", (style.ROOT / COMPARE_HPP).read_text())
    assert assumed and int(assumed.group(1)) == 2 ** (kept - 1), \
        f"{COMPARE_HPP}'s kUnitRoundoffFp8Accum is not 2^-{kept - 1}, the lab's {kept} bits: one of them is stale"
    c = family("31")
    promote_k = c["PROMOTE_EVERY"] * c["WGMMA_K"]
    fig = plt.figure(figsize=(15, 10))
    # Top: the measurement.
    ax = fig.add_axes((0.22, 0.64, 0.77, 0.29))
    e_max = FP32_BITS + 1
    rows = [(place, sign) for place in lab for sign in "+-"]
    colors = {"kept": style.GREEN, "lost": style.RED}
    for i, (place, sign) in enumerate(rows):
        for e, status in enumerate(lab[place][sign][:e_max + 1]):
            ax.add_patch(Rectangle((e, i), 1, 1, fc=colors.get(status, style.YELLOW), ec="white", lw=0.8, alpha=0.75))
        ax.text(-0.3, i + 0.5, f"{place}, {sign}s" if sign == "+" else f"{sign}s", ha="right", va="center", fontsize=8)
    ax.axvline(kept, color="black", lw=2)
    ax.axvline(FP32_BITS, color="black", lw=1.2, ls="--")
    ax.text(kept - 0.15, -0.25, f"kept up to e = {kept_e}: {kept} significant bits (measured)",
            ha="right", va="bottom", fontsize=9.5)
    ax.text(FP32_BITS - 0.15, -0.25, f"fp32 would keep up to e = {FP32_BITS - 1}", ha="right", va="bottom", fontsize=9)
    ax.set_xlim(0, e_max + 1)
    ax.set_ylim(len(rows), -1.1)
    ax.set_xticks([e + 0.5 for e in range(e_max + 1)], [str(e) for e in range(e_max + 1)], fontsize=8)
    ax.set_yticks([])
    ax.set_xlabel("e: the small product is 2^(16 - e), added to 2^16", fontsize=9.5)
    for s in ("top", "right", "left"):
        ax.spines[s].set_visible(False)
    ax.legend(handles=[Patch(fc=style.GREEN, alpha=0.75, label="kept: the result is 2^16 + s"),
                       Patch(fc=style.RED, alpha=0.75, label="lost: the result is 2^16")],
              loc="lower right", bbox_to_anchor=(1.0, 1.02), ncol=2, fontsize=9, frameon=False)
    fig.text(0.01, 0.98, f"the accuracy lab on the H200 ({LAB_RESULT})", fontsize=10.5, weight="bold")
    # Bottom left: the lab's add, bit by bit.
    ab = fig.add_axes((0.0, 0.31, 0.8, 0.23))
    ab.axis("off")
    ab.set_aspect("equal")
    big = 16
    low = big - FP32_BITS + 1
    pos = list(range(big, low - 1, -1))
    ab.set_xlim(-18, len(pos) + 0.5)
    ab.set_ylim(5.8, -1.8)
    _bit_axis(ab, pos, -0.15)
    cut = big - kept + 1  # the lowest power the tensor core keeps of a sum led by 2^16
    ab.add_patch(Rectangle((0, -0.05), pos.index(cut) + 1, 5.25, fc=style.GREEN, alpha=0.12, ec=style.GREEN, lw=1.2))
    ab.add_patch(Rectangle((pos.index(cut) + 1, -0.05), len(pos) - pos.index(cut) - 1, 5.25,
                           fc="none", ec="black", lw=0.8, ls="--"))
    ab.text((pos.index(cut) + 1) / 2, 5.35, f"the {kept} bits the tensor core keeps", ha="center", va="top", fontsize=8.5)
    ab.text((pos.index(cut) + 1 + len(pos)) / 2, 5.35, f"fp32's other {FP32_BITS - kept}", ha="center", va="top", fontsize=8.5)
    _bits(ab, 0.3, big, big, style.BLUE, "D = 2^16", pos, text="1")
    _bits(ab, 1.5, cut, cut, style.GREEN, f"+ 2^{cut} (e = {kept - 1}): kept", pos, text="1")
    _bits(ab, 2.7, cut - 1, cut - 1, style.RED, f"+ 2^{cut - 1} (e = {kept}): cut", pos, text="1")
    _bits(ab, 3.9, big - 1, cut - 1, style.YELLOW, f"2^16 - 2^{cut - 1}: {kept} bits, yet lost too", pos, text="1")
    ab.text(-17.5, -1.2, "the lab's sums at the bit level: the addend is aligned to the sum's exponent and cut "
            f"below its {kept}th bit", ha="left",
            va="center", fontsize=9, style="italic")
    # Bottom right: promotion.
    ap = fig.add_axes((0.0, 0.02, 1.0, 0.22))
    ap.axis("off")
    ap.set_aspect("equal")
    short = int(math.floor(math.log2(math.sqrt(promote_k))))  # leading bit of a sum of promote_k unit products
    long_ = int(math.floor(math.log2(math.sqrt(LONG_K))))
    prod_hi, prod_bits = -2, 2 * (1 + E4M3_MANTISSA)  # a product near 1/4, all 8 of its significant bits
    prod_lo = prod_hi - prod_bits + 1
    hi, lo = long_ + 1, long_ - FP32_BITS + 1
    pos = list(range(hi, lo - 1, -1))
    ap.set_xlim(-18, len(pos) + 11)
    ap.set_ylim(5.2, -1.8)
    _bit_axis(ap, pos, -0.15)
    _bits(ap, 0.3, prod_hi, prod_lo, style.BLUE, f"a product near 1/4 ({prod_bits} bits)", pos)
    _bits(ap, 1.5, short, short - kept + 1, style.GREEN, f"tc, promoted every {promote_k} K: sum ~ sqrt({promote_k})",
          pos, alpha=0.45)
    _bits(ap, 2.7, long_, long_ - kept + 1, style.RED, f"tc, never promoted, K = {LONG_K}: sum ~ sqrt({LONG_K})",
          pos, alpha=0.45)
    lost = [p for p in range(prod_hi, prod_lo - 1, -1) if p < long_ - kept + 1]  # bits the long sum cannot hold
    for p in lost:
        ap.add_patch(Rectangle((pos.index(p), 2.7), 1, 0.8, fc="none", ec=style.RED, lw=1.5, hatch="xx"))
    ap.text(len(pos) + 0.3, 3.1, f"the product's last {len(lost)} bits cut", ha="left", va="center", fontsize=8.5)
    ap.text(len(pos) + 0.3, 1.9, "the whole product kept", ha="left", va="center", fontsize=8.5)
    _bits(ap, 3.9, long_, lo, style.GREY, f"acc, fp32 on the CUDA cores: {FP32_BITS} bits", pos, alpha=0.6)
    ap.text(-17.5, -1.2, "what promotion keeps (a model: unit-size products with random signs, so a sum of k of them "
            "is near sqrt(k))",
            ha="left", va="center", fontsize=8.5, style="italic")
    return fig
