#!/usr/bin/env python3
"""Checks that measured numbers quoted in the code and the docs are those of the committed results:

- no kernel header carries a "Measured" line: a step's numbers live in results/ and reach the book
  through scripts/book_numbers.py's generated blocks (checked by make test apart from this script);
- docs/machine.md: the early-steps table (TFLOP/s at 4096 and its fraction of the fp32 peak the
  table's header names) matches results/<gpu>.csv;
- docs/benchmarking.md, "## Sustained mode": the sustained table (TFLOP/s, SM clock, power, TFLOP/J
  and the fraction of the speed of light at that clock) matches results/<gpu>_sustained.csv (skipped,
  and said so, when a --root copy holds no docs/benchmarking.md);
- docs/hopper_part1.md, "## Where part 1 ends": each step's paired ratio over cuBLAS at 8192^3 matches
  results/<gpu>.csv; docs/hopper_part2.md's sustained table (one column per step: TFLOP/s, clock,
  TFLOP/J, sol_at_clock, speed and FLOP per joule over cuBLAS in the same process, cuBLAS's clock)
  matches results/<gpu>_sustained.csv (each skipped, and said so, when a --root copy lacks the chapter);
- docs/benchmarking.md, "## How much to trust a ratio": the five-process table (each step and size's
  range of paired ratios and of cuBLAS's TFLOP/s, with the max/min spread in %) matches
  results/<gpu>_stability.csv;
- docs/every_shape.md, step 28's two probe tables (step 27 against the copy-always build; step 27
  against step 28): their times and paired ratios over cuBLAS match results/<gpu>_pad_pitch.csv
  (probe b; probe d, else e);
- a chapter's table of profiler counters right after a link to results/profiles/*.md (the paragraph
  before it names the file): every number in it is one the linked profiles hold, as printed or in
  thousands, millions or billions (ncu's raw counts: "65.9 M" for 65924223);
- docs/fp8.md: step 36's H100 table (36's and 35's paired ratios over cuBLASLt block-scaled with their
  quartiles, 36's TFLOP/s; results/nvidia_h100_80gb_hbm3_fp8_shapes.csv, a shape's last run) and the
  promotion-interval table (each interval's paired ratio over cuBLASLt with quartiles and its error;
  results/<gpu>_fp8_promote.csv);
- docs/fp32_ladder.md: the 05/06 tuning table (registers, blocks per SM, TFLOP/s and x cuBLAS at
  4096^3; results/tuning/fp32_h200.csv) and the 08/09 tile table (x cuBLAS; fp32_h200_08_09.csv), each
  row's configuration named below by the tuner's params;
- the chapters (docs/*.md: prose and tables), the walkthroughs (sass_annotations/*.md) and the
  notebook's figure captions: every "N TFLOP/s" and every paired ratio quoted with its quartiles
  ("0.960× [0.951–0.969]") is one some committed results file holds (a tflops column, or a ratio and
  its two quartiles in one row, of results/**/*.csv, to the digits quoted; from the rows of the shapes
  the paragraph names, where results/ holds any; or the text of results/**/*.md), or one the notebook
  entry its paragraph links records (a run not committed, the section under that heading holding its
  provenance), unless its sentence or its paragraph's "Prediction" label says it is a prediction, a
  datasheet or public number, a peak, a roof worked out, or another harness's (provenance()).

Prints one line per disagreement and exits 1 if there is any.

Usage: scripts/check_numbers.py [--root DIR] [--csv results/nvidia_h200.csv]"""
import argparse
import csv
import pathlib
import re
import sys

import check_links  # heading_slug: GitHub's anchor rule, which the links use
import docs_walk


def close(quoted, value):
    """`quoted` (a string as printed in the text) agrees with `value` to its last printed digit."""
    digits = len(quoted.split(".")[1]) if "." in quoted else 0
    return abs(float(quoted) - value) <= 0.5 * 10 ** -digits + 1e-9


def table_rows(text, heading, row_re):
    """The cells of the table rows matching `row_re` between `heading` and the next "## " heading."""
    sec = text[text.index(heading):]
    end = sec.find("\n## ", 5)
    for line in (sec if end < 0 else sec[:end]).splitlines():
        if re.match(row_re, line):
            yield cells(line)


def cells(line):
    """The cells of one Markdown table row."""
    return [x.strip() for x in line.strip().strip("|").split("|")]


