#!/usr/bin/env python3
"""Draws docs/img/roofline.png: the H200's roofline with every step placed by the bytes ncu counted
through each level of the memory hierarchy for one GEMM.

  scripts/plot_roofline.py results/nvidia_h200.csv [--bytes ROOFLINE_CSV] [--out PNG]

The positional CSV is a committed `make bench` run: it says which steps are fp32 and which bf16
(one panel each). --bytes is the ncu run of `scripts/profile.py --roofline` (default: the file
results/profiles/<name of the bench CSV>_roofline_4096.csv beside it): per step and per cuBLAS
kernel, one launch's time and SM clock and the bytes through L1 (l1tex__t_bytes.sum: 32-byte sectors of
global and local traffic through L1TEX; shared-memory loads and stores are not in it), L2
(lts__t_bytes.sum) and DRAM (dram__bytes_read.sum + dram__bytes_write.sum).

Each step is one height, the TFLOP/s of that same profiled launch (2MNK over its time), and up to
three points on it: its arithmetic intensity against each level, 2MNK FLOP over the bytes through
that level. A point left of a roof's ridge means that level's traffic bounds the step; a step sits
further right at a level the caches above it shield. A level with no bytes (TMA bypasses L1) has no
point. Labels (step id: TFLOP/s) sit in a column right of the points, stacked downwards in the order
of the heights, with a leader line to each step's rightmost point; steps within 3 % of each other's
height share one label ("16–23, cuBLAS: 745–766"), except steps 12 and 13, which the book compares
(always labelled apart). Step 00 (cuBLAS run as a step) is left out: the cublas_fp32 row is the same
kernel. Step 03's L1 bytes are its global loads and C stores only; the shared-memory loads that bound it
get one extra point, counted from its SASS, not by ncu: per warp and K tile its loop issues 32 FFMA
(2048 FLOP) and 40 shared loads (32 LDS, 8 LDS.128: build/sass/03_smem_tiling/sgemm_smem_tiling.sass,
docs/fp32_ladder.md), each one warp-wide access of the 128-byte-per-clock data path: 2048 / (40 x 128)
= 0.4 FLOP per byte.

The roofs: DRAM (4.8 TB/s: NVIDIA H200 datasheet, https://www.nvidia.com/en-us/data-center/h200/;
4.3 TB/s: device-to-device copy measured on this GPU, docs/machine.md); the L1/shared-memory
data path, 128 bytes per clock per SM (32 banks of 4 bytes, each delivering 4 bytes per clock: CUDA C
Programming Guide, shared memory; docs/machine.md) x 132 SMs x 1.98 GHz = 33.5 TB/s,
arithmetic, not measured; L2, dashed: ncu's own model of the L2 peak, not a datasheet figure, derived
from results/profiles/l2_multicast_8192.md as L2 bytes / time / ncu's L2 throughput percentage for each
kernel there (15.3-15.4 TB/s; the median is drawn). Compute: the peak at the datasheet clock (bf16 dense:
989 TFLOP/s in the same datasheet, which is 540,672 FLOP per clock = 132 SMs x 4 tensor cores x
1024 FLOP at 1.83 GHz; fp32 on CUDA cores: 132 SMs x 128 lanes x 2 = 33,792 FLOP per clock, 67
TFLOP/s at the 1.98 GHz boost clock) and, dashed, at the median SM clock of the profiled launches of
that precision where it differs by more than 1 % (under the 700 W cap the bf16 steps ran at ~1.58 GHz).
Needs matplotlib."""
import argparse
import csv
import math
import pathlib
import statistics
import sys

from plot_setup import ROOT, plt  # noqa: E402  (matplotlib, or a line saying how to get it)

SMS = 132
FLOP_PER_CLOCK = {"fp32": SMS * 128 * 2, "bf16": SMS * 4 * 1024}  # 33,792 and 540,672 FLOP per SM clock
DATASHEET_GHZ = {"bf16": 1.83, "fp32": 1.98}  # bf16: the clock behind the datasheet's 989 TFLOP/s; fp32: max boost
DRAM_TBPS = {"datasheet": 4.8, "measured copy": 4.3}
L1_BYTES_PER_CLOCK = 128  # per SM: 32 banks x 4 bytes per clock
L1_TBPS = SMS * L1_BYTES_PER_CLOCK * 1.98e9 / 1e12  # 33.5 TB/s at the 1.98 GHz boost clock
L2_PROFILE = ROOT / "results" / "profiles" / "l2_multicast_8192.md"
# Step 03's K loop per warp, counted in its SASS (build/sass/03_smem_tiling/sgemm_smem_tiling.sass, `make sass`):
# 32 FFMA against 32 LDS + 8 LDS.128 (docs/fp32_ladder.md, step 03). Each shared load is one warp-wide access of
# the shared-memory data path, 128 bytes per clock per SM: the bytes the L1/shared roof counts.
SMEM_03 = {"ffma": 32, "lds": 32, "lds128": 8}
LEVELS = (  # (name, how its bytes come from a row of the roofline CSV, marker, colour)
    ("L1", lambda r: float(r["l1_bytes"]), "^", "#aa3377"),
    ("L2", lambda r: float(r["l2_bytes"]), "s", "#ccbb44"),
    ("DRAM", lambda r: float(r["dram_read_bytes"]) + float(r["dram_write_bytes"]), "o", "#4477aa"),
)
# Per precision: the x and y ranges, and where the label column stands (a factor right of the rightmost point).
AXES = {"fp32": dict(xlim=(0.02, 5e3), ylim=(0.2, 200)), "bf16": dict(xlim=(10, 3e4), ylim=(25, 2000))}


