#!/usr/bin/env python3
"""Prints the shapes sweep of a results/<gpu>_shapes.csv (`make bench-shapes`, any subset of its steps
and shapes) as Markdown: one summary line per step (geometric mean of its ratio to the best reference
over the shapes it ran, and its worst five shapes with their spread and clock), then one table row
per step and shape: its TFLOP/s, which reference was the best in its process (the fastest of cuBLAS,
cuBLASLt's best of 8 and the CUTLASS configurations), the paired ratio to it (median of the per-round
ratios [interquartile range]), the ratio to cuBLAS, and the SM clock of the step and of that reference.
Rows of the random set (family "random": issue 46's shapes drawn from a committed seed, see
shape_sweep.random_shapes) are kept apart: per step and per class of alignment, the number of shapes,
the geometric mean, the share at or above 0.95x and the worst five, then a table of their own; the
sweep's summary and table are over the other rows only. A held-out draw (family "random-S": the same
generator from seed S, bench.py --shapes --random-seed S) gets the same, apart, after seed 46's and
named by its seed; of the chapter blocks below, the classes table (--steps) adds each held-out draw's
classes after seed 46's, the others read seed 46's set only.
With --full FILE, writes it between <!-- shapes:begin --> and <!-- shapes:end --> of FILE
(docs/results.md); `make results-tables` does so when the CSV exists.

Four chapter blocks, each between `<!-- NAME:table -->` and `<!-- /NAME -->` of --book (--check: exit 1
when the block is not what the CSV says, writing nothing):
  --book F --block NAME --steps 29,28
      classes_table(): per step, the geometric mean over the sweep and over each class of the random set.
  --book F --block NAME --pair PARENT,STEP --shapes M:N:K,...
      pair_table(): a step against its parent at chosen shapes, one row a shape:
      | shape | step P | step S | time S / P | step P × best [IQR] | step S × best [IQR] |
      where a step's cell is its median time and SM clock (each step ran in its own processes, on its own
      day: the times are not paired), time S / P the quotient of the two medians, and × best the
      step's paired ratio to the best reference of its own process [interquartile range], as in the
      table above. Every number is a measurement of the CSV; an unknown step or a shape a step did not
      run is refused.
  --book F --block NAME --pickers STEP,HAND
      pickers_table(): how close each way of picking a kernel comes to the best reference on the random
      set's two classes with N % 8 == 0 (the references' rows of STEP's processes, and STEP's and HAND's
      own ratios): one fixed CUTLASS kernel, cuBLAS (its heuristic's choice), cuBLASLt's best of its
      heuristic's first eight, the hand rules of HAND and the measured pick of STEP.
  --book F --block NAME --decode STEP
      decode_table(): issue 46's decode bar, M <= 16 (the sweep's and the random set's shapes): where
      STEP moves the same bytes as cuBLAS, its fraction of the HBM roofline is cuBLAS's times its paired
      ratio to cuBLAS, so the bar is that ratio >= 1. A summary line, then the five lowest shapes with
      the bytes' rate of each (2 (MK + NK + MN) bytes over the median time)."""
import argparse
import csv
import pathlib
import sys

import results_table
import shape_sweep as sw

BEGIN, END = "<!-- shapes:begin -->", "<!-- shapes:end -->"
FIGURE = "img/shapes.png"


def fmt(v, spec="{:.3f}"):
    return spec.format(v) if v is not None else ""


def ratio_cell(r):
    if r["ratio"] is None:
        return ""
    iqr = f" [{fmt(r['q25'])}–{fmt(r['q75'])}]" if r["q25"] is not None and r["q75"] is not None else ""
    return f"{r['ratio']:.3f}{iqr}"


FLOOR = 0.95  # issue 30's floor: every shape at least 0.95x the best reference


def worst_five(ok):
    """The five smallest ratios, each with its IQR, the step's clock and the reference it lost to."""
    return "; ".join(f"{sw.label(r['m'], r['n'], r['k'])} {ratio_cell(r)} at {fmt(r['clock'], '{:.0f}')} MHz "
                     f"(against {r['best']})" for r in sorted(ok, key=lambda r: r["ratio"])[:5])


