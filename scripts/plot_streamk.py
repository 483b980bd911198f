#!/usr/bin/env python3
"""Draws docs/img/streamk.png: wave quantization and step 09b's stream-K split, as SM x time.

The split is the one of 09b's `Split` (kernels/09b_stream_k.cu), restated here: P = SMs x blocks per
SM (132 x 1 on the H200), waves = tiles / P, rest = tiles % P; stream-K takes the partial wave's tiles,
plus one full wave when the partial one is under half of P, and every stream-K block gets an equal
share of their K iterations. BM and BN come from the step's source (`scripts/sass/sass.py constants
09b`). Left: every tile to one block (data-parallel only): the last wave leaves P - rest SMs idle.
Right: the data-parallel waves, then the shared tiles' K iterations spread over all P blocks. Time
is in units of one tile's work (ignoring the cost of summing partial tiles). Needs matplotlib."""
import argparse
import pathlib

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)

from step_constants import constants  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "streamk.png"))
    args = ap.parse_args()
    k = constants("09b")
    bm, bn = k["BM"], k["BN"]
    tiles = -(-args.m // bm) * -(-args.n // bn)
    P = args.sms
    waves, rest = divmod(tiles, P)
    sk = 0 if waves == 0 or rest == 0 else (rest if 2 * rest >= P else rest + P)
    dp_waves = (tiles - sk) // P
    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    for sm in range(P):  # data-parallel only: tile t runs on block t % P in wave t // P
        n_tiles = waves + (1 if sm < rest else 0)
        a.broken_barh([(w, 0.96) for w in range(n_tiles)], (sm, 0.9), facecolors="tab:blue")
    a.axvline(waves + 1, color="black", linestyle=":", linewidth=1)
    a.set_title(f"every tile to one block: {tiles} tiles of {bm}x{bn} = {waves} waves + {rest}/{P}:\n"
                f"{waves + 1} tile-times, the last with {P - rest} SMs idle ({100 * tiles / (P * (waves + 1)):.1f} % busy)",
                fontsize=9)
    share = sk / P  # tile-times of K iterations per stream-K block
    for sm in range(P):
        b.broken_barh([(w, 0.96) for w in range(dp_waves)], (sm, 0.9), facecolors="tab:blue")
        b.broken_barh([(dp_waves, share)], (sm, 0.9), facecolors="tab:orange")
    b.axvline(dp_waves + share, color="black", linestyle=":", linewidth=1)
    b.set_title(f"09b: {dp_waves} data-parallel waves, then {sk} tiles' K iterations shared by all {P} blocks:\n"
                f"{dp_waves + share:.2f} tile-times ({100 * tiles / (P * (dp_waves + share)):.1f} % busy, before the cost of "
                f"summing partial tiles)", fontsize=9)
    for ax in (a, b):
        ax.set_xlabel("time, in tiles of work")
        ax.set_xlim(0, waves + 1.3)
    a.set_ylabel("block (one per SM)")
    a.set_ylim(0, P)
    fig.suptitle(f"Wave quantization at {args.m} x {args.n} on {P} SMs, and step 09b's stream-K tail", fontsize=11)
    fig.tight_layout()
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
