#!/usr/bin/env python3
"""Draws docs/img/steps.png from a results CSV: TFLOP/s per step (step order) at each size, with the
cuBLAS number measured in the same run drawn as a line per precision. Needs matplotlib."""
import argparse
import csv
import pathlib

import sys

try:
    import matplotlib
except ImportError:
    sys.exit("error: plot_steps.py needs matplotlib (python3 -m pip install matplotlib)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "steps.png"))
    args = ap.parse_args()
    with open(args.csv) as f:
        rows = [r for r in csv.DictReader(f) if r.get("tflops")]
    sizes = sorted({int(r["m"]) for r in rows})
    labels = sorted({(r["step"], r["name"]) for r in rows})
    fig, axes = plt.subplots(1, 2, figsize=(14, 5), gridspec_kw={"width_ratios": [1, 1]})
    for ax, dtype in zip(axes, ["fp32", "bf16"]):
        sub = [l for l in labels if any(r["dtype"] == dtype and (r["step"], r["name"]) == l for r in rows)]
        if not sub:
            ax.set_visible(False)
            continue
        width = 0.8 / len(sizes)
        for i, s in enumerate(sizes):
            vals, refs = [], []
            for l in sub:
                r = next((r for r in rows if (r["step"], r["name"]) == l and int(r["m"]) == s), None)
                vals.append(float(r["tflops"]) if r else 0.0)
                if r:
                    refs.append(float(r["cublas_tflops"]))
            xs = [j + (i - (len(sizes) - 1) / 2) * width for j in range(len(sub))]
            ax.bar(xs, vals, width, label=f"{s}³")
            if refs:
                ax.axhline(sorted(refs)[len(refs) // 2], linestyle="--", linewidth=1, color=f"C{i}",
                           label=f"cuBLAS {s}³ (median of same-run timings)")
        ax.set_xticks(range(len(sub)))
        ax.set_xticklabels([f"{a}\n{b}" for a, b in sub], rotation=60, ha="right", fontsize=8)
        ax.set_ylabel("TFLOP/s")
        ax.set_title(f"{dtype} steps on {rows[0]['gpu']}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