def not_timed(untimed):
    return ", ".join(f"{sw.label(r['m'], r['n'], r['k'])} ({r['status']})" for r in untimed)


def summary(sid, name, mine):
    ok = [r for r in mine if r["ratio"] is not None]
    untimed = [r for r in mine if r["ratio"] is None]
    head = f"**step {sid} {name}**: "
    if not ok:
        return head + f"no shape timed ({len(untimed)} not timed)."
    gm = sw.geomean([r["ratio"] for r in ok])
    if gm is None:
        return head + f"no positive ratio to the best reference ({len(ok)} shapes; a damaged file?)."
    at_floor = sum(r["ratio"] >= FLOOR for r in ok)
    text = (head + f"geometric mean {gm:.3f}× the best reference over {len(ok)} shapes; at or above {FLOOR}× on "
            f"{at_floor} of {len(ok)}")
    if untimed:
        text += "; not timed: " + not_timed(untimed)
    return text + ". Worst five: " + worst_five(ok) + "."


def class_of(r):
    return sw.random_class(r["m"], r["n"], r["k"]) or "no class"


def random_summary(sid, name, mine, seed=sw.RANDOM_SEED):
    """Step `sid`'s lines for the random draw from `seed` (issue 46's set, or a held-out draw): a head, then
    one list item per class of alignment (number of shapes, geometric mean, share at or above the floor,
    the shapes not timed, the worst five)."""
    what = "the random set" if seed == sw.RANDOM_SEED else f"the held-out draw from seed {seed}"
    tuned = ("no rule of steps 24–29 was tuned on them; step 39's was chosen on their K%16==8 class"
             if seed == sw.RANDOM_SEED else "no rule was tuned on them")
    lines = [f"**step {sid} {name}, {what}** ({len(mine)} shapes, drawn at random: {tuned}):", ""]
    for cls in [c for c in (*sw.RANDOM_CLASSES, "no class") if any(class_of(r) == c for r in mine)]:
        group = [r for r in mine if class_of(r) == cls]
        ok = [r for r in group if r["ratio"] is not None]
        untimed = [r for r in group if r["ratio"] is None]
        gm = sw.geomean([r["ratio"] for r in ok])
        text = f"- {cls} ({sw.RANDOM_CLASS_MEANING.get(cls, 'in none of the classes')}): {len(group)} shapes, "
        if gm is None:
            text += "no shape timed"
        else:
            at_floor = sum(r["ratio"] >= FLOOR for r in ok)
            text += (f"geometric mean {gm:.3f}× the best reference over {len(ok)} timed; at or above {FLOOR}× on "
                     f"{at_floor} of {len(ok)} ({100 * at_floor / len(ok):.0f}%)")
        if untimed:
            text += "; not timed: " + not_timed(untimed)
        lines.append(text + (". Worst five: " + worst_five(ok) + "." if gm is not None else "."))
    return lines


def random_note(rand, seed=sw.RANDOM_SEED):
    """What the random rows of one draw are (issue 46's set, or a held-out draw from another seed), and
    how many of them are that seed's draw."""
    drawn = {s[:3] for s in sw.random_shapes(seed)}
    shapes = {(r["m"], r["n"], r["k"]) for r in rand}
    stray = len(shapes - drawn)
    what = ("The random set (issue 46): shapes no rule of steps 24–29 was tuned on (step 39's rule was chosen "
            "on its K%16==8 class; a held-out draw, --random-seed, is the check for it)" if seed == sw.RANDOM_SEED else
            f"A held-out draw (family {sw.random_family(seed)}, reported apart from seed {sw.RANDOM_SEED}'s set, "
            f"whose shapes have since chosen rules): the same generator's shapes")
    return (f"{what}, drawn from seed {seed} "
            f"(`shape_sweep.random_shapes`: M log-uniform {sw.RANDOM_M[0]}–{sw.RANDOM_M[1]}, N and K log-uniform "
            f"{sw.RANDOM_NK[0]}–{sw.RANDOM_NK[1]}, K % 8 == 0), a third in each class: "
            + "; ".join(f"{c}: {sw.RANDOM_CLASS_MEANING[c]}" for c in sw.RANDOM_CLASSES)
            + f". This file holds {len(shapes)} of its {len(drawn)} shapes"
            + (f", and {stray} random shapes that are not in that draw (another seed's?)" if stray else "") + ".")


