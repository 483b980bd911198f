#!/usr/bin/env python3
"""The figure and the tables of make bench-torch (scripts/bench_torch.py's CSV, results/<gpu>_torch.csv).

  scripts/plot_torch.py CSV [--out docs/img/torch.png]   the figure: per shape, the step's paired ratio
                                                        to torch.matmul / torch._scaled_mm and to
                                                        torch.compile (> 1: the step is faster)
  scripts/plot_torch.py CSV --book docs/pytorch.md      the tables written between the chapter's markers
                                                        <!-- torch:table --> ... <!-- /torch -->
  ... --check                                          exit 1 when the block is not what the CSV says
                                                        (make test runs this)
Without matplotlib, --book still works (the tables need none)."""
import argparse
import csv
import math
import os
import pathlib
import re
import sys

import results_table  # the book's generated blocks (rewrite_block)

FAMILY_ORDER = ["decode", "ragged", "square"]
KINDS = [("bf16", ""), ("fp8", "per_tensor"), ("fp8", "block")]
KIND_TITLE = {("bf16", ""): "bf16, C = A·Bᵀ", ("fp8", "per_tensor"): "FP8 e4m3, per-tensor scales",
              ("fp8", "block"): "FP8 e4m3, 1×128 / 128×128 block scales"}


NEEDED = {"gpu", "torch", "triton", "date", "mode", "dtype", "scaling", "family", "m", "n", "k", "contender", "ms",
          "ratio", "ratio_q25", "ratio_q75", "us_per_call", "rel_err", "note", "clock_mhz"}


def read(path):
    """The CSV's rows, each timed row's numbers checked (a bad one: exit 1 naming the line)."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = NEEDED - set(reader.fieldnames or [])
            if missing:
                sys.exit(f"error: {path} is not make bench-torch's CSV (no column {', '.join(sorted(missing))})")
            rows = list(reader)
    except OSError as e:
        sys.exit(f"error: cannot read {path}: {e.strerror}")
    except (UnicodeDecodeError, csv.Error) as e:
        sys.exit(f"error: {path} is not a UTF-8 CSV: {e}")
    for line, r in enumerate(rows, start=2):
        try:
            if r["mode"] in ("paired", "kernels"):
                for c in ("m", "n", "k"):
                    if int(r[c]) < 1:
                        raise ValueError(f"{c} = {r[c]}")
            if r["mode"] == "paired" and r["ms"]:
                if (r["dtype"], r["scaling"]) not in KIND_TITLE:
                    raise ValueError(f"dtype {r['dtype']!r} with scaling {r['scaling']!r} is not one of "
                                     + ", ".join(f"{d} {s or '(none)'}" for d, s in KIND_TITLE))
                for c in ("ms", "ratio", "ratio_q25", "ratio_q75"):
                    if not float(r[c]) > 0:
                        raise ValueError(f"{c} = {r[c]}")
        except (TypeError, ValueError) as e:
            sys.exit(f"error: {path} line {line}: a timed row needs whole m, n, k and positive ms and ratios: {e}")
    return rows


def paired(rows):
    """{(dtype, scaling): {(fam, m, n, k): {contender: row}}} of the measured paired rows."""
    out = {}
    for r in rows:
        if r["mode"] != "paired" or not r["ms"]:
            continue
        key = (r["dtype"], r["scaling"])
        shape = (r["family"], int(r["m"]), int(r["n"]), int(r["k"]))
        out.setdefault(key, {}).setdefault(shape, {})[r["contender"]] = r
    return {k: dict(sorted(v.items(), key=lambda s: (FAMILY_ORDER.index(s[0][0]) if s[0][0] in FAMILY_ORDER else 9,
                                                     s[0][1:]))) for k, v in out.items()}


def refusals(rows):
    return [r for r in rows if r["mode"] == "paired" and r["note"].startswith("refused")]


def torch_best(by):
    """The fastest of PyTorch's contenders at a shape: (name, row) by the median time."""
    others = [(c, r) for c, r in by.items() if not c.startswith("step")]
    return min(others, key=lambda cr: float(cr[1]["ms"])) if others else (None, None)


def short_kernels(text):
    """A kernel row's "name us; name us" list, shortened for a table: the workspace's memsets dropped,
    "void", parameter lists, namespaces and integer suffixes taken out; several kernels joined by " + "."""
    out = []
    for part in (text or "").split("; "):
        name = part.rsplit(" ", 1)[0] if part.endswith("us") else part
        if not name or name.startswith("Memset"):
            continue
        name = re.sub(r"^void ", "", name)
        name = re.sub(r"\(.*$", "", name)                      # the parameter list (cut off at 200 characters too)
        name = re.sub(r"\b(gemm::family::|gemm::|cublasLt::)", "", name)
        name = re.sub(r"(\d+)ul\b", r"\1", name).replace("> >", ">>")
        name = re.sub(r"<(\d+, )+.*$", "<…>", name) if name.startswith("splitKreduce") else name
        out.append(name)
    return " + ".join(out)


