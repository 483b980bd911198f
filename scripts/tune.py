#!/usr/bin/env python3
"""`make tune` (issue 46): the family's menu (common/kernel_lib/family/menu.hpp) timed paired with cuBLAS
over a grid of shapes, in batches of shapes, one build/bin/tune process each, the rows appended to
results/tuning/<gpu>_bf16.csv. Step 28 (its hand rules; --hand-step) is timed beside the menu, the
baseline a measured dispatch must beat.

The grid: M log-spaced from 1 to 16384 (the decode batches 1-256 more densely), N from 256 and K from 1024 to
16384 in powers of four-ish, each shape once with K % 64 == 0 (aligned pitch), once with K + 8
(K % 16 == 8: rows that start inside a 32-byte sector; issue 46's misaligned class) and once with K + 32
(rows on a sector but half a 128-byte line off it, the middle of K % 64 = 16, 32, 48: most of a K tile's
rows span two lines; dispatch::alignment_class's bit 2). The third class came after the first two were
measured; resuming times only its shapes.

  scripts/tune.py --dry-run                 the grid, its batches and an estimate (no GPU)
  scripts/tune.py                           run it (GPU), resuming: shapes already in the CSV are skipped
  scripts/tune.py --grid smoke              six shapes, for a first look
  scripts/tune.py --grid long-k             the default grid's three alignment classes at K = 65536 (M of
                                            1, 16, 128, 512, 2048, N of 256, 1024, 4096): the table's reach
                                            in K, 4x past the default grid's longest K
  scripts/tune.py --grid draw [--draw-count N]  DRAW_COUNT (or N) shapes drawn as issue 46's random set is, from another
                                            seed (DRAW_SEED), never one of the random set's, and only of its
                                            aligned and K%16==8 classes: rows between the grid's points where
                                            the pick misses most, while the random set stays unseen by the table
  scripts/tune.py --max-minutes 9           stop starting batches after 9 minutes (a device call's limit)
  scripts/tune.py --entries pp128x128-c2x2-s6,pp128x160-c2x2-s5
                                            time only these entries (added to the menu after the grid was
                                            tuned): a shape is done when the CSV has a row of each
                                            (an entry that refuses a shape writes none, so such a
                                            shape is timed again on every resume)
  scripts/tune.py --entries awaiting-h200    the entries menu.hpp lists in kAwaitingTuneH200 (the H100's table
                                            has them, the H200's not: run it on an H200); `awaiting`:
                                            kAwaitingTune's (no table has them)
  scripts/tune.py --entries ... --m-max 2048 only the grid's shapes with M <= 2048 (entries meant for small and
                                            middle M; the rest of the table has no cell for them there,
                                            so the dispatch never picks them there)
"""
import argparse
import csv
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

M_GRID = [1, 8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192, 16384]
# N = 256: outputs a few tiles wide (the random set's worst shapes, N 300-800 with a long K, lay 4x
# under the grid's N = 1024 before it had this row).
NK_GRID = [(n, k) for n in (256, 1024, 4096, 8192, 16384) for k in (1024, 4096, 16384)]
# The draw grid: shape_sweep.random_shapes' distribution from its own seed, the validation set's shapes
# left out (the random set stays shapes that no row of the table measured). Its N % 8 != 0 class is left
# out too: dispatch::carry reads a query's own alignment class first, and a few dozen such rows spread
# over the whole space would stand nearer than the grid's rows of the aligned class it reads now.
DRAW_SEED = 4601
DRAW_COUNT = 128
MAX_DRAW_COUNT = 4096
# The long-K grid: K = 65536, four times the default grid's longest K and twice the draw's, out to where the
# table had no row and the dispatch fell back to the hand rule (family/dispatch.hpp's kReachAbove), while
# a cooperative entry splitting K ran 0.97x cuBLAS at 1024 x 1024 x 65536 against the hand rule's 0.75x
# (H100, results/tuning/nvidia_h100_80gb_hbm3_long_k.csv). M and N from the default grid, thinned: at a
# long K the split, not the tile, decides, and it changes with M * N.
LONG_K_M = [1, 16, 128, 512, 2048]
LONG_K_NK = [(n, 65536) for n in (256, 1024, 4096)]
SMOKE = [(4096, 4096, 4096), (4096, 4096, 4104), (128, 14336, 4096), (96, 4096, 4096), (8, 4096, 14336),
         (2048, 2048, 32768)]