def row_cells(r):
    check = "pass" if r["status"] == "ok" else r["status"]
    if r.get("untimed_refs"):
        check += f" ({', '.join(r['untimed_refs'])}: another C than cuBLAS's, not timed)"
    clocks = f"{fmt(r['clock'], '{:.0f}')} / {fmt(r['best_clock'], '{:.0f}')}" if r["ratio"] is not None else ""
    return (f"{sw.label(r['m'], r['n'], r['k'])} | {fmt(r['tflops'], '{:.1f}')} | {r['best']} | {ratio_cell(r)} | "
            f"{fmt(r['refs'].get('cublas'))} | {clocks} | {check} |")


def table(csv_path, figure=False):
    if sw.pending_commit(csv_path):
        sys.exit(f"error: a benchmark was killed while committing into {pathlib.Path(csv_path).parent}: run "
                 f"`python3 scripts/results_io.py --recover {pathlib.Path(csv_path).parent}` first")
    try:
        res = sw.read_results(csv_path)
        with open(csv_path) as f:
            first = next((r for r in csv.DictReader(f) if r.get("tflops")), None)
    except OSError as e:
        sys.exit(f"error: cannot read {csv_path}: {e.strerror}")
    if not res:
        sys.exit(f"error: {csv_path}: no step rows in the paired format (scripts/bench.py --shapes writes it)")
    lines = []
    if first:
        lines.append(
            f"GPU: {first.get('gpu', '?')} ({first.get('sm_count', '?')} SMs, clocks left as found), CUDA runtime "
            f"{first.get('runtime', '?')}, cuBLAS {first.get('cublas', '?')}; measured {dates(csv_path)} "
            f"([`{pathlib.Path(csv_path).name}`](../results/{pathlib.Path(csv_path).name})). bf16, C = A·Bᵀ. Each step "
            f"runs in its own process per shape, alternating launch by launch with cuBLAS, cuBLASLt's best of 8 and "
            f"the CUTLASS configurations (L2 flushed before every launch; {rounds(csv_path)} rounds{' (the fewer at 1 TFLOP or more a GEMM)' if '–' in rounds(csv_path) else ''}). "
            f"× best: the paired ratio to the fastest reference of that process (above 1: the step is "
            f"faster), median of the per-round ratios [interquartile range]. SM MHz: the probe beside the launches.")
    else:
        lines.append(f"No shape of {pathlib.Path(csv_path).name} was timed.")
    # The sweep (and any other shape) apart from the random draws: its summary is over its own shapes
    # only. Each draw apart: seed 46's set first, then the held-out draws by seed.
    swept = [r for r in res if not sw.is_random_family(r["family"])]
    draws = {}  # seed: its rows
    for fam in sorted({r["family"] for r in res if sw.is_random_family(r["family"])}, key=sw.random_family_key):
        draws[sw.random_seed_of(fam)] = [r for r in res if r["family"] == fam]
    steps = sorted({r["step"] for r in res}, key=sw.step_key)
    lines.append("")
    for sid in steps:
        mine = [r for r in swept if r["step"] == sid]
        if mine:
            lines += [summary(sid, mine[0]["name"], mine), ""]
    for seed, rand in draws.items():
        lines += [random_note(rand, seed), ""]
        for sid in steps:
            mine = [r for r in rand if r["step"] == sid]
            if mine:
                lines += random_summary(sid, mine[0]["name"], mine, seed) + [""]
    if figure:
        lines += [f"![each step's ratio to the best reference over the shapes sweep]({FIGURE})", ""]
    if swept:
        lines += ["| step | family | M×N×K | TFLOP/s | best reference | × best [IQR] | × cuBLAS | SM MHz step / ref | check |",
                  "|---|---|---|---:|---|---:|---:|---:|---|"]
        lines += [f"| {r['step']} | {r['family']} | {row_cells(r)}"
                  for r in sorted(swept, key=lambda r: (sw.step_key(r["step"]), sw.shape_key(r)))]
    for i, (seed, rand) in enumerate(draws.items()):
        what = "The random set" if seed == sw.RANDOM_SEED else f"The held-out draw from seed {seed}"
        lines += ([""] if swept or i else []) + [
            f"{what}, shape by shape:", "",
            "| step | class | M×N×K | TFLOP/s | best reference | × best [IQR] | × cuBLAS | SM MHz step / ref | check |",
            "|---|---|---|---:|---|---:|---:|---:|---|"]
        lines += [f"| {r['step']} | {class_of(r)} | {row_cells(r)}"
                  for r in sorted(rand, key=lambda r: (sw.step_key(r["step"]), sw.shape_key(r)))]
    return "\n".join(lines)


