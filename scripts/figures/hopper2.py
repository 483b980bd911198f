"""Concept figures of the book's Hopper part 2 (steps 15-23): the persistent walk, the TMA-store
epilogue, cluster multicast, stmatrix, ping-pong, stream-K and the ping-pong ring.

Sizes come from the kernels' constants (step_constants.constants); the tile order and the stream-K
splits from the C++ itself, run by host tools (build/bin/schedule_dump, build/bin/split_dump: make docs
builds them, the second from steps 21 and 23's objects); the ring positions are a small pure function of
common/kernel_lib restated here in Python, with a comment naming the C++ it mirrors. Timelines are
schematic and say so on the figure."""
import bisect
import csv
import io
import json
import re
import subprocess

import matplotlib.pyplot as plt
from matplotlib.colors import ListedColormap
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

import style
from step_constants import constants

SMS = 132  # the H200's SM count: the persistent grid (gemm::sm_count() on the machine the results come from)
LIGHT = {"blue": "#c5d6ea", "red": "#f9d0d5", "green": "#bfe3c4", "yellow": "#efe9c2", "grey": "#e4e4e4"}


def _src(step):
    """The text of kernels/<step>_*.cu."""
    return next((style.ROOT / "kernels").glob(f"{step}_*.cu")).read_text()


# ---------------------------------------------------------------------------------------------------
# The C++ the figures draw, through the host tools that run it (make docs builds them): the tile
# order from build/bin/schedule_dump (common/kernel_lib/schedule.hpp), the stream-K splits from
# build/bin/split_dump (the steps' make_split and common/kernel_lib/stream_k.hpp).
# ---------------------------------------------------------------------------------------------------

def _tool(name, *args):
    """The stdout of build/bin/<name> run with args; exits naming the make target when it is not built."""
    tool = style.ROOT / "build" / "bin" / name
    if not tool.exists():
        raise SystemExit(f"error: the figures need {tool.relative_to(style.ROOT)}: `make docs` builds it "
                         f"(or `make build/bin/{name}`)")
    return subprocess.run([str(tool), *map(str, args)], check=True, capture_output=True, text=True).stdout


def grouped_order(tiles_m, tiles_n, group_m):
    """gemm::schedule::grouped (common/kernel_lib/schedule.hpp) for every t: [(tile_m, tile_n)] in t order."""
    rows = csv.DictReader(io.StringIO(_tool("schedule_dump", "grouped", tiles_m, tiles_n, group_m)))
    return [(int(r["tile_m"]), int(r["tile_n"])) for r in sorted(rows, key=lambda r: int(r["t"]))]


class Split:
    """A gemm::stream_k::Split as build/bin/split_dump prints it, with the K tiles per tile (k_tiles) that
    cut a block's run into pieces."""

    def __init__(self, dump, k_tiles):
        d = json.loads(dump)
        self.tiles, self.dp_tiles, self.sk_tiles = d["tiles"], d["dp_tiles"], d["sk_tiles"]
        self.blocks, self.iters, self.starts = d["blocks"], d["iters"], d["starts"]
        self.k_tiles = k_tiles

    def start(self, b):  # Split::start
        return self.starts[b]

    def block_of(self, x):  # Split::block_of: the block whose range holds K tile x of iters (max c: start(c) <= x)
        return bisect.bisect_right(self.starts, x, hi=self.blocks) - 1

    def pieces(self, b):
        """Block b's range cut at tile boundaries (what gemm::stream_k::Walk walks): [(t, kt0, kt1)], t
        counted from 0 among the stream-K tiles."""
        x, end, out = self.start(b), self.start(b + 1), []
        while x < end:
            tile, kt0 = divmod(x, self.k_tiles)
            kt1 = min(self.k_tiles, kt0 + (end - x))
            out.append((tile, kt0, kt1))
            x += kt1 - kt0
        return out


def library_split(tiles, k_tiles, sms, worth_it, min_piece):
    """gemm::stream_k::make_split(tiles, k_tiles, sms, worth_it, min_piece)."""
    return Split(_tool("split_dump", "library", tiles, k_tiles, sms, int(worth_it), min_piece), k_tiles)


def make_split(step, m, n, k, sms=SMS):
    """The step's own make_split (kernels/21_stream_k.cu, kernels/23_pingpong_stream_k.cu), and the
    numbers of its rule the captions print: the idle SM time stream-K recovers against the fixup's
    cost (FIXUP_K_TILES per SM). Returns (Split, the rule's numbers)."""
    c = constants(step)
    bm, bn, bk = c["BM"], c["BN"], c["BK"]
    tiles, k_tiles = -(-m // bm) * -(-n // bn), -(-k // bk)
    split = Split(_tool("split_dump", step, m, n, k, sms), k_tiles)
    if split.tiles != tiles:
        raise SystemExit(f"hopper2.py: step {step}'s split has {split.tiles} tiles, its constants say {tiles}")
    waves, rest = tiles // sms, tiles % sms
    info = {"bm": bm, "bn": bn, "tiles": tiles, "k_tiles": k_tiles, "waves": waves, "rest": rest, "sms": sms,
            "recovered": (sms - rest) * k_tiles, "cost": sms * c["FIXUP_K_TILES"], "fixup": c["FIXUP_K_TILES"]}
    return split, info


def advance_by(stage, phase, n, stages):
    """pipe::PipeState::advance_by (common/kernel_lib/pipeline.cuh): n calls of advance() at once."""
    nxt = stage + n % stages
    phase ^= (n // stages) & 1
    if nxt >= stages:
        return nxt - stages, phase ^ 1
    return nxt, phase


# ---------------------------------------------------------------------------------------------------
# Drawing helpers.
# ---------------------------------------------------------------------------------------------------

def _box(ax, x, y, w, h, color, text="", fs=9, ec="black", lw=0.8, tc="black", **kw):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=ec, linewidth=lw, **kw))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fs, color=tc)


def _arrow(ax, p, q, color="black", lw=1.2, style_="-|>", ms=10, **kw):
    ax.add_patch(FancyArrowPatch(p, q, arrowstyle=style_, mutation_scale=ms, color=color, linewidth=lw, **kw))


def _blank(ax):
    ax.set_xticks([])
    ax.set_yticks([])
    for s in ax.spines.values():
        s.set_visible(False)


# ---------------------------------------------------------------------------------------------------
# Step 15: the persistent walk.
# ---------------------------------------------------------------------------------------------------

@style.figure("persistent_walk",
              "Step 15's persistent grid: 132 blocks, one per SM, walk the tiles in grouped order; block b "
              "takes t = b, b + 132, b + 264, ... (4096³: 512 tiles, the last wave 116 tiles)")
