#!/usr/bin/env python3
"""Draws docs/img/smem_06_07.png: the two shared-memory bank conflicts of step 06 and what step 07 does
to each, the larger first.

Top: the loads. Each thread reads its TN columns of sB as float4s (LDS.128); an LDS.128 is served a
quarter warp (8 lanes x 16 bytes = 128 bytes) at a time, and two lanes of a quarter that need different
words of one bank take two wavefronts. Step 06 reads `sB[kk][tcol * TN + j]` (a thread's float4s
adjacent, lanes TN floats apart), step 07 `sB[kk][j / 4 * SN + tcol * 4]` (lanes' float4s adjacent),
with tcol = t % (BN / TN) (kernels/06_vectorized_loads.cu, kernels/07_bank_conflict_free.cu). The panel
shows lanes 0-7 of warp 0 in the first LDS.128 (j = 0) over the 32 banks, one row per wavefront (each
row serves every bank at most once). The extra wavefronts, summed over a 1024^3 launch (every warp, every
k, the TN / 4 LDS.128 of sB, all four quarters), are checked against ncu's load bank conflicts.

Middle and bottom: the stores. Both steps load A as float4 along K and store it transposed,
`sAT[c + q][r] = v.q`, with `i = t + it * THREADS, r = i / (BK / 4), c = i % (BK / 4) * 4`; BM, BN, BK,
TN and PAD are read from the steps' source with `scripts/sass/sass.py constants`. A float at sAT[k][m]
lives in bank (k * row_pitch + m) % 32. Each panel shows rows k = 0..BK-1 of the tile over the 32 banks:
a cell is one bank of one row, labelled with the lanes of warp 0 that write it in the first store
(q = 0); the bar below counts the lanes per bank, and the largest count is the store's conflict degree
(1 = none). The ncu counters (1024^3, one launch each) are the ones docs/notebook/fp32.md and
docs/fp32_ladder.md quote. Needs matplotlib."""
import argparse
import pathlib
from collections import defaultdict

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)
from matplotlib.patches import Rectangle  # noqa: E402

from step_constants import constants  # noqa: E402


def kernel_pad(path):
    for line in pathlib.Path(path).read_text().splitlines():
        if "constexpr int PAD" in line:
            return int(line.split("=")[1].split(";")[0])
    return 0


# ncu at 1024^3, one launch each (docs/notebook/fp32.md, "Bank-conflict counters"; docs/fp32_ladder.md):
# l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum and ..._op_st.sum.
NCU_CONFLICTS = {"06": {"ld": 4_194_304, "st": 797_524}, "07": {"ld": 0, "st": 278_075}}
NCU_SIZE = 1024