def rounds(csv_path):
    with open(csv_path) as f:
        rs = sorted({int(r["rounds"]) for r in csv.DictReader(f) if (r.get("rounds") or "").isdigit()})
    return "?" if not rs else str(rs[0]) if len(rs) == 1 else f"{rs[0]}–{rs[-1]}"


def dates(csv_path):
    with open(csv_path) as f:
        ds = sorted({r["date"] for r in csv.DictReader(f) if r.get("date")})
    return "?" if not ds else ds[0] if len(ds) == 1 else f"{ds[0]} to {ds[-1]}"



def results_of(csv_path, steps):
    """The CSV's results (shape_sweep.read_results); exits with one line naming the steps of `steps`
    that have no rows in it."""
    res = sw.read_results(csv_path)
    missing = [sid for sid in steps if not any(r["step"] == sid for r in res)]
    if missing:
        sys.exit(f"error: {csv_path}: no rows of step {', '.join(missing)}")
    return res


def classes_table(csv_path, steps):
    """A Markdown table, one column per step of `steps` (ids, in order): over the sweep, the geometric mean
    of its ratio to the best reference with the number of shapes at or above FLOOR, and over each class of
    the random set, the geometric mean, then the same for each held-out draw the CSV holds (family
    "random-S", named by its seed); "–" where the step ran none of those shapes."""
    res = results_of(csv_path, steps)

    def cell(group, with_floor):
        ok = [r["ratio"] for r in group if r["ratio"] is not None]
        gm = sw.geomean(ok)
        if gm is None:
            return "–"
        return f"{gm:.3f}× ({sum(x >= FLOOR for x in ok)})" if with_floor else f"{gm:.3f}×"

    swept = [r for r in res if not sw.is_random_family(r["family"])]
    n_swept = len({(r["m"], r["n"], r["k"]) for r in swept})
    lines = ["| against the best reference | " + " | ".join(f"step {sid}" for sid in steps) + " |",
             "|---|" + "---:|" * len(steps),
             f"| the sweep, {n_swept} shapes: geometric mean (at or above {FLOOR}×) | "
             + " | ".join(cell([r for r in swept if r["step"] == sid], True) for sid in steps) + " |"]
    # Seed 46's set, then each held-out draw the CSV holds (by seed), its rows named by their seed.
    for family in sorted({r["family"] for r in res if sw.is_random_family(r["family"])}, key=sw.random_family_key):
        seed = sw.random_seed_of(family)
        what = "random" if seed == sw.RANDOM_SEED else f"held-out draw (seed {seed})"
        for cls in sw.RANDOM_CLASSES:
            group = [r for r in res if r["family"] == family and class_of(r) == cls]
            if group:
                n = len({(r["m"], r["n"], r["k"]) for r in group})
                label = {"K%16==8": "K % 16 == 8", "N%8!=0": "N % 8 != 0"}.get(cls, cls)
                lines.append(f"| {what}, {label}, {n} shapes | "
                             + " | ".join(cell([r for r in group if r["step"] == sid], False) for sid in steps) + " |")
    return "\n".join(lines) + "\n"


