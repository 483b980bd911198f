"""Concept figures of the machine chapter and the fp32 ladder (steps 01-09b): the memory hierarchy, the
SM, the thread hierarchy, coalescing, tile and wave quantization, the outer product, the tiles of
steps 03, 04, 05 and 08 with their k loops, step 09's cp.async ring, and the roofline.

Sizes come from the kernels' constants (step_constants.constants("05")["BM"] ...), the machine from
the committed bench CSV (results/nvidia_h200.csv: SM count, L2 size, max clock), bytes from the ncu
roofline CSV (results/profiles/nvidia_h200_roofline_4096.csv). Hardware numbers that are neither
measured nor from a device query carry their source on the figure: the NVIDIA H200 datasheet, the CUDA
C Programming Guide (compute capability 9.0; shared memory: 32 banks of 4 bytes, each 4 bytes per
clock), or arithmetic from those. Where a picture needs a duration that nobody measured (the ring's
time line), it says it is schematic."""
import csv
import functools
import math

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

import style
from step_constants import constants

ROOT = style.ROOT
BENCH = ROOT / "results" / "nvidia_h200.csv"
ROOFLINE = ROOT / "results" / "profiles" / "nvidia_h200_roofline_4096.csv"
A, B, C = style.A_COLOR, style.B_COLOR, style.C_COLOR
INK = "#222222"
LIGHT = "#eeeeee"


@functools.lru_cache(None)
def machine():
    """The GPU of the committed bench run: name, SMs, L2 MiB, max SM clock (MHz)."""
    with open(BENCH) as f:
        r = next(csv.DictReader(f))
    return dict(gpu=r["gpu"], sms=int(r["sm_count"]), l2_mib=int(r["l2_mib"]), mhz=int(r["max_sm_clock_mhz"]))


@functools.lru_cache(None)
def ncu_bytes():
    """{step: row} of the ncu roofline CSV (one GEMM at 4096^3)."""
    with open(ROOFLINE) as f:
        return {r["step"]: r for r in csv.DictReader(f)}


@functools.lru_cache(None)
def k(step):
    return constants(step)


def box(ax, x, y, w, h, text="", fc="white", ec=INK, lw=1.2, fs=9, color=INK, weight="normal", round_=True,
        ha="center", va="center", zorder=2, alpha=1.0):
    style_ = "round,pad=0,rounding_size=0.08" if round_ else "square,pad=0"
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle=style_, fc=fc, ec=ec, lw=lw, zorder=zorder, alpha=alpha))
    if text:
        tx = {"center": x + w / 2, "left": x + 0.1, "right": x + w - 0.1}[ha]
        ty = {"center": y + h / 2, "top": y + h - 0.1, "bottom": y + 0.1}[va]
        ax.text(tx, ty, text, ha=ha, va=va, fontsize=fs, color=color, weight=weight, zorder=zorder + 1)


def grid(ax, x, y, cols, rows, cw, ch, fc="white", ec="#999999", lw=0.4, zorder=1):
    """rows x cols cells of cw x ch from (x, y) = the top-left corner, row 0 on top."""
    for r in range(rows):
        for c in range(cols):
            ax.add_patch(Rectangle((x + c * cw, y - (r + 1) * ch), cw, ch, fc=fc, ec=ec, lw=lw, zorder=zorder))


def cell(ax, x, y, c, r, cw, ch, fc, ec=INK, lw=0.6, zorder=3, alpha=1.0):
    ax.add_patch(Rectangle((x + c * cw, y - (r + 1) * ch), cw, ch, fc=fc, ec=ec, lw=lw, zorder=zorder, alpha=alpha))


def arrow(ax, p, q, color=INK, lw=1.2, style_="-|>", ms=10, ls="-", rad=0.0, zorder=4):
    ax.add_patch(FancyArrowPatch(p, q, arrowstyle=style_, mutation_scale=ms, color=color, lw=lw, linestyle=ls,
                                 connectionstyle=f"arc3,rad={rad}", zorder=zorder))


def canvas(w, h, xlim, ylim):
    fig, ax = plt.subplots(figsize=(w, h))
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


# ---------------------------------------------------------------------------------------------------
# The machine
# ---------------------------------------------------------------------------------------------------