def table_under(text, head, where, bad):
    """The rows (their cells) of the table whose header line starts with `head`, below its separator; none,
    and a line in `bad`, when `text` (the file `where`) has no such table."""
    if head not in text:
        bad.append(f"{where}: no table headed {head}")
        return []
    return [cells(line) for line in text[text.index(head):].split("\n\n")[0].splitlines()[2:]]


def agree(bad, where, quoted, value):
    """One quoted number against its value in the results (None: no row); returns 1, the count checked."""
    if value is None or not close(quoted, value):
        bad.append(f"{where}: {quoted}, the results have {'no row' if value is None else f'{value:.6g}'}")
    return 1


# A sentence that says where its number comes from when it is not a committed measurement; only a
# paragraph whose bold label is a prediction (PREDICTION_LABEL) exempts a whole paragraph.
PROSE_EXEMPT = re.compile(r"predict|public|datasheet|peak|roof|ridge|ANCHORS|published|speed of light|own harness|its harness", re.I)
# A table column whose header says its numbers are not committed measurements (a prediction, a roof,
# a limit, another project's harness).
COLUMN_EXEMPT = re.compile(r"predict|expect|public|datasheet|peak|roof|limit|ANCHORS|guess|published|speed of light|"
                           r"its harness", re.I)
# A number as the text writes it, whole: 168 is not a number of "1687507" or "x168".
NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.])")
PREDICTION_LABEL = re.compile(r"^\*\*(the )?predictions?\b", re.I)
# Every number of a TFLOP/s quote, a range's too: "688 → 1150-1250 TFLOP/s" quotes 1150 and 1250.
TFLOPS_QUOTE = re.compile(r"\d+(?:\.\d+)?(?:\s*(?:–|-|/)\s*\d+(?:\.\d+)?)*\s*TFLOP/s")
# A paired ratio quoted with its interquartile range: "0.960× [0.951–0.969]", "1.012× cuBLAS [1.010–1.017]",
# "0.714× [IQR 0.704–0.736]", "0.725× cuBLASLt per-tensor [0.714–0.733]".
QUOTED_RATIO = re.compile(r"(\d\.\d{2,4})\s*[×x]?(?:\s+(?:cuBLAS(?:Lt)?(?:'s)?(?:\s+[\w-]+)?|the best reference))?\s*"
                          r"\[(?:IQR\s+)?(\d\.\d{2,4})\s*[–-]\s*(\d\.\d{2,4})\]")
# The CSV columns that hold a paired ratio with its quartiles (results/*.csv, results/tuning/*.csv).
RATIO_COLUMNS = (("step_ratio", "step_ratio_q25", "step_ratio_q75"), ("ratio_vs_cublas", "ratio_q25", "ratio_q75"),
                 ("ratio", "ratio_q25", "ratio_q75"))
# A link to a notebook entry: the file and, where given, the heading's anchor.
NOTEBOOK_LINK = re.compile(r"\]\((?:\.\./)*(?:docs/)?(notebook/[\w.-]+\.md)(?:#([\w-]+))?\)")
# A shape as the book writes one: "16 × 7168 × 16384", "4096x4096x4104", "8192³".
SHAPE = re.compile(r"(?<![\w.])(\d+)\s*[×x]\s*(\d+)\s*[×x]\s*(\d+)(?![\w.])|(?<![\w.])(\d+)³")
FENCE = re.compile(r"^\s*(```|~~~)")


def shapes_named(text):
    """The (m, n, k) shapes a text names."""
    out = set()
    for m in SHAPE.finditer(text):
        out.add((int(m.group(1)), int(m.group(2)), int(m.group(3))) if m.group(1) else (int(m.group(4)),) * 3)
    return out


