#!/usr/bin/env python3
"""What block scaling buys (docs/fp8.md, "What block scaling buys"): the figure and the tables of
results/<gpu>_fp8_outliers.csv, the rows build/bin/lab_fp8_outliers writes (`scripts/gpu_session.sh
outliers`): the relative RMS error of FP8 GEMMs against the fp64 product of the unquantized inputs,
per scaling (per tensor, per row, per row of A and 128 rows of B, 1 x 128 / 128 x 128 blocks), per
accumulation (exact fp64 on the quantized inputs, whole K in the tensor core, promoted) and kernel,
at 256 x 256 x K, on N(0, 1) inputs and on inputs shaped like a language model's (--dist llm).

  scripts/plot_fp8_outliers.py CSV                  docs/img/fp8_outliers.png (needs matplotlib): left, the
                                                    error against K on llm inputs, one line per scaling (its
                                                    fp64 oracle: what quantization alone costs) and a marker
                                                    per kernel; right, at one K, against the largest outlier,
                                                    the error of the whole product and of the ordinary
                                                    channels' share of it
  scripts/plot_fp8_outliers.py CSV --table          the chapter's two Markdown tables on stdout (no matplotlib)
  scripts/plot_fp8_outliers.py CSV --book FILE.md   the tables written between FILE's markers
                                                    <!-- outliers:table --> ... <!-- /outliers --> (the same
                                                    text every time for the same CSV); with --check, exit 1
                                                    when the block is not what the CSV says
  scripts/plot_fp8_outliers.py --book FILE.md --check --placeholder
                                                    the block as it must read while no CSV is committed
"""
import argparse
import collections
import csv
import os
import pathlib
import sys

import results_table  # the book's generated blocks (rewrite_block)

ROOT = pathlib.Path(__file__).resolve().parent.parent
PLACEHOLDER = ("*Not measured yet: `scripts/gpu_session.sh outliers` on an H100 or H200 writes "
               "`results/<gpu>_fp8_outliers.csv`, and `make results-tables` writes the tables here.*\n")

SCALINGS = collections.OrderedDict([
    ("per_tensor", "per tensor"),
    ("per_row", "per row of A and of B"),
    ("row_128", "per row of A, per 128 rows of B"),
    ("block", "1 × 128 of A, 128 × 128 of B"),
])
ACCUMULATIONS = collections.OrderedDict([
    ("exact", "exact (fp64), no kernel"),
    ("tensor_core", "whole K in the tensor core"),
    ("promoted", "promoted every 128 of K"),
    ("cublaslt_default", "cuBLASLt's default"),
])
HEADER_FIELDS = ["dist", "outlier_max", "k", "scaling", "accumulation", "kernel", "err_unquantized", "check"]


def load(path):
    try:
        rows = list(csv.DictReader(open(path)))
    except OSError as e:
        sys.exit(f"error: cannot read {path}: {e.strerror}")
    if not rows or any(f not in rows[0] for f in HEADER_FIELDS):
        sys.exit(f"error: {path}: no rows with the columns of build/bin/lab_fp8_outliers ({', '.join(HEADER_FIELDS)})")
    for r in rows:
        r["k"] = int(r["k"])
        r["outlier_max"] = float(r["outlier_max"]) if r["outlier_max"] else None
    return rows


def err(r, field="err_unquantized"):
    return float(r[field]) if r.get(field) else None


def fmt(v):
    return "—" if v is None else f"{v:.3g}"


def kernel_label(k):
    return {"fp64 oracle": "the quantized inputs' fp64 product", "cuBLASLt": "cuBLASLt",
            "cuBLASLt fast": "cuBLASLt, fast accumulation"}.get(k, k)


def cell_key(r):
    """Table order: scaling, accumulation, then the steps before cuBLASLt."""
    return (list(SCALINGS).index(r["scaling"]) if r["scaling"] in SCALINGS else 99,
            list(ACCUMULATIONS).index(r["accumulation"]) if r["accumulation"] in ACCUMULATIONS else 99,
            not r["kernel"].startswith("step"), r["kernel"])


def llm_main(rows):
    """The llm rows of the K sweep: the most common outlier_max among llm rows with several K."""
    by_max = collections.Counter(r["outlier_max"] for r in rows if r["dist"] == "llm")
    if not by_max:
        return None, []
    top = max(by_max, key=lambda f: (len({r["k"] for r in rows if r["dist"] == "llm" and r["outlier_max"] == f}), by_max[f]))
    return top, [r for r in rows if r["dist"] == "llm" and r["outlier_max"] == top]