@style.figure("memory_hierarchy", "The H200's memory hierarchy: registers and L1/shared memory in each of "
              "the 132 SMs, one L2 and HBM3e shared by all; each level down is larger, farther and slower "
              "to feed the cores, and every number is tagged with where it comes from")
def memory_hierarchy():
    m = machine()
    sms, ghz = m["sms"], m["mhz"] / 1000
    regs_kb = 64 * 1024 * 4 // 1024  # 64 Ki 32-bit registers per SM
    l1_tbps = sms * 128 * ghz / 1000
    fig, ax = canvas(10, 6.2, (0, 20), (-0.6, 12.6))
    # name, size text, bandwidth text, width of its box, fill
    levels = [
        ("registers", f"64 Ki x 32-bit = {regs_kb} KB per SM [G]\nat most 255 per thread [G]",
         "the operands of every instruction:\nan FFMA reads 3 and writes 1 per lane", 6.4, "#dde8f3"),
        ("L1 / shared memory", "256 KB per SM, of which up to\n228 KB shared (227 KB per block) [G]",
         f"128 B per clock per SM (32 banks x 4 B) [G]\n= {l1_tbps:.1f} TB/s on {sms} SMs at {ghz:.2f} GHz [A]",
         7.6, "#f3e3ee"),
        ("L2 cache", f"{m['l2_mib']} MiB, one for all {sms} SMs [Q]",
         "bandwidth: not measured here\n(ncu counts its bytes per step: the roofline)", 9.0, "#f5f0d8"),
        ("HBM3e (global memory)", "141 GB [D]",
         "4.8 TB/s [D]\n4.3 TB/s device-to-device copy [M]", 11.0, "#e6efe6"),
    ]
    cx, h, gap = 6.3, 2.0, 0.8
    y = 11.6
    for i, (name, size, bw, w, fc) in enumerate(levels):
        y0 = y - h
        box(ax, cx - w / 2, y0, w, h, fc=fc)
        ax.text(cx, y0 + h - 0.35, name, ha="center", va="top", fontsize=11, weight="bold", color=INK)
        ax.text(cx, y0 + 0.3, size, ha="center", va="bottom", fontsize=8.5, color=INK, linespacing=1.3)
        ax.text(13.0, y0 + h / 2, bw, ha="left", va="center", fontsize=8.5, color=INK, linespacing=1.3)
        ax.plot([cx + w / 2 + 0.1, 12.8], [y0 + h / 2] * 2, color="#999999", lw=0.8, ls=":")
        if i < len(levels) - 1:
            arrow(ax, (cx, y0 - 0.03), (cx, y0 - gap + 0.03), style_="<|-|>", ms=12, lw=1.5)
        y = y0 - gap
    # Which levels sit in each SM.
    top, bottom = 11.6, 11.6 - 2 * h - gap
    ax.plot([0.35, 0.2, 0.2, 0.35], [top, top, bottom, bottom], color=INK, lw=1.2)
    ax.text(0.0, (top + bottom) / 2, f"in each SM\n(x {sms})", rotation=90, ha="right", va="center", fontsize=9)
    top2, bottom2 = bottom - gap, bottom - gap - 2 * h - gap
    ax.plot([0.35, 0.2, 0.2, 0.35], [top2, top2, bottom2, bottom2], color=INK, lw=1.2)
    ax.text(0.0, (top2 + bottom2) / 2, "shared by\nall SMs", rotation=90, ha="right", va="center", fontsize=9)
    ax.text(13.0, 11.9, "bandwidth", fontsize=10, weight="bold", va="bottom")
    ax.text(cx, 11.9, "size", fontsize=10, weight="bold", va="bottom", ha="center")
    ax.text(0.0, -0.2, "[D] NVIDIA H200 datasheet.  [M] measured on this H200 (docs/speed_of_light.md).  "
            "[Q] device query (cudaDevAttrL2CacheSize),\nprinted with every results table.  [G] CUDA C Programming "
            "Guide, compute capability 9.0 and shared memory.  [A] arithmetic from those.",
            fontsize=7.8, va="center", color="#444444", linespacing=1.4)
    ax.set_title("The H200 memory hierarchy: each level down is larger, shared by more SMs, and slower to feed "
                 "the cores", fontsize=11)
    return fig


@style.figure("sm_anatomy", "One SM of the H200: four sub-partitions, each with its warp scheduler, a quarter "
              "of the register file, 32 FP32 lanes and a tensor core, around the L1/shared memory and the TMA "
              "unit; a warp stays on one sub-partition, a warpgroup is one warp on each")
