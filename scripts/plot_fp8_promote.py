#!/usr/bin/env python3
"""Draws docs/img/fp8_promote.png from results/<gpu>_fp8_promote.csv (`scripts/gpu_session.sh
promote`): speed against error for step 31 promoting every 1, 2 and 4 k32 wgmmas (32, 64 and 128 of
K) and step 30, which never promotes, at each size measured. Speed is the paired ratio to cuBLASLt FP8
in its default mode (one process per point, so the clocks of different points differ and only the
ratio compares them); error is the relative RMS error against the fp64 oracle. cuBLASLt's two modes
are drawn too: its default at 1.0, its fast accumulation at the ratio of step 30's two pairings. Needs
matplotlib."""
import argparse
import collections
import csv
import sys

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)

from style import BLUE, GREY, RED  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", help="results/<gpu>_fp8_promote.csv")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "fp8_promote.png"))
    a = ap.parse_args()
    try:
        rows = list(csv.DictReader(open(a.csv)))
    except OSError as e:
        sys.exit(f"error: cannot read {a.csv}: {e.strerror}")
    if not rows or "promote_every" not in rows[0]:
        sys.exit(f"error: {a.csv}: no rows with a promote_every column (scripts/gpu_session.sh promote writes them)")
    by = collections.defaultdict(dict)  # (size, promote_every) -> kernel -> row
    for r in rows:
        by[(int(r["m"]), int(r["promote_every"]))][r["kernel"]] = r
    sizes = sorted({s for s, _ in by})
    fig, axes = plt.subplots(1, len(sizes), figsize=(5.2 * len(sizes), 4.2), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        for pe in sorted({p for s, p in by if s == size}, key=lambda p: (p == 0, p)):
            d = by[(size, pe)]
            if "step" not in d or "cublaslt_best" not in d or not d["step"]["rel_rms_err"]:
                continue
            speed = float(d["cublaslt_best"]["step_ratio"])  # step / cuBLASLt default, the paired ratio
            err = float(d["step"]["rel_rms_err"])
            label = f"every {pe * 32} K" if pe else "never (step 30)"
            ax.plot(err, speed, "o" if pe else "s", color=BLUE if pe else RED, ms=8)
            ax.annotate(label, (err, speed), textcoords="offset points", xytext=(7, 4), fontsize=8)
            if pe == 0:  # cuBLASLt's two modes, from step 30's process
                lt = d["cublaslt_best"]
                ax.plot(float(lt["rel_rms_err"]), 1.0, "D", color=GREY, ms=7)
                ax.annotate("cuBLASLt default", (float(lt["rel_rms_err"]), 1.0), textcoords="offset points",
                            xytext=(7, -10), fontsize=8)
                if "cublaslt_fast" in d and d["cublaslt_fast"]["rel_rms_err"]:
                    fast = d["cublaslt_fast"]
                    fs = float(d["cublaslt_best"]["step_ratio"]) / float(fast["step_ratio"])
                    ax.plot(float(fast["rel_rms_err"]), fs, "D", color=GREY, ms=7)
                    ax.annotate("cuBLASLt fast", (float(fast["rel_rms_err"]), fs), textcoords="offset points",
                                xytext=(7, -10), fontsize=8)
        ax.set_xscale("log")
        ax.set_xlabel("relative RMS error against the fp64 oracle")
        ax.set_ylabel("speed / cuBLASLt FP8 default (paired)")
        ax.set_title(f"{size}³, step 31 promoting every N of K", fontsize=10)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(a.out, dpi=150)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