def sb_float4(step, k, lane, j=0):
    """The first float of lane `lane`'s (warp 0) float4 j / 4 of sB in row kk = 0, as the step's source reads it."""
    tcol = lane % (k["BN"] // k["TN"])
    if step == "06":
        return tcol * k["TN"] + j  # sB[kk][tcol * TN + j]
    sn = k["BN"] // (k["TN"] // 4)  # Tiles::SN
    return j // 4 * sn + tcol * 4  # sB[kk][j / 4 * SN + tcol * 4]


def wavefronts(lanes_words):
    """Splits one quarter warp's float4 reads into wavefronts: each serves every bank at most once (one word;
    lanes reading the same word share it). lanes_words: [(lane, first float)] -> [[(lane, first float)]]."""
    waves = []
    for lane, w in lanes_words:
        words = {(w + e) % 32: w + e for e in range(4)}
        for wave in waves:
            taken = {}
            for _, w2 in wave:
                taken.update({(w2 + e) % 32: w2 + e for e in range(4)})
            if all(taken.get(b, word) == word for b, word in words.items()):
                wave.append((lane, w))
                break
        else:
            waves.append([(lane, w)])
    return waves


def load_panel(ax, step, k):
    quarter = [(lane, sb_float4(step, k, lane)) for lane in range(8)]
    waves = wavefronts(quarter)
    cmap = plt.get_cmap("tab10")
    for row, wave in enumerate(waves):
        for lane, w in wave:
            for e in range(4):
                bank = (w + e) % 32
                ax.add_patch(Rectangle((bank, row), 1, 1, facecolor=cmap(lane % 10), alpha=0.85, edgecolor="white"))
                ax.text(bank + 0.5, row + 0.5, f"{lane}", ha="center", va="center", fontsize=7)
    ax.set_xlim(0, 32)
    ax.set_ylim(2, 0)
    ax.set_xticks(range(0, 33, 4))
    ax.set_yticks([0.5, 1.5], ["wavefront 1", "wavefront 2"], fontsize=8)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_xlabel("bank", fontsize=8)
    ax.tick_params(labelsize=8)
    # Every warp, k and LDS.128 of sB at 1024^3, all four quarters, against ncu's count.
    quarters = [wavefronts([(lane, sb_float4(step, k, lane, j)) for lane in range(8 * q, 8 * q + 8)])
                for j in range(0, k["TN"], 4) for q in range(4)]
    extra_per_k = sum(len(w) - 1 for w in quarters)
    threads = (k["BM"] // k["TM"]) * (k["BN"] // k["TN"])  # Tiles::THREADS
    warp_k = (NCU_SIZE // k["BM"]) * (NCU_SIZE // k["BN"]) * threads // 32 * NCU_SIZE
    predicted = warp_k * extra_per_k
    assert predicted == NCU_CONFLICTS[step]["ld"], (step, predicted)
    src = "sB[kk][tcol*TN + j]" if step == "06" else "sB[kk][j/4*SN + tcol*4]"
    ax.set_title(f"step {step}, loads: LDS.128 of {src}, lanes 0-7 of warp 0\n(a quarter warp; cell: lane): "
                 f"{len(waves)} wavefront{'s' if len(waves) > 1 else ''}, "
                 + (f"a {len(waves)}-way conflict" if len(waves) > 1 else "no conflict")
                 + f"\n{extra_per_k} extra per warp and k x {warp_k:,} (warp, k) at {NCU_SIZE}³ = {predicted:,}"
                 f" = ncu's count", fontsize=9)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "smem_06_07.png"))
    args = ap.parse_args()
    fig, axes = plt.subplots(3, 2, figsize=(13, 10), gridspec_kw={"height_ratios": [0.7, 3, 1]})
    for col, (step, src) in enumerate((("06", "kernels/06_vectorized_loads.cu"), ("07", "kernels/07_bank_conflict_free.cu"))):
        k = constants(step)
        load_panel(axes[0][col], step, k)
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
        ax = axes[1][col]
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
        title = f"step {step}, stores: sAT[{BK}][{BM}{' + ' + str(pad) if pad else ''}], rows {pitch} floats apart"
        ax.set_title(f"{title}\n(row k starts in bank {(pitch % 32)}k mod 32); cells: warp 0's lanes storing v.x; "
                     f"ncu: {NCU_CONFLICTS[step]['st']:,} conflicts", fontsize=9)
        bx = axes[2][col]
        banks = list(range(32))
        worst = max(per_bank.values())
        bx.bar(banks, [per_bank[b] for b in banks], color="tab:red" if worst > 1 else "tab:green")
        bx.set_xlim(-0.5, 31.5)
        bx.set_ylim(0, 5)
        bx.set_xlabel("bank")
        bx.set_ylabel("lanes")
        bx.set_title(f"lanes per bank in that store: {worst}-way conflict" if worst > 1 else "no conflict", fontsize=9)
    fig.suptitle(f"Step 06's two bank conflicts (ncu, {NCU_SIZE}³): the LDS.128 loads of sB, "
                 f"{NCU_CONFLICTS['06']['ld'] / 1e6:.2f} M (top), and the transposed stores of A, "
                 f"{NCU_CONFLICTS['06']['st'] / 1e6:.2f} M;\nstep 07 makes a quarter warp's float4s adjacent "
                 f"(loads: {NCU_CONFLICTS['07']['ld']}) and pads sAT by 4 floats (stores: 4-way to 2-way, "
                 f"{NCU_CONFLICTS['07']['st'] / 1e6:.2f} M)", fontsize=10.5)
    fig.tight_layout()
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
