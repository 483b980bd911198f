#!/usr/bin/env python3
"""Draws docs/img/smem_06_07.png: step 06's transposed A tile in shared memory (sAT[BK][BM]) against
step 07's padded one (sAT[BK][BM + PAD]), with the banks that one warp's first transposed store hits.

Both steps load A as float4 along K and store it transposed, `sAT[c + q][r] = v.q`, with
`i = t + it * THREADS, r = i / (BK / 4), c = i % (BK / 4) * 4` (kernels/06_vectorized_loads.cu and
kernels/07_bank_conflict_free.cu); BM, BK and PAD are read from the steps' source with
`scripts/sass/sass.py constants`. A float at sAT[k][m] lives in bank (k * row_pitch + m) % 32. Each
panel shows rows k = 0..BK-1 of the tile over the 32 banks: a cell is one bank of one row, labelled
with the lanes of warp 0 that write it in the first store (q = 0); the bar below counts the lanes per
bank, and the largest count is the store's conflict degree (1 = none). Needs matplotlib."""
import argparse
import pathlib
import sys
from collections import defaultdict

try:
    import matplotlib
except ImportError:
    sys.exit("error: plot_smem_layouts.py needs matplotlib (scripts/docs_deps.sh says how to install it)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from step_constants import constants  # noqa: E402


def kernel_pad(path):
    for line in pathlib.Path(path).read_text().splitlines():
        if "constexpr int PAD" in line:
            return int(line.split("=")[1].split(";")[0])
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "smem_06_07.png"))
    args = ap.parse_args()
    fig, axes = plt.subplots(2, 2, figsize=(13, 6.5), gridspec_kw={"height_ratios": [3, 1]})
    for col, (step, src) in enumerate((("06", "kernels/06_vectorized_loads.cu"), ("07", "kernels/07_bank_conflict_free.cu"))):
        k = constants(step)
        BM, BK = k["BM"], k["BK"]
        pad = kernel_pad(ROOT / src)
        pitch = BM + pad
        writers = defaultdict(list)  # (row k, bank) -> lanes
        per_bank = defaultdict(int)
        for lane in range(32):  # warp 0, it = 0, first component (q = 0)
            r, c = lane // (BK // 4), lane % (BK // 4) * 4
            bank = (c * pitch + r) % 32
            writers[(c, bank)].append(lane)
            per_bank[bank] += 1
        ax = axes[0][col]
        for (row, bank), lanes in writers.items():
            ax.add_patch(Rectangle((bank, row), 1, 1, facecolor=plt.get_cmap("tab10")(row // 4 % 10), alpha=0.8))
            ax.text(bank + 0.5, row + 0.5, ",".join(map(str, lanes)), ha="center", va="center", fontsize=5.5)
        ax.set_xlim(0, 32)
        ax.set_ylim(BK, 0)
        ax.set_xticks(range(0, 32, 4))
        ax.set_yticks(range(BK))
        ax.grid(True, alpha=0.3)
        ax.set_xlabel("bank")
        ax.set_ylabel("row k of sAT")
        title = f"step {step}: sAT[{BK}][{BM}{' + ' + str(pad) if pad else ''}], rows {pitch} floats apart"
        ax.set_title(f"{title}\n(row k starts in bank {(pitch % 32)} x k mod 32); cells: lanes of warp 0 "
                     f"storing v.x", fontsize=9)
        bx = axes[1][col]
        banks = list(range(32))
        worst = max(per_bank.values())
        bx.bar(banks, [per_bank[b] for b in banks], color="tab:red" if worst > 1 else "tab:green")
        bx.set_xlim(-0.5, 31.5)
        bx.set_ylim(0, 5)
        bx.set_xlabel("bank")
        bx.set_ylabel("lanes")
        bx.set_title(f"lanes per bank in that store: {worst}-way conflict" if worst > 1 else "no conflict", fontsize=9)
    fig.suptitle("The transposed store of A: step 06's 128-float rows put 4 lanes in each bank, step 07's pad of 4 "
                 "floats halves that", fontsize=10)
    fig.tight_layout()
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
