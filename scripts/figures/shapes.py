"""Concept figures of the book's chapter "Every shape" (steps 24 on: small M, ragged edges, long K, the
family and its measured dispatch).

Sizes come from the kernels' constants (step_constants.constants): step 23's tile (BM x BN, m64 slabs
of WGMMA_M rows) and step 24's swapped tile (BM rows of B x SWAP_BN rows of A). The family's parts are
read from the code: the fields of Spec (config.hpp) and SplitPolicy (plan.hpp), each step's named
configurations and plan() (step_constants.configurations, plan_policy), step 29's menu (menu.hpp); only
which part reads which field is written here (KERNEL_PARTS). Step 29's table is read from the generated
family/tuned_bf16.hpp itself."""
import re

import matplotlib.pyplot as plt
from matplotlib.patches import Patch, Rectangle

import style
from hopper2 import SMS, grouped_order, library_split
from step_constants import constants, family
import gen_tuned_table

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


# ---- The family: its parts, and what a step sets of each (step 24's section "The family") -------------
# Which part of the kernel each field of the configuration (struct Spec, config.hpp) selects within. The
# fields themselves, their defaults and the steps' values are read from the code; only this grouping is
# written here, and family_parts() refuses to draw when Spec gains a field this table does not place.
KERNEL_PARTS = [  # (title, files, Spec fields it reads)
    ("producer:\nTMA over the ring", "producer.cuh", ["elem", "stages", "cluster_m", "cluster_n"]),
    ("consumers:\nthe tile", "kernel.cuh", ["consumers", "bm", "bn"]),
    ("main loop:\nwgmma, promotion", "mainloop.cuh,\nmainloop_two_sets.cuh", ["accum", "scales", "promote_every"]),
    ("epilogue,\nsplit fixup", "epilogue.cuh", ["swap", "stmatrix"]),
]
FAMILY_STEPS = ["24", "28", "29", "34", "35", "36"]  # the steps drawn: the bf16 policies, then FP8's
SET, CHANGED = "#dbe6f2", style.RED  # a value other than step 23's; a cell the step changed against its parent


def _spec_text(fields, defaults, names, param=None, param_values=(), fit=False):
    """The lines a cell shows: the fields of `names` a configuration sets to other than step 23's."""
    lines = []
    for f in names:
        v = fields.get(f)
        if v is None or v == defaults[f]:
            continue
        if param and v == param:
            v = f"{param} in {{{', '.join(map(str, param_values))}}}"
        lines.append(f"{f} = {v}")
    if fit and "stages" in names:
        lines.append("stages = most that fit")
    return lines


def _menu_text(entries, defaults, names):
    """What step 29's menu spans of the fields `names`: each field's values over the entries."""
    lines = []
    for f in names:
        vals = [e.get(f, defaults[f]) for e in entries]
        distinct = sorted(set(vals), key=lambda v: (not v.isdigit(), int(v) if v.isdigit() else 0, v))
        if distinct == [defaults[f]]:
            continue
        if f == "bn":
            lines.append(f"bn: {len(distinct)} widths, {distinct[0]} .. {distinct[-1]}")
        elif defaults[f] in distinct and len(distinct) == 2:
            other = [v for v in distinct if v != defaults[f]][0]
            count = sum(v == other for v in vals)
            lines.append(f"{f} = {other}: {count} entr{'y' if count == 1 else 'ies'}")
        else:
            lines.append(f"{f}: {', '.join(distinct)}")
    if "stages" in names:
        lines.append("stages = most that fit")
    return lines


@style.figure("family_parts",
              "The family's parts (top: the host's policy and plan, the kernel's four parts, each with the "
              "fields of the configuration struct Spec it reads and their defaults, step 23's kernel) and what "
              "six steps set of each (below: every configuration a step names, with only the values other "
              "than step 23's; red outline: what the step changed against its parent, which is its lesson). "
              "Step 24 adds a swapped tile, 28 a padded copy, 29 replaces the hand rule with a measured pick "
              "from a menu of configurations, 34 changes one field of 33's main loop, 35 adds a 64-row tile and "
              "split-K, 36 changes one field of that tile")