def sm_anatomy():
    m = machine()
    sms = m["sms"]
    fp32_per_clock, tc_per_clock = sms * 128 * 2, sms * 4 * 1024
    fig, ax = canvas(10, 7.4, (0, 20), (-1.9, 13.2))
    box(ax, 0.2, 2.7, 19.6, 10.2, fc="#fafafa", lw=1.6)
    ax.text(0.5, 12.55, f"SM (one of {sms})", fontsize=11, weight="bold", va="center")
    ax.text(19.5, 12.55, "at most 64 resident warps (2048 threads) and 32 blocks per SM [G]", fontsize=8.5,
            va="center", ha="right")
    w, gap = 4.6, 0.2
    for q in range(4):
        x = 0.5 + q * (w + gap)
        box(ax, x, 3.9, w, 8.2, fc="white", lw=1.0)
        ax.text(x + w / 2, 11.75, f"sub-partition {q}", ha="center", va="center", fontsize=9.5, weight="bold")
        box(ax, x + 0.2, 10.4, w - 0.4, 0.95, "warp scheduler\n1 warp-instruction / clock", fc="#fff4d6", fs=8)
        ax.text(x + w / 2, 10.1, "up to 16 resident warps", ha="center", va="center", fontsize=7.5, color="#555555")
        box(ax, x + 0.2, 8.55, w - 0.4, 1.2, "register file\n16 Ki x 32-bit = 64 KB", fc="#dde8f3", fs=8)
        # 32 FP32 lanes, 2 rows of 16
        ax.text(x + w / 2, 8.15, "32 FP32 lanes", ha="center", va="center", fontsize=8)
        lw_ = (w - 0.4) / 16
        for lane in range(32):
            r, c = divmod(lane, 16)
            ax.add_patch(Rectangle((x + 0.2 + c * lw_, 7.3 - r * 0.55), lw_ * 0.8, 0.45, fc=C, ec="none", zorder=4))
        ax.text(x + w / 2, 6.45, "1 FFMA per lane per clock", ha="center", va="center", fontsize=7.5, color="#555555")
        box(ax, x + 0.2, 4.2, w - 0.4, 1.7, "tensor core\n1024 bf16 FLOP / clock\n(dense) [A]", fc="#f3e3ee", fs=8)
    box(ax, 0.5, 2.9, 14.6, 0.85, "L1 data cache / shared memory: 256 KB, up to 228 KB shared [G]; "
        "32 banks x 4 B per clock", fc="#f3e3ee", fs=8.5)
    box(ax, 15.3, 2.9, 4.2, 0.85, "TMA unit (tile copies)", fc="#e6efe6", fs=8.5)
    # the warp -> sub-partition and warpgroup story
    ax.text(0.2, 1.9, "A warp (32 threads) lives on one sub-partition: one FFMA instruction feeds its 32 lanes "
            "in one clock.\nHopper's wgmma is issued by a warpgroup: 4 consecutive warps, one per sub-partition, "
            "driving all 4 tensor cores.", fontsize=8.5, va="center", linespacing=1.4)
    ax.text(0.2, 0.45, f"Per SM per clock: 4 x 32 lanes x 2 = 256 fp32 FLOP, 4 x 1024 = 4096 bf16 FLOP; "
            f"x {sms} SMs: {fp32_per_clock:,} and {tc_per_clock:,}.\n"
            f"That is {fp32_per_clock * 1.98e9 / 1e12:.1f} TFLOP/s fp32 at 1.98 GHz and "
            f"{tc_per_clock * 1.83e9 / 1e12:.0f} TFLOP/s bf16 at 1.83 GHz; under the 700 W cap a bf16 GEMM "
            "gets a lower clock.", fontsize=8.5, va="center", linespacing=1.4)
    ax.text(0.2, -1.2, "[A] arithmetic: the datasheet's 989 TFLOP/s dense bf16 [NVIDIA H200 datasheet] = "
            "132 SMs x 4 tensor cores x 1024 FLOP x 1.83 GHz.\n[G] CUDA C Programming Guide, compute capability "
            "9.0. Units per sub-partition: docs/machine_model.md. Drawn to count, not to scale.",
            fontsize=7.5, color="#444444", va="center", linespacing=1.4)
    ax.set_title("An H200 SM: four sub-partitions, each issuing one warp-instruction per clock to its 32 FP32 "
                 "lanes or its tensor core", fontsize=11)
    return fig


