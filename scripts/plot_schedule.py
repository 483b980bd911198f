#!/usr/bin/env python3
"""Draws the tile orders of common/kernel_lib/schedule.hpp as heat maps: docs/img/schedule_<name>.png.

The order comes from the same C++ functions the kernels call, printed by build/bin/schedule_dump
(scripts/schedule_dump.cpp; `make build/bin/schedule_dump` builds it). Each picture is the tile grid of
one GEMM (default 8192 x 8192 with 128 x 256 tiles: 64 x 32 tiles); a tile's colour is its place in
the order, and the tiles of the first wave (the first SMS tiles: what the persistent kernel's blocks
work on at the same time) are outlined, with the rows of A and B that wave reads. The path through
the tile centres in visit order is drawn bold for the first --path-waves waves (default 2: black for
the first wave, red for the second, a dot where it starts) and thin for the rest of the order wherever
it steps to a neighbouring tile (so the whole of the Hilbert curve shows). In the cluster order the
tiles that one cluster of blocks computes together are outlined as one box. Which steps use which
order is read from kernels/*.cu (the schedule:: function they call, or for the non-persistent grids
whether blockIdx.x or blockIdx.y gives the tile's row m0). Needs matplotlib."""
import argparse
import csv
import io
import pathlib
import re
import subprocess

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402


