#!/usr/bin/env python3
"""How well step 29's model carries a measured ratio (family/dispatch.hpp's efficiency()), checked on
shapes the tuner never timed: for every shape of a `make bench-shapes` CSV where step 28 ran, the ratio
over cuBLAS that dispatch::carry predicts for step 28's hand rule (build/bin/dispatch_dump --explain,
carried from the nearest row of the generated table) against the one measured there. Shapes with
N % 8 != 0 are left out: the table has no row of their class, and cuBLAS slows down there (its rows of
C are not 16-byte aligned), so a ratio over cuBLAS means something else. No GPU.

  scripts/dispatch_check.py                      results/nvidia_h200_shapes.csv, 132 SMs
  scripts/dispatch_check.py --csv F --sms 132 --worst 10
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
    args = ap.parse_args()
    if not pathlib.Path(args.tool).exists():
        sys.exit(f"error: {args.tool} is missing: make build/bin/dispatch_dump")
    measured = {}
    for r in sw.read_results(args.csv):
        cublas = r["refs"].get("cublas")
        if r["step"] == "28" and cublas and int(r["n"]) % 8 == 0:
            measured[(int(r["m"]), int(r["n"]), int(r["k"]))] = cublas
    if not measured:
        sys.exit(f"error: {args.csv}: no step 28 row with a cuBLAS ratio")
    shapes = sorted(measured)
    out = subprocess.run([args.tool, "--explain", str(args.sms)] + [f"{m}:{n}:{k}" for m, n, k in shapes],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"error: {args.tool} --explain: {out.stderr.strip()}")
    misses = []
    for line in out.stdout.splitlines()[1:]:
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


if __name__ == "__main__":
    sys.exit(main())