def l2_model(path=L2_PROFILE):
    """ncu's L2 peak in TB/s, per kernel of the profile table: L2 bytes / time / (L2 throughput % / 100)."""
    rows = {}
    for line in pathlib.Path(path).read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] in ("time (us)", "L2 throughput (%)", "L2 bytes (GB)"):
            rows[cells[0]] = [float(c) for c in cells[1:]]
    if len(rows) != 3:
        sys.exit(f"error: {path}: no time, L2 throughput and L2 bytes rows")
    return [gb * 1e9 / (us * 1e-6) / (pct / 100) / 1e12
            for us, pct, gb in zip(rows["time (us)"], rows["L2 throughput (%)"], rows["L2 bytes (GB)"])]


def smem_03():
    """Step 03's FLOP per shared-memory byte from its SASS counts (SMEM_03); checked against the dumped SASS
    when build/sass is there."""
    sass = ROOT / "build" / "sass" / "03_smem_tiling" / "sgemm_smem_tiling.sass"
    if sass.exists():
        import re
        text = sass.read_text()
        lds = len(re.findall(r"\bLDS\s", text)) + len(re.findall(r"\bLDS\.U?32\b", text))
        lds128 = len(re.findall(r"\bLDS\.128\b", text))
        if (lds, lds128) != (SMEM_03["lds"], SMEM_03["lds128"]):
            sys.exit(f"error: {sass}: {lds} LDS and {lds128} LDS.128, not the {SMEM_03} this figure states")
    flop = SMEM_03["ffma"] * 32 * 2
    return flop, SMEM_03["lds"] + SMEM_03["lds128"], flop / ((SMEM_03["lds"] + SMEM_03["lds128"]) * L1_BYTES_PER_CLOCK)


def default_bytes_csv(bench_csv):
    p = pathlib.Path(bench_csv)
    return p.parent / "profiles" / f"{p.stem}_roofline_4096.csv"


def stack(wanted, top, gap):
    """Label heights (log10) for points at log10 heights `wanted`, sorted from the highest down: each
    label as near its point as it can be, at most `top`, and at least `gap` below the one above."""
    out = []
    for w in wanted:
        out.append(min(w, top if not out else out[-1] - gap))
    return out


def load(bench_csv, bytes_csv):
    """{dtype: [(label, tflops, clock_mhz, {level: intensity})]} from the two CSVs."""
    dtype = {}
    with open(bench_csv) as f:
        for r in csv.DictReader(f):
            dtype.setdefault(r["step"], r["dtype"])
    if not dtype:
        sys.exit(f"error: {bench_csv}: no rows")
    out = {"fp32": [], "bf16": []}
    with open(bytes_csv) as f:
        for r in csv.DictReader(f):
            if r.get("error") or not r.get("time_us"):
                continue
            flop = 2.0 * int(r["m"]) * int(r["n"]) * int(r["k"])
            tflops = flop / (float(r["time_us"]) * 1e-6) / 1e12
            step = r["step"]
            if step.startswith("cublas_"):
                d, label = step.split("_", 1)[1], "cuBLAS"
            elif step in dtype:
                d, label = dtype[step], step
            else:
                continue
            if step == "00":  # cuBLAS run as step 00 of the fp32 ladder: the cublas_fp32 row is the same kernel
                continue
            xs = {name: flop / get(r) for name, get, _, _ in LEVELS if get(r) > 0}
            out[d].append((label, tflops, float(r["clock_mhz"]), xs, int(r["m"])))
    return out


def groups(rows, within=1.03, alone=("12", "13")):
    """Consecutive rows (sorted by height, highest first) within `within` of the group's top: one label each;
    a step in `alone` always gets its own label."""
    out = []
    for row in rows:
        if out and out[-1][0][1] <= row[1] * within and row[0] not in alone and out[-1][0][0] not in alone:
            out[-1].append(row)
        else:
            out.append([row])
    return out


