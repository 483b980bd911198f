#!/usr/bin/env python3
"""Draws a pipeline trace (the Chrome-trace JSON of `--trace`, common/kernel_lib/trace.hpp) as a timeline, and
prints what it measures: for each traced SM, the fraction of the kernel's time during which at least
one warpgroup had wgmmas in flight ("wgmma busy"), and the mean wait for a full stage per K tile.

One row per warpgroup of every block that ran on the SM (blocks resident at the same time stack up),
coloured by interval kind. By default the window is 30 microseconds starting at a third of the
kernel; --start/--length (microseconds) choose another. Several traces may be given: one panel each,
same window length (e.g. steps 12 and 13 at 8192^3). Needs matplotlib.

Usage: scripts/plot_trace.py TRACE.json[.gz] [TRACE2.json ...] [--sm 0] [--out FILE.png]
`make docs` draws two figures from the traces committed under results/traces/ (8192^3 on the H200):
docs/img/trace_12_13_8192.png (steps 12 and 13) and docs/img/trace_11_14_18_8192.png (steps 11, 14
and 18)."""
import argparse
import gzip
import json
import pathlib
import sys

from plot_setup import plt  # noqa: E402  (matplotlib, or a line saying how to get it)
from matplotlib.patches import Patch  # noqa: E402

COLORS = {"wgmma": "tab:green", "wait full": "tab:orange", "producer: wait empty": "tab:gray", "epilogue": "tab:blue"}


def union_length(intervals):
    total, end = 0.0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def stats(events, sm):
    mine = [e for e in events if e["pid"] == sm]
    if not mine:
        return None
    t0 = min(e["ts"] for e in mine)
    t1 = max(e["ts"] + e["dur"] for e in mine)
    mma = [(e["ts"], e["ts"] + e["dur"]) for e in mine if e["name"] == "wgmma"]
    waits = [e["dur"] for e in mine if e["name"] == "wait full"]
    blocks = {e["args"]["block"] for e in mine}
    return {"span": t1 - t0, "busy": union_length(mma) / (t1 - t0) if t1 > t0 else 0,
            "wait": sum(waits) / len(waits) if waits else 0, "blocks": len(blocks), "t0": t0, "t1": t1}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--sm", type=int, default=0)
    ap.add_argument("--start", type=float, help="window start, microseconds from the SM's first record")
    ap.add_argument("--length", type=float, default=30.0)
    ap.add_argument("--out")
    args = ap.parse_args()
    fig, axes = plt.subplots(len(args.traces), 1, figsize=(13, 3.2 * len(args.traces)), squeeze=False)
    for ax, path in zip(axes[:, 0], args.traces):
        raw = pathlib.Path(path).read_bytes()
        events = json.loads(gzip.decompress(raw) if path.endswith(".gz") else raw)["traceEvents"]
        st = stats(events, args.sm)
        if st is None:
            sys.exit(f"error: {path}: no record of SM {args.sm}")
        start = st["t0"] + (args.start if args.start is not None else st["span"] / 3)
        end = start + args.length
        shown = [e for e in events if e["pid"] == args.sm and e["ts"] < end and e["ts"] + e["dur"] > start]
        lanes = sorted({(e["args"]["block"], e["args"]["wg"]) for e in shown})
        row = {lane: i for i, lane in enumerate(lanes)}
        for e in shown:
            y = row[(e["args"]["block"], e["args"]["wg"])]
            ax.broken_barh([(max(e["ts"], start) - start, min(e["ts"] + e["dur"], end) - max(e["ts"], start))],
                           (y - 0.4, 0.8), facecolors=COLORS.get(e["name"], "black"))
        ax.set_yticks(range(len(lanes)), [f"block {b} wg {w}" for b, w in lanes], fontsize=7)
        ax.set_xlim(0, args.length)
        ax.set_xlabel("microseconds into the window")
        name = pathlib.Path(path).name.split(".")[0]
        ax.set_title(f"{name}, SM {args.sm}: wgmma in flight {100 * st['busy']:.1f} % of the kernel's {st['span']:.0f} us; "
                     f"mean wait for a full stage {1000 * st['wait']:.0f} ns per K tile; {st['blocks']} block{'s' if st['blocks'] != 1 else ''} ran here",
                     fontsize=9)
        print(f"{name}: SM {args.sm}: wgmma busy {100 * st['busy']:.1f} % of {st['span']:.1f} us, "
              f"mean full-stage wait {1000 * st['wait']:.0f} ns, {st['blocks']} blocks")
    fig.legend(handles=[Patch(color=c, label=k) for k, c in COLORS.items()], loc="upper right", fontsize=8)
    fig.tight_layout(rect=(0, 0, 0.9, 1))
    out = args.out or str(pathlib.Path(args.traces[0]).parent / (pathlib.Path(args.traces[0]).name.split(".")[0] + ".png"))
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