def dump(tool, order, tiles_m, tiles_n, group_m, cluster=(2, 1)):
    cmd = [str(tool), order, str(tiles_m), str(tiles_n)]
    if order == "grouped":
        cmd += [str(group_m)]
    if order == "cluster_grouped":  # step 17: GROUP_CLUSTERS = GROUP_M / CLUSTER_M, counted in cluster tiles
        cmd += [str(group_m // cluster[0]), str(cluster[0]), str(cluster[1])]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [(int(r["t"]), int(r["tile_m"]), int(r["tile_n"])) for r in csv.DictReader(io.StringIO(out))]


def kernel_sources():
    """[(step id, source text)] of kernels/*.cu in step order ('09b' after '09')."""
    out = []
    for p in sorted((ROOT / "kernels").glob("*.cu")):
        out.append((p.name.split("_", 1)[0], p.read_text()))
    return out


def steps_text(ids, all_ids):
    """'steps 15-16, 18 and 21': runs of consecutive step ids (in kernels/ order) joined."""
    if not ids:
        return "no step"
    pos = {s: i for i, s in enumerate(all_ids)}
    runs = []
    for s in ids:
        if runs and pos[s] == pos[runs[-1][-1]] + 1:
            runs[-1].append(s)
        else:
            runs.append([s])
    parts = [r[0] if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs]
    word = "step" if len(ids) == 1 else "steps"
    return f"{word} {parts[0]}" if len(parts) == 1 else f"{word} {', '.join(parts[:-1])} and {parts[-1]}"


def users():
    """{order: 'steps ...'} from kernels/*.cu."""
    src = kernel_sources()
    all_ids = [s for s, _ in src]
    called = {name: [s for s, text in src if re.search(rf"schedule::{name}\(", text)]
              for name in ("grouped", "cluster_grouped", "hilbert")}
    m0 = {axis: [s for s, text in src if re.search(rf"\bm0 = (int64_t\()?blockIdx\.{axis}\b", text)]
          for axis in "xy"}
    return {"column_major": steps_text(m0["x"], all_ids), "row_major": steps_text(m0["y"], all_ids),
            **{k: steps_text(v, all_ids) for k, v in called.items()}}


def draw(rows, tiles_m, tiles_n, title, sms, bm, bn, out, path_waves, cluster_size=1):
    grid = [[float("nan")] * tiles_n for _ in range(tiles_m)]
    for t, m, n in rows:
        grid[m][n] = t
    order = sorted(rows)
    wave = [(m, n) for t, m, n in order if t < sms]
    a_rows = len({m for m, _ in wave}) * bm
    b_rows = len({n for _, n in wave}) * bn
    fig, ax = plt.subplots(figsize=(2.2 + 0.2 * tiles_n, 1.3 + 0.2 * tiles_m))
    # viridis without its darkest third: black and red lines stay visible on every tile.
    cmap = ListedColormap(plt.get_cmap("viridis")([0.3 + 0.7 * i / 255 for i in range(256)]))
    im = ax.imshow(grid, cmap=cmap, interpolation="nearest", aspect="equal")
    # The first wave's outline: every tile edge that does not border another tile of the wave.
    inside = set(wave)
    for m, n in wave:
        for dm, dn, xs, ys in ((-1, 0, (n - 0.5, n + 0.5), (m - 0.5, m - 0.5)),
                               (1, 0, (n - 0.5, n + 0.5), (m + 0.5, m + 0.5)),
                               (0, -1, (n - 0.5, n - 0.5), (m - 0.5, m + 0.5)),
                               (0, 1, (n + 0.5, n + 0.5), (m - 0.5, m + 0.5))):
            if (m + dm, n + dn) not in inside:
                ax.plot(xs, ys, color="white", linewidth=2.2, solid_capstyle="projecting")
    if cluster_size > 1:  # the tiles of one cluster (t // size) as one box
        boxes = {}
        for t, m, n in order:
            boxes.setdefault(t // cluster_size, []).append((m, n))
        for cells in boxes.values():
            ms, ns = [m for m, _ in cells], [n for _, n in cells]
            ax.add_patch(Rectangle((min(ns) - 0.42, min(ms) - 0.42), max(ns) - min(ns) + 0.84,
                                   max(ms) - min(ms) + 0.84, fill=False, edgecolor="black", linewidth=0.8))
    # The rest of the order, thin, wherever it moves to a neighbouring tile.
    bold = path_waves * sms
    seg = []
    for (t0, m0, n0), (t1, m1, n1) in zip(order, order[1:]):
        if t1 >= bold and abs(m1 - m0) + abs(n1 - n0) == 1:
            seg.append(([n0, n1], [m0, m1]))
    for xs, ys in seg:
        ax.plot(xs, ys, color="black", linewidth=0.6, alpha=0.55)
    for w, color in zip(range(path_waves), ("black", "#d62728", "#ff7f0e", "#1f77b4")):
        # Each wave's path joins the previous one's last tile, so the order reads as one line.
        pts = [(m, n) for t, m, n in order if w * sms - 1 <= t < (w + 1) * sms]
        if len(pts) > 1:
            ax.plot([n for _, n in pts], [m for m, _ in pts], color=color, linewidth=1.8,
                    label=f"wave {w + 1}: tiles {w * sms}-{min((w + 1) * sms, len(order)) - 1} in order")
    t0, m0, n0 = order[0]
    ax.plot([n0], [m0], "o", color="black", markersize=6, markeredgecolor="white", label="t = 0")
    ax.set_xlabel("tile_n (columns of C; rows of B)")
    ax.set_ylabel("tile_m (rows of C and A)")
    ax.set_title(f"{title}\nfirst wave of {sms} tiles (outlined) reads {a_rows} rows of A, {b_rows} of B",
                 fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.045 - 0.9 / tiles_m), ncol=1, frameon=False)
    fig.colorbar(im, ax=ax, label="position t in the order", shrink=0.6, pad=0.03)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"wrote {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", default=str(ROOT / "build" / "bin" / "schedule_dump"))
    ap.add_argument("--m", type=int, default=8192)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--bm", type=int, default=128)
    ap.add_argument("--bn", type=int, default=256)
    ap.add_argument("--group-m", type=int, default=16, help="step 15's GROUP_M")
    ap.add_argument("--sms", type=int, default=132, help="blocks in flight (H200: 132 SMs)")
    ap.add_argument("--path-waves", type=int, default=2, help="waves whose path is drawn bold (at most 4)")
    ap.add_argument("--out-dir", default=str(ROOT / "docs" / "img"))
    args = ap.parse_args()
    tiles_m, tiles_n = -(-args.m // args.bm), -(-args.n // args.bn)
    shape = f"{args.m} x {args.n}, {args.bm} x {args.bn} tiles ({tiles_m} x {tiles_n})"
    who = users()
    cluster = (2, 1)
    for order, title in (("column_major", f"column-major (the grid order of {who['column_major']}), {shape}"),
                         ("row_major", f"row-major raster (the grid order of {who['row_major']}), {shape}"),
                         ("grouped", f"grouped, GROUP_M = {args.group_m} ({who['grouped']}), {shape}"),
                         ("cluster_grouped", f"cluster pairs along M (boxed), grouped ({who['cluster_grouped']}), "
                                             f"{shape}"),
                         ("hilbert", f"generalized Hilbert curve ({who['hilbert']}), {shape}")):
        rows = dump(args.tool, order, tiles_m, tiles_n, args.group_m, cluster)
        draw(rows, tiles_m, tiles_n, title, args.sms, args.bm, args.bn,
             pathlib.Path(args.out_dir) / f"schedule_{order}.png", min(args.path_waves, 4),
             cluster[0] * cluster[1] if order == "cluster_grouped" else 1)


if __name__ == "__main__":
    main()