def ids(labels, order):
    """"16, 17, 18, cuBLAS" -> "16–18, cuBLAS": runs of steps consecutive in `order` written as ranges."""
    steps = sorted((order.index(x) for x in labels if x in order))
    runs, out = [], []
    for i in steps:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    for run in runs:
        out += [order[i] for i in run] if len(run) < 3 else [f"{order[run[0]]}–{order[run[-1]]}"]
    return ", ".join(out + [x for x in labels if x not in order])


def draw(bench_csv, bytes_csv):
    """The roofline figure (a matplotlib Figure): fp32 on top, bf16 below."""
    data = load(bench_csv, bytes_csv)
    order = []  # the steps in the bench CSV's order, to write a run of consecutive ones as "16–23"
    with open(bench_csv) as f:
        for r in csv.DictReader(f):
            if r["step"] not in order:
                order.append(r["step"])
    size = next(r[4] for d in data.values() for r in d)
    fig, axes = plt.subplots(2, 1, figsize=(10, 13.5))
    fig.subplots_adjust(left=0.08, right=0.98, top=0.845, bottom=0.075, hspace=0.3)
    fontsize = 8
    handles = {}
    smem_note = ""
    l2s = l2_model()
    l2 = statistics.median(l2s)
    for ax, d in zip(axes, ("fp32", "bf16")):
        rows = sorted(data[d], key=lambda p: -p[1])
        xlim, ylim = AXES[d]["xlim"], AXES[d]["ylim"]
        xs = [xlim[0], xlim[1]]
        for name, tbps in DRAM_TBPS.items():
            handles[f"DRAM roof: {tbps} TB/s ({name})"], = ax.plot(
                xs, [x * tbps for x in xs], color="#4477aa", linestyle="-" if name == "datasheet" else ":", linewidth=1.2)
        handles[f"L1/shared roof: {L1_BYTES_PER_CLOCK} B per clock per SM x {SMS} SMs x 1.98 GHz = "
                f"{L1_TBPS:.1f} TB/s (arithmetic)"], = ax.plot(
            xs, [x * L1_TBPS for x in xs], color="#aa3377", linestyle="-.", linewidth=1.2)
        handles[f"L2 roof: ncu's model, {l2:.1f} TB/s (derived from an ncu profile, see below)"], = ax.plot(
            xs, [x * l2 for x in xs], color="#ccbb44", linestyle="--", linewidth=1.4)
        peak = FLOP_PER_CLOCK[d] * DATASHEET_GHZ[d] * 1e9 / 1e12
        ax.axhline(peak, color="black", linewidth=1.3)
        ax.text(xlim[0] * 1.15, peak * 1.06, f"{d} peak at {DATASHEET_GHZ[d]} GHz: {peak:.0f} TFLOP/s",
                fontsize=fontsize, va="bottom")
        mhz = statistics.median(c for _, _, c, _, _ in rows)
        roof = FLOP_PER_CLOCK[d] * mhz * 1e6 / 1e12
        if abs(roof / peak - 1) > 0.01:
            ax.axhline(roof, color="black", linestyle="--", linewidth=1.1)
            ax.text(xlim[1] / 1.15, peak * 1.06, f"dashed: at the launches' median clock, {mhz:.0f} MHz: {roof:.0f} TFLOP/s",
                    fontsize=fontsize, va="bottom", ha="right", fontstyle="italic")
        # One height per step, its points per level joined by a thin line.
        for label, tf, _, pts, _ in rows:
            on = [x for x in pts.values() if xlim[0] <= x <= xlim[1]]
            ax.plot([min(on), max(on)], [tf, tf], color="grey", linewidth=0.6, zorder=2)
            for name, _, marker, color in LEVELS:
                if name in pts and xlim[0] <= pts[name] <= xlim[1]:
                    ax.scatter([pts[name]], [tf], marker=marker, s=40, color=color, edgecolor="black",
                               linewidth=0.5, zorder=3)
        if d == "fp32":  # step 03 against shared memory, from its SASS (ncu's L1 bytes leave it out)
            r03 = next((r for r in rows if r[0] == "03"), None)
            if r03:
                flop, loads, x03 = smem_03()
                smem_note = (f"Step 03 at shared memory (open diamond), counted from its SASS, not by ncu: per warp "
                             f"and K tile, 32 FFMA = {flop} FLOP over {loads} warp-wide shared loads (32 LDS + 8 "
                             f"LDS.128) x {L1_BYTES_PER_CLOCK} B = {x03:.1f} FLOP per byte.")
                handles["step 03 at shared memory, from its SASS (not ncu; see below)"] = ax.scatter([x03], [r03[1]], marker="D", s=55, color="white",
                                               edgecolor="#aa3377", linewidth=1.6, zorder=4)
                ax.plot([x03, min(r03[3].values())], [r03[1]] * 2, color="#aa3377", linewidth=0.8, linestyle=":",
                        zorder=2)
                ax.annotate(f"03 at shared memory: {x03:.1f} FLOP/B\n(SASS count), under the L1/shared roof",
                            xy=(x03, r03[1]), xytext=(x03 * 0.9, r03[1] * 2.6), fontsize=fontsize, ha="right",
                            color="#aa3377", arrowprops=dict(arrowstyle="-", color="#aa3377", linewidth=0.6))
        # Labels in a column right of the rightmost point, stacked from the top; steps within 3 % of each
        # other's height share one label (steps 12 and 13 never do).
        ax_px = ax.get_position().height * fig.get_figheight() * fig.dpi
        gap = (fontsize * 1.4 / 72 * fig.dpi) / ax_px * math.log10(ylim[1] / ylim[0])
        right = max(max(v for v in pts.values() if v <= xlim[1]) for _, _, _, pts, _ in rows)
        lx = right * 2.5
        top = math.log10(min(peak, roof)) - gap
        gs = groups(rows)
        for g, ly in zip(gs, stack([math.log10(g[0][1]) for g in gs], top, gap)):
            fmt = (lambda t: f"{t:.0f}") if g[-1][1] >= 10 else (lambda t: f"{t:.1f}")
            text = ids(sorted(r[0] for r in g), order) + ": " + (fmt(g[0][1]) if len(g) == 1 else f"{fmt(g[-1][1])}–{fmt(g[0][1])}")
            for r in g:
                x_end = max(v for v in r[3].values() if v <= xlim[1])
                ax.annotate(text if r is g[0] else "", xy=(x_end, r[1]), xytext=(lx, 10 ** ly), fontsize=fontsize,
                            ha="left", va="center",
                            arrowprops=dict(arrowstyle="-", color="grey", linewidth=0.5, shrinkA=1.5, shrinkB=3,
                                            relpos=(0.0, 0.5)))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
        ax.set_xlabel(f"FLOP per byte through that level: 2·{size}³ FLOP over the bytes ncu counted in one GEMM",
                      fontsize=9)
        ax.set_ylabel("TFLOP/s of the profiled launch", fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
        ax.tick_params(labelsize=8)
    for name, _, marker, color in LEVELS:
        handles[f"a step at its FLOP per byte through {name}"] = axes[0].scatter(
            [], [], marker=marker, s=40, color=color, edgecolor="black", linewidth=0.5)
    keys = [k for k in handles if not k.startswith("a step")] + [k for k in handles if k.startswith("a step")]
    handles = {k: handles[k] for k in keys}
    fig.text(0.5, 0.012, f"L2 roof: L2 bytes / time / ncu's L2 throughput % for each kernel of "
             f"results/profiles/l2_multicast_8192.md gives {min(l2s):.1f}–{max(l2s):.1f} TB/s (median {l2:.1f}); "
             "ncu's model of the L2 peak, not a datasheet figure.\n" + smem_note, ha="center", va="bottom",
             fontsize=8, color="#444444")
    fig.legend(list(handles.values()), list(handles.keys()), loc="upper center", bbox_to_anchor=(0.53, 0.94),
               ncol=2, fontsize=8, frameon=False)
    axes[0].set_title("fp32 (steps 01–09b): 01 and 02 sit left of the L1 ridge, under the L1 roof; 03's limit, its\n"
                      "shared-memory loads (open diamond, from its SASS), sits left of it too; the later steps climb "
                      "to the compute roof", fontsize=10)
    axes[1].set_title("bf16 (steps 10–23): right of the DRAM ridge; against ncu's L2 model 11 sits left of the L2 "
                      "ridge, 12–13 near it.\n16–23 move no bytes through L1 (TMA loads and stores): no L1 point",
                      fontsize=10)
    fig.suptitle(f"The H200 roofline per memory level: each step's FLOP per byte through L1, L2 and DRAM "
                 f"(ncu, {size}³)", fontsize=12, y=0.985)
    return fig


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="a make bench CSV (results/nvidia_h200.csv): which steps are fp32 and bf16")
    ap.add_argument("--bytes", help="the ncu roofline CSV of profile.py --roofline "
                                    "(default: profiles/<csv name>_roofline_4096.csv beside the bench CSV)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "roofline.png"))
    args = ap.parse_args()
    bytes_csv = args.bytes or default_bytes_csv(args.csv)
    if not pathlib.Path(bytes_csv).exists():
        sys.exit(f"error: {bytes_csv}: no such file (scripts/gpu_session.sh roofline measures it; or pass --bytes)")
    fig = draw(args.csv, bytes_csv)
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110, bbox_inches="tight")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