def pickers_table(csv_path, step, hand):
    """A Markdown table: for each way of picking a kernel, the geometric mean over each class of the random
    set with N % 8 == 0 of t_best / t_picked, where t_best is the faster of cuBLAS and cuBLASLt's best of
    eight in the same process (each timed paired with `step`: a ratio of two of its paired ratios), and
    for cuBLASLt how often its heuristic's first choice (detail "lt#1") was the fastest of the eight. Only
    shapes where both references were timed count. The hand-rule and measured steps' cells are their own
    paired ratios to that best. Exits with one line when the CSV has no random rows of `step` or `hand`."""
    rows = sw.read_rows(csv_path, ("family", "detail", "tflops", "step_ratio"))
    num = sw._num
    by_shape = {}
    for r in rows:
        if r["family"] != sw.RANDOM_FAMILY or r["step"] not in (step, hand):
            continue
        by_shape.setdefault((r["step"], r["m"], r["n"], r["k"]), {})[r["kernel"]] = r
    for sid in (step, hand):
        if not any(key[0] == sid for key in by_shape):
            sys.exit(f"error: {csv_path}: no random-set rows of step {sid}")
    def best_of(kern):
        """t_best / t_step of one process: the smaller of cuBLAS's and cuBLASLt best-of-8's paired ratios,
        None unless both were timed and the step ran."""
        refs = [num(kern[name]["step_ratio"]) for name in ("cublas", "cublaslt_best") if name in kern]
        if len(refs) != 2 or None in refs or "step" not in kern or num(kern["step"]["tflops"]) is None:
            return None
        return min(refs)

    lines = [f"| who picks, and how | {' | '.join(RANDOM_LABEL[c] + ' (' + '{n_' + c + '}' + ')' for c in PICK_CLASSES)} |",
             "|---|" + "---:|" * len(PICK_CLASSES)]
    cells = {name: [] for name in PICKERS}
    counts = {}
    for cls in PICK_CLASSES:
        got = {name: [] for name in PICKERS}
        first_best = shapes = 0
        for (sid, m, n, k), kern in sorted(by_shape.items()):
            if sid != step or sw.random_class(m, n, k) != cls:
                continue
            best = best_of(kern)
            if best is None:
                continue
            shapes += 1
            first_best += kern["cublaslt_best"]["detail"].startswith("lt#1 ")
            for ref in ("cublas", "cublaslt_best"):
                got[ref].append(best / num(kern[ref]["step_ratio"]))
            for ref in ("cutlass_coop_128x256x64_c2x1", "cutlass_pingpong_128x128x64_c1x1"):
                if ref in kern and num(kern[ref]["step_ratio"]) is not None:
                    got[ref].append(best / num(kern[ref]["step_ratio"]))
            got["step"].append(best)
            hand_best = best_of(by_shape.get((hand, m, n, k), {}))
            if hand_best is not None:
                got["hand"].append(hand_best)
        counts[cls] = shapes
        for name in PICKERS:
            gm = sw.geomean(got[name])
            cell = "–" if gm is None else f"{gm:.3f}×"
            if name == "cublaslt_best" and shapes:
                cell += f" (its first choice the fastest on {first_best} of {shapes})"
            if gm is not None and len(got[name]) != shapes:
                cell += f" ({len(got[name])} shapes)"
            cells[name].append(cell)
    lines[0] = lines[0].format(**{"n_" + c: counts[c] for c in PICK_CLASSES})
    for name, label in PICKERS.items():
        label = label.format(step=step, hand=hand)
        lines.append(f"| {label} | " + " | ".join(cells[name]) + " |")
    return "\n".join(lines) + "\n"


DECODE_M_MAX = 16  # issue 46: "M <= 16: at least cuBLAS's fraction of the HBM roofline on each such shape"


def decode_table(csv_path, step, m_max=DECODE_M_MAX, worst=5):
    """Markdown: for `step`'s shapes with M <= m_max in the CSV (every family but a held-out draw's), how
    many ran at or above cuBLAS (the paired ratio, t_cuBLAS / t_step, at least 1) and the geometric mean of
    that ratio, then the `worst` lowest with the rate at which each moved its bytes (2 (MK + NK + MN), bf16
    A, B and C, over the median time of the step and of cuBLAS in the same process), the ratio [quartiles]
    and the step's SM clock. Exits with one line when the CSV has no such shape of `step`."""
    num = sw._num
    shapes = {}
    for r in sw.read_rows(csv_path, ("ms", "step_ratio", "step_ratio_q25", "step_ratio_q75", "clock_mhz")):
        held_out = sw.random_seed_of(r.get("family")) not in (None, sw.RANDOM_SEED)  # reported apart, not the bar's
        if r["step"] == step and r["m"] <= m_max and not held_out:
            shapes.setdefault((r["m"], r["n"], r["k"]), {})[r["kernel"]] = r
    got = []
    for (m, n, k), kern in sorted(shapes.items()):
        me, cb = kern.get("step"), kern.get("cublas")
        if not me or not cb or num(me["ms"]) is None or num(cb["ms"]) is None or num(cb["step_ratio"]) is None:
            continue
        gbytes = 2.0 * (m * k + n * k + m * n) / 1e9
        got.append((num(cb["step_ratio"]), (m, n, k), gbytes / num(me["ms"]), gbytes / num(cb["ms"]),
                    num(cb["step_ratio_q25"]), num(cb["step_ratio_q75"]), me.get("clock_mhz", "")))
    if not got:
        sys.exit(f"error: {csv_path}: no shape of step {step} with M <= {m_max} and a cuBLAS row")
    parts = []
    for label, group in (("N % 8 == 0", [g for g in got if g[1][1] % 8 == 0]),
                         ("N % 8 != 0 (where cuBLAS's C rows are not 16-byte aligned)", [g for g in got if g[1][1] % 8])):
        if group:
            parts.append(f"{sum(g[0] >= 1.0 for g in group)} of {len(group)} shapes with {label}, geometric mean "
                         f"{sw.geomean([g[0] for g in group]):.3f}×")
    lines = [f"Step {step} at M ≤ {m_max}, at or above cuBLAS: " + "; ".join(parts) + "."
             f" The {min(worst, len(got))} lowest:", "",
             "| M×N×K | step TB/s | cuBLAS TB/s | × cuBLAS [IQR] | SM MHz |", "|---|---:|---:|---:|---:|"]
    for ratio, (m, n, k), mine, theirs, q25, q75, mhz in sorted(got)[:worst]:
        lines.append(f"| {m}×{n}×{k} | {mine:.2f} | {theirs:.2f} | {ratio:.3f} [{fmt(q25)}–{fmt(q75)}] | {mhz} |")
    return "\n".join(lines) + "\n"


# pickers_table()'s rows: the random set's classes whose references all run (N % 8 == 0) and the pickers.
PICK_CLASSES = ("aligned", "K%16==8")
RANDOM_LABEL = {"aligned": "aligned", "K%16==8": "K % 16 == 8", "N%8!=0": "N % 8 != 0"}
PICKERS = {
    "cutlass_pingpong_128x128x64_c1x1": "one kernel for every shape: CUTLASS ping-pong 128 × 128",
    "cutlass_coop_128x256x64_c2x1": "one kernel for every shape: CUTLASS cooperative 128 × 256, 2 × 1 cluster",
    "hand": "hand rules on a small menu: step {hand}",
    "cublas": "a model of the GPU, nothing timed: cuBLAS (its heuristic's choice)",
    "cublaslt_best": "the heuristic's first eight, each timed on the shape: cuBLASLt best-of-8",
    "step": "a grid of shapes timed once, four nearest rows: step {step}",
}


def parse_shapes(text):
    """"256:4096:4096,1:4096:14336" (or 256x4096x4096) -> [(256, 4096, 4096), (1, 4096, 14336)]."""
    out = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        parts = item.replace("x", ":").split(":")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            sys.exit(f"error: --shapes: {item!r} is not M:N:K")
        out.append(tuple(int(p) for p in parts))
    if not out:
        sys.exit("error: --shapes: no shape")
    return out


def pair_table(csv_path, parent, step, shapes):
    """A Markdown table of step `step` against `parent` at `shapes` [(M, N, K)], one row a shape, from
    the CSV's rows alone (see the module's docstring). Exits with one line for a step with no rows or a
    shape that a step did not run."""
    res = results_of(csv_path, (parent, step))
    by = {(r["step"], r["m"], r["n"], r["k"]): r for r in res}

    def timed(sid, shp):
        r = by.get((sid, *shp))
        if r is None:
            sys.exit(f"error: {csv_path}: step {sid} has no row at {sw.label(*shp)}")
        return r

    def cell(r):
        if r["ms"] is None or r["status"] != "ok":
            return f"not timed ({r['status']})"
        return f"{r['ms'] * 1e3:.1f} µs at {fmt(r['clock'], '{:.0f}')} MHz"

    lines = [f"| shape | step {parent} | step {step} | time {step} / {parent} | step {parent} × best [IQR] | "
             f"step {step} × best [IQR] |", "|---|---:|---:|---:|---:|---:|"]
    for shp in shapes:
        a, b = timed(parent, shp), timed(step, shp)
        quot = f"{b['ms'] / a['ms']:.2f}" if a["ms"] and b["ms"] and "not" not in cell(a) + cell(b) else ""
        lines.append(f"| {sw.book_label(*shp)} | {cell(a)} | {cell(b)} | {quot} | {ratio_cell(a)} | {ratio_cell(b)} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--full", help="write the table between the shapes markers of this file (docs/results.md)")
    ap.add_argument("--book", help="write classes_table() of --steps into this chapter's block --block")
    ap.add_argument("--block", default="shapes", help="the block's name: <!-- NAME:table --> ... <!-- /NAME -->")
    ap.add_argument("--steps", help="the steps of the --book table, comma-separated (e.g. 29,28)")
    ap.add_argument("--pair", help="PARENT,STEP: the --book block is pair_table() of the two steps at --shapes")
    ap.add_argument("--shapes", help="with --pair: the shapes, M:N:K comma-separated (e.g. 256:4096:4096,5000:5000:5000)")
    ap.add_argument("--decode", help="STEP: the --book block is decode_table() of the step's shapes with M <= 16")
    ap.add_argument("--pickers", help="STEP,HAND: the --book block is pickers_table() of the two steps' random-set rows")
    ap.add_argument("--check", action="store_true", help="with --book: exit 1 when the block is not current")
    args = ap.parse_args()
    if sum(bool(x) for x in (args.decode, args.pickers, args.pair, args.steps and args.book)) > 1:
        sys.exit("error: --decode, --pickers, --pair and --steps each write one block: give one of them")
    if (args.decode or args.pickers) and (not args.book or args.block == "shapes"):
        sys.exit("error: --decode and --pickers need --book FILE and --block NAME (the chapter's block)")
    if args.decode:
        body = decode_table(args.csv, args.decode)
        command = f"python3 scripts/shapes_table.py {args.csv} --book {args.book} --block {args.block} --decode {args.decode}"
        sys.exit(results_table.rewrite_block(args.book, args.block, body, args.check, command))
    if args.pickers:
        pair = args.pickers.split(",")
        if len(pair) != 2 or not all(pair) or pair[0] == pair[1]:
            sys.exit(f"error: --pickers {args.pickers}: give two different step ids, STEP,HAND (e.g. 29,28)")
        body = pickers_table(args.csv, pair[0], pair[1])
        command = f"python3 scripts/shapes_table.py {args.csv} --book {args.book} --block {args.block} --pickers {args.pickers}"
        sys.exit(results_table.rewrite_block(args.book, args.block, body, args.check, command))
    if args.pair:
        pair = args.pair.split(",")
        if not args.book or not args.shapes or len(pair) != 2 or not all(pair):
            sys.exit("error: --pair PARENT,STEP needs --book, --block and --shapes M:N:K,...")
        body = pair_table(args.csv, pair[0], pair[1], parse_shapes(args.shapes))
        command = (f"python3 scripts/shapes_table.py {args.csv} --book {args.book} --block {args.block} "
                   f"--pair {args.pair} --shapes {args.shapes}")
        sys.exit(results_table.rewrite_block(args.book, args.block, body, args.check, command))
    if args.book:
        if not args.steps:
            sys.exit("error: --book needs --steps (e.g. --steps 29,28)")
        body = classes_table(args.csv, args.steps.split(","))
        command = f"python3 scripts/shapes_table.py {args.csv} --book {args.book} --block {args.block} --steps {args.steps}"
        sys.exit(results_table.rewrite_block(args.book, args.block, body, args.check, command))
    # The figure is linked only where it exists beside the file written (a link to a missing image fails
    # scripts/check_links.py).
    figure = bool(args.full) and (pathlib.Path(args.full).parent / FIGURE).exists()
    text = table(args.csv, figure)
    if args.full:
        results_table.rewrite(args.full, text, BEGIN, END, "the shapes table")
    else:
        print(text)


if __name__ == "__main__":
    main()