def tables(rows, source):
    """The chapter's Markdown: the K sweep on llm inputs (and N(0, 1) at one K), then the outlier sizes.
    `source` names the CSV in the text (a link, in the book)."""
    out = []
    fmax, main = llm_main(rows)
    normal = [r for r in rows if r["dist"] == "normal"]
    if main:
        ks = sorted({r["k"] for r in main})
        nk = 4096 if any(r["k"] == 4096 for r in normal) else (max(r["k"] for r in normal) if normal else None)
        meta = main[0]
        out.append(f"Relative RMS error against the fp64 product of the unquantized inputs, {meta['m']} × {meta['n']} × K, "
                   f"inputs shaped like a language model's (outlier channels up to {fmax:g}×; "
                   f"{meta['gpu']}, cuBLAS {meta['cublas']}, {meta['date']}; {source}):\n")
        head = ["scaling", "accumulation", "kernel"] + [f"K = {k}" for k in ks]
        if nk:
            head.append(f"N(0, 1), K = {nk}")
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * 3 + "---:|" * (len(head) - 3))
        cells = collections.OrderedDict()
        for r in sorted(main + [r for r in normal if r["k"] == nk], key=cell_key):
            cells.setdefault((r["scaling"], r["accumulation"], r["kernel"]), {})[(r["dist"], r["k"])] = r
        for (sc, acc, kern), by in cells.items():
            vals = []
            for key in [("llm", k) for k in ks] + ([("normal", nk)] if nk else []):
                r = by.get(key)
                vals.append("—" if r is None else fmt(err(r)) + (" (FAIL)" if r["check"] == "FAIL" else ""))
            out.append(f"| {SCALINGS.get(sc, sc)} | {ACCUMULATIONS.get(acc, acc)} | {kernel_label(kern)} | " + " | ".join(vals) + " |")
        out.append("")
    sizes = [r for r in rows if r["dist"] == "llm" and r["kernel"] == "fp64 oracle"]
    ks = collections.Counter(r["k"] for r in sizes if r["outlier_max"] != fmax)
    if ks:
        k = ks.most_common(1)[0][0]
        at = sorted((r for r in sizes if r["k"] == k), key=lambda r: (r["outlier_max"], cell_key(r)))
        if len({r["outlier_max"] for r in at}) > 1:
            out.append(f"The quantization alone (the fp64 product of the quantized inputs) at K = {k}, as the largest "
                       "outlier grows: the error of the whole product, of the ordinary channels' share of it (the "
                       "outlier channels zeroed after quantization, their scales kept), and what became of A's values:\n")
            out.append("| largest outlier | scaling | error of the product | of the ordinary channels' share | A flushed to 0 | A subnormal |")
            out.append("|---:|---|---:|---:|---:|---:|")
            for r in at:
                n = int(r["a_nonzero"]) or 1
                out.append(f"| {r['outlier_max']:g}× | {SCALINGS.get(r['scaling'], r['scaling'])} | {fmt(err(r))} | "
                           f"{fmt(err(r, 'err_ordinary'))} | {100 * int(r['a_flushed']) / n:.2g} % | {100 * int(r['a_subnormal']) / n:.2g} % |")
            out.append("")
    return "\n".join(out) + ("\n" if out else "")


def rewrite(book, body, check):
    return results_table.rewrite_block(book, "outliers", body, check,
                                       f"scripts/plot_fp8_outliers.py CSV --book {book}")