@functools.lru_cache(None)
def resources(step):
    """docs/resources.md's row of `step` (its first kernel): regs, threads, blocks per SM (an int)."""
    for line in (ROOT / "docs" / "resources.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 8 and cells[0] == step:
            return dict(regs=int(cells[2]), threads=int(cells[7]), per_sm=int(cells[8].split()[0]))
    raise KeyError(f"docs/resources.md has no row for step {step}")


def tiles09():
    """Step 09's tiling (block, warp, thread) from its constants."""
    c = k("09")
    c = dict(c)
    c["WARPS_M"], c["WARPS_N"] = c["BM"] // c["WM"], c["BN"] // c["WN"]
    c["THREADS"] = c["WARPS_M"] * c["WARPS_N"] * 32  # Tiles::THREADS in kernels/09_async_copy_pipeline.cu
    c["WTR"], c["WTC"] = c["WM"] // c["TM"], c["WN"] // c["TN"]  # the lanes of a warp: WTR rows x WTC columns
    return c


@style.figure("thread_hierarchy", "Grid, cluster, block, warp, thread: what each level is, what it runs on, "
              "its limit, and its size in step 09 at 4096³ (clusters: step 17)")
def thread_hierarchy():
    c = tiles09()
    c17 = k("17")
    size = 4096
    gx, gy = size // c["BN"], size // c["BM"]
    fig, ax = canvas(11, 5.6, (-0.2, 28.8), (-3.3, 10.4))
    cols = [5.3 + 5.2 * i for i in range(5)]  # centres
    names = ["grid", "cluster", "block", "warp", "thread"]
    for x, n in zip(cols, names):
        ax.text(x, 9.9, n, ha="center", va="center", fontsize=12, weight="bold")
    light, hot = "#d6e6d8", C
    # grid: gx x gy blocks laid out like their tiles of C (a square, since M = N)
    gw = 3.8
    cw, ch = gw / gx, gw / gy
    x0, y0 = cols[0] - gw / 2, 9.3
    for r in range(gy):
        for q in range(gx):
            hot_ = (r, q) == (0, 0)
            ax.add_patch(Rectangle((x0 + q * cw, y0 - (r + 1) * ch), cw, ch, fc=hot if hot_ else light,
                                   ec="white", lw=0.4))
    ax.text(cols[0], y0 - gw - 0.25, f"{gx} x {gy} blocks", ha="center", va="top", fontsize=8)
    # cluster: CLUSTER blocks
    bw, bh = 2.6, 1.0
    for i in range(c17["CLUSTER"]):
        yb = 8.6 - (i + 1) * (bh + 0.1)
        ax.add_patch(Rectangle((cols[1] - bw / 2, yb), bw, bh, fc=hot if i == 0 else light, ec="white", lw=0.8))
        ax.text(cols[1], yb + bh / 2, f"block {i}", ha="center", va="center", fontsize=8.5,
                color="white" if i == 0 else INK)
    nb = c17["CLUSTER"]
    ax.add_patch(Rectangle((cols[1] - bw / 2 - 0.25, 8.6 - nb * (bh + 0.1) - 0.2), bw + 0.5, nb * (bh + 0.1) + 0.35,
                           fc="none", ec=INK, lw=1.0, ls="--"))
    # block: the BM x BN tile as WARPS_M x WARPS_N warp tiles
    bw, bh = 3.8, 3.8 * c["BM"] / c["BN"]
    bx0, by0 = cols[2] - bw / 2, 9.3
    ww, wh = bw / c["WARPS_N"], bh / c["WARPS_M"]
    for wi in range(c["WARPS_M"] * c["WARPS_N"]):
        r, q = divmod(wi, c["WARPS_N"])
        ax.add_patch(Rectangle((bx0 + q * ww, by0 - (r + 1) * wh), ww, wh, fc=hot if wi == 0 else light,
                               ec="white", lw=1.0))
        ax.text(bx0 + (q + 0.5) * ww, by0 - (r + 0.5) * wh, f"warp {wi}", ha="center", va="center", fontsize=7.5,
                color="white" if wi == 0 else INK)
    ax.text(cols[2], by0 - bh - 0.25, f"{c['BM']} x {c['BN']} tile", ha="center", va="top", fontsize=8)
    # warp: WTR x WTC lanes (its WM x WN warp tile: lane tiles of TM x TN, drawn to shape)
    lw_ = 3.8 / c["WTC"]
    lh = lw_  # a lane at its (row, column) of lanes in the warp tile; squares, not to the warp tile's shape
    wx0, wy0 = cols[3] - 1.9, 9.3
    for lane in range(32):
        r, q = divmod(lane, c["WTC"])
        ax.add_patch(Rectangle((wx0 + q * lw_, wy0 - (r + 1) * lh), lw_, lh, fc=hot if lane == 0 else light,
                               ec="white", lw=1.0))
        ax.text(wx0 + (q + 0.5) * lw_, wy0 - (r + 0.5) * lh, str(lane), ha="center", va="center", fontsize=7,
                color="white" if lane == 0 else INK)
    ax.text(cols[3], wy0 - c["WTR"] * lh - 0.25, f"its {c['WTR']} x {c['WTC']} lanes",
            ha="center", va="top", fontsize=8)
    # thread: TM x TN accumulators
    tw = 3.8 / c["TN"]
    tx0, ty0 = cols[4] - 1.9, 9.3
    for i in range(c["TM"]):
        for j in range(c["TN"]):
            ax.add_patch(Rectangle((tx0 + j * tw, ty0 - (i + 1) * tw), tw, tw, fc=hot, ec="white", lw=0.6))
    ax.text(cols[4], ty0 - c["TM"] * tw - 0.25, f"acc[{c['TM']}][{c['TN']}] in registers", ha="center", va="top",
            fontsize=8)
    for a, b in zip(cols[:-1], cols[1:]):
        arrow(ax, (a + 2.05, 7.4), (b - 2.05, 7.4), lw=1.4, ms=12)
    m = machine()
    rows = [
        ("is", ["all the blocks of\none launch", "blocks run together\n(Hopper, optional)",
                "threads sharing shared\nmemory, __syncthreads", "32 threads, one\ninstruction stream",
                "one lane's work,\nits own registers"]),
        ("runs on", [f"the GPU: {m['sms']} SMs,\nin waves", "one GPC, all its\nblocks at once",
                     "one SM, for its\nwhole life", "one sub-partition\n(its scheduler)", "one of the 32 lanes"]),
        ("limit", ["x: 2³¹−1 blocks,\ny and z: 65535", "8 blocks\n(16 with an opt-in)",
                   "1024 threads,\n227 KB shared memory", "32 threads", "255 registers"]),
        ("step 09\nat 4096³", [f"{gx} x {gy} = {gx * gy} blocks,\neach a {c['BM']}x{c['BN']} tile of C",
                               f"none; step 17 runs\nclusters of {c17['CLUSTER']} (shared B)",
                               f"{c['THREADS']} threads = {c['WARPS_M'] * c['WARPS_N']} warps,\n"
                               f"each a {c['WM']}x{c['WN']} warp tile",
                               f"{c['WTR']} x {c['WTC']} lanes, each an\n{c['TM']}x{c['TN']} thread tile",
                               f"{c['TM'] * c['TN']} accumulators\n({resources('09')['regs']} registers in all)"]),
    ]
    y, h = 4.3, 1.75
    for label, texts in rows:
        ax.plot([0, 28.6], [y, y], color="#cccccc", lw=0.8)
        ax.text(0.1, y - h / 2, label, ha="left", va="center", fontsize=9, weight="bold", linespacing=1.2)
        for x, t in zip(cols, texts):
            ax.text(x, y - h / 2, t, ha="center", va="center", fontsize=8.5, linespacing=1.3)
        y -= h
    ax.plot([0, 28.6], [y, y], color="#cccccc", lw=0.8)
    ax.text(0.1, y - 0.35, "Limits: CUDA C Programming Guide (compute capability 9.0), docs/machine_model.md. "
            "Sizes: the constants of kernels/09_async_copy_pipeline.cu and 17; registers: docs/resources.md.",
            ha="left", va="top", fontsize=7.5, color="#444444")
    ax.set_title("The thread hierarchy: a grid of blocks (in clusters on Hopper, if asked), a block of warps, "
                 "a warp of 32 threads", fontsize=11)
    return fig
