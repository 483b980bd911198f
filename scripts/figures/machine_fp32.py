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
# Shared loads and FFMAs in one K tile of the loop, counted in the SASS of steps 03 and 04
# (build/sass/03_smem_tiling/sgemm_smem_tiling.sass, build/sass/04_1d_blocktiling/sgemm_1d_blocktiling.sass,
# `make sass`; docs/fp32_ladder.md quotes the same counts).
# Step 05's example thread (trow, tcol) and k, the same in outer_product and kloop_05, which the book shows
# back to back: thread trow * (BN / TN) + tcol = 53.
THREAD_05, K_05 = (3, 5), 2
SASS_LOOP = {"03": {"ffma": 32, "lds": 32, "lds128": 8}, "04": {"ffma": 64, "lds": 8, "lds128": 16}}


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
              "the 132 SMs, distributed shared memory across the blocks of a cluster, one L2 and HBM3e shared by "
              "all; each level down is larger, farther and slower to feed the cores, and every number is tagged "
              "with where it comes from (L2: ncu's model, 15.3 TB/s)")
def memory_hierarchy():
    import plot_roofline  # scripts/plot_roofline.py: ncu's L2 model, the same numbers as the roofline's L2 roof
    import statistics
    m = machine()
    sms, ghz = m["sms"], m["mhz"] / 1000
    regs_kb = 64 * 1024 * 4 // 1024  # 64 Ki 32-bit registers per SM
    l1_tbps = sms * 128 * ghz / 1000
    l2s = plot_roofline.l2_model()
    # The most L2 traffic any step moved per second in the 4096^3 ncu launches (results/profiles/..._roofline_4096.csv).
    l2_step, l2_most = max(((st, float(r["l2_bytes"]) / float(r["time_us"]) / 1e6) for st, r in ncu_bytes().items()
                            if r.get("time_us") and not st.startswith("cublas") and st != "00"), key=lambda x: x[1])
    fig, ax = canvas(10.5, 7.6, (0, 21), (-0.8, 14.9))
    # name, size text, bandwidth text, width of its box, fill
    levels = [
        ("registers", f"64 Ki x 32-bit = {regs_kb} KB per SM [G]\nat most 255 per thread [G]",
         "the operands of every instruction:\nan FFMA reads 3 and writes 1 per lane", 6.4, "#dde8f3"),
        ("L1 / shared memory", "256 KB per SM, of which up to\n228 KB shared (227 KB per block) [G]",
         f"128 B per clock per SM (32 banks x 4 B) [G]\n= {l1_tbps:.1f} TB/s on {sms} SMs at {ghz:.2f} GHz [A]",
         7.6, "#f3e3ee"),
        ("distributed shared memory (DSMEM)", "the shared memory of the other blocks of its\ncluster: up to 8 "
         "blocks (16 opt-in) on one GPC [G]",
         "SM-to-SM network: no sourced bandwidth.\nStep 17: TMA multicast into both blocks'\nsB, remote mbarrier "
         "arrives", 9.4, "#ece4f3"),
        ("L2 cache", f"{m['l2_mib']} MiB, one for all {sms} SMs [Q]",
         f"ncu's model: {statistics.median(l2s):.1f} TB/s [N]\n(most moved by a step at 4096³: "
         f"{l2_most:.1f} TB/s,\nstep {l2_step} [M])", 10.0, "#f5f0d8"),
        ("HBM3e (global memory)", "141 GB [D]",
         "4.8 TB/s [D]\n4.3 TB/s device-to-device copy [M]", 11.6, "#e6efe6"),
    ]
    cx, h, gap = 6.8, 2.0, 0.8
    y = 13.9
    tops = []
    for i, (name, size, bw, w, fc) in enumerate(levels):
        y0 = y - h
        tops.append((y, y0))
        box(ax, cx - w / 2, y0, w, h, fc=fc)
        ax.text(cx, y0 + h - 0.3, name, ha="center", va="top", fontsize=11, weight="bold", color=INK)
        ax.text(cx, y0 + 0.25, size, ha="center", va="bottom", fontsize=8.5, color=INK, linespacing=1.3)
        ax.text(13.5, y0 + h / 2, bw, ha="left", va="center", fontsize=8.5, color=INK, linespacing=1.3)
        ax.plot([cx + w / 2 + 0.1, 13.3], [y0 + h / 2] * 2, color="#999999", lw=0.8, ls=":")
        if i < len(levels) - 1:
            arrow(ax, (cx, y0 - 0.03), (cx, y0 - gap + 0.03), style_="<|-|>", ms=12, lw=1.5)
        y = y0 - gap
    # Which levels sit in each SM, in a cluster, shared by all.
    for (first, last), label in (((0, 1), f"in each SM\n(x {sms})"), ((2, 2), "in a\ncluster"),
                                 ((3, 4), "shared by\nall SMs")):
        top, bottom = tops[first][0], tops[last][1]
        ax.plot([0.55, 0.4, 0.4, 0.55], [top, top, bottom, bottom], color=INK, lw=1.2)
        ax.text(0.2, (top + bottom) / 2, label, rotation=90, ha="right", va="center", fontsize=9)
    ax.text(13.5, 14.15, "bandwidth", fontsize=10, weight="bold", va="bottom")
    ax.text(cx, 14.15, "size", fontsize=10, weight="bold", va="bottom", ha="center")
    ax.text(0.0, -0.35, "[D] NVIDIA H200 datasheet.  [M] measured on this H200 (docs/machine.md; the roofline CSV).  "
            "[Q] device query (cudaDevAttrL2CacheSize),\nprinted with every results table.  [G] CUDA C Programming "
            "Guide, compute capability 9.0, shared memory and thread block clusters.  [A] arithmetic from those.\n"
            f"[N] ncu's own L2 peak: L2 bytes / time / ncu's L2 throughput % of each kernel in "
            f"results/profiles/l2_multicast_8192.md ({min(l2s):.1f}–{max(l2s):.1f} TB/s); a model, not a datasheet figure.",
            fontsize=7.8, va="center", color="#444444", linespacing=1.4)
    ax.set_title("The H200 memory hierarchy: each level down is larger, shared by more SMs, and slower to feed "
                 "the cores", fontsize=11)
    return fig


@style.figure("sm_anatomy", "One SM of the H200: four sub-partitions, each with its warp scheduler, a quarter "
              "of the register file, 32 FP32 lanes, 8 load/store units and a tensor core, around the L1/shared "
              "memory and the TMA unit; the 32 load/store units share one shared memory that serves one warp-wide "
              "access per clock; a warp stays on one sub-partition, a warpgroup is one warp on each")
def sm_anatomy():
    m = machine()
    sms = m["sms"]
    fp32_per_clock, tc_per_clock = sms * 128 * 2, sms * 4 * 1024
    fig, ax = canvas(10, 8.0, (0, 20), (-2.4, 13.6))
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
        box(ax, x + 0.2, 8.75, w - 0.4, 1.0, "register file\n16 Ki x 32-bit = 64 KB", fc="#dde8f3", fs=8)
        # 32 FP32 lanes, 2 rows of 16
        ax.text(x + w / 2, 8.4, "32 FP32 lanes", ha="center", va="center", fontsize=8)
        lw_ = (w - 0.4) / 16
        for lane in range(32):
            r, c = divmod(lane, 16)
            ax.add_patch(Rectangle((x + 0.2 + c * lw_, 7.6 - r * 0.5), lw_ * 0.8, 0.4, fc=C, ec="none", zorder=4))
        ax.text(x + w / 2, 6.85, "1 FFMA per lane per clock", ha="center", va="center", fontsize=7.5, color="#555555")
        # 8 load/store units
        ax.text(x + w / 2, 6.4, "8 load/store units [W]", ha="center", va="center", fontsize=8)
        uw = (w - 0.4) / 8
        for u in range(8):
            ax.add_patch(Rectangle((x + 0.2 + u * uw, 5.55), uw * 0.85, 0.55, fc="#e8d9f0", ec="#7a5a8a", lw=0.6,
                                   zorder=4))
            ax.text(x + 0.2 + u * uw + uw * 0.425, 5.825, "LS", ha="center", va="center", fontsize=6, zorder=5)
        box(ax, x + 0.2, 4.1, w - 0.4, 1.25, "tensor core\n1024 bf16 FLOP / clock\n(dense) [A]", fc="#f3e3ee", fs=8)
        # the load/store units feed the SM's one shared memory
        arrow(ax, (x + w / 2, 5.5), (x + w / 2, 3.8), color="#7a5a8a", lw=1.0, ms=8, zorder=1)
    box(ax, 0.5, 2.85, 14.6, 0.9, "L1 data cache / shared memory: 256 KB, up to 228 KB shared [G]\n32 banks x 4 B "
        "per clock = one warp-wide access (128 B) per clock for the whole SM [G]", fc="#f3e3ee", fs=8, zorder=5)
    box(ax, 15.3, 2.85, 4.2, 0.9, "TMA unit (tile copies)", fc="#e6efe6", fs=8.5)
    # the warp -> sub-partition and warpgroup story
    ax.text(0.2, 1.55, "A warp (32 threads) lives on one sub-partition: one FFMA instruction feeds its 32 lanes "
            "in one clock.\nHopper's wgmma is issued by a warpgroup: 4 consecutive warps, one per sub-partition, "
            "driving all 4 tensor cores.\nThe 4 x 8 = 32 load/store units share the SM's one shared memory: one "
            "warp-wide shared access per clock for\nall four sub-partitions together, while the four schedulers "
            "can issue four FFMA warp-instructions per clock.", fontsize=8.5, va="center", linespacing=1.4)
    ax.text(0.2, -0.15, f"Per SM per clock: 4 x 32 lanes x 2 = 256 fp32 FLOP, 4 x 1024 = 4096 bf16 FLOP; "
            f"x {sms} SMs: {fp32_per_clock:,} and {tc_per_clock:,}.\n"
            f"That is {fp32_per_clock * 1.98e9 / 1e12:.1f} TFLOP/s fp32 at 1.98 GHz and "
            f"{tc_per_clock * 1.83e9 / 1e12:.0f} TFLOP/s bf16 at 1.83 GHz; under the 700 W cap a bf16 GEMM "
            "gets a lower clock.", fontsize=8.5, va="center", linespacing=1.4)
    ax.text(0.2, -1.6, "[A] arithmetic: the datasheet's 989 TFLOP/s dense bf16 [NVIDIA H200 datasheet] = "
            "132 SMs x 4 tensor cores x 1024 FLOP x 1.83 GHz.\n[G] CUDA C Programming Guide, compute capability "
            "9.0.  [W] NVIDIA H100 Tensor Core GPU Architecture whitepaper, its SM diagram\n(the H200 has the same "
            "GH100 SM). Units per sub-partition: docs/machine.md. Drawn to count, not to scale.",
            fontsize=7.5, color="#444444", va="center", linespacing=1.4)
    ax.set_title("An H200 SM: four sub-partitions, each issuing one warp-instruction per clock to its 32 FP32 "
                 "lanes,\nits 8 load/store units or its tensor core", fontsize=11)
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
    ax.text(0.1, y - 0.35, "Limits: CUDA C Programming Guide (compute capability 9.0), docs/machine.md. "
            "Sizes: the constants of kernels/09_async_copy_pipeline.cu and 17; registers: docs/resources.md.",
            ha="left", va="top", fontsize=7.5, color="#444444")
    ax.set_title("The thread hierarchy: a grid of blocks (in clusters on Hopper, if asked), a block of warps, "
                 "a warp of 32 threads", fontsize=11)
    return fig