def draw(rows, out):
    sys.path.insert(0, str(ROOT / "scripts"))
    from plot_setup import plt  # noqa: E402  (matplotlib, or a line saying how to get it)
    from style import BLUE, GREEN, GREY, PURPLE, RED  # noqa: E402
    colors = dict(zip(SCALINGS, [RED, PURPLE, BLUE, GREEN]))  # per tensor, per row, row/128 rows, blocks
    markers = {"tensor_core": "v", "promoted": "^", "cublaslt_default": "x"}
    fmax, main = llm_main(rows)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11.5, 4.8))
    # Left: one line per scaling, its fp64 oracle (the quantization alone); a marker per kernel on it.
    for sc in SCALINGS:
        pts = sorted((r["k"], err(r)) for r in main if r["scaling"] == sc and r["kernel"] == "fp64 oracle" and err(r))
        left.plot([k for k, _ in pts], [e for _, e in pts], "-", color=colors[sc], lw=2, alpha=0.8)
        for r in main:
            if r["scaling"] == sc and r["kernel"] != "fp64 oracle" and err(r):
                fast = r["kernel"].endswith("fast")
                left.plot(r["k"], err(r), "+" if fast else markers.get(r["accumulation"], "o"), color=colors[sc], ms=8, mfc="none")
    normal = sorted((r["k"], err(r)) for r in rows if r["dist"] == "normal" and r["scaling"] == "per_tensor"
                    and r["kernel"] == "fp64 oracle" and err(r))
    if normal:
        left.plot([k for k, _ in normal], [e for _, e in normal], "--", color=GREY, lw=1.5, label="per tensor on N(0, 1) inputs")
    left.plot([], [], "-", color="black", lw=2, label="fp64 product of the quantized inputs")
    for m, what in [("v", "whole K in the tensor core"), ("^", "promoted every 128 of K"), ("x", "cuBLASLt default"),
                    ("+", "cuBLASLt fast accumulation")]:
        left.plot([], [], m, color="black", mfc="none", label=what)
    left.set_xscale("log", base=2)
    left.set_yscale("log")
    left.set_xlabel("K")
    left.set_ylabel("relative RMS error against the unquantized product")
    left.set_title(f"LLM-shaped inputs (outliers up to {fmax:g}×), 256 × 256 × K" if fmax else "no llm rows", fontsize=10)
    left.legend(fontsize=7, loc="upper right")
    left.grid(alpha=0.3, which="both")
    # Right: at one K, the quantization alone against the largest outlier: the whole product (solid) and the
    # ordinary channels' share of it (dashed).
    sizes = [r for r in rows if r["dist"] == "llm" and r["kernel"] == "fp64 oracle"]
    ks = collections.Counter(r["k"] for r in sizes if r["outlier_max"] != fmax)
    if ks:
        k = ks.most_common(1)[0][0]
        for sc in SCALINGS:
            pts = sorted((r["outlier_max"], err(r), err(r, "err_ordinary")) for r in sizes if r["k"] == k and r["scaling"] == sc)
            right.plot([p[0] for p in pts], [p[1] for p in pts], "-o", color=colors[sc], ms=4)
            right.plot([p[0] for p in pts], [p[2] for p in pts], "--s", color=colors[sc], ms=4, mfc="none")
        right.plot([], [], "-o", color="black", ms=4, label="the whole product")
        right.plot([], [], "--s", color="black", ms=4, mfc="none", label="the ordinary channels' share")
        right.set_xscale("log")
        right.set_yscale("log")
        right.set_xlabel("largest outlier factor (factors log-uniform from 10)")
        right.set_title(f"the quantization alone at K = {k}", fontsize=10)
        right.legend(fontsize=7, loc="upper left")
        right.grid(alpha=0.3, which="both")
    for sc, label in SCALINGS.items():
        left.plot([], [], "-", color=colors[sc], lw=2, label=label)
    handles = [h for h in left.get_lines() if h.get_label() in SCALINGS.values()]
    fig.legend(handles, [h.get_label() for h in handles], loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.subplots_adjust(bottom=0.2)
    try:
        fig.savefig(out, dpi=110, bbox_inches="tight")
    except OSError as e:
        sys.exit(f"error: cannot write {out}: {e.strerror}")
    print(f"wrote {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("csv", nargs="?", help="results/<gpu>_fp8_outliers.csv")
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "fp8_outliers.png"))
    ap.add_argument("--table", action="store_true", help="print the Markdown tables")
    ap.add_argument("--book", help="write the tables between this chapter's markers")
    ap.add_argument("--check", action="store_true", help="with --book: exit 1 when the block is not current")
    ap.add_argument("--placeholder", action="store_true", help="with --book: the block without a CSV")
    a = ap.parse_args()
    if a.placeholder:
        if not a.book or a.csv:
            sys.exit("error: --placeholder goes with --book and no CSV")
        sys.exit(rewrite(pathlib.Path(a.book), PLACEHOLDER, a.check))
    if not a.csv:
        sys.exit("error: name the CSV (results/<gpu>_fp8_outliers.csv), or --book FILE --placeholder")
    rows = load(a.csv)
    if a.table:
        sys.stdout.write(tables(rows, f"`{a.csv}`"))
    elif a.book:
        book = pathlib.Path(a.book)
        link = os.path.relpath(pathlib.Path(a.csv).resolve(), book.resolve().parent)
        name = os.path.relpath(pathlib.Path(a.csv).resolve(), ROOT) if pathlib.Path(a.csv).resolve().is_relative_to(ROOT) else a.csv
        sys.exit(rewrite(book, tables(rows, f"[`{name}`]({link})"), a.check))
    else:
        draw(rows, a.out)


if __name__ == "__main__":
    main()