def family_parts():
    from steps import by_id, load
    from step_constants import configurations, menu_entries, plan_policy, spec_fields, struct_fields
    fields = spec_fields()
    defaults = {name: default for name, _, default, _ in fields}
    placed = [f for _, _, names in KERNEL_PARTS for f in names]
    missing = [f for f in defaults if f not in placed]
    assert not missing, f"Spec fields {missing} are in no part of KERNEL_PARTS (scripts/figures/shapes.py): place them"
    split_fields = struct_fields("common/kernel_lib/family/plan.hpp", "SplitPolicy")
    lib = family("24")
    steps = by_id(load())

    def configs_of(step):  # [(label, {part index: lines}), ...] and the policy's text, per step
        if step not in steps:
            return None
        try:
            cs = configurations(step)
            pol = plan_policy(step)
        except (StopIteration, SystemExit):
            return None
        if not cs and "pick" not in pol:
            return None
        if "pick" in pol:
            entries = menu_entries()
            rows = [(f"the menu\n({len(entries)} entries,\nmenu.hpp)",
                     [_menu_text(entries, defaults, names) for _, _, names in KERNEL_PARTS])]
            policy = [f"{pol['pick'].split('::')[-1]}: the four nearest", "measured shapes' ratios,", "carried (efficiency);",
                      "else step 28's rule", "(menu::hand_plan)"]
            plan = [f"the entry's own split;", f"hand rule: {pol['split']}", f"pad = {pol['pad']}"]
        else:
            rows = []
            for c in cs:
                label = c["name"] + (f"<{c['param']}>" if c["param"] else "")
                rows.append((label, [_spec_text(c["fields"], defaults, names, c["param"], c["param_values"], c["fit"])
                                     for _, _, names in KERNEL_PARTS]))
            known = {n: v for n, v in constants(step).items() if re.search(r"\b" + n + r"\b", pol["spec"])}
            policy = [pol["spec"]] + [f"({n} = {v})" for n, v in known.items()]
            plan = [f"split = {pol['split']}"] + ([f"pad = {pol['pad']}"] if pol["pad"] != "false" else [])
        return rows, policy, plan

    def wrap(lines, width):
        import textwrap
        out = []
        for line in lines:
            out += textwrap.wrap(line, width, break_long_words=False, subsequent_indent="  ") or [""]
        return out

    cols = [("policy:\nthe step's plan()", "kernels/NN_*.cu", None), ("plan:\nsplit, pitch", "plan.hpp", None)] + KERNEL_PARTS
    widths = [3.3, 3.1, 2.5, 2.9, 2.4, 2.9]
    x0s = [sum(widths[:i]) + 0.25 * i for i in range(len(widths))]
    label_w = 2.6
    fig = plt.figure(figsize=(17, 12.5))
    ax = fig.add_axes((0, 0, 1, 1))  # the whole figure: 1 unit of x is 17 / (the x range) inches, for the wrap widths
    ax.axis("off")
    chars = lambda i: int(widths[i] * 10) - 1  # monospace 9 pt characters a column holds
    # Top: the parts, with the fields each reads and their defaults (step 23's kernel).
    top = 0.0
    box_h = 2.45
    for i, (title, files, names) in enumerate(cols):
        x, w = x0s[i], widths[i]
        host = names is None
        ax.add_patch(Rectangle((x, top), w, box_h, fc=style.GREY if host else "#d9eedd", ec="black", lw=1.0, alpha=0.6))
        ax.text(x + w / 2, top + 0.1, title, ha="center", va="top", fontsize=10.5, weight="bold")
        ax.text(x + w / 2, top + 0.62, files, ha="center", va="top", fontsize=8, style="italic")
        if host and i == 0:
            body = ["on the host, per shape:", "which configuration", "(a compile-time Spec)", "runs this shape"]
        elif host:
            body = ["on the host, once per shape:", "tiles, stream-K / split-K,", "row pitch, workspace"] + \
                   [f"{n} = {d}" for n, _, d, _ in split_fields] + [f"grouped order, GROUP_M = {lib['GROUP_M']}",
                                                                   f"fixup price {lib['FIXUP_K_TILES']} K tiles"]
        else:
            body = [f"{n} = {defaults[n]}" for n in names]
        ax.text(x + 0.12, top + (1.2 if files.count("\n") else 1.0), "\n".join(body), ha="left", va="top",
                fontsize=9, family="monospace" if not host else None)
    for i in range(len(cols) - 1):  # policy -> plan -> kernel: the order a launch takes
        ax.annotate("", xy=(x0s[i + 1], top + box_h / 2), xytext=(x0s[i] + widths[i], top + box_h / 2),
                    arrowprops=dict(arrowstyle="-|>", color="black", lw=1.1))
    kx = x0s[2] - 0.1
    ax.add_patch(Rectangle((kx, top - 0.35), x0s[-1] + widths[-1] + 0.1 - kx, box_h + 0.45, fc="none", ec="black",
                           lw=1.2, ls="--"))
    ax.text(kx + 0.05, top - 0.18, "the kernel: gemm_kernel<Config>, assembled at compile time from a Spec (config.hpp)",
            ha="left", va="center", fontsize=9)
    # Below: each step's configurations and policy.
    y = top + box_h + 0.9
    for step in FAMILY_STEPS:
        got = configs_of(step)
        if got is None:
            raise SystemExit(f"error: step {step} is not a policy over the family (no Config<...> nor dispatch::pick)")
        rows, policy, plan = got
        parent = steps[step].parent
        pgot = configs_of(parent)
        prows = dict(pgot[0]) if pgot else {}
        step_lines = [max(len(wrap(cell, chars(j + 2))) for j, cell in enumerate(cells)) for _, cells in rows]
        heights = [max(1, n) * 0.21 + 0.24 for n in step_lines]
        total = sum(heights)
        host_lines = [wrap(policy, chars(0)), wrap(plan, chars(1))]
        total = max(total, max(len(h) for h in host_lines) * 0.21 + 0.24)
        if total > sum(heights):
            heights[-1] += total - sum(heights)
        ax.plot([-label_w - 0.1, x0s[-1] + widths[-1]], [y - 0.08] * 2, color="black", lw=0.8)
        ax.text(-label_w - 0.05, y + 0.08, f"step {step}", ha="left", va="top", fontsize=11, weight="bold")
        ax.text(-label_w - 0.05, y + 0.36, f"parent {parent}", ha="left", va="top", fontsize=8.5)
        # The host columns: one cell for the step.
        for i, lines in enumerate(host_lines):
            changed = pgot is None or [policy, plan][i] != [pgot[1], pgot[2]][i]
            ax.add_patch(Rectangle((x0s[i], y), widths[i], total, fc=SET, ec=CHANGED if changed else "white",
                                   lw=2.0 if changed else 0.5))
            ax.text(x0s[i] + 0.08, y + 0.12, "\n".join(lines), ha="left", va="top", fontsize=9, family="monospace")
        yy = y
        for (label, cells), h in zip(rows, heights):
            ax.text(-0.05, yy + 0.12, label, ha="right", va="top", fontsize=9)
            base = prows.get(label) if pgot else [[] for _ in KERNEL_PARTS]  # a standalone parent: step 23's Spec{}
            for j, cell in enumerate(cells):
                i = j + 2
                changed = base is None or cell != base[j]
                ax.add_patch(Rectangle((x0s[i], yy), widths[i], h, fc=SET if cell else "white",
                                       ec=CHANGED if changed else "#cccccc", lw=2.0 if changed else 0.5))
                ax.text(x0s[i] + 0.08, yy + 0.12, "\n".join(wrap(cell, chars(i))) if cell else "(step 23's)",
                        ha="left", va="top",
                        fontsize=9, family="monospace", color="black" if cell else "#888888")
            yy += h
        y += total + 0.35
    ax.set_xlim(-label_w - 0.2, x0s[-1] + widths[-1] + 0.1)
    ax.set_ylim(y + 0.45, top - 0.6)
    ax.legend(handles=[Patch(fc=SET, ec="#cccccc", label="a value other than step 23's (Spec's default)"),
                       Patch(fc="white", ec=CHANGED, lw=2, label="changed against the step's parent: its lesson")],
              loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=10, frameon=False)
    return fig