def warp_addresses(step, ty=0, k_=0, K=4096, N=4096):
    """Byte offsets (within A, within B, within C) that the 32 lanes of one warp touch at one k, in steps 01
    and 02, restated from the kernels (blockDim = (32, 32): a warp is 32 consecutive threadIdx.x at one
    threadIdx.y; block (0, 0)):
      01: row = threadIdx.x, col = threadIdx.y   (kernels/01_naive.cu)
      02: col = threadIdx.x, row = threadIdx.y   (kernels/02_gmem_coalescing.cu)
    and the loop body A[row * K + k], B[k * N + col], C[row * N + col]."""
    out = {"A": [], "B": [], "C": []}
    for lane in range(32):
        row, col = (lane, ty) if step == "01" else (ty, lane)
        out["A"].append(4 * (row * K + k_))
        out["B"].append(4 * (k_ * N + col))
        out["C"].append(4 * (row * N + col))
    return out


def sectors(addrs):
    return len({a // 32 for a in addrs})


@style.figure("coalescing", "One warp's loads at one k in step 01 and step 02: 01's lanes walk down a column "
              "of A, 32 rows and 32 sectors; 02's lanes walk along a row of B, one 128-byte line; the sector "
              "counts predict ncu's L1 bytes exactly")
def coalescing():
    size = 4096
    nb = ncu_bytes()
    fig, axes = plt.subplots(2, 1, figsize=(10, 8.6))
    fig.subplots_adjust(hspace=0.12, left=0.01, right=0.99, top=0.93, bottom=0.01)
    kcol = 10  # the k drawn: column 10 of the window (sector 1 of A's rows)
    for ax, step in zip(axes, ("01", "02")):
        ax.set_xlim(-4, 88)
        ax.set_ylim(-36.5, 3.2)
        ax.set_aspect("equal")
        ax.axis("off")
        ad = warp_addresses(step, k_=kcol)
        # A window: 32 rows x 16 floats of row-major A (rows are K floats apart)
        for r in range(32):
            for q in range(16):
                addr = 4 * (r * size + q)
                read = addr in ad["A"]
                fetched = addr // 32 in {a // 32 for a in ad["A"]}
                fc = A if read else ("#b7cbe3" if fetched else "white")
                ax.add_patch(Rectangle((q, -r - 1), 1, 1, fc=fc, ec="#bbbbbb", lw=0.3))
        for q in (0, 8, 16):
            ax.plot([q, q], [0, -32], color=INK, lw=0.9)
        ax.text(8, 0.6, f"A: 32 rows x 16 floats\n(row-major, rows {size * 4 // 1024} KB apart)", ha="center",
                va="bottom", fontsize=8.5)
        ax.text(-0.4, -0.5, "row 0", ha="right", va="center", fontsize=7)
        ax.text(-0.4, -31.5, "row 31", ha="right", va="center", fontsize=7)
        ax.text(kcol + 0.5, -32.2, "k", ha="center", va="top", fontsize=8)
        if step == "01":
            ax.text(8, -33.6, "lane i reads row i", ha="center", va="top", fontsize=8, color=A)
        else:
            ax.text(16.6, -0.5, "all lanes", ha="left", va="center", fontsize=8, color=A)
        # B window: rows k-1..k+1 x 64 floats
        bx, by, rh = 22, -3.5, 1.8  # rh: a row of B drawn 1.8 cells tall, so the three rows read apart
        for r in range(3):
            for q in range(64):
                addr = 4 * ((kcol - 1 + r) * size + q)
                read = addr in ad["B"]
                fetched = addr // 32 in {a // 32 for a in ad["B"]}
                fc = B if read else ("#f6c2c8" if fetched else "white")
                ax.add_patch(Rectangle((bx + q, by - (r + 1) * rh), 1, rh, fc=fc, ec="#bbbbbb", lw=0.3))
        for q in range(0, 65, 8):
            ax.plot([bx + q, bx + q], [by, by - 3 * rh], color=INK, lw=0.9 if q % 32 else 1.6)
        ax.text(bx, by + 0.6, f"B: rows k-1, k, k+1 x 64 floats, each row {size * 4 // 1024} KB after the last "
                "(thin lines: 32-byte sectors; thick: 128-byte lines)", ha="left", va="bottom", fontsize=8.5)
        for r, name in enumerate(("row k-1", "row k", "row k+1")):
            ax.text(bx - 0.4, by - (r + 0.5) * rh, name, ha="right", va="center", fontsize=7.5,
                    weight="bold" if name == "row k" else "normal")
        for r in range(4):
            ax.plot([bx, bx + 64], [by - r * rh] * 2, color=INK, lw=0.7)
        ax.text(bx + (16 if step == "02" else 0.5), by - 3 * rh - 0.4,
                "lane i reads column i of row k" if step == "02" else "all lanes read one float of row k",
                ha="center" if step == "02" else "left", va="top", fontsize=8, color=B)
        sa, sb, sc = sectors(ad["A"]), sectors(ad["B"]), sectors(ad["C"])
        warps = size * size // 32
        predicted = warps * size * (sa + sb) * 32 + warps * sc * 32
        measured = float(nb[step]["l1_bytes"])
        who = ("threadIdx.x walks rows: lane i reads A[i][k] and all lanes read the same B[k][col]" if step == "01"
               else "threadIdx.x walks columns: all lanes read the same A[row][k], lane i reads B[k][i]")
        lines = [
            (f"step {step}: {who}", dict(weight="bold")),
            (f"A: {sa} sector{'s' if sa > 1 else ''} ({'one per row: 32 lines' if sa > 1 else 'a broadcast'})   "
             f"B: {sb} sector{'s' if sb > 1 else ''} ({'one 128-byte line' if sb == 4 else 'a broadcast' if sb == 1 else ''})", {}),
            (f"= {sa + sb} sectors, {(sa + sb) * 32} bytes through L1 per warp per k, for the 256 bytes "
             "the 32 lanes use", {}),
            (f"x {warps:,} warps x {size} k (+ {sc} sector{'s' if sc > 1 else ''} per warp for C) = "
             f"{predicted:,.0f} bytes predicted", {}),
            (f"ncu (l1tex__t_bytes.sum) for one {size}³ GEMM:  {measured:,.0f} bytes", dict(color=style.PURPLE)),
        ]
        for i, (t, kw) in enumerate(lines):
            ax.text(bx, -13.2 - i * 3.1, t, ha="left", va="center", fontsize=9.5 if i == 0 else 9, **kw)
        ax.text(bx, -29.6, "Dark: the floats the lanes read. Light: the rest of each 32-byte sector L1 must fetch.",
                ha="left", va="center", fontsize=8, color="#555555")
    fig.suptitle("Coalescing: step 01's warp touches 33 sectors per k, step 02's touches 5; "
                 "ncu counts exactly that", fontsize=12)
    return fig


@style.figure("tile_quantization", "Step 09's 128x256 tiles of C over the 132 SMs, one block per SM: at 4096² "
              "512 tiles make 3 full waves and a last one of 116 (16 SMs idle); at 4100² the edge tiles are "
              "mostly empty and 561 tiles need a fifth wave")
def tile_quantization():
    c = k("09")
    bm, bn = c["BM"], c["BN"]
    sms = machine()["sms"]
    per_sm = resources("09")["per_sm"]
    slots = sms * per_sm
    colors = [style.BLUE, style.CYAN, style.GREEN, style.YELLOW, style.RED, style.PURPLE]
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 6.4))
    fig.subplots_adjust(left=0.02, right=0.98, top=0.8, bottom=0.13, wspace=0.12)
    for ax, size in zip(axes, (4096, 4100)):
        tm, tn = -(-size // bm), -(-size // bn)
        tiles = tm * tn
        waves = -(-tiles // slots)
        last = tiles - (waves - 1) * slots
        ax.set_xlim(-60, tn * bn + 60)
        ax.set_ylim(tm * bm + 60, -60)
        ax.set_aspect("equal")
        ax.axis("off")
        for t in range(tiles):
            r, q = divmod(t, tn)  # launch order: blockIdx.x (the tile column) fastest
            w = t // slots
            ax.add_patch(Rectangle((q * bn, r * bm), bn, bm, fc=colors[w], ec="white", lw=0.6, alpha=0.85))
        if size % bm or size % bn:  # the part of the edge tiles outside C: computed and thrown away
            ax.add_patch(Rectangle((0, size), tn * bn, tm * bm - size, fc="white", ec="none", alpha=0.75, hatch="////"))
            ax.add_patch(Rectangle((size, 0), tn * bn - size, size, fc="white", ec="none", alpha=0.75, hatch="////"))
        ax.add_patch(Rectangle((0, 0), size, size, fc="none", ec=INK, lw=1.6))
        useful = size * size / (tiles * bm * bn)
        head = (f"M = N = {size}: {tm} x {tn} = {tiles} tiles = {tiles / slots:.2f} waves of {slots}\n"
                f"-> {waves} waves, the last with {last} tiles ({slots - last} SMs idle)")
        if useful < 1:
            head += f"\nedge tiles: {size - (tm - 1) * bm} of {bm} rows, {size - (tn - 1) * bn} of {bn} columns " \
                    f"inside C;\n{useful * 100:.1f} % of the computed outputs are kept"
        ax.set_title(head, fontsize=9, loc="left")
        for w in range(waves):
            ax.add_patch(Rectangle((0, 0), 0, 0, fc=colors[w], alpha=0.85,
                                   label=f"wave {w + 1}: {min(slots, tiles - w * slots)} tiles"))
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=3, fontsize=8, frameon=False)
    fig.suptitle(f"Wave and tile quantization: step 09's {bm}x{bn} tiles on {sms} SMs ({per_sm} block per SM), "
                 "coloured by the wave that runs them", fontsize=11)
    fig.text(0.02, 0.015, "Waves drawn in launch order (blockIdx.x fastest); the hardware does not promise an "
             "order, only that a block waits for a free SM.\nBlocks per SM: docs/resources.md (registers allow one). "
             "Hatched: rows and columns of an edge tile that lie outside C.", fontsize=7.5, color="#444444")
    return fig


def tint(color, f):
    """`color` mixed with white: f = 0 white, 1 the colour."""
    import matplotlib.colors as mc
    r, g, b = mc.to_rgb(color)
    return (1 - f + f * r, 1 - f + f * g, 1 - f + f * b)


def matrix(ax, x, y, rows, cols, cw, fc="white", ec="#cccccc", lw=0.3, hot=None, outline=INK):
    """A rows x cols grid of cw-sized cells, top-left at (x, y) in a y-down axes; hot: {(r, c): colour}."""
    for r in range(rows):
        for q in range(cols):
            f = (hot or {}).get((r, q), fc)
            ax.add_patch(Rectangle((x + q * cw, y + r * cw), cw, cw, fc=f, ec=ec, lw=lw))
    ax.add_patch(Rectangle((x, y), cols * cw, rows * cw, fc="none", ec=outline, lw=1.0))


@style.figure("outer_product", "C = Σ_k a_k b_kᵀ: at each k the block tile of C gets the outer product of a "
              "column of the A tile and a row of the B tile; in step 05 each thread keeps its TM x TN = 8 x 4 "
              "piece of it in registers: TM + TN loads feed TM x TN FFMAs")
def outer_product():
    c = k("05")
    bm, bn, bk, tm, tn = c["BM"], c["BN"], c["BK"], c["TM"], c["TN"]
    (trow, tcol), kk = THREAD_05, K_05  # the thread followed (t = trow * (BN / TN) + tcol) and the k drawn
    t = trow * (bn // tn) + tcol
    fig, ax = plt.subplots(figsize=(10.5, 6.8))
    fig.subplots_adjust(left=0.01, right=0.99, top=0.86, bottom=0.02)
    ax.set_aspect("equal")
    ax.axis("off")
    cw = 0.75
    # Panel 1: the block tile
    ax_x, c_x, top = 0, (bk + 4) * cw, (bk + 4) * cw
    hotA = {(r, kk): tint(A, 0.35) for r in range(bm)}
    hotA.update({(trow * tm + i, kk): A for i in range(tm)})
    matrix(ax, ax_x, top, bm, bk, cw, hot=hotA)
    hotB = {(kk, q): tint(B, 0.35) for q in range(bn)}
    hotB.update({(kk, tcol * tn + j): B for j in range(tn)})
    matrix(ax, c_x, 0, bk, bn, cw, hot=hotB)
    hotC = {(r, q): tint(C, 0.25) for r in range(bm) for q in range(bn)}
    hotC.update({(trow * tm + i, tcol * tn + j): C for i in range(tm) for j in range(tn)})
    matrix(ax, c_x, top, bm, bn, cw, hot=hotC, ec=tint(C, 0.25))
    ax.text(ax_x + bk * cw / 2, top - 1, f"sA\n{bm}x{bk}", ha="center", va="bottom", fontsize=9, color=A, weight="bold")
    ax.text(c_x - 1, bk * cw / 2, f"sB\n{bk}x{bn}", ha="right", va="center", fontsize=9, color=B, weight="bold")
    ax.text(c_x + bn * cw / 2, top + bm * cw + 1.2, f"the {bm}x{bn} block tile of C: at k = {kk} every element gets "
            f"a[m]·b[n]", ha="center", va="top", fontsize=9, color=INK)
    ax.text(ax_x + (kk + 0.5) * cw, top + bm * cw + 1.2, f"k = {kk}", ha="center", va="top", fontsize=9)
    # Panel 2: the thread's registers, zoomed
    s = 5.5  # cell size of the zoom
    zx, zy = c_x + bn * cw + 10, top + 3
    for i in range(tm):
        ax.add_patch(Rectangle((zx, zy + i * s), s, s, fc=A, ec="white", lw=1))
        ax.text(zx + s / 2, zy + (i + 0.5) * s, f"rA[{i}]", ha="center", va="center", fontsize=8, color="white")
    for j in range(tn):
        ax.add_patch(Rectangle((zx + s + 1.5 + j * s, zy - s - 1.5), s, s, fc=B, ec="white", lw=1))
        ax.text(zx + s + 1.5 + (j + 0.5) * s, zy - s / 2 - 1.5, f"rB[{j}]", ha="center", va="center", fontsize=7,
                color="white")
    for i in range(tm):
        for j in range(tn):
            ax.add_patch(Rectangle((zx + s + 1.5 + j * s, zy + i * s), s, s, fc=C, ec="white", lw=1))
            ax.text(zx + s + 1.5 + (j + 0.5) * s, zy + (i + 0.5) * s, f"{i},{j}", ha="center", va="center",
                    fontsize=8, color="white")
    gx1 = zx + s + 1.5 + tn * s
    ax.text((zx + gx1) / 2, zy + tm * s + 2, f"thread {t}: acc[{tm}][{tn}] += rA ⊗ rB\n"
            f"{tm} + {tn} = {tm + tn} loads from shared memory\n{tm} x {tn} = {tm * tn} FFMA   "
            f"({(tm + tn) / (tm * tn):.3f} loads per FFMA)", ha="center", va="top", fontsize=9, linespacing=1.4)
    # zoom lines from the thread's tile in C to the register tile
    x0, y0 = c_x + tcol * tn * cw, top + trow * tm * cw
    for (px, py), (qx, qy) in (((x0 + tn * cw, y0), (zx + s + 1.5, zy)),
                               ((x0 + tn * cw, y0 + tm * cw), (zx + s + 1.5, zy + tm * s))):
        ax.plot([px, qx], [py, qy], color="#888888", lw=0.8, ls="--")
    ax.set_xlim(-1, gx1 + 2)
    ax.set_ylim(max(top + bm * cw, zy + tm * s) + 9, -3)
    c08 = k("08")
    fig.suptitle(f"C = Σₖ aₖbₖᵀ: at each k the tile of C takes the outer product of column k of A and row k "
                 f"of B;\nin step 05 each thread keeps its {tm}x{tn} piece in registers", fontsize=11)
    fig.text(0.5, 0.9, f"Step 05: BM x BN x BK = {bm}x{bn}x{bk}, TM x TN = {tm}x{tn}, {(bm // tm) * (bn // tn)} "
             f"threads. Step 08's {c08['TM']}x{c08['TN']} thread tile: {c08['TM'] + c08['TN']} loads for "
             f"{c08['TM'] * c08['TN']} FFMA ({(c08['TM'] + c08['TN']) / (c08['TM'] * c08['TN']):.3f} per FFMA).",
             ha="center", fontsize=9, color="#444444")
    return fig


@style.figure("smem_tiling_03", "Step 03: a block walks its row of A and column of B one BK-wide tile at a "
              "time; each tile is staged in shared memory (one float per thread per operand), and every thread "
              "then runs BK FMAs out of shared memory: row ty of sA times column tx of sB")
def smem_tiling_03():
    c = k("03")
    bm, bn, bk = c["BM"], c["BN"], c["BK"]
    size = 4096
    kts = size // bk
    now = 2  # the K tile drawn as current
    shown = [0, 1, 2, 3, 4, None, kts - 1]  # None: the ellipsis
    fig, ax = plt.subplots(figsize=(10.5, 6.0))
    fig.subplots_adjust(left=0.01, right=0.99, top=0.9, bottom=0.02)
    ax.set_aspect("equal")
    ax.axis("off")
    u, g = 2.0, 0.25  # a tile's side and the gap between tiles, in the global view
    n = len(shown)
    cx, cy = n * (u + g) + 0.6, n * (u + g) + 0.6  # C tile, top-left (y down)

    def tile_state(kt):
        return "done" if kt < now else "now" if kt == now else "next"
    fills = {"A": {"done": tint(A, 0.3), "now": A, "next": "white"},
             "B": {"done": tint(B, 0.3), "now": B, "next": "white"}}
    for i, kt in enumerate(shown):
        ax_, ay_ = i * (u + g), cy  # A's tiles left of C
        bx_, by_ = cx, i * (u + g)  # B's tiles above C
        if kt is None:
            ax.text(ax_ + u / 2, ay_ + u / 2, "…", ha="center", va="center", fontsize=14)
            ax.text(bx_ + u / 2, by_ + u / 2, "⋮", ha="center", va="center", fontsize=14)
            continue
        st = tile_state(kt)
        ax.add_patch(Rectangle((ax_, ay_), u, u, fc=fills["A"][st], ec=INK, lw=0.9))
        ax.add_patch(Rectangle((bx_, by_), u, u, fc=fills["B"][st], ec=INK, lw=0.9))
        ax.text(ax_ + u / 2, ay_ + u + 0.25, f"k0={kt * bk}", ha="center", va="top", fontsize=7)
        ax.text(bx_ - 0.15, by_ + u / 2, f"k0={kt * bk}", ha="right", va="center", fontsize=7)
    ax.add_patch(Rectangle((cx, cy), u, u, fc=C, ec=INK, lw=0.9))
    ax.text(cx + u / 2, cy + u / 2, "C", ha="center", va="center", fontsize=10, color="white", weight="bold")
    ax.text(cx + u + 0.3, cy + u / 2, f"this block's\n{bm}x{bn} tile", ha="left", va="center", fontsize=8)
    ax.text((n * (u + g)) / 2, cy + u + 1.1, f"A: the block's {bm} rows, K = {size} in {kts} tiles of {bm}x{bk}",
            ha="center", va="top", fontsize=8.5, color=A)
    ax.text(cx + u + 0.3, 0.2, f"B: the block's {bn} columns,\nK = {size} in {kts} tiles of {bk}x{bn}",
            ha="left", va="top", fontsize=8.5, color=B)
    # Shared memory, enlarged: sA left of the C tile, sB above it; thread (ty, tx)
    s = 0.22
    ty, tx = 9, 21
    ox, oy = cx + u + 5.0, 1.2
    ex, ey = ox + bk * s + 0.8, oy + bk * s + 0.8  # the C tile's top-left
    matrix(ax, ox, ey, bm, bk, s, ec="none", hot={**{(r, q): tint(A, 0.45) for r in range(bm) for q in range(bk)},
                                       **{(ty, q): A for q in range(bk)}})
    matrix(ax, ex, oy, bk, bn, s, ec="none", hot={**{(r, q): tint(B, 0.45) for r in range(bk) for q in range(bn)},
                                       **{(r, tx): B for r in range(bk)}})
    matrix(ax, ex, ey, bm, bn, s, ec="none", hot={**{(r, q): tint(C, 0.2) for r in range(bm) for q in range(bn)},
                                       (ty, tx): C})
    ax.text(ox + bk * s / 2, ey - 0.2, f"sA[{bm}][{bk}]", ha="center", va="bottom", fontsize=8.5, color=A,
            weight="bold")
    ax.text(ex - 0.2, oy + bk * s * 0.3, f"sB[{bk}][{bn}]", ha="right", va="center", fontsize=8.5, color=B,
            weight="bold")
    from matplotlib.patches import Circle
    ax.add_patch(Circle((ex + (tx + 0.5) * s, ey + (ty + 0.5) * s), 0.45, fc="none", ec=INK, lw=1.2, zorder=5))
    ax.text(ex + bn * s / 2, ey + bm * s + 0.3, f"thread (ty, tx) = ({ty}, {tx}):\nacc += sA[ty][kk] · sB[kk][tx],"
            f" kk = 0 … {bk - 1}", ha="center", va="top", fontsize=8.5)
    # copies from the current global tiles into shared memory
    arrow(ax, (now * (u + g) + u / 2, cy - 0.05), (ox - 0.1, ey + bm * s * 0.6), color=A, lw=1.6, rad=-0.2)
    arrow(ax, (cx + u + 0.05, now * (u + g) + u / 2), (ex - 0.1, oy + bk * s * 0.75), color=B, lw=1.6, rad=0.1)
    steps_ = (f"per K tile, each of the {bm * bn} threads:\n"
              f"1. loads A[row][k0 + tx] into sA[ty][tx] and\n    B[k0 + ty][col] into sB[ty][tx] (coalesced)\n"
              f"2. __syncthreads()\n3. {bk} FMAs from shared memory\n4. __syncthreads()")
    ax.text(ex + bn * s + 0.6, ey + 0.2, steps_, ha="left", va="top", fontsize=8.5, linespacing=1.4)
    ax.set_xlim(-0.5, ex + bn * s + 10.5)
    ax.set_ylim(cy + u + 2.2, -0.8)
    fig.suptitle(f"Step 03: the block's tiles of A and B slide along K through shared memory\n"
                 f"({kts} tiles at K = {size}): each global float is loaded once per block, not once per thread",
                 fontsize=11)
    # legend for the tile states
    for i, (lab, st) in enumerate((("done", "done"), ("in shared memory now", "now"), ("to come", "next"))):
        ax.add_patch(Rectangle((0.0, 0.2 + i * 0.9), 0.5, 0.5, fc=fills["A"][st], ec=INK, lw=0.8))
        ax.add_patch(Rectangle((0.6, 0.2 + i * 0.9), 0.5, 0.5, fc=fills["B"][st], ec=INK, lw=0.8))
        ax.text(1.3, 0.45 + i * 0.9, lab, fontsize=8, va="center")
    return fig


@style.figure("blocktiling_04", "Step 04: each thread computes a column of TM = 8 outputs; per k it loads one "
              "value of sB into a register and reuses it for 8 FFMAs, against 8 values of sA that its whole warp "
              "reads at once (a broadcast)")
def blocktiling_04():
    c = k("04")
    bm, bn, bk, tm, threads = c["BM"], c["BN"], c["BK"], c["TM"], c["THREADS"]
    tcol, trow, kk = 37, 3, 5  # the thread followed (kernel: tcol = t % BN, trow = t / BN) and the k drawn
    t = trow * bn + tcol
    warp = t // 32
    wcols = [(warp * 32 + i) % bn for i in range(32)]  # the columns of the warp's 32 threads (same trow)
    fig, ax = plt.subplots(figsize=(10.5, 6.6))
    fig.subplots_adjust(left=0.01, right=0.99, top=0.87, bottom=0.02)
    ax.set_aspect("equal")
    ax.axis("off")
    cw = 0.75
    ax_x, c_x, top = 0, (bk + 4) * cw, (bk + 4) * cw
    rows = range(trow * tm, trow * tm + tm)
    matrix(ax, ax_x, top, bm, bk, cw, hot={(r, kk): A for r in rows})
    hotB = {(kk, q): tint(B, 0.4) for q in wcols}
    hotB[(kk, tcol)] = B
    matrix(ax, c_x, 0, bk, bn, cw, hot=hotB)
    hotC = {(r, q): tint(C, 0.3) for r in rows for q in wcols}
    hotC.update({(r, tcol): C for r in rows})
    matrix(ax, c_x, top, bm, bn, cw, hot=hotC, ec="#e3e3e3")
    ax.text(ax_x + bk * cw / 2, top - 0.6, f"sA\n{bm}x{bk}", ha="center", va="bottom", fontsize=9, color=A,
            weight="bold")
    ax.text(c_x - 0.6, bk * cw / 2, f"sB\n{bk}x{bn}", ha="right", va="center", fontsize=9, color=B, weight="bold")
    ax.text(ax_x + (kk + 0.5) * cw, top + bm * cw + 0.8, f"k = {kk}", ha="center", va="top", fontsize=9)
    ax.text(c_x + bn * cw / 2, top + bm * cw + 0.8,
            f"C tile {bm}x{bn}: thread {t} (dark) and the rest of warp {warp} (light),\nall at rows "
            f"{trow * tm}–{trow * tm + tm - 1}", ha="center", va="top", fontsize=8.5)
    # zoom: each row i is acc[i] += sA[trow * TM + i][k] * b, with the same b
    s = 4.2
    zx, zy = c_x + bn * cw + 9, top + 3
    ax.text(zx + 2.7 * s, zy - 1.2, f"b = sB[{kk}][{tcol}]: one LDS, kept in a register", ha="center", va="bottom",
            fontsize=8.5, color=B)
    for i in range(tm):
        y = zy + i * (s + 0.4)
        ax.add_patch(Rectangle((zx, y), 1.6 * s, s, fc=A, ec="white"))
        ax.text(zx + 0.8 * s, y + s / 2, f"sA[{trow * tm + i}][{kk}]", ha="center", va="center", fontsize=7.5,
                color="white")
        ax.text(zx + 1.6 * s + 1.1, y + s / 2, "×", ha="center", va="center", fontsize=11)
        ax.add_patch(Rectangle((zx + 1.6 * s + 2.2, y), s, s, fc=B, ec="white"))
        ax.text(zx + 2.1 * s + 2.2, y + s / 2, "b", ha="center", va="center", fontsize=10, color="white",
                weight="bold")
        ax.text(zx + 2.6 * s + 3.3, y + s / 2, "→", ha="center", va="center", fontsize=11)
        ax.add_patch(Rectangle((zx + 2.6 * s + 4.4, y), 1.4 * s, s, fc=C, ec="white"))
        ax.text(zx + 3.3 * s + 4.4, y + s / 2, f"acc[{i}]", ha="center", va="center", fontsize=8, color="white")
    yb = zy + tm * (s + 0.4)
    s04, s03 = SASS_LOOP["04"], SASS_LOOP["03"]
    ax.text(zx + 2.7 * s, yb + 0.8,
            f"in the source, per k: 1 read of sB + {tm} of sA for {tm} FFMA:\n"
            f"{(1 + tm) / tm:.3f} shared reads per FFMA (step 03's source: 2).\n"
            f"In the SASS, per K tile: {s04['lds']} LDS + {s04['lds128']} LDS.128 for {s04['ffma']} FFMA,\n"
            f"{(s04['lds'] + s04['lds128']) / s04['ffma']:.3f} per FFMA (step 03: {s03['lds'] + s03['lds128']} for "
            f"{s03['ffma']}, {(s03['lds'] + s03['lds128']) / s03['ffma']:.2f}):\n"
            f"ptxas reads 4 k of sA in one LDS.128.\n"
            f"sA[r][k] is one address for the whole warp:\na broadcast.", ha="center", va="top", fontsize=8.5,
            linespacing=1.35)
    x0, y0 = c_x + tcol * cw, top + trow * tm * cw
    ax.annotate(f"thread {t}", xy=(x0 + cw, y0 + tm * cw / 2), xytext=(zx - 0.8, zy + 3 * s), fontsize=8.5,
                ha="right",
                va="center", arrowprops=dict(arrowstyle="-|>", color=INK, lw=0.9, shrinkA=2, shrinkB=1))
    ax.set_xlim(-1, zx + 4 * s + 6)
    ax.set_ylim(max(top + bm * cw + 3, yb + 5), -3)
    fig.suptitle(f"Step 04: one value of sB feeds TM = {tm} outputs\n({bm}x{bn}x{bk} block tile, {threads} "
                 f"threads, each a column of {tm} outputs)", fontsize=11)
    return fig


def product_layout(ax, bm, bn, bk, cw, hotA, hotB, hotC, c_ec="#dddddd"):
    """sA (BM x BK) left of the C tile, sB (BK x BN) above it, rows and columns aligned (y down).
    Returns the C tile's top-left corner."""
    c_x = top = (bk + 3) * cw
    matrix(ax, 0, top, bm, bk, cw, hot=hotA, ec="#dddddd")
    matrix(ax, c_x, 0, bk, bn, cw, hot=hotB, ec="#dddddd")
    matrix(ax, c_x, top, bm, bn, cw, hot=hotC, ec=c_ec)
    return c_x, top


def loop_box(ax, x, y, w, lines, fs=8.5, pad=0.35, lh=1.0):
    """Nested loops as nested boxes: lines = [(depth, text, colour or None)], y down; returns the bottom."""
    depth_max = max(d for d, _, _ in lines)
    ys = [y + pad + i * lh for i in range(len(lines))]
    # one box per loop header: from its line to the last line of deeper depth after it
    for i, (d, text, _) in enumerate(lines):
        if text.startswith("for"):
            j = i + 1
            while j < len(lines) and lines[j][0] > d:
                j += 1
            x0 = x + d * 1.0
            ax.add_patch(FancyBboxPatch((x0, ys[i] - 0.45 * lh), w - 2 * d * 1.0, (j - i) * lh + 0.1,
                                        boxstyle="round,pad=0.05,rounding_size=0.3", fc=tint(style.GREY, 0.15 + 0.15 * d),
                                        ec="#888888", lw=0.8, zorder=1))
    for i, (d, text, color) in enumerate(lines):
        ax.text(x + d * 1.0 + 0.35, ys[i], text, fontsize=fs, va="center", ha="left", family="monospace",
                color=color or INK, zorder=3)
    return ys[-1] + 0.6 * lh


@style.figure("kloop_05", "Step 05's loop nest: the block walks K in BK-wide tiles through shared memory; per "
              "tile each thread reads, for each k, TM values of A and TN of B into registers and adds their "
              "outer product to its TM x TN accumulators; loads and math take turns between two barriers")
def kloop_05():
    c = k("05")
    bm, bn, bk, tm, tn = c["BM"], c["BN"], c["BK"], c["TM"], c["TN"]
    threads = (bm // tm) * (bn // tn)  # Tiles::THREADS in kernels/05_2d_blocktiling.cu
    size = 4096
    (trow, tcol), kk = THREAD_05, K_05  # the same thread and k as outer_product, shown just before
    t = trow * (bn // tn) + tcol
    fig = plt.figure(figsize=(10.5, 6.6))
    ax = fig.add_axes([0.0, 0.12, 0.44, 0.74])
    ax2 = fig.add_axes([0.46, 0.12, 0.54, 0.74])
    for a in (ax, ax2):
        a.set_aspect("equal")
        a.axis("off")
    cw = 0.5
    rows = [trow * tm + i for i in range(tm)]
    cols = [tcol * tn + j for j in range(tn)]
    hotA = {(r, kk): A for r in rows}
    hotA.update({(r, q): tint(A, 0.3) for r in rows for q in range(bk) if q != kk})
    hotB = {(kk, q): B for q in cols}
    hotB.update({(r, q): tint(B, 0.3) for r in range(bk) for q in cols if r != kk})
    hotC = {(r, q): C for r in rows for q in cols}
    c_x, top = product_layout(ax, bm, bn, bk, cw, hotA, hotB, hotC, c_ec="#eeeeee")
    for r in range(0, bm + 1, tm):  # thread-tile boundaries
        ax.plot([c_x, c_x + bn * cw], [top + r * cw] * 2, color="#999999", lw=0.6)
    for q in range(0, bn + 1, tn):
        ax.plot([c_x + q * cw] * 2, [top, top + bm * cw], color="#999999", lw=0.6)
    ax.text(bk * cw / 2, top + bm * cw + 0.3, f"sA\n{bm}x{bk}", ha="center", va="top", fontsize=9, color=A,
            weight="bold")
    ax.text(c_x - 0.4, bk * cw / 2, f"sB\n{bk}x{bn}", ha="right", va="center", fontsize=9, color=B, weight="bold")
    ax.text(c_x + bn * cw / 2, top + bm * cw + 0.5,
            f"C tile {bm}x{bn}: {bm // tm} x {bn // tn} = {threads} thread tiles of {tm}x{tn};\n"
            f"thread {t} (green): rA = sA[{rows[0]}..{rows[-1]}][k], rB = sB[k][{cols[0]}..{cols[-1]}] "
            f"(dark: k = {kk})", ha="center", va="top", fontsize=8.5)
    ax.set_xlim(-0.5, c_x + bn * cw + 0.5)
    ax.set_ylim(top + bm * cw + 3.6, -0.5)
    kt = size // bk
    lines = [
        (0, f"for k0 in 0, {bk}, ... {size - bk}:", None),
        (1, f"# {kt} K tiles at K = {size}", "#666666"),
        (1, f"sA <- A tile {bm}x{bk}: {bm * bk // threads} LDG+STS", A),
        (1, f"sB <- B tile {bk}x{bn}: {bk * bn // threads} LDG+STS", B),
        (1, "__syncthreads()", None),
        (1, f"for k in 0 .. {bk - 1}:", None),
        (2, f"rA[{tm}] <- sA[rows][k]", A),
        (2, f"rB[{tn}] <- sB[k][cols]", B),
        (2, f"acc[{tm}][{tn}] += rA x rB: {tm * tn} FFMA", C),
        (1, "__syncthreads()", None),
        (0, f"C[rows][cols] <- acc: {tm * tn} STG", C),
    ]
    bottom = loop_box(ax2, 0.2, 0.2, 15.5, lines, fs=8.8, lh=1.05)
    ax2.text(0.2, bottom + 0.4, f"per thread per K tile: {bk} x {tm * tn} = {bk * tm * tn} FFMA,\n"
             f"{bk} x ({tm} + {tn}) = {bk * (tm + tn)} shared loads (ptxas merges them into LDS.128),\n"
             f"{(bm * bk + bk * bn) // threads} global loads. The loads of the next tile wait for\nthe second "
             f"barrier: loads and math take turns (step 08 overlaps them).", fontsize=8.5, va="top",
             linespacing=1.35)
    ax2.set_xlim(0, 16)
    ax2.set_ylim(bottom + 5.2, -0.2)
    fig.suptitle(f"Step 05: block tile {bm}x{bn}x{bk} -> thread tile {tm}x{tn}, and the loop over K that feeds it",
                 fontsize=11, y=0.95)
    return fig


def lane_cells(c, warp, lane):
    """The (row, column) outputs of one lane in steps 08/09's warp tiling, restated from the kernels:
    row0 = warp / (BN / WN) * WM + lane / WTC * 4, col0 = warp % (BN / WN) * WN + lane % WTC * 4, and
    float4 groups i / 4 * SM + i % 4 (rows) and j / 4 * SN + j % 4 (columns), SM = 4 * WTR, SN = 4 * WTC."""
    wtr, wtc = c["WM"] // c["TM"], c["WN"] // c["TN"]
    sm_, sn_ = 4 * wtr, 4 * wtc
    row0 = warp // (c["BN"] // c["WN"]) * c["WM"] + lane // wtc * 4
    col0 = warp % (c["BN"] // c["WN"]) * c["WN"] + lane % wtc * 4
    rows = [row0 + i // 4 * sm_ + i % 4 for i in range(c["TM"])]
    cols = [col0 + j // 4 * sn_ + j % 4 for j in range(c["TN"])]
    return rows, cols


@style.figure("kloop_08", "Step 08: the block tile splits into warp tiles, each warp's lanes into 8x16 thread "
              "tiles in float4 groups; the k loop double-buffers shared memory and the fragments, so the global "
              "loads of tile kt+2 are in flight during a whole tile of math, with one barrier per tile")
def kloop_08():
    c = k("08")
    bm, bn, bk, wm, wn, tm, tn = (c[x] for x in ("BM", "BN", "BK", "WM", "WN", "TM", "TN"))
    warps = (bm // wm) * (bn // wn)
    threads = warps * 32  # Tiles::THREADS in kernels/08_warptiling.cu
    wtr, wtc = wm // tm, wn // tn
    warp, lane, kk = 1, 9, 3
    rows, cols = lane_cells(c, warp, lane)
    fig = plt.figure(figsize=(10.5, 6.2))
    ax = fig.add_axes([0.0, 0.02, 0.40, 0.86])
    ax2 = fig.add_axes([0.42, 0.02, 0.58, 0.86])
    ax.set_aspect("equal")
    ax.axis("off")
    cw = 0.25
    band = [tint(C, 0.12), tint(C, 0.28)]
    hotC = {(r, q): band[(r // wm) % 2] for r in range(bm) for q in range(bn)}
    hotC.update({(r, q): C for r in rows for q in cols})
    hotA = {(r, kk): A for r in rows}
    hotB = {(kk, q): B for q in cols}
    c_x, top = product_layout(ax, bm, bn, bk, cw, hotA, hotB, hotC, c_ec="none")
    for w in range(warps):
        r0 = w // (bn // wn) * wm
        q0 = w % (bn // wn) * wn
        ax.add_patch(Rectangle((c_x + q0 * cw, top + r0 * cw), wn * cw, wm * cw, fc="none", ec=INK, lw=1.0))
        ax.text(c_x + (q0 + wn - 1) * cw, top + (r0 + 2) * cw, f"warp {w}", ha="right", va="top", fontsize=8)
    ax.text(bk * cw / 2, top + bm * cw + 0.3, f"A tile\n{bm}x{bk}\n(sAT,\nx2)", ha="center", va="top",
            fontsize=8, color=A, weight="bold")
    ax.text(c_x - 0.3, bk * cw / 2, f"sB {bk}x{bn} (x2)", ha="right", va="center", fontsize=8.5, color=B,
            weight="bold")
    ax.text(c_x + bn * cw / 2, top + bm * cw + 0.4,
            f"{bm}x{bn} block tile: {warps} warp tiles of {wm}x{wn}, {threads} threads;\n"
            f"each warp: {wtr} x {wtc} lanes, each {tm}x{tn} outputs in float4 groups\n"
            f"{4 * wtr} rows / {4 * wtc} columns apart (green: warp {warp}, lane {lane};\n"
            f"dark blue / red: its fragments rA, rB at k = {kk})", ha="center", va="top", fontsize=8.2)
    ax.set_xlim(-0.5, c_x + bn * cw + 0.3)
    ax.set_ylim(top + bm * cw + 6.0, -0.5)
    # Right: the main loop in time (order, not to scale), two K tiles
    ax2.axis("off")
    n = 2 * bk
    x0 = 6.0
    rows_ = [("LDG  global -> stA, stB", 0), ("STS  registers -> shared", 1), ("BAR.SYNC", 2),
             ("LDS.128  shared -> fragment", 3), (f"FFMA  {tm * tn} per k", 4)]
    for name, r in rows_:
        ax2.text(x0 - 0.2, r + 0.5, name, ha="right", va="center", fontsize=8.2, family="monospace")
        ax2.plot([x0, x0 + n], [r + 1, r + 1], color="#dddddd", lw=0.6)
    for i in range(n):
        kt, kk_ = divmod(i, bk)
        ax2.add_patch(Rectangle((x0 + i + 0.05, 4.12), 0.9, 0.76, fc=C, ec="none"))
        ax2.text(x0 + i + 0.5, 4.5, str(kk_), ha="center", va="center", fontsize=7, color="white")
        nxt = (kk_ + 1) % bk
        ax2.add_patch(Rectangle((x0 + i + (0.35 if kk_ == bk - 1 else 0.05), 3.15), 0.5, 0.7,
                                fc=tint(A, 0.55), ec="none"))
        ax2.text(x0 + i + (0.6 if kk_ == bk - 1 else 0.3), 3.5, str(nxt), ha="center", va="center", fontsize=6.5)
        if kk_ == bk - 1:
            ax2.add_patch(Rectangle((x0 + i + 0.0, 1.1), 0.34, 0.8, fc=tint(B, 0.7), ec="none"))
            ax2.plot([x0 + i + 0.33] * 2, [2.1, 2.9], color=INK, lw=2.5)
            ax2.add_patch(Rectangle((x0 + i + 0.35, 0.2), min(n - i - 0.35, bk - 0.02), 0.6,
                                    fc=tint(style.YELLOW, 0.6), ec="#998800", lw=0.8))
            ax2.text(x0 + i + 0.5, 0.5, "loads of tile kt+2 in flight" if kt == 0 else "",
                     ha="left", va="center", fontsize=7.5)
            ax2.text(x0 + i + 0.17, 1.5, f"kt+{kt + 1}", ha="center", va="center", fontsize=6.5, rotation=90)
    for kt in range(2):
        ax2.text(x0 + kt * bk + bk / 2, -0.5, f"K tile kt+{kt}" if kt else "K tile kt", ha="center", va="center",
                 fontsize=9, weight="bold")
        ax2.text(x0 + kt * bk + bk / 2, 5.4, f"tile kt+{kt} sits in shared buffer {kt % 2}" if kt else "tile kt sits in shared buffer 0", ha="center", va="center",
                 fontsize=8, color="#555555")
        ax2.plot([x0 + kt * bk] * 2, [-0.2, 5.0], color="#888888", lw=0.8, ls=":")
    ax2.set_xlim(-1.5, x0 + n + 0.3)
    ax2.set_ylim(9.6, -1.2)
    ax2.text(x0 - 7.2, 6.2,
             f"At the last k of a tile: store tile kt+1 (in registers since the last tile) into the other buffer,\n"
             f"issue the loads of tile kt+2 into the freed registers, one barrier, switch buffers.\n"
             f"Every k: the fragment for k+1 is read while the {tm * tn} FFMAs of k issue.\n"
             f"Its parent, step 07, loads, waits at a barrier, computes, waits again; here one barrier per tile.\n"
             f"Order of instructions, not to scale. {size_k(bk)} K tiles at K = 4096.",
             ha="left", va="top", fontsize=8.2, linespacing=1.4)
    fig.suptitle(f"Step 08: block {bm}x{bn}x{bk} -> warp {wm}x{wn} -> thread {tm}x{tn}, and a k loop that "
                 "keeps the next tiles in flight", fontsize=11, y=0.95)
    return fig


def size_k(bk, size=4096):
    return size // bk


@style.figure("cp_async_ring", "Step 09's ring of STAGES shared-memory buffers in time: while tile kt is "
              "multiplied from one stage, cp.async copies of the next STAGES-1 tiles are in flight into the "
              "others; a stage is refilled right after the barrier that frees it (09: 2 stages; 09b's stream-K "
              "kernel: 3); durations schematic")
def cp_async_ring():
    c9, c9b = k("09"), k("09b")
    copy = 0.8  # schematic copy time, in tiles of math (not measured)
    ntiles = 7
    tile_colors = [style.BLUE, style.RED, style.GREEN, style.PURPLE, style.CYAN, style.YELLOW, "#888888"]
    panels = [(c9["STAGES"], "step 09: STAGES = {}"), (c9b["SK_STAGES"], "step 09b's stream-K kernel: SK_STAGES = {}")]
    fig, axes = plt.subplots(2, 1, figsize=(10.5, 7.0), gridspec_kw=dict(height_ratios=[p[0] + 1.6 for p in panels]))
    fig.subplots_adjust(left=0.14, right=0.98, top=0.86, bottom=0.14, hspace=0.5)
    for ax, (S, title) in zip(axes, panels):
        t0 = copy  # the prologue issues tiles 0 .. S-2 at time 0; math starts when tile 0 has landed
        rows = S + 1
        ax.set_xlim(-0.1, t0 + ntiles + 0.1)
        ax.set_ylim(rows, -0.3)
        ax.set_yticks([0.5] + [1.5 + s for s in range(S)])
        ax.set_yticklabels(["math (FFMA)"] + [f"stage {s}" for s in range(S)], fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
        for sp in ("top", "right", "left"):
            ax.spines[sp].set_visible(False)
        ax.set_title(title.format(S) + f": {S - 1} tile{'s' if S > 2 else ''} in flight while one is multiplied",
                     fontsize=10, loc="left")
        issue = {t: 0.0 for t in range(S - 1)}  # when each tile's copy is issued
        for kt in range(ntiles):
            start = t0 + kt
            if kt + S - 1 < ntiles + S:
                issue[kt + S - 1] = start
        for t in range(ntiles + S - 1):
            s_ = t % S
            y = 1 + s_
            col = tile_colors[t % len(tile_colors)]
            a = issue[t]
            landed = a + copy
            use0, use1 = t0 + t, t0 + t + 1
            if a > t0 + ntiles:
                continue
            ax.add_patch(Rectangle((a, y + 0.12), min(copy, t0 + ntiles - a), 0.76, fc=tint(col, 0.35), ec=col,
                                   hatch="////", lw=0.8))
            if use0 > landed:
                ax.add_patch(Rectangle((landed, y + 0.12), min(use0, t0 + ntiles) - landed, 0.76, fc=tint(col, 0.15),
                                       ec=col, lw=0.8))
            if t < ntiles:
                ax.add_patch(Rectangle((use0, y + 0.12), 1, 0.76, fc=col, ec="white", lw=0.8))
                ax.text(use0 + 0.5, y + 0.5, f"tile {t}", ha="center", va="center", fontsize=8, color="white")
                ax.add_patch(Rectangle((use0, 0.12), 1, 0.76, fc=col, ec="white", lw=0.8))
                ax.text(use0 + 0.5, 0.5, f"tile {t}", ha="center", va="center", fontsize=8, color="white")
            if a < t0 + ntiles:
                ax.text(a + 0.04, y + 0.5, f"{t}", ha="left", va="center", fontsize=7, color=INK)
        for kt in range(ntiles + 1):  # wait_group + __syncthreads at the end of each tile
            ax.axvline(t0 + kt, color=INK, lw=0.8, ls=":")
        ax.set_xlabel("time, in tiles of math (copies drawn at 0.8 of one: schematic)", fontsize=8.5)
    handles = [Rectangle((0, 0), 1, 1, fc=tint(style.BLUE, 0.35), ec=style.BLUE, hatch="////"),
               Rectangle((0, 0), 1, 1, fc=tint(style.BLUE, 0.15), ec=style.BLUE),
               Rectangle((0, 0), 1, 1, fc=style.BLUE, ec="white"),
               plt.Line2D([], [], color=INK, lw=0.8, ls=":")]
    fig.legend(handles, ["cp.async copy in flight (issued, not landed)", "landed, waiting",
                         "read by the math", "cp.async.wait_group + __syncthreads"],
               loc="upper center", bbox_to_anchor=(0.57, 0.935), ncol=4, fontsize=8, frameon=False)
    fig.suptitle("The cp.async ring: tile kt is multiplied from one stage while the copies of the next "
                 "tiles fly into the others", fontsize=11, y=0.985)
    fig.text(0.01, 0.01, "A stage is refilled (tile kt + STAGES - 1) right after the barrier that ends tile kt - 1, "
             "its last reader. With 2 stages a copy must land within one tile of math;\non the H200 it does: "
             "2 and 3 stages measured the same for step 09 (kernels/09_async_copy_pipeline.cu). Copy durations "
             "are not measured.", fontsize=7.8, color="#444444")
    return fig


@style.figure("roofline", "The H200 roofline per memory level: each step at its FLOP per byte through L1, L2 "
              "and DRAM (ncu, one GEMM at 4096³) and the TFLOP/s of that launch, against the DRAM, L1/shared and "
              "(dashed) L2 roofs, the L2 one ncu's model at 15.3 TB/s; 01 and 02 sit under the L1 roof, and step "
              "03 joins them at its shared-memory point (0.4 FLOP per byte, counted from its SASS)")
def roofline():
    import plot_roofline  # scripts/plot_roofline.py: the same drawing as `make docs` runs
    return plot_roofline.draw(BENCH, ROOFLINE)


# ---------------------------------------------------------------------------------------------------
# Step 09b: the stream-K split of the last wave
# ---------------------------------------------------------------------------------------------------

def blocks_per_sm(step, kernel):
    """docs/resources.md's blocks per SM of one kernel of a step (09b has two kernels, one row each)."""
    for line in (ROOT / "docs" / "resources.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 8 and cells[0] == step and cells[1].strip("`") == kernel:
            return int(cells[8].split()[0])
    raise KeyError(f"docs/resources.md has no row for step {step}, kernel {kernel}")


class Split09b:
    """Step 09b's split of one launch, restated from kernels/09b_stream_k.cu:
      Split (host):  tiles_n = ceil(N / BN), tiles = ceil(M / BM) * tiles_n, KT = ceil(K / BK),
                     P = SMs x blocks per SM of sgemm_stream_k (cudaOccupancyMaxActiveBlocksPerMultiprocessor;
                     here docs/resources.md's row), waves = tiles / P, rest = tiles % P,
                     sk_tiles = 0 if waves == 0 or rest == 0, else rest if 2 rest >= P, else rest + P;
      launch_tiles:  dp_tiles = tiles - sk_tiles; Schedule{blocks G = min(P, sk_tiles * KT), iters S = sk_tiles * KT};
      sgemm_stream_k: start(b) = b * S / G; block g's pieces walk [start(g), start(g + 1)) tile by tile;
                     block_of(x) = ((x + 1) G - 1) / S; a piece's slot is 2c + 1 for the tile's first block c_first,
                     2c for every later block c."""

    def __init__(self, m, n, k_, sms, per_sm):
        c = k("09b")
        self.bm, self.bn, self.bk = c["BM"], c["BN"], c["BK"]
        self.tiles_n = -(-n // self.bn)
        self.tiles = -(-m // self.bm) * self.tiles_n
        self.KT = -(-k_ // self.bk)
        self.P = sms * max(per_sm, 1)
        self.waves, self.rest = divmod(self.tiles, self.P)
        self.sk_tiles = 0 if self.waves == 0 or self.rest == 0 else (
            self.rest if 2 * self.rest >= self.P else self.rest + self.P)
        self.dp_tiles = self.tiles - self.sk_tiles
        self.iters = self.sk_tiles * self.KT
        self.blocks = min(self.P, self.iters)

    def start(self, b):
        return b * self.iters // self.blocks

    def block_of(self, x):
        return ((x + 1) * self.blocks - 1) // self.iters

    def pieces(self, g):
        """Block g's pieces (tile, kt0, kt1), tile counted from 0 among the stream-K tiles (sgemm_stream_k's loop)."""
        first = self.start(g)
        tile, kt0, left, out = first // self.KT, first % self.KT, self.start(g + 1) - first, []
        while left > 0:
            kt1 = min(self.KT, kt0 + left)
            left -= kt1 - kt0
            out.append((tile, kt0, kt1))
            tile, kt0 = tile + 1, 0
        return out


SK_COLORS = ["#77aadd", "#ee8866", "#eedd88", "#ffaabb", "#99ddff", "#44bb99"]  # Tol's "light", cycled by block


@style.figure("streamk_09b", "Step 09b's stream-K split at 4096³ on 132 SMs: 512 tiles of 128x256 are 3 full "
              "waves and 116 tiles; those 116 tiles' 116 x 256 K tiles are cut into one even run over all 132 "
              "blocks (224-225 K tiles each, 0.88 of a tile), crossing tile boundaries; a tile cut between blocks "
              "is summed by the fixup in the block that stores its last piece")
def streamk_09b():
    m_ = machine()
    size = 4096
    per_sm = blocks_per_sm("09b", "sgemm_stream_k")
    sp = Split09b(size, size, size, m_["sms"], per_sm)
    assert sp.sk_tiles > 0 and sp.blocks == sp.P
    for x in range(0, sp.iters, 97):  # block_of inverts start
        b = sp.block_of(x)
        assert sp.start(b) <= x < sp.start(b + 1)
    covered = sorted((t * sp.KT + a, t * sp.KT + b) for g in range(sp.blocks) for t, a, b in sp.pieces(g))
    assert covered[0][0] == 0 and covered[-1][1] == sp.iters and all(p[1] == q[0] for p, q in zip(covered, covered[1:]))
    sizes = [sp.start(b + 1) - sp.start(b) for b in range(sp.blocks)]
    fig = plt.figure(figsize=(13, 10.4))
    gs = fig.add_gridspec(2, 3, height_ratios=[0.72, 1.0], hspace=0.32, wspace=0.35, top=0.89, bottom=0.09,
                          left=0.07, right=0.98)
    # Top left: the first stream-K tiles x their K tiles, each piece coloured and labelled by its block.
    rows = 8
    ax = fig.add_subplot(gs[0, 0:2])
    for g in range(sp.blocks):
        for t, a, b in sp.pieces(g):
            if t >= rows:
                continue
            ax.add_patch(Rectangle((a, t), b - a, 0.86, fc=SK_COLORS[g % len(SK_COLORS)], ec=INK, lw=0.8))
            ax.text((a + b) / 2, t + 0.43, f"block {g}: K tiles {a}-{b - 1}" if b - a > sp.KT / 3 else f"{g}",
                    ha="center", va="center", fontsize=8)
    ax.set_xlim(0, sp.KT)
    ax.set_ylim(rows + 0.1, -0.2)
    ax.set_yticks([r + 0.43 for r in range(rows)], [f"tile t = {sp.dp_tiles + r}" for r in range(rows)], fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel(f"K tile of the tile (0..{sp.KT - 1}, BK = {sp.bk})", fontsize=9)
    for s_ in ("top", "right"):
        ax.spines[s_].set_visible(False)
    ax.set_title(f"the first {rows} of the {sp.sk_tiles} stream-K tiles: each block's run of "
                 f"{min(sizes)}-{max(sizes)} K tiles\nstarts where the last one ended, inside a tile", fontsize=10,
                 loc="left")
    # Top right: the numbers of the split, as the C++ computes them.
    tx = fig.add_subplot(gs[0, 2])
    tx.axis("off")
    tx.text(0, 1.0,
            f"Split (kernels/09b_stream_k.cu), {size}³:\n"
            f"tiles = {size // sp.bm} x {sp.tiles_n} = {sp.tiles}\n  of {sp.bm}x{sp.bn}\n"
            f"P = {m_['sms']} SMs x {per_sm} block per SM\n  = {sp.P} (sgemm_stream_k)\n"
            f"waves = {sp.waves}, rest = {sp.rest}\n"
            f"2 x {sp.rest} ≥ {sp.P}: sk_tiles = rest = {sp.sk_tiles}\n"
            f"dp_tiles = {sp.dp_tiles}: data-parallel\n  kernel, {sp.dp_tiles // sp.P} full waves\n"
            f"KT = {size} / {sp.bk} = {sp.KT} K tiles a tile\n"
            f"S = iters = {sp.sk_tiles} x {sp.KT} = {sp.iters:,}\n"
            f"G = blocks = min(P, S) = {sp.blocks}\n"
            f"block g: [g·S/G, (g+1)·S/G):\n  {min(sizes)}-{max(sizes)} K tiles = "
            f"{sp.iters / sp.blocks / sp.KT:.2f} of a tile",
            transform=tx.transAxes, ha="left", va="top", fontsize=9.2, family="monospace", linespacing=1.3)
    # Bottom left: the end of the run, SM x time in K tiles, with and without stream-K.
    tl = fig.add_subplot(gs[1, 0:2])
    dp_kt = sp.dp_tiles // sp.P * sp.KT
    lo = dp_kt - sp.KT // 2
    for b in range(sp.blocks):
        tl.add_patch(Rectangle((lo, b - 0.5), dp_kt - lo, 1, fc="#dddddd", ec="none"))
        x = dp_kt
        for i, (t, a, e) in enumerate(sp.pieces(b)):
            tl.add_patch(Rectangle((x, b - 0.5), e - a, 1, fc=tint(C, 0.45 if i == 0 else 0.8), ec="none"))
            x += e - a
    rest = sp.rest
    tl.plot([dp_kt + sp.KT] * 2, [-0.5, rest - 0.5], color=INK, lw=1.5, ls="--")
    tl.plot([dp_kt, dp_kt + sp.KT], [rest - 0.5] * 2, color=INK, lw=1.5, ls="--")
    end = dp_kt + max(sizes)
    tl.axvline(end, color=C, lw=1.5)
    tl.text(dp_kt + sp.KT + 3, rest * 0.45, f"without stream-K (step 09):\nblocks 0..{rest - 1} run a 4th wave,\n"
            f"one whole tile ({sp.KT} K tiles);\n{sp.P - rest} SMs sit idle", fontsize=9, va="center")
    tl.text(end + 3, sp.P - 8, f"09b: every block ends\nafter {max(sizes)} K tiles more\n(plus its fixup)",
            fontsize=9, va="center", color=C)
    tl.text(lo + 3, sp.P * 0.5, f"the end of the\nlast of the {sp.dp_tiles // sp.P}\ndata-parallel\nwaves",
            fontsize=9, va="center")
    tl.set_xlim(lo, dp_kt + sp.KT + 95)
    tl.set_ylim(sp.P - 0.5, -0.5)
    tl.set_xlabel("time in K tiles of one block, from the start of the run (drawn: its end)", fontsize=9)
    tl.set_ylabel("block (one per SM)", fontsize=9)
    tl.tick_params(labelsize=8)
    tl.set_title("the end of the run: grey = data-parallel tiles, green = stream-K pieces (a block's second piece,\n"
                 "in the next tile, darker). Drawn as if stream-K block b took data-parallel block b's SM: the "
                 "hardware\npromises no order, and programmatic dependent launch lets a block start as an SM frees up",
                 fontsize=9, loc="left")
    # Bottom right: the fixup of the first tile cut between the most blocks.
    fx = fig.add_subplot(gs[1, 2])
    fx.axis("off")
    spans = [sp.block_of((r + 1) * sp.KT - 1) - sp.block_of(r * sp.KT) for r in range(sp.sk_tiles)]
    r = spans.index(max(spans))
    x0 = r * sp.KT
    c_first, c_last = sp.block_of(x0), sp.block_of(x0 + sp.KT - 1)
    fx.set_xlim(-2, 12)
    fx.set_ylim(16.5, -1.2)
    fx.set_title(f"the fixup of tile t = {sp.dp_tiles + r}, cut between\n{c_last - c_first + 1} blocks "
                 f"(the most any tile is)", fontsize=9.5, loc="left")
    for i, cc in enumerate(range(c_first, c_last + 1)):
        a, b = max(sp.start(cc), x0) - x0, min(sp.start(cc + 1), x0 + sp.KT) - x0
        slot = 2 * cc + 1 if cc == c_first else 2 * cc
        y = i * 2.3
        box(fx, 0, y, 4.6, 1.7, f"block {cc}\nK tiles {a}..{b - 1}", fc=SK_COLORS[cc % len(SK_COLORS)], fs=8.5)
        box(fx, 6.2, y, 5.2, 1.7, f"slot {slot}:\nfp32 partial", fc=SK_COLORS[cc % len(SK_COLORS)], fs=8.5)
        arrow(fx, (4.7, y + 0.85), (6.1, y + 0.85), lw=1.1, ms=9)
    n_pieces = c_last - c_first + 1
    fx.text(-1.8, n_pieces * 2.3 + 0.2,
            "1. each block stores its piece's partial\n    (__stcg) in its slot, __threadfence,\n"
            "    then atomicAdd on arrivals[tile]\n"
            f"2. the one that counts the last of the\n    {n_pieces} pieces sums the slots in block\n"
            f"    order {', '.join(str(cc) for cc in range(c_first, c_last + 1))}, resets the counter and\n"
            "    stores C\n3. no block waits for another\n\n"
            "slot 2c+1: block c's piece that starts\nat K tile 0; slot 2c: its piece that\nstarts inside a tile",
            fontsize=8.5, va="top")
    s8 = Split09b(8192, 8192, 8192, m_["sms"], per_sm)
    fig.text(0.5, 0.012, f"At 8192³: {s8.tiles} tiles = {s8.waves} waves + {s8.rest}; 2 x {s8.rest} ≥ {s8.P}, so "
             f"sk_tiles = {s8.sk_tiles} tiles x {s8.KT} K tiles over {s8.blocks} blocks: "
             f"{s8.iters // s8.blocks}-{-(-s8.iters // s8.blocks)} K tiles each ({s8.iters / s8.blocks / s8.KT:.2f} "
             f"of a tile). Blocks per SM: docs/resources.md; SMs: results/nvidia_h200.csv.",
             ha="center", fontsize=9)
    fig.suptitle("Step 09b: stream-K shares the last wave's K tiles evenly over all 132 blocks, cutting across "
                 "tile boundaries;\na tile cut between blocks is summed by the fixup (colour = block, cycled)",
                 fontsize=12.5, fontweight="bold", y=0.995)
    return fig
