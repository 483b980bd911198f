#!/usr/bin/env python3
"""Draws docs/img/fp8_error_k.png from results/<gpu>_fp8_lab.csv (`scripts/gpu_session.sh lab`): the
relative RMS error against the fp64 oracle of the dequantized product, as K grows (M = N = 256, the
same quantized inputs for every contender of a process), for each FP8 step and for cuBLASLt FP8 in its
default mode and with fast accumulation. A line per contender, log-log; a reference slope of sqrt(K)
(the growth of a rounding error that is independent per addition) drawn faintly. Needs matplotlib."""
import argparse
import collections
import csv
import sys

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)

from style import BLUE, GREEN, GREY, PURPLE, RED, YELLOW  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", help="results/<gpu>_fp8_lab.csv")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "fp8_error_k.png"))
    a = ap.parse_args()
    try:
        rows = list(csv.DictReader(open(a.csv)))
    except OSError as e:
        sys.exit(f"error: cannot read {a.csv}: {e.strerror}")
    if not rows or "rel_rms_err" not in rows[0]:
        sys.exit(f"error: {a.csv}: no rows with a rel_rms_err column (scripts/gpu_session.sh lab writes them)")
    lines = collections.defaultdict(dict)  # label -> {k: error}
    for r in rows:
        if not r.get("rel_rms_err"):
            continue
        k, err = int(r["k"]), float(r["rel_rms_err"])
        if r["kernel"] == "step":
            label = f"step {r['step']} {r['name']}"
        else:  # the references are the same in every step's process: keep the first step's
            label = {"cublaslt_best": "cuBLASLt FP8", "cublaslt_fast": "cuBLASLt FP8 fast accumulation"}.get(r["kernel"], r["kernel"])
        lines[label].setdefault(k, err)
    if not lines:
        sys.exit(f"error: {a.csv}: no error values")
    colors = iter([BLUE, GREEN, PURPLE, YELLOW, RED, GREY])
    fig, ax = plt.subplots(figsize=(7.2, 4.6))
    for label in sorted(lines, key=lambda s: (not s.startswith("step"), s)):
        pts = sorted(lines[label].items())
        ref = label.startswith("cuBLASLt")
        ax.plot([k for k, _ in pts], [e for _, e in pts], "--" if ref else "-o", color=next(colors), label=label,
                ms=4, lw=1.4)
    ks = sorted({k for v in lines.values() for k in v})
    e0 = min(lines[next(iter(lines))].values())
    ax.plot(ks, [e0 * (k / ks[0]) ** 0.5 for k in ks], ":", color=GREY, lw=1, label="∝ √K")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("K")
    ax.set_ylabel("relative RMS error against the fp64 oracle")
    ax.set_title("FP8 GEMM error as K grows (256 × 256 × K, e4m3 inputs from N(0, 1))", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    try:
        fig.savefig(a.out, dpi=110, bbox_inches="tight")
    except OSError as e:
        sys.exit(f"error: cannot write {a.out}: {e.strerror}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
