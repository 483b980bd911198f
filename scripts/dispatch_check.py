#!/usr/bin/env python3
"""How well step 29's model carries a measured ratio (family/dispatch.hpp's efficiency()), checked on
shapes the tuner never timed: for every shape of a `make bench-shapes` CSV where step 28 ran, the ratio
over cuBLAS that dispatch::carry predicts for step 28's hand rule (build/bin/dispatch_dump --explain,
carried from the four nearest rows of the generated table) against the one measured there. Shapes with
N % 8 != 0 are left out: the table has no row of their class, and cuBLAS slows down there (its rows of
C are not 16-byte aligned), so a ratio over cuBLAS means something else. No GPU.

  scripts/dispatch_check.py                      results/nvidia_h200_shapes.csv, 132 SMs
  scripts/dispatch_check.py --csv F --sms 132 --worst 10

The pick's regret (--regret TUNE_CSV): the CSV of `build/bin/tune` run with every entry at shapes the
tuner's grid never held (e.g. the random set's). For each shape, the ratio over cuBLAS that step 29's pick
(dispatch_dump --explain, the table of --gpu) measured in that run, against the best of every entry
timed there: how much the dispatch loses to a perfect pick from the same menu. The best of 29-35 noisy
ratios a shape is biased upwards (a paired ratio's interquartile range is typically 1.5-5 %), so a regret
near 0.97 is mostly noise; a pick that is not an entry (step 28's hand rule) counts with the hand step's row.

  scripts/dispatch_check.py --regret results/tuning/nvidia_h100_80gb_hbm3_random_every_entry.csv --gpu h100

Leave-one-out (--loo): each shape of the table picked from the other rows alone, against the best measured
there, per alignment class (dispatch_dump --loo): how the pick does one grid step from any measurement,
on far more shapes than the random set has. It chose dispatch::kNeighbours.

  scripts/dispatch_check.py --loo --gpu h100
  scripts/dispatch_check.py --loo --gpu h100 --k-min 65536   only the long-K grid's rows, beside the hand rule
"""
import argparse
import math
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import shape_sweep as sw  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", default=str(ROOT / "results" / "nvidia_h200_shapes.csv"))
    ap.add_argument("--tool", default=str(ROOT / "build" / "bin" / "dispatch_dump"), help="make build/bin/dispatch_dump")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--worst", type=int, default=5, help="list this many shapes the model misses most")
    ap.add_argument("--regret", metavar="TUNE_CSV", help="the pick against every entry timed in this tune CSV (above)")
    ap.add_argument("--gpu", choices=("h200", "h100"), default="h200", help="the table dispatch_dump reads")
    ap.add_argument("--loo", action="store_true", help="leave-one-out over the table (above)")
    ap.add_argument("--k-min", type=int, default=0, help="with --loo: score only the rows with K at least this "
                    "(65536: the long-K grid's, tune.py --grid long-k)")
    args = ap.parse_args()
    if args.k_min and not args.loo:
        sys.exit("error: --k-min is for --loo")
    if args.k_min < 0:
        sys.exit("error: --k-min must be 0 or more")
    if args.loo:
        return leave_one_out(args)
    if args.regret:
        return regret(args)
    measured = {}
    for r in sw.read_results(args.csv):
        cublas = r["refs"].get("cublas")
        if r["step"] == "28" and cublas and int(r["n"]) % 8 == 0:
            measured[(int(r["m"]), int(r["n"]), int(r["k"]))] = cublas
    if not measured:
        sys.exit(f"error: {args.csv}: no step 28 row with a cuBLAS ratio")
    shapes = sorted(measured)
    misses = []
    for line in explain(args, shapes):
        m, n, k, src, hand = line.split(",")[:5]
        shape = (int(m), int(n), int(k))
        # a shape the table holds is not a test of carrying: its own row speaks
        if src != "outside" and float(hand) > 0 and src != f"{m}x{n}x{k}":
            misses.append((math.log(float(hand) / measured[shape]), shape, src, float(hand), measured[shape]))
    if not misses:
        sys.exit("error: no shape of the CSV lies inside the table's reach and off its rows")

    def line_for(label, group):
        errs = sorted(abs(x[0]) for x in group)
        return (f"{label}: {len(group)} shapes, median miss {math.exp(errs[len(errs) // 2]) - 1:.1%}, geometric mean "
                f"carried/measured {math.exp(sum(x[0] for x in group) / len(group)):.3f}")

    print(f"step 28's ratio over cuBLAS, carried from the table against measured, on shapes with N % 8 == 0 that "
          f"are not rows of the table ({len(misses)} of {len(shapes)}; the rest are rows or lie outside its reach)")
    print("  " + line_for("all", misses))
    for label, aligned in (("K % 16 == 0", True), ("K % 16 == 8", False)):
        group = [x for x in misses if (x[1][2] % 16 == 0) == aligned]
        if group:
            print("  " + line_for(label, group))
    for e, shape, src, hand, meas in sorted(misses, key=lambda x: -abs(x[0]))[:args.worst]:
        print(f"  {'x'.join(map(str, shape))}: carried {hand:.3f} from {src}, measured {meas:.3f}")
    return 0