def prose_lines(md, everything):
    """(line number, text, exempt, notebooks, shapes, lead) of the lines of md to check outside code fences
    (``` or ~~~, indented or not): every line where `everything`, else the figure captions alone. A
    table row's text leaves out the cells under a header COLUMN_EXEMPT names (a roof or a prediction
    column). exempt: the line's paragraph opens with a bold label that is a prediction ("**The
    prediction.**"). notebooks: the notebook entries its paragraph links, (file under docs/, anchor or
    None). shapes: the shapes its paragraph names (a table row: the shapes of its own row). lead: the
    start of the line's first sentence on the lines before it (empty where the line starts one)."""
    out, fenced, header = [], False, None
    lines = md.read_text().splitlines()
    paragraphs, first = [], 0  # (first line, last line) of each run of non-blank lines
    for i, line in enumerate(lines + [""]):
        if not line.strip():
            if i > first:
                paragraphs.append((first, i))
            first = i + 1
    where = {}
    for a, b in paragraphs:
        text = "\n".join(lines[a:b])
        exempt = bool(PREDICTION_LABEL.match(lines[a]))
        notebooks = sorted(set((f, anchor or None) for f, anchor in NOTEBOOK_LINK.findall(text)), key=str)
        shapes = shapes_named(text)
        for i in range(a, b):
            where[i] = (exempt, notebooks, shapes)
    lead = ""  # the sentence the previous line of the paragraph left unfinished
    for n, line in enumerate(lines, 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        previous = lead
        if not line.strip() or line.startswith("|"):
            lead = ""
        else:
            lead = lead + " " + line if not re.search(r"[.;](\s|$)", line) else re.split(r"(?<=[.;])(?:\s+|$)", line)[-1]
        if fenced or not (everything or line.startswith("*Figure")):
            continue
        exempt, notebooks, shapes = where.get(n - 1, (False, [], set()))
        if line.startswith("|"):
            row = [c.strip() for c in line.strip().strip("|").split("|")]
            if n < len(lines) and re.match(r"^\|\s*:?-{3,}", lines[n]):
                header = row  # the next line is the separator: this is a header
                continue
            if re.match(r"^\|\s*:?-{3,}", line):
                continue
            keep = [c for i, c in enumerate(row) if not (header and i < len(header) and COLUMN_EXEMPT.search(header[i]))]
            out.append((n, " | ".join(keep), exempt, notebooks, shapes_named(line) or shapes, ""))
        else:
            header = None
            out.append((n, line, exempt, notebooks, shapes, previous))
    return out


def notebook_sections(path):
    """{anchor: the text under that heading up to the next heading of its level or above} of a notebook
    file, and {None: the whole file}."""
    text = path.read_text() if path.exists() else ""
    out, lines, seen = {None: text}, text.splitlines(), {}
    heads = [(i, len(m.group(1)), m.group(2)) for i, l in enumerate(lines) if (m := re.match(r"^(#{1,6})\s+(.*)$", l))]
    for j, (i, level, title) in enumerate(heads):
        slug = check_links.heading_slug(title)
        k = seen.get(slug, 0)
        seen[slug] = k + 1
        end = next((i2 for i2, l2, _ in heads[j + 1:] if l2 <= level), len(lines))
        out[slug if k == 0 else f"{slug}-{k}"] = "\n".join(lines[i:end])
    return out


def provenance(root, bad):
    """Every "N TFLOP/s" (each number of a range) and every paired ratio with its quartiles ("0.960×
    [0.951–0.969]") that the chapters (docs/*.md: all their prose and tables), the walkthroughs
    (sass_annotations/*.md) and the notebook's figure captions quote, against the committed results: a
    tflops column, or a ratio and its two quartiles in one row, of results/**/*.csv, to the digits
    quoted, from a row of a shape the paragraph names (a table row: its own row's shape) where it names
    any, else from any row; or the text of results/**/*.md; or, for a run not committed, the notebook
    entry the paragraph links (the section under the linked heading, which holds the run's provenance).
    Left out: a sentence that says it is a prediction, a datasheet or public number, a peak or a roof
    (PROSE_EXEMPT), a paragraph whose bold label is a prediction, a table column whose header says so.
    Returns the count checked."""
    by_shape, texts = {}, ""  # (m, n, k) or None (any row) -> ([tflops], [(ratio, q25, q75)])
    for f in sorted((root / "results").glob("**/*.csv")):
        for r in csv.DictReader(open(f)):
            try:  # a row's shape: m, n, k, or a square's size (the stability runs)
                shape = (int(r["m"]), int(r["n"]), int(r["k"])) if "m" in r else (int(r["size"]),) * 3
            except (KeyError, TypeError, ValueError):
                shape = None
            pools = [by_shape.setdefault(None, ([], []))] + ([by_shape.setdefault(shape, ([], []))] if shape else [])
            for k, v in r.items():
                if k and "tflops" in k.lower() and v:
                    try:
                        for pool in pools:
                            pool[0].append(float(v))
                    except ValueError:
                        pass
            for cols in RATIO_COLUMNS:
                if all(r.get(c) for c in cols):
                    try:
                        t = tuple(float(r[c]) for c in cols)
                    except ValueError:
                        continue
                    for pool in pools:
                        pool[1].append(t)
    for f in sorted((root / "results").glob("**/*.md")):
        texts += f.read_text()
    text_numbers = set(NUMBER.findall(texts))
    lines = []
    for md in docs_walk.walkthroughs(root):
        lines += [(md, *line) for line in prose_lines(md, True)]
    for md in docs_walk.book(root):
        lines += [(md, *line) for line in prose_lines(md, md.parent == root / "docs")]
    recorded = {}  # (notebook file, anchor) -> (its TFLOP/s, its quoted ratios with quartiles)

    def in_notebooks(kind, quoted, notebooks):
        """The paragraph links a notebook entry that records the run: `quoted` (a TFLOP/s string, or a
        ratio and its quartiles) is one of that entry's own quotes, digit for digit."""
        for nb, anchor in notebooks:
            if (nb, anchor) not in recorded:
                text = notebook_sections(root / "docs" / nb).get(anchor, "")
                recorded[(nb, anchor)] = ({q for m in TFLOPS_QUOTE.finditer(text) for q in NUMBER.findall(m.group(0))},
                                          {m.groups() for m in QUOTED_RATIO.finditer(text)})
            if quoted in recorded[(nb, anchor)][0 if kind == "tflops" else 1]:
                return True
        return False

    def pools_for(shapes):  # the rows of the named shapes that results/ holds; else (none named or held) any row
        named = [by_shape[s] for s in shapes if s in by_shape]
        return named or [by_shape.get(None, ([], []))]

    checked = 0
    for md, n, line, exempt, notebooks, shapes, lead in lines:
        if exempt:
            continue
        pools = pools_for(shapes)
        at = ", at " + ", ".join("x".join(map(str, s)) for s in sorted(shapes)) if shapes else ""
        for i, sentence in enumerate(re.split(r"(?<=[.;])\s", line)):
            if PROSE_EXEMPT.search(sentence) or (i == 0 and PROSE_EXEMPT.search(lead)):
                continue  # (the first sentence may have begun on the lines before)
            for m in TFLOPS_QUOTE.finditer(sentence):
                if re.search(r"[=/]\s*$", sentence[:m.start()]):
                    continue  # arithmetic: "137.4 GFLOP / 66.9 TFLOP/s", "... = 66.9 TFLOP/s" (a roof worked out)
                for q in NUMBER.findall(m.group(0)):
                    checked += 1
                    if (not any(close(q, v) for pool in pools for v in pool[0]) and q not in text_numbers
                            and not in_notebooks("tflops", q, notebooks)):
                        bad.append(f"{md.relative_to(root)}:{n}: {q} TFLOP/s is in no committed result (results/{at}): "
                                   f"{sentence.strip()[:90]}")
            for m in QUOTED_RATIO.finditer(sentence):
                q, checked = m.groups(), checked + 1
                if (not any(all(close(a, b) for a, b in zip(q, t)) for pool in pools for t in pool[1])
                        and m.group(0) not in texts and not in_notebooks("ratio", q, notebooks)):
                    bad.append(f"{md.relative_to(root)}:{n}: the ratio {q[0]} [{q[1]}–{q[2]}] is in no committed "
                               f"result (results/{at}): {sentence.strip()[:90]}")
    return checked


PROFILE_LINK = re.compile(r"\]\(((?:\.\./)+results/profiles/[\w./-]+\.md)\)")


def profile_tables(root, bad):
    """The chapters' tables of ncu counters against the profiles their paragraph links; returns the count checked."""
    checked = 0
    for md in docs_walk.book(root):
        lines = md.read_text().splitlines()
        i = 0
        while i < len(lines):
            if not lines[i].startswith("|"):
                i += 1
                continue
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            before = "\n".join(lines[max(0, i - 6):i]).split("\n\n")[-1]  # the paragraph just above the table
            links = PROFILE_LINK.findall(before)
            if links:
                held = []
                for rel in links:
                    f = (md.parent / rel).resolve()
                    if f.exists():
                        held += [float(x) for x in NUMBER.findall(f.read_text())]
                candidates = held + [x / 1e3 for x in held] + [x / 1e6 for x in held] + [x / 1e9 for x in held]
                for n in range(i + 2, j):
                    for cell in cells(lines[n])[1:]:
                        for q in NUMBER.findall(cell.replace("`", " ")):
                            checked += 1
                            if not any(close(q, v) for v in candidates):
                                bad.append(f"{md.relative_to(root)}:{n + 1}: {q} is in none of the linked profiles "
                                           f"({', '.join(links)}): {lines[n][:80]}")
            i = j
    return checked


# The fp32 chapter's tuning tables: a row's configuration as the tuner's CSV names it (step, params).
FP32_0506 = {("05", "64×64×8, 8×4"): "BM=64 BN=64 BK=8 TM=8 TN=4",
             ("05", "128×128×16, 8×8"): "BM=128 BN=128 BK=16 TM=8 TN=8",
             ("06", "64×64×8, 8×4"): "BM=64 BN=64 BK=8 TM=8 TN=4",
             ("06", "128×128×16, 8×8"): "BM=128 BN=128 BK=16 TM=8 TN=8"}
FP32_0809 = {"128×128×8": ("BM=128 BN=128 BK=8 WM=32 WN=128 TM=8 TN=16 MINB=2",
                           "BM=128 BN=128 BK=8 WM=32 WN=128 TM=8 TN=16 STAGES=4 MINB=1"),
             "128×256×8": ("BM=128 BN=256 BK=8 WM=32 WN=128 TM=8 TN=16 MINB=1",
                           "BM=128 BN=256 BK=8 WM=32 WN=128 TM=8 TN=16 STAGES=4 MINB=1"),
             "128×256×16": (None, "BM=128 BN=256 BK=16 WM=32 WN=128 TM=8 TN=16 STAGES=2 MINB=1")}


def fp32_tables(root, bad):
    """The fp32 chapter's two tuning tables against the tuner's CSVs; returns the count checked."""
    md = root / "docs/fp32_ladder.md"
    sweeps = [root / "results/tuning/fp32_h200.csv", root / "results/tuning/fp32_h200_08_09.csv"]
    if not md.exists() or not all(f.exists() for f in sweeps):
        print("note: no docs/fp32_ladder.md or its tuning CSVs under the root: its tuning tables are not checked")
        return 0
    text, checked = md.read_text(), 0
    first, second = (list(csv.DictReader(open(f))) for f in sweeps)

    def find(rows, step, params):
        return next((r for r in rows if r["step"] == step and r["params"] == params and r["status"] == "ok"), None)

    where = "docs/fp32_ladder.md"
    for c in table_under(text, "| kernel | tile, thread tile | registers | blocks/SM | TFLOP/s | × cuBLAS |", where, bad):
        params = FP32_0506.get((c[0][:2], c[1]))
        if params is None:
            bad.append(f"docs/fp32_ladder.md: the 05/06 table's row '{c[0]} | {c[1]}' is one this check does not name")
            continue
        r = find(first, c[0][:2], params)
        for quoted, field in zip(c[2:], ("regs", "blocks_per_sm", "tflops_4096", "ratio_4096")):
            checked += agree(bad, f"{where}: {c[0]} {c[1]}, {field}", quoted, r and float(r[field]))
    for c in table_under(text, "| tile | step 08 (registers) | step 09 (cp.async) |", where, bad):
        names = FP32_0809.get(c[0].split(",")[0])
        if names is None:
            bad.append(f"docs/fp32_ladder.md: the 08/09 table's row '{c[0]}' is one this check does not name")
            continue
        for step, params, cell in (("08", names[0], c[1]), ("09", names[1], c[2])):
            m = re.search(r"(\d\.\d+)", cell.replace("*", ""))
            if params is None or m is None:  # "does not fit"
                continue
            r = find(second, step, params)
            checked += agree(bad, f"{where}: {c[0]}, step {step}", m.group(1), r and float(r["ratio_4096"]))
    return checked


RATIO_IQR = re.compile(r"([\d.]+) \[([\d.]+)–([\d.]+)\]")


def fp8_tables(root, promote_rel, bad):
    """docs/fp8.md's step-36 H100 table and promotion table against their CSVs; returns the count checked."""
    md, h100 = root / "docs/fp8.md", root / "results/nvidia_h100_80gb_hbm3_fp8_shapes.csv"
    if not md.exists() or not h100.exists() or not (root / promote_rel).exists():
        print("note: no docs/fp8.md or its CSVs under the root: its step-36 and promotion tables are not checked")
        return 0
    text, checked = md.read_text(), 0

    where = "docs/fp8.md"

    def compare(what, cell, r):  # "1.065 [1.053–1.076]": the paired ratio and its quartiles
        nonlocal checked
        m = RATIO_IQR.fullmatch(cell)
        for quoted, field in zip(m.groups() if m else (cell,), ("step_ratio", "step_ratio_q25", "step_ratio_q75")):
            checked += agree(bad, f"{where}: {what}", quoted, r and float(r[field]))

    last = {}
    for r in csv.DictReader(open(h100)):  # a shape's last run wins, kernel by kernel
        last[(r["step"], r["m"], r["n"], r["k"], r["kernel"])] = r
    for c in table_under(text, "| shape | step 36 × cuBLASLt [IQR] | step 35 × cuBLASLt [IQR] | step 36 TFLOP/s |", where, bad):
        shape = shape_of(c[0])
        ref = "cublaslt_stand_in" if "stand-in" in c[0] else "cublaslt_best"  # M = 1: cuBLASLt per-tensor stands in
        compare(f"step 36 on the H100, {c[0]}", c[1], last.get(("36", *shape, ref)))
        compare(f"step 35 on the H100, {c[0]}", c[2], last.get(("35", *shape, ref)))
        r = last.get(("36", *shape, "step"))
        checked += agree(bad, f"{where}: step 36 on the H100, {c[0]}, TFLOP/s", c[3], r and float(r["tflops"]))
    promote = list(csv.DictReader(open(root / promote_rel)))
    for c in table_under(text, "| promotion | 4096³: × cuBLASLt [IQR] | error | 8192³: × cuBLASLt [IQR] | error |", where, bad):
        every = "0" if c[0].startswith("never") else str({"32": 1, "64": 2, "128": 4}[re.search(r"every (\d+) K", c[0]).group(1)])
        for size, ratio_cell, err_cell in (("4096", c[1], c[2]), ("8192", c[3], c[4])):
            def get(kernel):
                return next((x for x in promote if x["promote_every"] == every and x["m"] == size and x["kernel"] == kernel), None)
            compare(f"promotion '{c[0]}' at {size}", ratio_cell, get("cublaslt_best"))
            r = get("step")
            checked += agree(bad, f"{where}: promotion '{c[0]}' at {size}, error", err_cell, r and float(r["rel_rms_err"]))
    return checked


def shape_of(label):
    """(m, n, k) of a book label: "8200³", "4096 × 4096 × 4104", with any "(...)" after it."""
    label = label.split("(")[0].strip()
    m = re.fullmatch(r"(\d+)³", label)
    if m:
        return (m.group(1),) * 3
    m = re.fullmatch(r"(\d+) × (\d+) × (\d+)", label)
    return m.groups() if m else None


def pad_pitch_tables(root, csv_rel, bad):
    """every_shape.md's step-28 probe tables against the pad-pitch CSV; returns the count checked."""
    md = root / "docs/every_shape.md"
    if not md.exists() or not (root / csv_rel).exists():
        print("note: no docs/every_shape.md or pad-pitch CSV under the root: step 28's probe tables are not checked")
        return 0
    text, rows = md.read_text(), list(csv.DictReader(open(root / csv_rel)))

    def find(probes, binary, shape, kernel):
        for probe in probes:
            r = next((x for x in rows if x["probe"] == probe and x["binary"] == binary and x["kernel"] == kernel
                      and (x["m"], x["n"], x["k"]) == shape), None)
            if r:
                return r
        return None

    checked, where = 0, "docs/every_shape.md"
    for head, probes, cols in (("| shape | 1/M + 1/N | step 27 | copy first |", ("b",),
                                ((2, "27_swap_to_m"), (3, "variant_28_always"))),
                               ("| shape | step 27 | step 28 | × cuBLAS, 27 → 28 |", ("d", "e"),
                                ((1, "27_swap_to_m"), (2, "28_pad_pitch")))):
        for c in table_under(text, head, where, bad):
            shape = shape_of(c[0])
            if shape is None:
                bad.append(f"{where}: an unreadable shape {c[0]}")
                continue
            for col, binary in cols:
                r = find(probes, binary, shape, "step")
                checked += agree(bad, f"{where}: {c[0]}, {binary}", c[col].split()[0], r and 1000 * float(r["ms"]))
            if "→" in c[-1]:  # the second table's "0.443 → 0.806": 27's and 28's paired ratios over cuBLAS
                for quoted, binary in zip(c[-1].split(" → "), ("27_swap_to_m", "28_pad_pitch")):
                    r = find(probes, binary, shape, "cublas")
                    checked += agree(bad, f"{where}: {c[0]}, {binary} x cuBLAS", quoted, r and float(r["step_ratio"]))
    return checked


def stability_table(bench, stab, bad):
    """docs/benchmarking.md's five-process table against the stability CSV; returns the count checked.
    A row: "| 14 | 4096³ | 0.883–0.886 (0.4 %) | 710–715 TFLOP/s (0.7 %) |"."""
    checked = 0
    for c in table_rows(bench, "## How much to trust a ratio", r"^\| \d\d \| \d+³"):
        step, size = c[0], c[1].rstrip("³")
        runs = [r for r in stab if r["step"] == step and r["size"] == size]
        m1 = re.match(r"([\d.]+)–([\d.]+) \(([\d.]+) %\)", c[2])
        m2 = re.match(r"([\d.]+)–([\d.]+) TFLOP/s \(([\d.]+) %\)", c[3])
        if not runs or not m1 or not m2:
            bad.append(f"docs/benchmarking.md: five-process row {step} {c[1]}: no runs in the stability CSV or an unreadable row")
            continue
        for m, field in ((m1, "ratio"), (m2, "cublas_tflops")):
            values = [float(r[field]) for r in runs]
            lo, hi = min(values), max(values)
            for quoted, value in ((m.group(1), lo), (m.group(2), hi), (m.group(3), 100 * (hi / lo - 1))):
                checked += agree(bad, f"docs/benchmarking.md: five-process row {step} {c[1]}, {field}", quoted, value)
    return checked


def part_tables(root, rows, sus, bad):
    """Hopper part 1's closing table and part 2's sustained table against the results; returns the count checked."""
    checked = 0
    p1_md = root / "docs/hopper_part1.md"
    if not p1_md.exists():
        print("note: no docs/hopper_part1.md under the root: its closing table is not checked")
    else:
        # "| 12 | 128×128 tile | 0.831 |": the paired ratio over cuBLAS at 8192^3 (the cuBLAS row's step_ratio).
        for c in table_rows(p1_md.read_text(), "## Where part 1 ends", r"^\| \d\d \|"):
            r = next((x for x in rows if x["step"] == c[0] and x["m"] == "8192" and x["kernel"] == "cublas"
                      and x.get("mode", "burst") == "burst"), None)
            checked += agree(bad, f"docs/hopper_part1.md: part 1's table, step {c[0]}", c[2], r and float(r["step_ratio"]))
    p2_md = root / "docs/hopper_part2.md"
    if not p2_md.exists():
        print("note: no docs/hopper_part2.md under the root: its sustained table is not checked")
        return checked
    text = p2_md.read_text()
    lines = text[text.index("| 8192³, each kernel alone for 3 s |"):].split("\n\n")[0].splitlines()
    steps = re.findall(r"step (\d+)", lines[0])

    def get(step, kernel, field):
        r = next((x for x in sus if x["step"] == step and x["m"] == "8192" and x["kernel"] == kernel), None)
        return None if r is None else float(r[field])

    fields = {"TFLOP/s": lambda st: get(st, "step", "tflops"),
              "mean SM clock": lambda st: get(st, "step", "clock_mhz"),
              "TFLOP/J": lambda st: get(st, "step", "tflop_per_j"),
              "`sol_at_clock`": lambda st: get(st, "step", "sol_at_clock"),
              "speed × cuBLAS in the same process": lambda st: get(st, "cublas", "step_ratio"),
              "FLOP per joule × cuBLAS in the same process":
                  lambda st: get(st, "step", "tflop_per_j") / get(st, "cublas", "tflop_per_j"),
              "cuBLAS's mean SM clock there": lambda st: get(st, "cublas", "clock_mhz")}
    for c in map(cells, lines[2:]):
        if c[0] not in fields:
            bad.append(f"docs/hopper_part2.md: sustained table row '{c[0]}' is one this check does not know")
            continue
        for step, quoted in zip(steps, c[1:]):
            try:
                value = fields[c[0]](step)
            except TypeError:  # a missing row
                value = None
            checked += agree(bad, f"docs/hopper_part2.md: sustained table, step {step}, {c[0]}", quoted.split()[0], value)
    return checked


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent),
                    help="the repository to check (default: this script's); its docs/, results/, kernels/ and sass_annotations/")
    ap.add_argument("--csv", default="results/nvidia_h200.csv",
                    help="the make-bench results (relative to --root) that the chapters' fixed tables quote; its "
                         "_sustained, _stability, _fp8_promote and _pad_pitch siblings are read beside it")
    args = ap.parse_args()
    root = pathlib.Path(args.root)
    rows = list(csv.DictReader(open(root / args.csv)))

    def row(step, size, kernel):
        return next((r for r in rows if r["step"] == step and r["m"] == str(size) and r["kernel"] == kernel
                     and r.get("mode", "burst") == "burst"), None)

    bad, checked = [], 0
    for src in sorted((root / "kernels").glob("*.cu")):
        header = [l for l in src.read_text().splitlines() if l.startswith("//")]
        checked += 1
        if any(re.match(r"//\s*Measured\b", l) for l in header):
            bad.append(f"{src.relative_to(root)}: the header quotes a measurement; numbers live in results/ and the "
                       f"book's generated blocks (scripts/book_numbers.py)")
    checked += provenance(root, bad)
    sol = (root / "docs/machine.md").read_text()
    # The early steps at 4096: "| 00 cuBLAS strict FP32 | 51.1 | 76 % | ... |", fraction of the header's peak.
    early = sol[sol.index("## What the early steps show"):]
    peak = float(re.search(r"fraction of the (\d+\.\d+) fp32 peak", early).group(1))
    for c in table_rows(sol, "## What the early steps show", r"^\| 0\d "):
        step, r = c[0].split()[0], row(c[0].split()[0], 4096, "step")
        checked += 2
        if r is None or not close(c[1], float(r["tflops"])):
            bad.append(f"docs/machine.md: step {step} at 4096: tflops {c[1]}, {args.csv} has {r['tflops'] if r else 'no row'}")
        elif not close(c[2].rstrip(" %"), 100 * float(r["tflops"]) / peak):
            bad.append(f"docs/machine.md: step {step}: {c[2]} of {peak}, {args.csv}'s {r['tflops']} is "
                       f"{100 * float(r['tflops']) / peak:.1f} %")
    # The sustained table of docs/benchmarking.md: "| step 14 | 623.1 | 1423 MHz | 692 W | 0.90 | 769 TFLOP/s | 81 % |"
    # and the references "(in step NN's process)", against the sustained CSV at the size its header names.
    sus_csv = re.sub(r"\.csv$", "_sustained.csv", args.csv)
    sus = list(csv.DictReader(open(root / sus_csv)))
    bench_md, heading = root / "docs/benchmarking.md", "## Sustained mode"
    bench = bench_md.read_text() if bench_md.exists() else None
    if bench is None:
        print("note: no docs/benchmarking.md under the root: its sustained table is not checked")
    size = re.search(r"\| (\d+)\^3, sustained \|", bench[bench.index(heading):]).group(1) if bench else None
    kinds = (("cuBLASLt best", "cublaslt_best"), ("cuBLAS", "cublas"), ("CUTLASS cooperative", "cutlass_coop_128x256x64_c2x1"))
    for c in table_rows(bench, heading, r"^\| (step \d|cuBLAS|CUTLASS)") if bench else ():
        m = re.match(r"step (\d+)$", c[0])
        step, kernel = (m.group(1), "step") if m else (re.search(r"in step (\d+)'s process", c[0]).group(1),
                                                       next(k for label, k in kinds if c[0].startswith(label)))
        r = next((x for x in sus if x["step"] == step and x["m"] == size and x["kernel"] == kernel), None)
        for quoted, field, scale in ((c[1], "tflops", 1), (c[2].split()[0], "clock_mhz", 1), (c[3].split()[0], "power_w", 1),
                                     (c[4], "tflop_per_j", 1), (c[6].rstrip(" %"), "sol_at_clock", 100)):
            checked += 1
            if r is None or not close(quoted, scale * float(r[field])):
                bad.append(f"docs/benchmarking.md: sustained {c[0]}: {field} {quoted}, {sus_csv} has "
                           f"{r[field] if r else 'no row'}")
    checked += part_tables(root, rows, sus, bad)
    checked += profile_tables(root, bad)
    checked += fp32_tables(root, bad)
    checked += fp8_tables(root, re.sub(r"\.csv$", "_fp8_promote.csv", args.csv), bad)
    checked += pad_pitch_tables(root, re.sub(r"\.csv$", "_pad_pitch.csv", args.csv), bad)
    if bench is not None:
        checked += stability_table(bench, list(csv.DictReader(open(root / re.sub(r"\.csv$", "_stability.csv", args.csv)))), bad)
    for b in bad:
        print(b)
    print(f"numbers: {checked} checked, {len(bad)} disagree")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