# ---- Step 29's measured table (common/kernel_lib/family/tuned_bf16.hpp) --------------------------------
TUNED_HPP = "common/kernel_lib/family/tuned_bf16.hpp"
TUNED_SHAPE = re.compile(r"TunedShape\{(\d+), (\d+), (\d+), ([-\d.]+)f?, \{\{(.*?)\}\}\},")
TUNED_CELL = re.compile(r"\{([-\d.]+)f?, (-?\d+), (-?\d+)\}")  # {ratio, sk_tiles, blocks}
TUNED_NAMES = re.compile(r"kTunedEntries\{\{(.*?)\}\};", re.S)
ENTRY_NAME = re.compile(r"(?P<c>pp|co)(?P<bm>\d+)x(?P<bn>\d+)(?P<swap>-swap)?(?P<cl>-c2[mn]|-c2x2)?(?P<stm>-stm)?(?P<psk>-psk)?"
                        r"-s(?P<st>\d+)")
# The winners by kind (menu::name spells each entry: consumers, BM x BN, swap, cluster, stmatrix, stages).
KINDS = [("step 28's rule", "#eeeeee"), ("swapped (C^T, 8-192 wide)", style.PURPLE), ("ping-pong, 64 rows", style.BLUE),
         ("ping-pong, 128 rows", style.GREEN), ("ping-pong, stmatrix", style.CYAN), ("cooperative", style.YELLOW),
         ("cluster (multicast)", style.RED), ("split K, summed by a second kernel", "#ee9944")]