def explain(args, shapes):
    """dispatch_dump --explain's lines (no header) for `shapes` [(m, n, k)], with the table of --gpu."""
    if not pathlib.Path(args.tool).exists():
        sys.exit(f"error: {args.tool} is missing: make build/bin/dispatch_dump")
    cmd = [args.tool] + (["--h100"] if args.gpu == "h100" else []) + ["--explain", str(args.sms)]
    out = subprocess.run(cmd + [f"{m}:{n}:{k}" for m, n, k in shapes], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"error: {args.tool} --explain: {out.stderr.strip()}")
    return out.stdout.splitlines()[1:]


def leave_one_out(args):
    """dispatch_dump --loo's table, one line per alignment class."""
    if not pathlib.Path(args.tool).exists():
        sys.exit(f"error: {args.tool} is missing: make build/bin/dispatch_dump")
    cmd = [args.tool] + (["--h100"] if args.gpu == "h100" else []) + ["--loo", str(args.sms)] + (
        [str(args.k_min)] if args.k_min else [])
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"error: {args.tool} --loo: {out.stderr.strip().removeprefix('error: ')}")
    names = {0: "aligned", 1: "K % 16 == 8", 2: "N % 8 != 0", 4: "K % 64 != 0 (off the line)"}
    rows = f" with K >= {args.k_min}" if args.k_min else ""
    print(f"step 29's pick ({args.gpu}'s table) at each of its rows{rows} from the other rows alone, against the best measured there")
    for line in out.stdout.splitlines()[1:]:
        cls, shapes, regret_gm, below, pick_gm, best_gm, hand_gm = line.split(",")
        label = names.get(int(cls), f"class {cls}")
        print(f"  {label}: {shapes} shapes, regret (pick / best) {float(regret_gm):.3f}, below 0.95 on {below}; "
              f"the pick {float(pick_gm):.3f}x cuBLAS, the best {float(best_gm):.3f}x, the hand rule {float(hand_gm):.3f}x "
              f"(geometric means)")
    return 0


def regret(args):
    """The pick's measured ratio against the best entry's, per alignment class (see the module's docstring)."""
    import csv
    timed = {}
    try:
        with open(args.regret, newline="") as f:
            for r in csv.DictReader(f):
                if not {"m", "n", "k", "contender", "ratio_vs_cublas"} <= set(r):
                    sys.exit(f"error: {args.regret} is not build/bin/tune's CSV (no m, n, k, contender, ratio_vs_cublas)")
                if r["ratio_vs_cublas"] and not r.get("check", "").upper().startswith(("FAIL", "ERROR")):  # passed or unchecked
                    shape = (int(r["m"]), int(r["n"]), int(r["k"]))
                    timed.setdefault(shape, {})[r["contender"]] = float(r["ratio_vs_cublas"])
    except OSError as e:
        sys.exit(f"error: cannot read {args.regret}: {e.strerror}")
    shapes = sorted(s for s, by in timed.items() if any(not c.startswith("step") for c in by))
    if not shapes:
        sys.exit(f"error: {args.regret}: no shape with a timed menu entry")
    groups = {}
    for line in explain(args, shapes):
        f = line.split(",")
        shape, pick = (int(f[0]), int(f[1]), int(f[2])), f[5]
        by = timed[shape]
        best_name, best = max(((c, v) for c, v in by.items() if not c.startswith("step")), key=lambda cv: cv[1])
        hand = next((v for c, v in by.items() if c.startswith("step")), None)
        got = hand if pick == "hand" else by.get(pick)
        if got is None:
            print(f"  {'x'.join(map(str, shape))}: the pick {pick} was not timed there; left out")
            continue
        label = "N % 8 != 0" if shape[1] % 8 else "K % 16 == 8" if shape[2] % 16 == 8 else "K % 16 == 0"
        groups.setdefault(label, []).append((got / best, shape, pick, got, best_name, best))

    def gm(v):
        return math.exp(sum(math.log(x) for x in v) / len(v))
    print(f"step 29's pick ({args.gpu}'s table) against the best of every entry timed in {args.regret}, ratios over cuBLAS")
    for label, group in sorted(groups.items()):
        print(f"  {label}: {len(group)} shapes, the pick {gm([g[3] for g in group]):.3f}, the best entry "
              f"{gm([g[5] for g in group]):.3f}, regret (pick / best) {gm([g[0] for g in group]):.3f}, below 0.95 on "
              f"{sum(g[0] < 0.95 for g in group)}")
        for r, shape, pick, got, best_name, best in sorted(group)[:args.worst]:
            print(f"    {'x'.join(map(str, shape))}: {pick} {got:.3f}, {best_name} {best:.3f} ({r:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
