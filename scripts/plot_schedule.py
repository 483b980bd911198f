#!/usr/bin/env python3
"""Draws the tile orders of common/schedule.hpp as heat maps: docs/img/schedule_<name>.png.

The order comes from the same C++ functions the kernels call, printed by build/bin/schedule_dump
(scripts/schedule_dump.cpp; `make build/bin/schedule_dump` builds it). Each picture is the tile grid of
one GEMM (default 8192 x 8192 with 128 x 256 tiles: 64 x 32 tiles); a tile's colour is its place in
the order, and the tiles of the first wave (the first SMS tiles: what the persistent kernel's blocks
work on at the same time) are outlined, with the rows of A and B that wave reads. Needs matplotlib."""
import argparse
import csv
import io
import pathlib
import subprocess
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("error: plot_schedule.py needs matplotlib (python3 -m pip install matplotlib)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def dump(tool, order, tiles_m, tiles_n, group_m, cluster=(2, 1)):
    cmd = [str(tool), order, str(tiles_m), str(tiles_n)]
    if order == "grouped":
        cmd += [str(group_m)]
    if order == "cluster_grouped":  # step 17: GROUP_CLUSTERS = GROUP_M / CLUSTER_M, counted in cluster tiles
        cmd += [str(group_m // cluster[0]), str(cluster[0]), str(cluster[1])]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [(int(r["t"]), int(r["tile_m"]), int(r["tile_n"])) for r in csv.DictReader(io.StringIO(out))]


def draw(rows, tiles_m, tiles_n, title, sms, bm, bn, out):
    grid = [[0] * tiles_n for _ in range(tiles_m)]
    for t, m, n in rows:
        grid[m][n] = t
    wave = [(m, n) for t, m, n in rows if t < sms]
    a_rows = len({m for m, _ in wave}) * bm
    b_rows = len({n for _, n in wave}) * bn
    fig, ax = plt.subplots(figsize=(1.6 + 0.16 * tiles_n, 0.9 + 0.16 * tiles_m))
    im = ax.imshow(grid, cmap="viridis", interpolation="nearest", aspect="equal")
    for m, n in wave:
        ax.add_patch(Rectangle((n - 0.5, m - 0.5), 1, 1, fill=False, edgecolor="white", linewidth=0.8))
    ax.set_xlabel("tile_n (columns of C; rows of B)")
    ax.set_ylabel("tile_m (rows of C and A)")
    ax.set_title(f"{title}\nfirst wave of {sms} tiles (outlined) reads {a_rows} rows of A, {b_rows} of B",
                 fontsize=9)
    fig.colorbar(im, ax=ax, label="position t in the order")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"wrote {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tool", default=str(ROOT / "build" / "bin" / "schedule_dump"))
    ap.add_argument("--m", type=int, default=8192)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--bm", type=int, default=128)
    ap.add_argument("--bn", type=int, default=256)
    ap.add_argument("--group-m", type=int, default=16, help="step 15's GROUP_M")
    ap.add_argument("--sms", type=int, default=132, help="blocks in flight (H200: 132 SMs)")
    ap.add_argument("--out-dir", default=str(ROOT / "docs" / "img"))
    args = ap.parse_args()
    tiles_m, tiles_n = -(-args.m // args.bm), -(-args.n // args.bn)
    shape = f"{args.m} x {args.n}, {args.bm} x {args.bn} tiles ({tiles_m} x {tiles_n})"
    for order, title in (("column_major", f"column-major (steps 11-14's grid order), {shape}"),
                         ("row_major", f"row-major raster, {shape}"),
                         ("grouped", f"grouped, GROUP_M = {args.group_m} (steps 15-18), {shape}"),
                         ("cluster_grouped", f"cluster pairs along M, grouped (step 17), {shape}"),
                         ("hilbert", f"generalized Hilbert curve (steps 19 on), {shape}")):
        rows = dump(args.tool, order, tiles_m, tiles_n, args.group_m)
        draw(rows, tiles_m, tiles_n, title, args.sms, args.bm, args.bn,
             pathlib.Path(args.out_dir) / f"schedule_{order}.png")


if __name__ == "__main__":
    main()