# The estimate's assumptions (not measurements: each batch prints its real time).
PLAN_TFLOPS = 600.0   # assumed speed of every contender
PLAN_HBM_TBPS = 4.3   # device-to-device copy on the H200 (docs/machine.md)
PER_LAUNCH_S = 80e-6  # assumed: the L2 flush, the clock probe and the launch around every timed launch
PROCESS_S = 3.0       # assumed: context, handles, the menu's module load


def all_contenders():
    """The contenders of a run of every entry: cuBLAS, every entry of the menu (common/kernel_lib/family/menu.hpp, read by step_constants) and the hand rule's step."""
    from step_constants import menu_entries  # noqa: E402
    return len(menu_entries()) + 2


def grid(name, draw_count=DRAW_COUNT):
    """The shapes of grid `name`, (m, n, k), in run order (small M first; the draw grid in drawing order,
    so a larger draw_count extends a smaller one's list)."""
    if name == "smoke":
        return list(SMOKE)
    if name == "draw":
        from shape_sweep import RANDOM_SHAPES, random_shapes  # noqa: E402
        held_out = set(RANDOM_SHAPES)
        drawn = random_shapes(DRAW_SEED, 3 * (draw_count + len(held_out)))
        return [(m, n, k) for m, n, k, c in drawn if c != "N%8!=0" and (m, n, k) not in held_out][:draw_count]
    if name not in ("default", "long-k"):
        sys.exit(f"error: --grid {name}: the grids are default, long-k, draw and smoke")
    out = []
    for m in (M_GRID if name == "default" else LONG_K_M):
        for n, k in (NK_GRID if name == "default" else LONG_K_NK):
            out += [(m, n, k), (m, n, k + 8), (m, n, k + 32)]
    return out


def shape_seconds(m, n, k, rounds, contenders):
    """Estimated seconds of one shape in a tune process (every contender: a check and the paired rounds)."""
    kernel = max(2.0 * m * n * k / (PLAN_TFLOPS * 1e12), 2.0 * (m * k + n * k + m * n) / (PLAN_HBM_TBPS * 1e12))
    return contenders * (rounds + 3) * (kernel + PER_LAUNCH_S) + 12e-9 * m * n * contenders * (m * n <= 1 << 25)


def batches(shapes, rounds, target_s, contenders):
    """Consecutive shapes in batches of about target_s estimated seconds each."""
    out, cur, t = [], [], 0.0
    for s in shapes:
        cur.append(s)
        t += shape_seconds(*s, rounds, contenders)
        if t >= target_s:
            out.append(cur)
            cur, t = [], 0.0
    if cur:
        out.append(cur)
    return out


