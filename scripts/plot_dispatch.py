#!/usr/bin/env python3
"""Draws docs/img/dispatch_map.png: the configuration step 29 runs over an M x N map at one K (default
4096) on the H200's 132 SMs: the kind of menu entry its measured table picks (family/dispatch.hpp over
family/tuned_bf16.hpp) where the table overrules step 28's hand rule, coloured as in dispatch_table.png
(figures/shapes.py's kinds: swapped, 64- or 128-row ping-pong, stmatrix, cooperative, cluster, split K),
grey shades where the hand rule runs, and the (M, N) the tuner timed at that K marked. The picks come
from the same C++ functions the step calls, printed by build/bin/dispatch_dump (scripts/dispatch_dump.cpp; `make dispatch-figure`
builds and runs both). Needs matplotlib."""
import argparse
import csv
import io
import pathlib
import subprocess
import sys

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from shapes import KINDS, entry_kind  # noqa: E402  (the kinds of entry dispatch_table.png colours)

# The hand rule's tiles: greys, light to dark (no kind of entry is grey).
HAND_GREYS = {"swap": "#eeeeee", "128x64": "#d4d4d4", "128x128": "#777777"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", default=str(ROOT / "build" / "bin" / "dispatch_dump"))
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--k", type=int, default=4096, help="K of the map (the pick depends on it)")
    ap.add_argument("--max", type=int, default=16384, help="largest M and N drawn")
    ap.add_argument("--tuning", default=str(ROOT / "results" / "tuning" / "nvidia_h200_bf16.csv"),
                    help="the tuner's CSV, for the measured (M, N) marks")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "dispatch_map.png"),
                    help="the PNG to write (default: the book's figure; give another path to experiment)")
    a = ap.parse_args()
    try:
        r = subprocess.run([a.tool, str(a.sms), str(a.k), str(a.max), str(a.max)], capture_output=True, text=True)
    except OSError as e:
        sys.exit(f"error: cannot run {a.tool} ({e.strerror}); `make dispatch-figure` builds it")
    if r.returncode != 0:
        sys.exit(f"error: {a.tool} exited {r.returncode}: {r.stderr.strip()}")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    if not rows or "pick" not in rows[0]:
        sys.exit(f"error: {a.tool} printed no rows of m,n,k,pick,hand (is it build/bin/dispatch_dump?)")
    ms = sorted({int(x["m"]) for x in rows})
    ns = sorted({int(x["n"]) for x in rows})

    def label(x):  # what runs: the kind of the picked entry, or the hand rule's tile
        if x["pick"] != "hand":
            return "table: " + KINDS[entry_kind(x["pick"])[0]][0]
        tile = x["hand"].split("+")[0]
        return "hand rule: " + ("swapped" if tile.startswith("swap") else tile)

    cells = {(int(x["m"]), int(x["n"])): label(x) for x in rows}
    hand_labels = [f"hand rule: {t}" for t in ("swapped", "128x64", "128x128")]
    picked = [f"table: {name}" for name, _ in KINDS[1:]]
    colours = {f"hand rule: {t}": c for t, c in zip(("swapped", "128x64", "128x128"), HAND_GREYS.values())}
    colours.update({f"table: {name}": c for name, c in KINDS[1:]})
    order = hand_labels + picked
    index = {lab: i for i, lab in enumerate(order)}
    grid = [[index[cells[(m, n)]] for n in ns] for m in ms]
    edges = lambda v: [v[0] * 0.9] + [(x * y) ** 0.5 for x, y in zip(v, v[1:])] + [v[-1] * 1.1]
    fig, ax = plt.subplots(figsize=(7.6, 6.0))
    ax.pcolormesh(edges(ns), edges(ms), grid, cmap=ListedColormap([colours[lab] for lab in order]),
                  vmin=-0.5, vmax=len(order) - 0.5, shading="flat")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    tuned = set()
    path = pathlib.Path(a.tuning)
    if path.exists():
        with open(path) as f:
            tuned = {(int(x["m"]), int(x["n"])) for x in csv.DictReader(f) if int(x["k"]) == a.k}
    for m, n in sorted(tuned):
        if m <= a.max and n <= a.max:
            ax.plot(n, m, "o", ms=4, mfc="white", mec="black", mew=0.7)
    ax.set_xlabel("N (columns of C)")
    ax.set_ylabel("M (rows of C: tokens)")
    overruled = sum(1 for v in cells.values() if not v.startswith("hand rule"))
    ax.set_title(f"Step 29 at K = {a.k} on {a.sms} SMs: the measured pick overrules the hand rule on "
                 f"{overruled} of {len(cells)} cells", fontsize=9)
    present = [lab for lab in order if lab in set(cells.values())]
    handles = [Patch(color=colours[lab], label=lab) for lab in present]
    handles.append(plt.Line2D([], [], marker="o", ls="", mfc="white", mec="black", label=f"(M, N) the tuner timed at K = {a.k}"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.11), ncol=2, fontsize=7.5, frameon=False)
    try:
        pathlib.Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(a.out, dpi=110, bbox_inches="tight")
    except OSError as e:
        sys.exit(f"error: cannot write {a.out}: {e.strerror}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