def tuned_table():
    """The shapes of the generated table step 29 dispatches from, each with its winner: [(m, n, k, the
    fastest entry or "" where step 28's rule was within gen_tuned_table.MARGIN, its paired ratio over
    cuBLAS, as gen_tuned_table.winner picks it)], read from the header itself (gen_tuned_table.py writes it)."""
    text = (style.ROOT / TUNED_HPP).read_text()
    text = text.split("\nnamespace h100 {")[0]  # the default (H200) table; the H100's follows in its namespace
    names_block = TUNED_NAMES.search(text)
    names = re.findall(r'"([^"]+)"', names_block.group(1)) if names_block else []
    rows = []
    for m, n, k, hand, cells in TUNED_SHAPE.findall(text):
        ratios = [float(r) for r, _, _ in TUNED_CELL.findall("{" + cells + "}")]
        if len(ratios) != len(names):
            raise SystemExit(f"error: {TUNED_HPP}: a row of {len(ratios)} ratios for {len(names)} entries")
        timed = {c: (x, None) for c, x in zip(names, ratios) if x > 0}
        if float(hand) > 0:
            timed[gen_tuned_table.HAND] = (float(hand), None)
        rows.append((int(m), int(n), int(k), *gen_tuned_table.winner(timed)))
    declared = re.search(r"std::array<TunedShape, (\d+)>", text)
    if not rows or not declared or int(declared.group(1)) != len(rows):
        raise SystemExit(f"error: {TUNED_HPP}: read {len(rows)} rows, the array declares "
                         f"{declared.group(1) if declared else '?'} (scripts/gen_tuned_table.py writes it)")
    return rows


def entry_kind(winner):
    """(kind index into KINDS, short label) of a winner's name."""
    if not winner:
        return 0, "28's rule"
    e = ENTRY_NAME.fullmatch(winner.removeprefix("e4m3-"))
    if not e:
        raise SystemExit(f"error: {TUNED_HPP}: winner {winner!r} is not spelled as menu::name spells an entry")
    tile = f"{e['bm']}x{e['bn']}"
    if e["psk"]:
        return 7, f"{e['c']}{tile}\n" + (f"{e['cl'][1:]} " if e["cl"] else "") + "psk"
    if e["swap"]:
        return 1, f"swap {e['bn']}" + (f"\n{e['cl'][1:]}" if e["cl"] else "")
    if e["cl"]:
        return 6, f"{e['c']}{tile}\n{e['cl'][1:]}"
    if e["c"] == "co":
        return 5, f"co{tile}"
    if e["stm"]:
        return 4, f"{tile} stm"
    return (2 if e["bm"] == "64" else 3), tile