def kernels_of(rows):
    """{(dtype, scaling, m, n, k, contender): shortened kernel names} from the CSV's mode "kernels" rows."""
    return {(r["dtype"], r["scaling"], int(r["m"]), int(r["n"]), int(r["k"]), r["contender"]): short_kernels(r.get("kernels"))
            for r in rows if r["mode"] == "kernels"}


def worst(rows, count=5):
    """The `count` shapes (over every kind) where the step is furthest behind PyTorch's best path:
    [(paired ratio to it, kind, (fam, m, n, k), its name, the step's row, its row)], worst first."""
    out = []
    for kind, shapes in paired(rows).items():
        for shape, by in shapes.items():
            step = next((r for c, r in by.items() if c.startswith("step")), None)
            if step is None:
                continue
            others = [(c, r) for c, r in by.items() if not c.startswith("step")]
            if others:
                name, best = min(others, key=lambda cr: float(cr[1]["ratio"]))
                out.append((float(best["ratio"]), kind, shape, name, step, best))
    return sorted(out, key=lambda w: w[0])[:count]


def ratio(r):
    return f"{float(r['ratio']):.2f} [{float(r['ratio_q25']):.2f}–{float(r['ratio_q75']):.2f}]"


def tables(rows, source):
    meta = rows[0]
    lines = [f"From {source}: {meta['gpu']}, torch {meta['torch']}, Triton {meta['triton']}, {meta['date']}. "
             "× = the PyTorch path's time / the step's, paired per round (> 1: the step is faster), median "
             "[quartiles]; µs: the step's median kernel time; MHz: the SM clock after the shape.", ""]
    over = [r for r in rows if r["mode"] == "overhead" and r["us_per_call"]]
    if over:
        m, n, k = over[0]["m"], over[0]["n"], over[0]["k"]
        lines += [f"Per-call cost at {m}×{n}×{k} (the host's time per call, calls back to back):", "",
                  "| call | µs per call |", "|---|---:|"]
        lines += [f"| {r['contender']} | {float(r['us_per_call']):.1f} |" for r in over]
        lines.append("")
    data = paired(rows)
    for kind in KINDS:
        shapes = data.get(kind)
        if not shapes:
            continue
        cols = sorted({c for by in shapes.values() for c in by if not c.startswith("step")},
                      key=lambda c: (c != "torch.matmul" and c != "torch._scaled_mm", c))
        lines += [f"**{KIND_TITLE[kind]}**", "",
                  "| family | M×N×K | step µs | " + " | ".join(f"× {c}" for c in cols) + " | MHz |",
                  "|---|---|---:|" + "---:|" * len(cols) + "---:|"]
        for (fam, m, n, k), by in shapes.items():
            step = next((r for c, r in by.items() if c.startswith("step")), None)
            if step is None:
                continue
            cells = [ratio(by[c]) if c in by else "–" for c in cols]
            lines.append(f"| {fam} | {m}×{n}×{k} | {float(step['ms']) * 1e3:.1f} | " + " | ".join(cells) +
                         f" | {step['clock_mhz']} |")
        lines.append("")
    names = kernels_of(rows)
    lows = worst(rows)
    if lows:
        lines += ["**The five shapes furthest behind PyTorch's best path**, with the kernels each side launched "
                  "(one call under torch.profiler after the timing; cuBLAS's names spell tile, K tile × stages and "
                  "cluster):", "",
                  "| kind | M×N×K | × best | PyTorch's best | its kernel | the step's kernel |",
                  "|---|---|---:|---|---|---|"]
        for v, kind, (fam, m, n, k), name, step, best in lows:
            theirs = names.get((kind[0], kind[1], m, n, k, name), "")
            ours = names.get((kind[0], kind[1], m, n, k, step["contender"]), "")
            lines.append(f"| {KIND_TITLE[kind].split(',')[0]}{', ' + kind[1].replace('_', '-') if kind[1] else ''} | "
                         f"{m}×{n}×{k} | {ratio(best)} | {name} | `{theirs or '–'}` | `{ours or '–'}` |")
        lines.append("")
    wrong = [r for r in rows if r["mode"] == "paired" and r["note"].startswith("wrong")]
    if wrong:
        lines.append("**Wrong results (not timed):** " + "; ".join(
            f"{r['dtype']} {r['scaling'] or ''} {r['m']}×{r['n']}×{r['k']} {r['contender']}, relative error {r['rel_err']}"
            .replace("  ", " ") for r in wrong) + ".")
        lines.append("")
    refused = refusals(rows)
    if refused:
        lines.append("Refused (no time): " + "; ".join(
            f"{r['dtype']} {r['scaling'] or ''} {r['m']}×{r['n']}×{r['k']} by {r['contender']}".replace("  ", " ")
            for r in refused) + ".")
        lines.append("")
    return "\n".join(lines)


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def summary(rows):
    """Per kind: geometric mean of the step against PyTorch's best, and the five worst shapes."""
    out = []
    for kind, shapes in paired(rows).items():
        vs = []
        for shape, by in shapes.items():
            step = next((r for c, r in by.items() if c.startswith("step")), None)
            name, best = torch_best(by)
            if step and best:
                vs.append((float(best["ratio"]), shape, name))  # the paired ratio to the fastest PyTorch path
        if vs:
            out.append(f"{kind[0]} {kind[1]}: geometric mean {geomean([v[0] for v in vs]):.3f}x PyTorch's best over "
                       f"{len(vs)} shapes; worst: " + ", ".join(f"{s[1]}x{s[2]}x{s[3]} {v:.2f} ({n})"
                                                            for v, s, n in sorted(vs)[:5]))
    return out