def done_shapes(path, entries=(), hand="step28"):
    """(m, n, k) of the shapes whose rows are already in the CSV (a shape's rows are written together,
    after its paired loop, so a shape there is complete): those with a row of the hand rule's step (a
    run of every entry), or with `entries`, those that have a row of each."""
    if not path.exists():
        return set()
    seen = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            seen.setdefault((int(r["m"]), int(r["n"]), int(r["k"])), set()).add(r["contender"])
    return {s for s, names in seen.items() if all(e in names for e in (entries or [hand]))}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--grid", default="default", help="default, long-k, draw or smoke")
    ap.add_argument("--draw-count", type=int, default=DRAW_COUNT, help="with --grid draw: its first this many shapes")
    ap.add_argument("--rounds", type=int, default=10, help="paired rounds per shape (3 or more)")
    ap.add_argument("--batch-s", type=float, default=60.0, help="estimated seconds of shapes per process")
    ap.add_argument("--max-minutes", type=float, default=0, help="start no batch after this many minutes (0: no limit)")
    ap.add_argument("--out", help="the CSV (default results/tuning/<gpu>_bf16.csv)")
    ap.add_argument("--hand-step", default="28", help="the registered bf16 step timed beside the menu")
    ap.add_argument("--entries", default="", help="time only these menu entries (comma list; the hand step is then "
                    "left out), or awaiting-h200 / awaiting: menu.hpp's lists of entries a table lacks")
    ap.add_argument("--m-max", type=int, default=0, help="only the grid's shapes with M at most this (0: all)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    args = ap.parse_args()
    if args.rounds < 3:
        sys.exit("error: --rounds must be 3 or more")
    if args.draw_count != DRAW_COUNT and args.grid != "draw":
        sys.exit("error: --draw-count is for --grid draw")
    if not 1 <= args.draw_count <= MAX_DRAW_COUNT:
        sys.exit(f"error: --draw-count must be 1 to {MAX_DRAW_COUNT} (at a few seconds a shape, more is days of GPU)")
    shapes = [s for s in grid(args.grid, args.draw_count) if not args.m_max or s[0] <= args.m_max]
    entries = [e for e in args.entries.split(",") if e]
    if len(entries) > 1 and {"awaiting", "awaiting-h200"} & set(entries):
        sys.exit("error: --entries awaiting or awaiting-h200 stands alone, not in a list of names")
    if entries in (["awaiting"], ["awaiting-h200"]):
        from step_constants import menu_awaiting  # noqa: E402
        entries = menu_awaiting("kAwaitingTune" if entries == ["awaiting"] else "kAwaitingTuneH200")
        if not entries:
            sys.exit(f"error: --entries {args.entries}: menu.hpp's list is empty (nothing awaits a tuning run)")
    contenders = len(entries) + 1 if entries else all_contenders()  # with --entries: cuBLAS and those
    if args.dry_run:
        plan = batches(shapes, args.rounds, args.batch_s, contenders)
        total = sum(shape_seconds(*s, args.rounds, contenders) for s in shapes) + PROCESS_S * len(plan)
        print(f"tune: {len(shapes)} shapes ({args.grid} grid) in {len(plan)} processes; estimated {total / 60:.1f} min "
              f"(assumed per-launch costs in scripts/tune.py, not a measurement)")
        for i, b in enumerate(plan):
            print(f"  batch {i + 1}: " + ", ".join(f"{m}x{n}x{k}" for m, n, k in b))
        return 0
    from bench import nvidia_smi, slug_of  # noqa: E402 (the GPU's name, as bench.py spells its files)
    binary = pathlib.Path(args.build) / "bin" / "tune"
    if not binary.exists():
        sys.exit(f"error: {binary} is not built (make {binary})")
    gpu = nvidia_smi("name")
    if gpu == "unknown":
        sys.exit("error: tune: nvidia-smi finds no GPU (make tune times kernels on one)")
    out = pathlib.Path(args.out) if args.out else ROOT / "results" / "tuning" / f"{slug_of(gpu)}_bf16.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    done = done_shapes(out, entries, "step" + args.hand_step)
    todo = [s for s in shapes if s not in done]
    print(f"tune: {len(shapes) - len(todo)} of {len(shapes)} shapes already in {out}; {len(todo)} to run", flush=True)
    start = time.monotonic()
    failed = 0
    for b in batches(todo, args.rounds, args.batch_s, contenders):
        if args.max_minutes and time.monotonic() - start > 60 * args.max_minutes:
            print(f"tune: stopping after {args.max_minutes} minutes; run again to go on (shapes done are kept)")
            break
        t0 = time.monotonic()
        cmd = [str(binary), "--shapes", ",".join(f"{m}x{n}x{k}" for m, n, k in b), "--csv", str(out),
               "--rounds", str(args.rounds), "--hand-step", "" if entries else args.hand_step]
        if entries:
            cmd += ["--entries", ",".join(entries)]
        print("$", " ".join(cmd), flush=True)
        # A hung kernel must not hold the GPU past the device call: each batch gets ten times its estimate
        # (and at least two minutes); its finished shapes are already in the CSV.
        limit = max(120.0, 10 * sum(shape_seconds(*s, args.rounds, contenders) for s in b) + PROCESS_S)
        try:
            rc = subprocess.run(cmd, timeout=limit).returncode
        except subprocess.TimeoutExpired:
            print(f"tune: batch stopped after {limit:.0f} s (a hang?); its finished shapes are kept", flush=True)
            rc = 124
        print(f"tune: batch of {len(b)} shapes: exit {rc} in {time.monotonic() - t0:.0f} s", flush=True)
        if rc == 2:
            return 2
        failed += rc != 0
    print(f"tune: done; {failed} batches with an entry that computed a wrong C, threw or hung" if failed else "tune: done")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