def persistent_walk():
    c = constants("15")
    bm, bn, group_m = c["BM"], c["BN"], c["GROUP_M"]
    size = 4096
    tiles_m, tiles_n = size // bm, size // bn
    tiles = tiles_m * tiles_n
    p = min(tiles, SMS)  # the grid: kernels/15_persistent_grouped.cu's launch
    order = grouped_order(tiles_m, tiles_n, group_m)
    waves = -(-tiles // p)
    wave_of = [[0] * tiles_n for _ in range(tiles_m)]
    where = {}
    for t in range(tiles):
        m, n = order[t]
        wave_of[m][n] = t // p
        where[t] = (m, n)
    wave_colors = [LIGHT["blue"], LIGHT["green"], LIGHT["yellow"], LIGHT["red"], LIGHT["grey"]][:waves]
    dark = [style.BLUE, style.GREEN, "#a08e1c", style.RED, "#777777"][:waves]

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11.5, 7.2), gridspec_kw={"width_ratios": [1.0, 0.8]})
    ax.imshow(wave_of, cmap=ListedColormap(wave_colors), vmin=-0.5, vmax=waves - 0.5, interpolation="nearest")
    for x in range(tiles_n + 1):
        ax.axvline(x - 0.5, color="white", linewidth=0.5)
    for y in range(tiles_m + 1):
        ax.axhline(y - 0.5, color="white", linewidth=0.5)
    for g in range(group_m, tiles_m, group_m):
        ax.axhline(g - 0.5, color="black", linewidth=2)
        ax.text(tiles_n - 0.4, g - 0.5, f" group {g // group_m + 1}\n starts", va="center", ha="left", fontsize=9)
    ax.text(tiles_n - 0.4, -0.5, f" group 1\n (GROUP_M\n = {group_m}\n tile rows)", va="top", ha="left", fontsize=9)
    # The order inside wave 1: the path of t = 0 .. p-1 (down a group's column, then the next column).
    pts = [where[t] for t in range(p)]
    ax.plot([n for _, n in pts], [m for m, _ in pts], color="#555555", linewidth=0.8, alpha=0.7)
    for b, color in ((0, "black"), (120, style.PURPLE)):
        ts = list(range(b, tiles, p))
        xs, ys = [where[t][1] for t in ts], [where[t][0] for t in ts]
        for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
            _arrow(ax, (x0, y0), (x1, y1), color=color, lw=1.6, ms=12, shrinkA=6, shrinkB=6)
        for t, x, y in zip(ts, xs, ys):
            ax.plot(x, y, "o", color=color, markersize=19, markeredgecolor="white")
            ax.text(x, y, str(t), color="white", fontsize=8, ha="center", va="center", fontweight="bold")
        lx, ly, ha = (xs[0] + 0.3, ys[0] + 1.6, "left") if b == 0 else (xs[0] - 0.9, ys[0], "right")
        ax.text(lx, ly, f"block {b}", color=color, fontsize=10, fontweight="bold", ha=ha, va="center",
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
    ax.set_xticks(range(0, tiles_n, 4))
    ax.set_yticks(range(0, tiles_m, 4))
    ax.set_xlabel(f"tile_n ({bn} columns of C each)", fontsize=10)
    ax.set_ylabel(f"tile_m ({bm} rows of C each)", fontsize=10)
    ax.set_title(f"the {tiles_m} x {tiles_n} tiles of {size}³, coloured by wave;\n"
                 f"grey line: wave 1 in order; dots: the tiles t of two blocks", fontsize=10)
    ax.set_xlim(-0.5, tiles_n + 3.2)
    ax.legend(handles=[Patch(facecolor=wave_colors[w], edgecolor=dark[w],
                             label=f"wave {w + 1}: t = {w * p}..{min((w + 1) * p, tiles) - 1}") for w in range(waves)],
              loc="upper center", bbox_to_anchor=(0.42, -0.08), ncol=2, fontsize=9, frameon=False)

    # Right: the blocks over time, one tile after another.
    for b in range(p):
        ts = list(range(b, tiles, p))
        for i, t in enumerate(ts):
            bx.add_patch(Rectangle((i, b - 0.5), 1, 1, facecolor=wave_colors[t // p], edgecolor="none"))
        if len(ts) < waves:
            bx.add_patch(Rectangle((len(ts), b - 0.5), waves - len(ts), 1, facecolor="white",
                                   edgecolor="#999999", hatch="////", linewidth=0))
    for i in range(waves + 1):
        bx.axvline(i, color="white", linewidth=1.5)
    last = tiles - (waves - 1) * p
    bx.annotate(f"blocks {last}..{p - 1}: no tile left,\ntheir SMs idle for a whole tile\n"
                f"({p - last} of {p}: a partial wave; stream-K,\nsteps 21/23, fills such waves where it pays)",
                xy=(waves - 0.5, (last + p) / 2), xytext=(0.25, 100), fontsize=9.5, ha="left", va="center",
                arrowprops={"arrowstyle": "-|>", "color": "black"},
                bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": "#999999"})
    for b, color in ((0, "black"), (120, style.PURPLE)):
        bx.axhline(b, color=color, linewidth=1.2, linestyle=":")
        ts = list(range(b, tiles, p))
        for i, t in enumerate(ts):
            bx.text(i + 0.5, b + (3 if b == 0 else -3), f"t={t}", color=color, fontsize=9, ha="center", va="center",
                    fontweight="bold")
    bx.set_xlim(0, waves)
    bx.set_ylim(p - 0.5, -0.5)
    bx.set_xticks([i + 0.5 for i in range(waves)], [f"tile {i + 1}" for i in range(waves)], fontsize=9)
    bx.set_ylabel(f"block b = blockIdx.x (grid of {p}, one per SM)", fontsize=10)
    bx.set_title("each block's tiles in time: for (t = b; t < tiles; t += gridDim.x)\n"
                 "(the smem ring and its mbarriers run on across the tiles)", fontsize=10)
    fig.suptitle(f"Step 15: {p} persistent blocks cover {tiles} tiles in {waves} waves; "
                 f"block b takes tiles b, b+{p}, b+{2 * p}, ...", fontsize=12.5, fontweight="bold")
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------
# Step 16: the epilogue through shared memory and TMA stores.
# ---------------------------------------------------------------------------------------------------

@style.figure("epilogue_tma_store",
              "Step 16's epilogue: each consumer cuts its 64x256 slab into four 64x64 boxes, writes them "
              "128B-swizzled into two shared-memory buffers in turn, and hands each to a TMA store that runs on "
              "under the next tile's mainloop")
def epilogue_tma_store():
    c = constants("16")
    bm, bn, box, bufs, consumers = c["BM"], c["BN"], c["EPI_BOX"], c["EPI_BUFS"], c["CONSUMERS"]
    slab = c["WGMMA_M"]
    nbox = bn // box
    buf_fill = [LIGHT["green"], "#7fc28a"]  # buffer 0, buffer 1
    fig, (ax, tx) = plt.subplots(2, 1, figsize=(11.5, 8.6), gridspec_kw={"height_ratios": [0.8, 1.0]})

    # Top: the tile, the buffers, C in global memory. 1 unit = 8 elements.
    u = 1 / 8
    ax.set_xlim(0, 104)
    ax.set_ylim(27, -1)
    _blank(ax)
    x0, y0 = 14, 6
    ax.text(x0 + bn * u / 2, y0 - 2, f"the {bm}x{bn} tile in registers (fp32)", ha="center", fontsize=10)
    for cons in range(consumers):
        for bxi in range(nbox):
            _box(ax, x0 + bxi * box * u, y0 + cons * slab * u, box * u, slab * u, buf_fill[bxi % bufs],
                 f"box {bxi}\n→ buf {bxi % bufs}", fs=9.5)
        ax.text(x0 - 0.8, y0 + (cons + 0.5) * slab * u, f"consumer {cons}\nrows {cons * slab}..{cons * slab + slab - 1}",
                ha="right", va="center", fontsize=9.5)
    ax.add_patch(Rectangle((x0, y0), bn * u, bm * u, fill=False, edgecolor="black", linewidth=2))
    ax.text(x0 + bn * u / 2, y0 + bm * u + 1.2, f"a box row: {box} bf16 = {box * 2} B, "
            "TMA's limit under the 128B swizzle", ha="center", va="top", fontsize=8.5)
    # Shared memory: CONSUMERS x EPI_BUFS buffers of box x box bf16.
    sx, sy, side = 56, 4.5, 9
    kb = box * box * 2 // 1024
    ax.text(sx + side + 1, sy - 2, f"shared memory: {consumers} x {bufs} buffers", ha="center", fontsize=10)
    for cons in range(consumers):
        for b in range(bufs):
            _box(ax, sx + b * (side + 2), sy + cons * (side + 1.5), side, side, buf_fill[b],
                 f"consumer {cons}\nbuf {b}\n{kb} KB", fs=9, lw=1.2)
    ax.text(sx + side + 1, sy + 2 * side + 1.5 + 1.0, f"{box} rows x {box * 2} B, 128B-swizzled", ha="center", va="top",
            fontsize=8.5)
    _arrow(ax, (x0 + bn * u + 0.8, y0 + 4), (sx - 0.8, y0 + 4), lw=1.6)
    ax.text((x0 + bn * u + sx) / 2, y0 + 3.2, "bf16x2\nst.shared", ha="center", va="bottom", fontsize=9)
    # Global memory C.
    gx, gy = 87, 4.5
    _box(ax, gx, gy, 16, 19, LIGHT["grey"], "", lw=1.0)
    ax.text(gx + 8, gy - 2, "C (global memory)", ha="center", fontsize=10)
    for cons in range(consumers):
        for bxi in range(nbox):
            _box(ax, gx + 2 + bxi * 3, gy + 6 + cons * 3, 3, 3, buf_fill[bxi % bufs], "", lw=0.6)
    ax.text(gx + 8, gy + 13.5, "TMA clips\nthe boxes at\nC's edges", ha="center", va="top", fontsize=8.5)
    _arrow(ax, (sx + 2 * side + 2.8, y0 + 4), (gx - 0.8, y0 + 4), lw=1.6)
    ax.text((sx + 2 * side + 2 + gx) / 2, y0 + 3.2, "TMA store\n(one thread)", ha="center", va="bottom", fontsize=9)

    # Bottom: one consumer's timeline at a tile boundary (schematic).
    tx.set_title("one consumer at the end of tile i (schematic: the order of events, not their durations)", fontsize=10.5)
    sts, issue, read, fly = 1.0, 0.3, 1.9, 2.6  # schematic durations: box writes, barrier + issue, TMA read, write
    h = 0.62
    cy = nbox + 0.6  # the consumer's row; store k's row is nbox - 1 - k
    t, read_end = 0.0, {}
    _box(tx, -2.6, cy - h / 2, 2.6, h, style.GREEN, "mainloop tile i", fs=9, tc="white")
    for k in range(nbox):
        b = k % bufs
        free = read_end.get(k - bufs, 0.0)
        if free > t:  # wait_group.read: the store that last read buf b is still reading it
            _box(tx, t, cy - h / 2, free - t, h, "white", "", hatch="xx", ec="#777777")
            tx.annotate(f"wait_group.read {bufs - 1}: store {k - bufs}\nmust finish reading buf {b}",
                        xy=(t + (free - t) / 2, cy + h / 2), xytext=(t + 0.2, cy + 1.35), fontsize=8.5, ha="center",
                        arrowprops={"arrowstyle": "-|>", "color": "black"})
            t = free
        _box(tx, t, cy - h / 2, sts, h, buf_fill[b], f"box {k}\n→ buf {b}", fs=8.5)
        _box(tx, t + sts, cy - h / 2, issue, h, "#555555")
        s0 = t + sts + issue
        y = nbox - 1 - k
        _box(tx, s0, y - h / 2, read, h, buf_fill[b], f"reads buf {b}", fs=8.5)
        _box(tx, s0 + read, y - h / 2, fly, h, "white", "", hatch="//", ec="#9fd3a7")
        tx.text(s0 + read + fly / 2, y, "writes C", ha="center", va="center", fontsize=8.5,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
        tx.plot([s0, s0], [y + h / 2, cy - h / 2], color="#555555", linewidth=0.8, linestyle=":")
        read_end[k] = s0 + read
        t = s0
    _box(tx, t, cy - h / 2, 9.0, h, style.GREEN, "mainloop tile i + 1 (wgmma)", fs=9, tc="white")
    tx.annotate("stores 2 and 3 run on under\ntile i + 1's mainloop", xy=(read_end[nbox - 1] + 1.2, 0.35),
                xytext=(t + 6.0, 1.4), fontsize=9.5, ha="center", arrowprops={"arrowstyle": "-|>", "color": "black"})
    tx.text(t + 9.0, -0.9, "tma_store_wait_all 0 only once, before the block exits", ha="right", fontsize=8.5)
    tx.set_yticks([cy] + [nbox - 1 - k for k in range(nbox)],
                  ["consumer warpgroup\n(128 threads)"] + [f"TMA store of box {k}" for k in range(nbox)], fontsize=9)
    tx.set_ylim(-1.3, cy + 2.1)
    tx.set_xlim(-2.8, t + 9.2)
    tx.set_xticks([])
    tx.set_xlabel("time →", fontsize=9.5)
    for s_ in ("top", "right"):
        tx.spines[s_].set_visible(False)
    tx.legend(handles=[Patch(facecolor="#555555", label="fence + named barrier; one thread issues the store"),
                       Patch(facecolor="white", hatch="//", edgecolor="#9fd3a7", label="the store's writes to C in flight"),
                       Patch(facecolor="white", hatch="xx", edgecolor="#777777", label="waiting for a free buffer")],
              loc="upper left", fontsize=8.5, ncol=3, frameon=False, bbox_to_anchor=(0, -0.08))
    fig.suptitle(f"Step 16: each slab leaves as {nbox} boxes of {box}x{box} through {bufs} alternating buffers;\n"
                 "the TMA stores finish while the next tile's wgmmas run", fontsize=12.5, fontweight="bold")
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------
# Step 17: a cluster of two blocks, B multicast.
# ---------------------------------------------------------------------------------------------------

@style.figure("cluster_multicast",
              "Step 17's cluster of two blocks along M: each block loads its own A tile and one half of the B tile "
              "they share, multicast into both blocks' shared memory: the pair asks L2 for 64 KB per K tile instead of 96")
def cluster_multicast():
    c = constants("17")
    bm, bn, bk, cluster, consumers = c["BM"], c["BN"], c["BK"], c["CLUSTER"], c["CONSUMERS"]
    along = re.search(r"constexpr Along CLUSTER_ALONG = Along::(\w)", _src("17")).group(1)
    # CLUSTER_M, CLUSTER_N, BOX_B_ROWS as kernels/17_cluster_multicast.cu defines them.
    cluster_m = cluster if along == "M" else 1
    box_b = bn // cluster_m
    if along != "M":
        raise SystemExit("cluster_multicast draws pairs along M (B shared); kernels/17 now pairs along N")
    kb = lambda rows: rows * bk * 2 // 1024  # noqa: E731
    per_pair_16 = cluster * (kb(bm) + kb(bn))
    per_pair_17 = cluster * kb(bm) + kb(bn)
    warps = 4 * consumers * cluster

    fig, ax = plt.subplots(figsize=(11.5, 7.0))
    _blank(ax)
    ax.set_xlim(0, 100)
    ax.set_ylim(61, -3)
    s = 1 / 10  # 1 unit = 10 rows; the K extent (BK) is drawn 7 units tall
    kh = 7
    half_c = [style.RED, "#f4a3ad"]  # B slice of rank 0, of rank 1
    # Where things sit: block 0 A | B ... B | A block 1, so the A arrows run straight down.
    bxs, bw = [1, 51], 48
    a_x = [bxs[0] + 3, bxs[1] + bw - 3 - bm * s]
    bsx = [bxs[0] + bw - 3 - bn * s, bxs[1] + 3]
    b_x = 50 - bn * s / 2
    # Global memory / L2.
    _box(ax, 0.5, 0, 99, 15, "#f4f4f4", "", lw=0.8, ec="#999999")
    ax.text(1.5, 1.0, "L2 / global memory: one K tile", fontsize=10, va="top")
    for r in range(cluster):
        _box(ax, a_x[r], 5, bm * s, kh, style.A_COLOR, f"A, tile row m{'+1' if r else ''}\n{bm} x {bk}", fs=9,
             tc="white")
    for r in range(cluster):
        _box(ax, b_x + r * box_b * s, 5, box_b * s, kh, half_c[r], f"B rows {r * box_b}..{(r + 1) * box_b - 1}\n"
             f"rank {r} loads", fs=9, tc="white" if r == 0 else "black")
    ax.text(50, 4.6, f"B, tile column n: {bn} x {bk}", ha="center", va="bottom", fontsize=9)
    # The two blocks.
    by, bh = 33, 17.5
    for r in range(cluster):
        x = bxs[r]
        _box(ax, x, by, bw, bh, "white", "", lw=1.4)
        ax.text(x + bw / 2, by + bh - 1.0, f"block rank {r} (tile m{'+1' if r else ''}, n): one shared-memory stage",
                fontsize=10, va="bottom", ha="center", fontweight="bold")
        _box(ax, a_x[r], by + 2, bm * s, kh, style.A_COLOR, f"A\n{kb(bm)} KB", fs=9, tc="white")
        for h in range(cluster):
            _box(ax, bsx[r] + h * box_b * s, by + 2, box_b * s, kh, half_c[h],
                 f"B rows {h * box_b}..{(h + 1) * box_b - 1}\n{kb(box_b)} KB", fs=9, tc="white" if h == 0 else "black")
        ax.text(x + bw / 2, by + 10.5, f"full barrier expects {kb(bm) + kb(bn)} KB: own A, own slice, the peer's slice\n"
                f"empty barrier counts {warps} warps: the consumers of both blocks", fontsize=8.8, ha="center", va="top")
    # Arrows: own A (plain TMA), B slices (multicast, one load lands in both blocks).
    for r in range(cluster):
        _arrow(ax, (a_x[r] + bm * s / 2, 5 + kh), (a_x[r] + bm * s / 2, by + 2), color=style.A_COLOR, lw=2.2, ms=16)
        ax.text(a_x[r] + bm * s / 2 + (1 if r == 0 else -1), 22, "TMA load", rotation=90, ha="left" if r == 0 else "right",
                va="center", fontsize=9, color=style.A_COLOR)
    for h in range(cluster):
        src = (b_x + (h + 0.5) * box_b * s, 5 + kh)
        for r in range(cluster):
            dst = (bsx[r] + (h + 0.5) * box_b * s, by + 2)
            _arrow(ax, src, dst, color=style.RED if h == 0 else "#e0707f", lw=2.2, ms=16,
                   linestyle="-" if r == h else "--")
    ax.text(50, 19.5, "TMA multicast", ha="center", va="center", fontsize=9, color=style.RED,
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
    ax.text(50, 56, f"Rank r's producer issues one multicast load of B slice r (cta mask {bin((1 << cluster) - 1)}); "
            "it lands in both blocks (solid: its own, dashed: the peer's).\n"
            f"Per K tile the pair asks L2 for {cluster} x {kb(bm)} KB of A + {kb(bn)} KB of B = {per_pair_17} KB; "
            f"step 16's two blocks ask for {cluster} x ({kb(bm)} + {kb(bn)}) = {per_pair_16} KB.\n"
            "The cost: a stage is free only when both blocks' consumers release it (remote arrives): the pair runs in lockstep.",
            ha="center", va="center", fontsize=9.8, linespacing=1.5)
    ax.set_title(f"Step 17: a cluster of {cluster} blocks on tiles (m, n) and (m+1, n) loads their shared B tile once, "
                 "half by each", fontsize=12.5, fontweight="bold")
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------
# Step 20: stmatrix.
# ---------------------------------------------------------------------------------------------------

def swizzle128(linear):
    """gemm::swizzle::byte_offset<128> (common/kernel_lib/swizzle.hpp): chunk (bits 4-6) ^= row (bits 7-9)."""
    return linear ^ (((linear >> 7) & 7) << 4)


def stmatrix_map(box_cols=64):
    """The 8x8 blocks of one 64x64 epilogue box and the stmatrix.x4 that stores each, as
    ptx::store_d_box_sw128_stmatrix (common/kernel_lib/ptx/epilogue.cuh) computes them: warp w, x4
    number q, matrix i -> block rows 16w + 8h .. +7 with h = i % 2, columns 8j .. 8j+7 with j = 2q + i/2;
    lane l gives the address of row l % 8 of matrix l / 8. Returns {(w, q, i): (row0, col0, [the 8
    rows' swizzled (smem row, 16-byte chunk)])}."""
    out = {}
    for w in range(4):
        for q in range(box_cols // 16):
            for i in range(4):
                h, j = i % 2, 2 * q + i // 2
                rows = []
                for lane in range(8 * i, 8 * i + 8):  # the lanes that give matrix i's row addresses
                    mat = lane // 8
                    row = 16 * w + 8 * (mat % 2) + lane % 8
                    linear = row * 128 + 16 * (2 * q + mat // 2)
                    off = swizzle128(linear)
                    rows.append((off // 128, (off % 128) // 16))
                out[(w, q, i)] = (16 * w + 8 * h, 8 * j, rows)
    return out


@style.figure("stmatrix",
              "Step 20's stmatrix epilogue: every 8x8 block of the wgmma accumulator is one stmatrix matrix (lane l "
              "holds row l/4, columns 2(l%4) and +1); one stmatrix.x4 stores four, so a thread writes its part of a "
              "64x64 box with 4 instructions instead of 16 st.shared")
def stmatrix():
    c = constants("20")
    box = c["EPI_BOX"]
    mp = stmatrix_map(box)
    q_colors = [style.GREEN, style.CYAN, style.YELLOW, style.PURPLE]
    q_light = ["#bfe3c4", "#d4f0fa", "#efe9c2", "#e3c3d6"]
    fig, axes = plt.subplots(1, 3, figsize=(12.5, 6.0), gridspec_kw={"width_ratios": [1.0, 0.95, 0.95]})
    ax, zx, sx = axes

    # Left: the box, its 8x8 blocks coloured by the x4 instruction that stores them.
    for (w, q, i), (r0, c0, _) in mp.items():
        _box(ax, c0, r0, 8, 8, q_light[q] if w else q_colors[q], f"{q}.{i}", fs=8,
             tc="white" if (w == 0 and q in (0, 3)) else "black", lw=0.5)
    for w in range(5):
        ax.axhline(16 * w, color="black", linewidth=2)
    for w in range(4):
        ax.text(-1.5, 16 * w + 8, f"warp {w}\nrows\n{16 * w}-{16 * w + 15}", ha="right", va="center", fontsize=8.5)
    ax.set_xlim(-12, box + 0.5)
    ax.set_ylim(box + 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_xticks(range(0, box + 1, 16))
    ax.tick_params(labelsize=8)
    ax.set_yticks([])
    for s_ in ("left", "right", "top"):
        ax.spines[s_].set_visible(False)
    ax.set_xlabel("column of the box", fontsize=9)
    ax.set_title(f"one consumer's {box}x{box} box (bf16):\nblock label q.i = stmatrix.x4 number q, its matrix i",
                 fontsize=10)

    # Middle: one 8x8 matrix, which lane holds what, which lanes give the row addresses.
    for r in range(8):
        for col in range(8):
            lane = 4 * r + col // 2
            _box(zx, col, r, 1, 1, q_colors[0] if col // 2 % 2 == 0 else "#7fc28a", f"T{lane}", fs=8, tc="white",
                 lw=0.4, ec="white")
    for r in range(8):
        zx.text(8.3, r + 0.5, f"← address:\n    lane {r}", fontsize=7.5, va="center", ha="left")
    zx.set_xlim(-0.3, 10.8)
    zx.set_ylim(8.3, -0.3)
    zx.set_aspect("equal")
    _blank(zx)
    zx.set_title("matrix 0.0 of warp 0 (rows 0-7, columns 0-7):\nlane l holds row l/4, columns 2(l%4), +1 = one\n"
                 "32-bit register (bf16x2), as the wgmma fragment has it", fontsize=9.5)
    zx.text(4, 8.8, "matrix i of an x4: address lanes 8i .. 8i+7\n(x4 #q: matrices 2q+i/2 along columns, i%2 along rows)",
            ha="center", va="top", fontsize=8.5)

    # Right: where warp 0's x4 #0 writes its 32 rows in the swizzled shared-memory box (rows 0-15).
    for r in range(16):
        for ch in range(8):
            _box(sx, ch, r, 1, 1, "#f2f2f2", "", lw=0.3, ec="#cccccc")
    for i in range(4):
        _, _, rows = mp[(0, 0, i)]
        for row, ch in rows:
            _box(sx, ch, row, 1, 1, q_colors[0] if i < 2 else "#7fc28a", f"{i}", fs=8, tc="white", lw=0.4, ec="white")
    for r in range(16):
        sx.text(-0.3, r + 0.5, str(r), ha="right", va="center", fontsize=7.5)
    for ch in range(8):
        sx.text(ch + 0.5, -0.3, str(ch), ha="center", va="bottom", fontsize=7.5)
    sx.text(4, -1.3, "16-byte chunk of the 128-byte row (4 banks each)", ha="center", va="bottom", fontsize=8.5)
    sx.text(-1.6, 8, "row of the box in shared memory", rotation=90, ha="center", va="center", fontsize=8.5)
    sx.set_xlim(-2.2, 8.2)
    sx.set_ylim(19.5, -3.6)
    sx.set_aspect("equal")
    _blank(sx)
    sx.text(4, 16.6, "label: matrix i. Each matrix's 8 rows land in 8 different\nchunks "
            "(chunk j ^ row % 8, the 128B swizzle): all 32\nbanks once, conflict-free",
            ha="center", va="top", fontsize=8.5)
    sx.set_title("warp 0's x4 #0 in shared memory: 32 rows\nof 16 bytes, one per lane's address", fontsize=10)
    fig.suptitle(f"Step 20: an 8x8 block of the accumulator is exactly one stmatrix matrix; each thread stores a {box}x{box} "
                 f"box\nwith {box // 16} stmatrix.x4 instead of {box * box // 2 // 128} 4-byte st.shared",
                 fontsize=12.5, fontweight="bold")
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------
# Steps 14-21 against 22: cooperative consumers against ping-pong.
# ---------------------------------------------------------------------------------------------------

def trace_18_tile_boundaries():
    """From results/traces/nvidia_h200_trace_18_8192.json.gz (step 18, 8192³, the traced SMs; see
    scripts/plot_trace.py): the median mainloop of one tile (first to last wgmma interval of a consumer),
    the mean epilogue, and the mean time at a tile boundary with no wgmma in flight on the SM (from the
    later of the two consumers' last wgmma of a tile to the earlier one's first of the next), in us."""
    import gzip
    import json
    import statistics
    path = style.ROOT / "results" / "traces" / "nvidia_h200_trace_18_8192.json.gz"
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    k_tiles = 8192 // constants("18")["BK"]
    loops, idle, epis = [], [], [e["dur"] for e in events if e["name"] == "epilogue"]
    for sm in sorted({e["pid"] for e in events}):
        tiles = {}
        for wg in (1, 2):
            mm = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                        if e["pid"] == sm and e["name"] == "wgmma" and e["args"]["wg"] == wg)
            tiles[wg] = [(mm[i][0], mm[i + k_tiles - 1][1]) for i in range(0, len(mm) - k_tiles + 1, k_tiles)]
            loops += [b - a for a, b in tiles[wg]]
        for i in range(min(len(tiles[1]), len(tiles[2])) - 1):
            idle.append(max(0.0, min(tiles[1][i + 1][0], tiles[2][i + 1][0]) - max(tiles[1][i][1], tiles[2][i][1])))
    return statistics.median(loops), statistics.mean(epis), statistics.mean(idle), len(idle)


@style.figure("pingpong_timeline",
              "Cooperative consumers (steps 14-21) finish a tile together and both run the epilogue while the "
              "tensor cores wait; step 22's ping-pong consumers own alternate tiles, so one's epilogue runs under "
              "the other's mainloop (schematic)")
def pingpong_timeline():
    c18, c22 = constants("18"), constants("22")
    loop_us, epi_us, idle_us, n_idle = trace_18_tile_boundaries()
    L, E = 10.0, 1.7  # schematic: a cooperative mainloop and an epilogue (the trace's ratio is far smaller)
    h = 0.62
    cons_c = [style.GREEN, style.CYAN]
    epi_c = style.YELLOW
    fig, axes = plt.subplots(2, 1, figsize=(11.5, 7.6), sharex=True)
    lanes = ["producer\n(TMA loads)", "consumer 0", "consumer 1", "tensor cores"]
    ys = {name: 3 - i for i, name in enumerate(lanes)}

    def lane_box(ax, lane, x, w, color, text="", tc="black", **kw):
        _box(ax, x, ys[lane] - h / 2, w, h, color, text, fs=9, tc=tc, **kw)

    # Top: cooperative, as in steps 14-21 (step 18's 128x256 tile, one 64-row slab per consumer).
    ax = axes[0]
    t = 0.0
    for i in range(3):
        lane_box(ax, lanes[0], t - 0.8, L, "#dddddd", f"K tiles of tile {i}")
        for k in (1, 2):
            lane_box(ax, lanes[k], t, L, cons_c[k - 1], f"mainloop tile {i}: rows {(k - 1) * 64}-{k * 64 - 1}",
                     tc="white" if k == 1 else "black")
            lane_box(ax, lanes[k], t + L, E, epi_c, "epi.")
        for k in range(8):
            lane_box(ax, lanes[3], t + k * L / 8, L / 8, cons_c[k % 2], lw=0.3)
        lane_box(ax, lanes[3], t + L, E, "white", "", hatch="xx", ec=style.RED)
        lane_box(ax, lanes[0], t + L - 0.8, E, "white", "", hatch="..", ec="#999999")
        t += L + E
    ax.annotate("idle: both consumers\nare in their epilogue", xy=(L + E / 2, ys[lanes[3]] - h / 2),
                xytext=(L + E / 2 + 3.2, ys[lanes[3]] - 1.05), fontsize=9.5, ha="left", va="center",
                arrowprops={"arrowstyle": "-|>", "color": style.RED}, color=style.RED)
    ax.set_title(f"steps 14-21: both consumers on one {c18['BM']}x{c18['BN']} tile (m64n{c18['WGMMA_N']}k16 each), "
                 "so they reach the epilogue together", fontsize=10.5, loc="left")

    # Bottom: ping-pong (step 22): each consumer owns whole 128x128 tiles, alternate tiles of the block.
    bx = axes[1]
    half = L * c22["BN"] / c18["BN"]  # a 128x128 tile: half the FLOPs of a 128x256 one
    t = 0.0
    for j in range(6):
        k = j % 2
        lane_box(bx, lanes[0], t - 0.8, half, "#dddddd", f"tile {j}")
        lane_box(bx, lanes[1 + k], t, half, cons_c[k], f"mainloop tile {j}", tc="white" if k == 0 else "black")
        lane_box(bx, lanes[1 + k], t + half, E, epi_c, "epi.")
        for q in range(4):
            lane_box(bx, lanes[3], t + q * half / 4, half / 4, cons_c[k], lw=0.3)
        if j:  # the order barrier: tile j starts once the other consumer passed tile j-1's last full wait
            _arrow(bx, (t - 0.05, ys[lanes[2 - k]] + (-h / 2 if k else h / 2)), (t + 0.05, ys[lanes[1 + k]]
                   + (h / 2 if k else -h / 2)), color="black", lw=1.0, ms=9)
        t += half
    bx.text(-1.0, 3.72, "small arrows: the order barrier (a consumer starts its mainloop once the other has passed "
            "its last full-barrier wait)", fontsize=9, va="center")
    bx.set_title(f"step 22 ping-pong: each consumer owns whole {c22['BM']}x{c22['BN']} tiles "
                 f"(two m64n{c22['WGMMA_N']}k16 per k16 step) and they alternate", fontsize=10.5, loc="left")
    for a in axes:
        a.set_yticks(list(ys.values()), list(ys.keys()), fontsize=9.5)
        a.set_ylim(-0.7, 4.1)
        a.set_xlim(-1.2, 3 * (L + E) + 0.2)
        a.set_xticks([])
        for s_ in ("top", "right"):
            a.spines[s_].set_visible(False)
    axes[1].set_xlabel("time → (schematic; not to scale)", fontsize=10)
    fig.legend(handles=[Patch(facecolor=cons_c[0], label="consumer 0's wgmmas"),
                        Patch(facecolor=cons_c[1], label="consumer 1's wgmmas"),
                        Patch(facecolor=epi_c, label="epilogue (boxes + TMA stores)"),
                        Patch(facecolor="white", hatch="xx", edgecolor=style.RED, label="tensor cores idle"),
                        Patch(facecolor="white", hatch="..", edgecolor="#999999", label="producer: ring full, waits")],
               loc="lower center", ncol=5, fontsize=9, frameon=False, bbox_to_anchor=(0.5, 0.06))
    fig.text(0.5, 0.008, f"Not to scale. In step 18's committed trace (8192³, {n_idle} tile boundaries): a mainloop "
             f"takes {loop_us:.0f} µs,\nan epilogue {epi_us:.1f} µs, and no wgmma is in flight on the SM for "
             f"{idle_us:.1f} µs at a tile boundary ({100 * idle_us / loop_us:.1f} % of a tile).",
             ha="center", va="bottom", fontsize=9.5)
    fig.suptitle("Cooperative consumers leave the tensor cores idle at every tile boundary; "
                 "ping-pong hides each epilogue\nunder the other consumer's mainloop",
                 fontsize=12.5, fontweight="bold")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


# ---------------------------------------------------------------------------------------------------
# Steps 21 and 23: the stream-K split and the fixup.
# ---------------------------------------------------------------------------------------------------

BLOCK_COLORS = ["#77aadd", "#ee8866", "#eedd88", "#ffaabb", "#99ddff", "#44bb99"]  # Tol's "light", cycled by block


def _block_color(b):
    return BLOCK_COLORS[b % len(BLOCK_COLORS)]


def _split_zoom(ax, split, rows):
    """The first `rows` stream-K tiles (rows) x their K tiles, each piece a bar labelled with its block."""
    for b in range(split.blocks):
        for tile, kt0, kt1 in split.pieces(b):
            if tile >= rows:
                continue
            whole = kt0 == 0 and kt1 == split.k_tiles
            _box(ax, kt0, tile, kt1 - kt0, 0.86, _block_color(b), "", lw=0.8, hatch=None)
            if kt1 - kt0 >= split.k_tiles / 8:
                ax.text((kt0 + kt1) / 2, tile + 0.43, f"block {b}" + (" (whole)" if whole else "")
                        if kt1 - kt0 >= split.k_tiles / 4 else f"{b}", ha="center", va="center", fontsize=8)
    ax.set_xlim(0, split.k_tiles)
    ax.set_ylim(rows + 0.1, -0.2)
    ax.set_yticks([r + 0.43 for r in range(rows)], [f"t = {split.dp_tiles + r}" for r in range(rows)], fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel(f"K tile of the tile (0..{split.k_tiles - 1})", fontsize=9)
    for s_ in ("top", "right"):
        ax.spines[s_].set_visible(False)


@style.figure("streamk_split",
              "Stream-K in steps 21 and 23: the last wave's tiles (plus one full wave when it is under half full) "
              "are shared out as one run of K tiles, block b taking [b·I/P, (b+1)·I/P); a piece that ends short of "
              "a whole tile goes through the fixup (the real splits on 132 SMs)")
def streamk_split():
    cases = [("21", (8192, 8192, 8192)), ("21", (4096, 1280, 4096)), ("23", (8192, 8192, 8192))]
    rows = 7
    fig = plt.figure(figsize=(13, 10.2))
    gs = fig.add_gridspec(2, 3, height_ratios=[0.62, 1.0], hspace=0.3, wspace=0.3, top=0.74, bottom=0.07,
                          left=0.07, right=0.98)
    splits = []
    for col, (step, (m, n, k)) in enumerate(cases):
        split, f = make_split(step, m, n, k)
        if split.sk_tiles == 0:  # the caption below says the rule splits
            raise SystemExit(f"hopper2.py: step {step} no longer splits {m} x {n} x {k}: redraw streamk_split's cases")
        splits.append((split, f))
        ax = fig.add_subplot(gs[0, col])
        _split_zoom(ax, split, rows)
        shape = f"{m}³" if m == n == k else f"M = K = {m}, N = {n}"
        sizes = [split.start(b + 1) - split.start(b) for b in range(split.blocks)]
        dp = (f"tiles 0..{split.dp_tiles - 1}: data-parallel, {split.dp_tiles // split.blocks} per block"
              if split.dp_tiles else "no data-parallel tile: all are shared out")
        ax.set_title(f"step {step}, {shape}, {f['bm']}x{f['bn']} tiles", fontsize=10.5, loc="left",
                     fontweight="bold", pad=88)
        min_waves = f" (≥ MIN_WAVES = {constants(step)['MIN_WAVES']})" if step == "23" else ""
        ax.text(0, 1.03, f"{f['tiles']} tiles = {f['waves']} wave{'s' if f['waves'] != 1 else ''}{min_waves} + "
                f"{f['rest']} tiles\n"
                f"idle: ({f['sms']}-{f['rest']})x{f['k_tiles']} = {f['recovered']} K tiles\n"
                f"  > {f['sms']}x{f['fixup']} = {f['cost']} (FIXUP_K_TILES): split\n{dp}\n"
                f"stream-K: {split.sk_tiles} tiles x {split.k_tiles} = {split.iters} K tiles,\n"
                f"  {min(sizes)}-{max(sizes)} per block; the first {rows} tiles:",
                transform=ax.transAxes, fontsize=9, va="bottom", ha="left", linespacing=1.35)

    # Bottom left: the SMs' time at the end of step 21's 8192³ run, with and without stream-K.
    split, f = splits[0]
    tx = fig.add_subplot(gs[1, 0:2])
    dp_kt = split.dp_tiles // split.blocks * split.k_tiles
    lo = dp_kt - split.k_tiles // 2
    for b in range(split.blocks):
        tx.add_patch(Rectangle((lo, b - 0.5), dp_kt - lo, 1, facecolor="#dddddd", edgecolor="none"))
        x = dp_kt
        for tile, kt0, kt1 in split.pieces(b):
            tx.add_patch(Rectangle((x, b - 0.5), kt1 - kt0, 1, facecolor=LIGHT["green"] if len(split.pieces(b)) == 1
                                   or tile == split.pieces(b)[0][0] else "#7fc28a", edgecolor="none"))
            x += kt1 - kt0
    # Without stream-K (make_split declining): blocks 0..rest-1 run one more whole tile.
    rest = f["rest"]
    tx.plot([dp_kt + split.k_tiles] * 2, [-0.5, rest - 0.5], color="black", linewidth=1.5, linestyle="--")
    tx.plot([dp_kt, dp_kt + split.k_tiles], [rest - 0.5, rest - 0.5], color="black", linewidth=1.5, linestyle="--")
    end = max(split.start(b + 1) - split.start(b) for b in range(split.blocks)) + dp_kt
    tx.axvline(end, color=style.GREEN, linewidth=1.5)
    tx.text(dp_kt + split.k_tiles + 2, rest / 2, f"without stream-K: blocks 0..{rest - 1} run tile\n"
            f"16 whole ({split.k_tiles} K tiles); {f['sms'] - rest} SMs sit idle", fontsize=9, va="center")
    tx.text(end + 2, f["sms"] - 12, f"with stream-K every block ends\nafter at most {end - dp_kt} K tiles more\n(plus its fixup)",
            fontsize=9, va="center", color=style.GREEN)
    tx.text(lo + 2, f["sms"] / 2, f"... its {split.dp_tiles // split.blocks}\ndata-parallel\ntiles", fontsize=9,
            va="center")
    tx.set_xlim(lo, dp_kt + split.k_tiles + 95)
    tx.set_ylim(f["sms"] - 0.5, -0.5)
    tx.set_xlabel("time in K tiles of one SM (the end of the run)", fontsize=9)
    tx.set_ylabel("block (one per SM)", fontsize=9)
    tx.tick_params(labelsize=8)
    tx.set_title("step 21, 8192³, the end of each SM's work: grey = data-parallel tiles, green = stream-K pieces\n"
                 "(a block's second piece, in the next tile, darker)", fontsize=9.5, loc="left")

    # Bottom right: the fixup of one tile split between three blocks.
    fx = fig.add_subplot(gs[1, 2])
    _blank(fx)
    r = next(r for r in range(split.sk_tiles) if split.block_of((r + 1) * split.k_tiles - 1)
             - split.block_of(r * split.k_tiles) == 2)  # the first tile split between three blocks
    x0 = r * split.k_tiles
    c_first, c_last = split.block_of(x0), split.block_of(x0 + split.k_tiles - 1)
    fx.set_xlim(-2, 12)
    fx.set_ylim(16, -1.2)
    fx.set_title(f"the fixup of tile t = {split.dp_tiles + r} (step 21, 8192³)\n", fontsize=9.5, loc="left")
    for i, c in enumerate(range(c_first, c_last + 1)):
        a, b = max(split.start(c), x0) - x0, min(split.start(c + 1), x0 + split.k_tiles) - x0
        slot = 2 * c + 1 if c == c_first else 2 * c
        y = i * 2.3
        _box(fx, 0, y, 4.6, 1.7, _block_color(c), f"block {c}\nK tiles {a}..{b - 1}", fs=8.5)
        _box(fx, 6.2, y, 5.2, 1.7, _block_color(c), f"slot {slot}:\nfp32 partial", fs=8.5)
        _arrow(fx, (4.7, y + 0.85), (6.1, y + 0.85), lw=1.1, ms=9)
    fx.text(-1.8, 7.3, "1. each block stores its piece's partial (__stcg) in its slot,\n"
            "    __threadfence, then atomicAdd on the tile's counter\n"
            "    (step 21: one counter per tile and consumer)\n"
            f"2. the one that counts the last of the {c_last - c_first + 1} pieces sums\n"
            f"    the slots in block order {', '.join(str(c) for c in range(c_first, c_last + 1))} and stores the tile\n"
            "3. no block waits for another\n\n"
            "slot 2c+1: block c's piece that starts at K tile 0;\nslot 2c: its piece that starts inside a tile",
            fontsize=8.5, va="top")
    (sp21, s21), (sp23, s23) = make_split("21", 4096, 4096, 4096), make_split("23", 4096, 4096, 4096)
    if sp21.sk_tiles or sp23.sk_tiles:  # the caption says both decline
        raise SystemExit("hopper2.py: step 21 or 23 now splits 4096³: redraw streamk_split's caption")
    fig.text(0.5, 0.005, f"At 4096³ both steps decline: step 21 recovers ({s21['sms']}-{s21['rest']})x{s21['k_tiles']} = "
             f"{s21['recovered']} K tiles, step 23 {s23['recovered']}, both under {s21['cost']}.",
             ha="center", fontsize=9.5)
    fig.suptitle("Stream-K shares the last wave's K tiles evenly over all 132 blocks, cutting across tile "
                 "boundaries;\na tile cut between blocks is summed by the fixup (colour = block, cycled)",
                 fontsize=12.5, fontweight="bold", y=0.995)
    return fig


# ---------------------------------------------------------------------------------------------------
# Step 22: the ring positions each ping-pong consumer takes and skips.
# ---------------------------------------------------------------------------------------------------

def pingpong_walk(me, k_tiles, tiles, stages):
    """Consumer `me`'s (tile j, kt, stage, phase) for every K tile it computes, walking the ring as
    kernels/22_pingpong.cu does: advance() per K tile, advance_by(k_tiles) at the start for consumer 1
    and after each of its tiles (pipe::PipeState, common/kernel_lib/pipeline.cuh)."""
    stage, phase, out = 0, 0, []
    if me == 1:
        stage, phase = advance_by(stage, phase, k_tiles, stages)
    for j in range(me, tiles, 2):
        for kt in range(k_tiles):
            out.append((j, kt, stage, phase))
            stage, phase = advance_by(stage, phase, 1, stages)  # advance()
        stage, phase = advance_by(stage, phase, k_tiles, stages)  # past the other consumer's next tile
    return out


@style.figure("ring_skip",
              "Step 22's ring: the producer fills the stages in order with both consumers' tiles; each consumer "
              "walks the same ring but skips the other's K tiles with advance_by(k_tiles), so it waits on the "
              "right stage with the right parity")
def ring_skip():
    c = constants("22")
    stages, bk = c["STAGES"], c["BK"]
    k = 512  # a small K so that every position fits on the page: k_tiles = 8
    k_tiles, tiles = k // bk, 4
    total = k_tiles * tiles
    rounds = -(-total // stages)
    cons_c = [style.GREEN, style.CYAN]
    walks = [pingpong_walk(me, k_tiles, tiles, stages) for me in range(2)]
    for walk in walks:  # the consumer's own walk lands where the producer put that K tile
        for j, kt, st, ph in walk:
            g = j * k_tiles + kt
            assert (st, ph) == (g % stages, (g // stages) & 1), (j, kt, st, ph)

    fig, axes = plt.subplots(1, 2, figsize=(12, 6.2))
    for me, ax in enumerate(axes):
        mine = {(j, kt): (st, ph) for j, kt, st, ph in walks[me]}
        for g in range(total):
            j, kt = divmod(g, k_tiles)
            r, st = divmod(g, stages)
            if (j, kt) in mine:
                _box(ax, r, st, 1, 1, cons_c[me], f"tile {j}\nkt {kt}", fs=8.5, tc="white" if me == 0 else "black",
                     lw=0.8, ec="white")
            else:
                _box(ax, r, st, 1, 1, "white", f"tile {j}\nkt {kt}", fs=8, tc="#999999", lw=0.8, ec="#cccccc",
                     hatch="///")
        # The skips: from the consumer's last K tile of a tile (or its start) to its next tile's first.
        pos = [divmod(j * k_tiles + kt, stages) for j, kt, _, _ in walks[me]]
        starts = [i for i, (j, kt, _, _) in enumerate(walks[me]) if kt == 0]
        for i in starts:
            r1, s1 = pos[i]
            if i == 0:
                if me == 1:
                    ax.annotate(f"starts with\nadvance_by({k_tiles})", xy=(r1 + 0.1, s1 + 0.5), xytext=(0.2, stages + 0.85),
                                fontsize=8.5, arrowprops={"arrowstyle": "-|>", "color": "black"})
                continue
            r0, s0 = pos[i - 1]
            _arrow(ax, (r0 + 0.85, s0 + 0.8), (r1 + 0.15, s1 + 0.2), color="black", lw=1.6, ms=12,
                   connectionstyle="arc3,rad=-0.25")
            ax.text((r0 + r1) / 2 + 0.5, (s0 + s1) / 2 + 0.5, f"advance_by({k_tiles})", fontsize=8.5, ha="center",
                    va="center", bbox={"facecolor": "white", "edgecolor": "black", "boxstyle": "round", "pad": 0.2})
        for r in range(rounds):
            ax.text(r + 0.5, -0.15, f"round {r}\nparity {r & 1}", ha="center", va="bottom", fontsize=8.5)
        ax.set_xlim(-0.05, rounds + 0.05)
        ax.set_ylim(stages + 1.5, -1.0)
        ax.set_yticks([s + 0.5 for s in range(stages)], [f"stage {s}" for s in range(stages)], fontsize=9)
        ax.set_xticks([])
        for s_ in ("top", "right", "bottom", "left"):
            ax.spines[s_].set_visible(False)
        ax.set_title(f"consumer {me} (warpgroup {me + 1}): tiles {', '.join(str(j) for j in range(me, tiles, 2))}"
                     "; hatched = the other's, skipped", fontsize=10, pad=30)
    s8192, p8192 = advance_by(0, 0, 8192 // bk, stages)
    fig.text(0.5, 0.02, f"The producer fills position g = j·k_tiles + kt of the block's tile sequence into stage g % {stages}, "
             f"round g / {stages};\na consumer waits on full[stage] for the round's parity. "
             f"advance_by({k_tiles}) jumps over the other consumer's tile: {k_tiles} positions, stage and parity together.\n"
             f"Here K = {k} ({k_tiles} K tiles per tile, so the picture fits). "
             f"At K = 8192 ({8192 // bk} K tiles) advance_by({8192 // bk}) from stage 0, parity 0 lands on stage "
             f"{s8192}, parity {p8192}.", ha="center", va="bottom", fontsize=9.5)
    fig.suptitle(f"Step 22: both consumers walk the one {stages}-stage ring; each takes its own tiles' K tiles and skips "
                 "the other's,\ncarrying stage and parity across the skip", fontsize=12.5, fontweight="bold")
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig
