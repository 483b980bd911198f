#!/usr/bin/env python3
"""Writes common/kernel_lib/family/tuned_bf16.hpp, the tables step 29's measured dispatch reads
(family/dispatch.hpp), from the tuner's rows in results/tuning/<gpu>_bf16.csv (`make tune`): one table
per GPU in TABLES (the H200's, the default where the GPU has none of its own, and the H100's, whose
winners differ: 128 x 160 cluster pairs at 16384 x 14336 x 4096 ran 0.96x cuBLAS on an H100 where the
H200's pick ran 0.70x, docs/notebook/hopper.md). Step 29 takes the table whose GPU name is the
device's (cudaGetDeviceProperties' name, the CSV's gpu column).

For each shape the tuner timed: every contender's paired ratio over cuBLAS (the median of its rounds)
where it passed its check (or was too large to check), 0 where it was not timed or failed, with the
split it was timed with (the CSV's split_items and units); the hand rule's step (contender "step28")
in a column of its own. The dispatch (family/dispatch.hpp) carries a
row's ratios to a query shape and decides there, so the table keeps them all, not only a winner. A
shape the whole menu was not timed at (no hand rule row: only `tune.py --entries` reached it) is left out.

  scripts/gen_tuned_table.py             rewrite the header from the CSVs in TABLES
  scripts/gen_tuned_table.py --csv F     the default (H200) table from another tuner CSV
  scripts/gen_tuned_table.py --check     exit 1 when the committed header is not what this writes (make test)
  scripts/gen_tuned_table.py --summary   how many shapes each entry won, the hand rule's among them
"""
import argparse
import collections
import csv
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "common" / "kernel_lib" / "family" / "tuned_bf16.hpp"
CSV = ROOT / "results" / "tuning" / "nvidia_h200_bf16.csv"
# (C++ namespace inside gemm::family::dispatch, or "" for the default table, the tuner's CSV, the GPU's name)
TABLES = [("", CSV, "NVIDIA H200"),
          ("h100", ROOT / "results" / "tuning" / "nvidia_h100_80gb_hbm3_bf16.csv", "NVIDIA H100 80GB HBM3")]
HAND = "step28"   # tune.py's --hand-step 28, as tune.cpp names it
MARGIN = 0.01     # --summary: an entry must beat the hand rule's paired ratio by this much to win a shape
MAX_ENTRIES = 56  # family/dispatch.hpp's kMaxEntries


def measured(path):
    """(entry names in first-seen order, {(m, n, k): {contender: (ratio, (sk_tiles, blocks))}}) from the
    tuner's CSV (split_items and units: the split each contender was timed with; empty for the hand rule)."""
    by_shape = collections.defaultdict(dict)
    names = []
    full_run = set()  # shapes with a row of the hand rule's step, timed or not: tune.py's "done"
    if path.exists():
        with open(path) as f:
            for r in csv.DictReader(f):
                if r["contender"] == HAND:
                    full_run.add((int(r["m"]), int(r["n"]), int(r["k"])))
                if r["ratio_vs_cublas"] == "" or not (r["check"].startswith("pass") or r["check"].startswith("not checked")):
                    continue
                c = r["contender"]
                if c != HAND and c not in names:
                    names.append(c)
                split = (int(r["split_items"] or 0), int(r["units"] or 0))  # the split it was timed with
                by_shape[(int(r["m"]), int(r["n"]), int(r["k"]))][c] = (float(r["ratio_vs_cublas"]), split)
    # A shape enters the table only where the whole menu was timed (the hand rule's row marks a full run):
    # `tune.py --entries` rows alone, at a shape the full run has not reached, would let the few entries
    # they time win it unopposed.
    return names, dict(sorted((s, r) for s, r in by_shape.items() if s in full_run))


def winner(ratios):
    """The shape's fastest contender ("" for the hand rule where no entry beats it by MARGIN) and its ratio."""
    entries = {c: x[0] for c, x in ratios.items() if c != HAND}
    best = max(entries, key=entries.get, default=None)
    hand = ratios[HAND][0] if HAND in ratios else None
    if best is None or (hand is not None and entries[best] <= hand * (1 + MARGIN)):
        return "", hand or 0.0
    return best, entries[best]


def table_block(names, table, source, gpu, ns):
    """One GPU's table: its name, its entries and its rows, in namespace ns ("" for the default table)."""
    if len(names) > MAX_ENTRIES:
        sys.exit(f"error: {len(names)} menu entries in {source}; family/dispatch.hpp's kMaxEntries is {MAX_ENTRIES}")
    def cell(x):
        if x is None:
            return "{0, 0, 0}"
        ratio, (sk, blocks) = x
        return f"{{{ratio:.4f}f, {sk}, {blocks}}}"

    def row(shape, ratios):
        m, n, k = shape
        cells = ", ".join(cell(ratios.get(c)) for c in names)
        hand = ratios[HAND][0] if HAND in ratios else 0.0
        return f"    TunedShape{{{m}, {n}, {k}, {hand:.4f}f, {{{{{cells}}}}}}},"
    rows = "\n".join(row(s, r) for s, r in table.items())
    name_list = "\n".join(f'    "{c}",' for c in names)
    open_ns, close_ns = (f"namespace {ns} {{\n\n", f"\n}}  // namespace {ns}\n") if ns else ("", "")
    return f'''{open_ns}// {gpu}: {len(table)} shapes from {source}, {len(names)} entries.
inline constexpr char kTunedGpu[] = "{gpu}";

inline constexpr std::array<const char*, {len(names)}> kTunedEntries{{{{
{name_list}
}}}};

inline constexpr std::array<TunedShape, {len(table)}> kTunedBf16{{{{
{rows}
}}}};
{close_ns}'''


def lookup(namespaces):
    """tuned_for(): the one place a GPU's name selects its table (step 29 and dispatch_dump call it)."""
    statics = "\n".join(f"  static const auto rows_{ns or 'default'} = resolve({ns + '::' if ns else ''}kTunedBf16, "
                         f"{ns + '::' if ns else ''}kTunedEntries, menu::kBf16);" for ns in [""] + namespaces)
    picks = "\n".join(f"  if (gpu == {ns}::kTunedGpu) return {{rows_{ns}.data(), rows_{ns}.size()}};" for ns in namespaces)
    return f'''/// A GPU's table, its rows resolved against the menu (resolve()) on the first call.
struct TunedTable {{
  const Measured<menu::kBf16.size()>* rows;
  size_t size;
}};

/// The table tuned on the GPU named `gpu` (cudaGetDeviceProperties' name, the tuner CSV's gpu column),
/// else the default (H200) table. Thread-safe (function-local statics).
inline TunedTable tuned_for(std::string_view gpu) {{
{statics}
{picks}
  return {{rows_default.data(), rows_default.size()}};
}}
'''


def header(blocks, namespaces):
    body = "\n".join(blocks) + "\n" + lookup(namespaces)
    return f'''// GENERATED by scripts/gen_tuned_table.py: do not edit (make test checks that it is current).
// Its sources: results/tuning/<gpu>_bf16.csv (`make tune` on each GPU writes one).
// Step 29's measured dispatch (family/dispatch.hpp), one table per GPU: for each shape the tuner timed,
// the paired ratio over cuBLAS of step 28's hand rule and of each of the table's menu entries
// (family/menu.hpp, by name), each with the split it was timed with: {{ratio, sk_tiles, blocks}}
// ({{0, 0, 0}}: not timed there). The table at namespace scope is the H200's, the default; a GPU with
// a table of its own has it in a namespace; tuned_for() picks one by the GPU's name.
#pragma once
#include <array>
#include <cstddef>
#include <string_view>

#include "dispatch.hpp"

namespace gemm::family::dispatch {{

{body}
}}  // namespace gemm::family::dispatch
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", default=str(CSV), help="the default (H200) table's tuner CSV")
    ap.add_argument("--check", action="store_true", help="exit 1 when the header differs, write nothing")
    ap.add_argument("--summary", action="store_true", help="print the winners' counts, write nothing")
    args = ap.parse_args()
    blocks, counts_by, namespaces = [], [], []
    for ns, csv_path, gpu in TABLES:
        path = pathlib.Path(args.csv) if ns == "" else csv_path
        names, table = measured(path)
        if not table:
            if ns == "":
                sys.exit(f"error: {path}: no timed rows (the default table must have some)")
            continue  # a GPU with no tuning run yet: it takes the default table
        try:
            source = path.resolve().relative_to(ROOT)
        except ValueError:
            source = path.name
        blocks.append(table_block(names, table, source, gpu, ns))
        if ns:
            namespaces.append(ns)
        counts_by.append((gpu, source, table))
    if args.summary:
        for gpu, source, table in counts_by:
            counts = collections.Counter(winner(r)[0] or "hand rule (step 28)" for r in table.values())
            print(f"{gpu}: {len(table)} shapes from {source}")
            for w, c in counts.most_common():
                print(f"  {c:4d}  {w}")
        return 0
    text = header(blocks, namespaces)
    rel = OUT.relative_to(ROOT)
    shapes = ", ".join(f"{gpu} {len(t)}" for gpu, _, t in counts_by)
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{rel} is not what scripts/gen_tuned_table.py writes from results/tuning/: run "
                  f"`python3 scripts/gen_tuned_table.py`", file=sys.stderr)
            return 1
        print(f"{rel}: up to date ({shapes} shapes)")
        return 0
    OUT.write_text(text)
    print(f"wrote {rel} ({shapes} shapes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