@style.figure("dispatch_table",
              "Step 29's table itself (family/tuned_bf16.hpp, generated from make tune's run): for each shape "
              "the tuner timed, the menu entry that was fastest, or step 28's rule where no entry beat it by "
              "more than 1 %, with its paired speed over cuBLAS there. Top: K a multiple of 16; bottom: K + 8, "
              "whose rows start inside a 32-byte sector. With K aligned, step 28's rule holds many large shapes, "
              "and the table overrules it mostly at small M: swapped tiles (most at M <= 32), 64-row tiles "
              "up to M = 256-512; at K + 8 the rule loses almost everywhere, and from M = 256 up tiles in clusters "
              "(pairs or 2 x 2: B, A or both multicast, fewer L2 sectors per FLOP) win most shapes; a split "
              "of K summed by a second kernel wins small grids with a long K. dispatch::pick answers any "
              "other shape from the four nearest rows of its alignment class, every entry's ratios there carried to it")
def dispatch_table():
    rows = tuned_table()
    ms = sorted({r[0] for r in rows})
    ns = sorted({r[1] for r in rows})
    ks = sorted({r[2] for r in rows})
    aligned = [k for k in ks if k % 16 == 0]
    at = {(m, n, k): (w, x) for m, n, k, w, x in rows}
    fig, axes = plt.subplots(2, len(aligned), figsize=(4.3 * len(aligned), 13.2), squeeze=False)
    for col, k in enumerate(aligned):
        for row, kk in enumerate((k, k + 8)):
            ax = axes[row][col]
            ax.set_xlim(0, len(ns))
            ax.set_ylim(len(ms), 0)
            ax.set_xticks([i + 0.5 for i in range(len(ns))], [str(n) for n in ns], fontsize=8.5)
            ax.set_yticks([i + 0.5 for i in range(len(ms))], [str(m) for m in ms], fontsize=8.5)
            ax.tick_params(length=0)
            ax.xaxis.tick_top()
            for s in ax.spines.values():
                s.set_visible(False)
            won = 0
            for i, m in enumerate(ms):
                for j, n in enumerate(ns):
                    if (m, n, kk) not in at:
                        ax.add_patch(Rectangle((j, i), 1, 1, fc="white", ec="#cccccc", lw=0.5, hatch="//"))
                        continue
                    w, x = at[(m, n, kk)]
                    kind, label = entry_kind(w)
                    won += kind != 0
                    ax.add_patch(Rectangle((j, i), 1, 1, fc=KINDS[kind][1], ec="white", lw=1.2,
                                           alpha=1.0 if kind == 0 else 0.55))
                    ax.text(j + 0.5, i + 0.5, f"{label}\n{x:.2f}x" if "\n" not in label else f"{label} {x:.2f}x",
                            ha="center", va="center", fontsize=6.3, linespacing=1.0)
            cells = sum(1 for m in ms for n in ns if (m, n, kk) in at)
            ax.set_title(f"K = {kk}{' (K % 16 == 8)' if kk % 16 else ''}: the table overrules\n"
                         f"step 28 on {won} of {cells} shapes",
                         fontsize=10.5)
            if col == 0:
                ax.set_ylabel("M (rows of C: tokens)", fontsize=10)
            ax.xaxis.set_label_position("top")
            ax.set_xlabel("N (columns of C)", fontsize=9, labelpad=4)
    fig.legend(handles=[Patch(fc=c, alpha=1.0 if i == 0 else 0.55, ec="#999999", label=name)
                        for i, (name, c) in enumerate(KINDS)],
               loc="lower center", bbox_to_anchor=(0.5, -0.005), ncol=4, fontsize=9.5, frameon=False)
    fig.text(0.5, 0.035, "each cell: the winner (BM x BN, or the swapped tile's width) and its paired speed over cuBLAS there",
             ha="center", fontsize=9.5)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig
