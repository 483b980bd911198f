#!/usr/bin/env python3
"""Draws docs/img/waves.png from the committed wave-quantization runs (make bench-waves:
results/<gpu>_waves*.csv): at M = K = 4096 and N = 256 .. 8192, one tile column (256) per point, each
step and cuBLAS measured paired in the same process. Top: TFLOP/s against the number of 128 x 256
tiles, with the wave boundaries (multiples of the SM count) marked; bottom: the paired ratio to cuBLAS.
One persistent block per SM computes one tile at a time, so a tile count just past a multiple of the
SM count costs a whole extra wave of time: the sawtooth. Needs matplotlib."""
import argparse
import csv
import sys

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)

BM, BN = 128, 256  # the tile of steps 14-21 (the x axis); 22-23 use 128 x 128


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv", nargs="+", help="one or more _waves CSVs (one step each)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "waves.png"))
    args = ap.parse_args()
    rows = []
    for path in args.csv:
        with open(path) as f:
            rows += [r for r in csv.DictReader(f) if r.get("tflops") and r.get("mode", "burst") == "burst"]
    if not rows:
        sys.exit("error: no timed rows")
    sms = int(rows[0].get("sm_count") or 132)
    tiles = lambda r: -(-int(r["m"]) // BM) * -(-int(r["n"]) // BN)  # noqa: E731
    fig, (top, bot) = plt.subplots(2, 1, figsize=(12, 8), sharex=True)
    cublas_drawn = False
    for sid in sorted({r["step"] for r in rows}):
        mine = sorted((r for r in rows if r["step"] == sid), key=lambda r: int(r["n"]))
        st = [r for r in mine if r["kernel"] == "step"]
        cb = [r for r in mine if r["kernel"] == "cublas"]
        top.plot([tiles(r) for r in st], [float(r["tflops"]) for r in st], "o-", ms=3, label=f"step {sid}")
        if not cublas_drawn:
            top.plot([tiles(r) for r in cb], [float(r["tflops"]) for r in cb], "k.--", ms=3, lw=0.8,
                     label=f"cuBLAS (in step {sid}'s processes)")
            cublas_drawn = True
        bot.plot([tiles(r) for r in cb], [float(r["step_ratio"]) for r in cb], "o-", ms=3, label=f"step {sid} / cuBLAS")
    most = max(tiles(r) for r in rows)
    for ax in (top, bot):
        for w in range(1, most // sms + 2):
            ax.axvline(w * sms, color="grey", lw=0.6, ls=":")
        ax.grid(alpha=0.3)
    top.set_ylabel("TFLOP/s (paired, burst)")
    top.set_title(f"Wave quantization: M = K = 4096, N = 256..8192; x: {BM} x {BN} tiles (steps 14-21), dotted lines: "
                  f"multiples of {sms} of them (one per SM).\nSteps 22-23 run 128 x 128 tiles, one at a time per SM: "
                  f"their waves come twice as often", fontsize=10)
    top.legend(fontsize=8)
    bot.axhline(1.0, color="black", lw=0.8)
    bot.set_ylabel("step speed / cuBLAS speed")
    bot.set_xlabel("output tiles (N / 256 x 32)")
    bot.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