def plot(rows, out):
    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    data = paired(rows)
    kinds = [k for k in KINDS if k in data]
    if not kinds:
        sys.exit("error: no timed bf16 or fp8 rows to draw")
    fig, axes = plt.subplots(len(kinds), 1, figsize=(11, 3.2 * len(kinds)), squeeze=False)
    style = {"torch.matmul": ("o", "tab:blue"), "torch._scaled_mm": ("o", "tab:blue"),
             "torch.compile": ("s", "tab:orange")}
    for ax, kind in zip(axes[:, 0], kinds):
        shapes = list(data[kind].items())
        xs = range(len(shapes))
        for c, (mk, color) in style.items():
            pts = [(i, float(by[c]["ratio"]), float(by[c]["ratio_q25"]), float(by[c]["ratio_q75"]))
                   for i, (_, by) in enumerate(shapes) if c in by]
            if not pts:
                continue
            ax.errorbar([p[0] for p in pts], [p[1] for p in pts],
                        yerr=[[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]],
                        fmt=mk, color=color, ms=5, capsize=2, label=f"vs {c}")
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_yscale("log", base=2)
        theirs = [r for _, by in shapes for c, r in by.items() if not c.startswith("step")]
        lo = min(float(r["ratio_q25"]) for r in theirs)
        hi = max(float(r["ratio_q75"]) for r in theirs)
        ticks = [t for t in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 2.5, 3.0) if lo / 1.1 <= t <= hi * 1.1]
        ax.set_yticks(ticks, [f"{t:g}" for t in ticks])  # ratios a reader can read off, on the log axis
        ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_ylabel("torch time / step time")
        ax.set_title(KIND_TITLE[kind], fontsize=10, loc="left")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([f"{m}×{n}×{k}" for (_, m, n, k), _ in shapes], rotation=60, ha="right", fontsize=7)
        prev = None
        for i, ((fam, *_), _) in enumerate(shapes):  # family boundaries
            if fam != prev and i:
                ax.axvline(i - 0.5, color="lightgray", lw=0.8)
            if fam != prev:
                ax.text(i - 0.4, 0.98, fam, transform=ax.get_xaxis_transform(), va="top", fontsize=8, color="dimgray")
            prev = fam
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # outside: the squares sit bottom right
        ax.grid(axis="y", alpha=0.3)
    meta = rows[0]
    fig.suptitle(f"The last steps called from PyTorch, paired per round ({meta['gpu']}, torch {meta['torch']}): "
                 "above 1 the step is faster", fontsize=10)
    fig.tight_layout()
    try:
        fig.savefig(out, dpi=110)
    except (OSError, ValueError) as e:
        sys.exit(f"error: cannot write the figure {out}: {e}")
    print(f"wrote {out}")


def rewrite(book, body, check):
    return results_table.rewrite_block(book, "torch", body, check, f"scripts/plot_torch.py CSV --book {book}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--out", help="the figure (PNG)")
    ap.add_argument("--book", help="write the tables between this chapter's markers")
    ap.add_argument("--check", action="store_true", help="with --book: exit 1 when the block is not current")
    ap.add_argument("--summary", action="store_true", help="print the geometric means and the five worst shapes")
    a = ap.parse_args()
    if a.check and not a.book:
        sys.exit("error: --check checks the block of --book FILE: name the chapter")
    rows = read(a.csv)
    if not rows:
        sys.exit(f"error: {a.csv} has no rows")
    if not paired(rows) and (a.book or a.out or a.summary):
        sys.exit(f"error: {a.csv} has no timed paired rows: no tables, figure or summary to make from it")
    status = 0
    if a.summary:
        print("\n".join(summary(rows)))
    if a.book:
        book = pathlib.Path(a.book)
        link = os.path.relpath(pathlib.Path(a.csv).resolve(), book.resolve().parent)
        status = rewrite(book, tables(rows, f"[`{pathlib.Path(a.csv).name}`]({link})") + "\n", a.check)
    if a.out:
        plot(rows, a.out)
    return status


if __name__ == "__main__":
    sys.exit(main())
