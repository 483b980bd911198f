"""`html`: one self-contained HTML page per step (build/sass-html/NN_name.html), the step's source beside
the SASS of each kernel, tied by the -lineinfo line table; the hottest loop, the instruction mix, the
resource row, the .expect verdicts and the walkthrough's notes beside the lines they quote. With two
steps, a diff page: the source diff beside the clean-SASS diff and the instruction-mix delta."""
from __future__ import annotations

import difflib
import glob
import html
import os
import re

from . import markdown
from .checks import check_unit, norm
from .diff import mix_counts, mix_keys, pair_functions, read_body
from .dump import ensure_dumped, file_bases, src_path
from .listing import clean_functions, parse_nvdisasm, read_clean, trim_padding
from .page_assets import CSS, JS
from .resources import RESOURCE_COLUMNS, unit_rows
from .tools import REPO, ToolError
from .units import all_steps, display_name, find_unit, step_registry

esc = html.escape


def hue(line):
    return int(line * 137.508) % 360


def page(title, body, script=True):
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<meta name=viewport content='width=device-width,initial-scale=1'><title>{esc(title)}</title>"
            f"<style>{CSS}</style></head><body>\n{body}\n" + (f"<script>{JS}</script>" if script else "")
            + "\n</body></html>\n")


def code_html(text):
    """A source line, escaped, its // comment greyed."""
    m = re.search(r"//.*$", text)
    if not m:
        return esc(text)
    return esc(text[:m.start()]) + f"<span class=cm>{esc(m.group(0))}</span>"


# ----------------------------------------------------------------------------------------------
# What a step page shows
# ----------------------------------------------------------------------------------------------

def call_chain(chain, src_rel):
    """The "inlined from" column: the instruction's whole inlining chain, innermost first, the step's own
    lines as `:N` ("wgmma.cuh:100 ← :185 ← :269": a wrapper's line, inlined at the step's line 185,
    itself in a lambda called at line 269); "" when the instruction comes from one line of the step."""
    if len(chain) <= 1 and (not chain or chain[0][0] == src_rel):
        return ""
    return " ← ".join(f":{n}" if f == src_rel else f"{os.path.basename(f)}:{n}" for f, n in chain)


def kernel_views(unit):
    """Per kernel function: its clean form, each instruction's step-source line (the innermost frame of
    its -lineinfo inlining chain that is in the step's file) and the chain itself (call_chain)."""
    ensure_dumped(unit)
    dis = os.path.join(unit.out, unit.name + ".nvdisasm.sass")
    if not os.path.exists(dis):
        return []
    src_rel = os.path.relpath(unit.source, REPO)
    funcs = parse_nvdisasm(open(dis).read())
    views = []
    for func, base in zip(funcs, file_bases(funcs)):
        clean = read_clean(os.path.join(unit.out, base + ".sass"))
        insns = trim_padding(func.insns)
        if len(insns) != len(clean.insns):
            raise ToolError(f"{unit.out}/{base}.sass does not match {dis}: dump the step again")
        lines, where = [], []
        for ins in insns:
            chain = [(src_path(f), n) for f, n in ins.loc]
            lines.append(next((n for f, n in chain if f == src_rel), None))
            where.append(call_chain(chain, src_rel))
        views.append({"base": base, "clean": clean, "lines": lines, "where": where})
    return views


def cmd_lines(args):
    """`lines`: per kernel function, each source line of the step with the instructions attributed to it
    (the innermost frame in the step's file), most first; --opcode keeps one kind."""
    unit = find_unit(args.build, args.step)
    src = open(unit.source).read().splitlines()
    for v in kernel_views(unit):
        counts = {}
        for ins, line in zip(v["clean"].insns, v["lines"]):
            if args.opcode and not ins.opcode.startswith(args.opcode):
                continue
            counts[line] = counts.get(line, 0) + 1
        total = sum(counts.values())
        print(f"{v['base']}: {total} instructions{' ' + args.opcode if args.opcode else ''}")
        for line, n in sorted(counts.items(), key=lambda x: (-x[1], x[0] or 0)):
            text = src[line - 1].strip() if line and line <= len(src) else "(no line of the step)"
            print(f"{n:6d}  {'' if line is None else line:>5}  {text[:100]}")
    return 0


def annotation_notes(unit):
    """[(markdown of the note, [quoted SASS lines, normalized])] of sass_annotations/NN_*.md: one note
    per ```sass block, holding the text since the previous block (with its section heading)."""
    notes = []
    for md in sorted(glob.glob(os.path.join(REPO, "sass_annotations", unit.step + "_*.md"))) if unit.step else []:
        heading, buf, block, kind = "", [], [], None
        for line in open(md).read().splitlines():
            s = line.strip()
            if s.startswith("```"):
                if kind is None:
                    kind, block = s[3:].strip(), [line]
                    continue
                block.append(line)
                if kind == "sass":
                    quotes = [norm(re.sub(r"^/\*[0-9a-f]+\*/\s*", "", b.strip())) for b in block[1:-1]]
                    quotes = [q for q in quotes if q and not q.startswith(("//", "...", "#"))]
                    text = ([heading] if heading and heading not in buf else []) + buf + block
                    notes.append(("\n".join(text), quotes))
                    buf = []
                else:
                    buf += block
                kind = None
                continue
            if kind is not None:
                block.append(line)
                continue
            if s.startswith("#"):
                heading, buf = line, []
            buf.append(line)
    return notes


def place_notes(notes, views):
    """{kernel index: {instruction index: [note ids]}} for the note rows, and {kernel: {insn: [ids]}}
    for the quoted lines: each note goes to the kernel holding most of its quotes, matched in order."""
    anchors, quoted = {}, {}
    rows = []  # per kernel, in display order: (key, instruction index, text); key = index, or the label
    for v in views:
        clean, seq = v["clean"], []
        for i, ins in enumerate(clean.insns):
            seq += [(lab, i, lab + ":") for lab in sorted(l for l, at in clean.labels.items() if at == i)]
            seq.append((i, i, norm(ins.text)))
        rows.append(seq)
    for nid, (_, quotes) in enumerate(notes):
        best = None
        for k, seq in enumerate(rows):
            hits, pos = [], 0
            for q in quotes:
                j = next((j for j in range(pos, len(seq)) if seq[j][2] == q), None)
                if j is None:
                    j = next((j for j in range(len(seq)) if seq[j][2] == q), None)
                if j is not None:
                    hits.append(j)
                    pos = j + 1
            if hits and (best is None or len(hits) > len(best[1])):
                best = (k, hits)
        if best:
            k, hits = best
            anchors.setdefault(k, {}).setdefault(rows[k][min(hits)][1], []).append(nid)
            for j in hits:
                quoted.setdefault(k, {}).setdefault(rows[k][j][0], []).append(nid)
    return anchors, quoted


def loop_gutter(clean):
    """Per instruction, the loop brackets (┌ │ └) of every loop around it, one column per overlap
    level; the hottest loop's bracket in bold red."""
    loops, cols = clean.loops(), []
    for lo in loops:
        c = next((c for c, held in enumerate(cols) if all(b[1] < lo[0] or lo[1] < b[0] for b in held)), None)
        if c is None:
            cols.append([])
            c = len(cols) - 1
        cols[c].append(lo)
    hot = clean.hottest_loop()
    out = []
    for i in range(len(clean.insns)):
        cells = []
        for held in cols:
            lo = next((b for b in held if b[0] <= i <= b[1]), None)
            ch = " " if lo is None else "┌" if i == lo[0] else "└" if i == lo[1] else "│"
            cells.append(f"<b>{ch}</b>" if lo is not None and lo == hot else ch)
        out.append("".join(cells))
    return out


def grid(header, rows, cls="grid"):
    out = [f"<table class={cls}><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join(c if c.startswith("<td") else f"<td>{esc(c)}</td>" for c in r) + "</tr>")
    return "".join(out) + "</table>"


def kernel_info(k, v, res_rows, results):
    clean = v["clean"]
    whole, loop = mix_counts(clean)
    mixrows = [[key, str(whole.get(key, 0)), str(loop.get(key, 0))] for key in mix_keys(whole, loop)]
    mine = [r for r in res_rows if r[1].strip("`") in (clean.short, display_name(clean.short, clean.demangled))]
    badges = "".join(
        f"<span class='badge {'pass' if ok else 'fail'}' title='{esc(detail + ' (' + where + ')')}'>"
        f"{'✓' if ok else '✗'} {esc(rule)}</span>"
        for ok, fname, rule, detail, where in results if fname in (clean.short, "-"))
    npass = sum(1 for r in results if r[1] == clean.short and r[0])
    nfail = sum(1 for r in results if r[1] in (clean.short, "-") and not r[0])
    h = clean.hottest_loop()
    hot = f"instructions {h[0]}..{h[1]} of {len(clean.insns)}" if h else "no loop"
    return (f"<section class=kinfo data-kernel={k}>"
            f"<div><h3>resources (docs/resources.md)</h3>{grid(RESOURCE_COLUMNS, [[c.strip('`') for c in r] for r in mine])}"
            f"<h3>expectations: {npass} passed, {nfail} failed</h3><div class=badges>{badges or 'no rules'}</div></div>"
            f"<div><h3>instruction mix (hottest loop: {esc(hot)})</h3>"
            f"{grid(['instruction', 'kernel', 'hottest loop'], mixrows)}</div></section>")


def sass_table(k, v, notes, anchors, quoted):
    clean, rows = v["clean"], []
    by_index = {}
    for lab, idx in clean.labels.items():
        by_index.setdefault(idx, []).append(lab)
    gutter = loop_gutter(clean)
    hot = clean.hottest_loop()
    for i, ins in enumerate(clean.insns):
        for nid in anchors.get(i, []):
            rows.append(f"<tr class=note data-note={nid}><td colspan=5>{markdown.render(notes[nid][0])}</td></tr>")
        if hot and i == hot[0]:
            rows.append(f"<tr class=hothead><td colspan=5>▼ hottest loop: instructions {hot[0]}..{hot[1]} "
                        "(the innermost loop with the most math instructions of its own)</td></tr>")
        for lab in sorted(by_index.get(i, [])):
            q = f" q' data-notes='{' '.join(map(str, quoted[lab]))}" if lab in quoted else ""
            rows.append(f"<tr class='lbl{q}'><td class=g></td><td class=a></td><td class=t>{esc(lab)}:</td>"
                        "<td></td><td></td></tr>")
        cls = " ".join(c for c in ("hot" if hot and hot[0] <= i <= hot[1] else "", "q" if i in quoted else "") if c)
        attrs = f" class='{cls}'" if cls else ""
        if i in quoted:
            attrs += f" data-notes='{' '.join(map(str, quoted[i]))}'"
        line = v["lines"][i]
        if line is not None:
            attrs += f" data-line={line} style='--h:{hue(line)}'"
        rows.append(f"<tr{attrs}><td class=g>{gutter[i]}</td><td class=a>{i}</td><td class=t>{esc(ins.text)}</td>"
                    f"<td class=o>{esc(v['where'][i])}</td><td class=k>{'' if line is None else line}</td></tr>")
    return f"<table class='code sass' data-kernel={k}>" + "\n".join(rows) + "</table>"


def step_page(unit, linked_index=False):
    views = kernel_views(unit)
    src_lines = open(unit.source).read().splitlines()
    counts = {}  # line -> {kernel: instructions}
    for k, v in enumerate(views):
        for line in v["lines"]:
            if line is not None:
                counts.setdefault(line, {}).setdefault(k, 0)
                counts[line][k] += 1
    src_rows = []
    for n, text in enumerate(src_lines, 1):
        if n in counts:
            ks = " ".join(str(k) for k in sorted(counts[n]))
            cs = " ".join(f"{k}:{c}" for k, c in sorted(counts[n].items()))
            src_rows.append(f"<tr data-line={n} data-kernels='{ks}' data-counts='{cs}' style='--h:{hue(n)}'>"
                            f"<td class=n>{n}</td><td class=k></td><td class=c>{code_html(text)}</td></tr>")
        else:
            src_rows.append(f"<tr><td class=n>{n}</td><td class=k></td><td class=c>{code_html(text)}</td></tr>")
    notes = annotation_notes(unit)
    anchors, quoted = place_notes(notes, views)
    res_rows = unit_rows(unit) if views else []
    results = check_unit(unit) if views else []
    head = views[0]["clean"].header.get("clean SASS of", "").split(" | ", 2)[-1] if views else "no device code"
    tabs = "".join(f"<button data-k={k}>{esc(v['base'])} ({len(v['clean'].insns)} instructions)</button>"
                   for k, v in enumerate(views))
    parent = step_registry()[unit.step].parent if unit.step in step_registry() else ""
    diff_link = f" | <a href='diff_{parent}_{unit.step}.html'>diff with its parent, step {esc(parent)}</a>" if parent else ""
    nav = f"<nav><a href='index.html'>all steps</a>{diff_link}</nav>" if linked_index else ""
    src_rel = os.path.relpath(unit.source, REPO)
    body = [f"<header>{nav}<h1>Step {esc(unit.step)}: {esc(unit.name)}</h1>"
            f"<div class=meta>{esc(src_rel)} | {esc(head)} | hover a line to see what it became, click to pin; "
            "colour bands pair each source line with its instructions (-lineinfo)</div>"
            f"<div class=tabs>{tabs}</div></header>"]
    if views:
        body.append("<details class=summary open><summary>resources, expectations, instruction mix</summary>"
                    + "".join(kernel_info(k, v, res_rows, results) for k, v in enumerate(views)) + "</details>")
    sass = "".join(sass_table(k, v, notes, anchors.get(k, {}), quoted.get(k, {})) for k, v in enumerate(views))
    body.append(f"<main class=panes><div class=pane id=src><h2>{esc(src_rel)} (line, instructions in this kernel)</h2>"
                "<table class=code>"
                + "\n".join(src_rows) + "</table></div>"
                f"<div class=pane id=sass><h2>SASS (clean form; gutter: loops, <b style='color:#d12c2c'>hottest</b>; "
                "right: inlined from, source line)</h2>" + (sass or "<p>&nbsp;no kernel functions (no device code)</p>")
                + "</div></main>")
    for md in sorted(glob.glob(os.path.join(REPO, "sass_annotations", unit.step + "_*.md"))) if unit.step else []:
        body.append(f"<details class=walk><summary>the whole walkthrough: sass_annotations/{esc(os.path.basename(md))}"
                    f"</summary>{markdown.render(open(md).read())}</details>")
    return page(f"{unit.name}: source and SASS", "\n".join(body))


# ----------------------------------------------------------------------------------------------
# Diff page and index
# ----------------------------------------------------------------------------------------------

def diff_rows(lines):
    out = []
    for l in lines:
        cls = "hunk" if l.startswith("@@") else "add" if l.startswith("+") else "del" if l.startswith("-") else ""
        out.append(f"<tr{' class=' + cls if cls else ''}><td>{esc(l)}</td></tr>")
    return "<table class=code>" + "\n".join(out) + "</table>"


def diff_page(ua, ub, linked_index=False):
    for u in (ua, ub):
        ensure_dumped(u)
    sa, sb = open(ua.source).read().splitlines(), open(ub.source).read().splitlines()
    ra, rb = os.path.relpath(ua.source, REPO), os.path.relpath(ub.source, REPO)
    src = list(difflib.unified_diff(sa, sb, ra, rb, lineterm="", n=3))
    pairs = []
    for a, b in pair_functions(clean_functions(ua), clean_functions(ub)):
        fa, fb = a.base or a.short, b.base or b.short
        la, lb = read_body(os.path.join(ua.out, fa + ".sass")), read_body(os.path.join(ub.out, fb + ".sass"))
        d = list(difflib.unified_diff(la, lb, f"{ua.name}/{fa}.sass", f"{ub.name}/{fb}.sass", lineterm="", n=3))
        (wa, pa), (wb, pb) = mix_counts(a), mix_counts(b)
        rows = []
        for k in mix_keys(wa, wb):
            x, y, lx, ly = wa.get(k, 0), wb.get(k, 0), pa.get(k, 0), pb.get(k, 0)
            rows.append([k, str(x), str(y), f"<td class={'up' if y > x else 'down' if y < x else ''}>{y - x:+d}</td>",
                         str(lx), str(ly), f"<td class={'up' if ly > lx else 'down' if ly < lx else ''}>{ly - lx:+d}</td>"])
        na, nb = ua.step, ub.step
        table = grid(["instruction", na, nb, "delta", "loop " + na, "loop " + nb, "delta"], rows)
        pairs.append(f"<div class=pair><h3>{esc(fa)} ({na}) → {esc(fb)} ({nb})</h3>{table}"
                     f"{diff_rows(d) if d else '<p>&nbsp;clean SASS identical</p>'}</div>")
    nav = "<nav><a href='index.html'>all steps</a></nav>" if linked_index else ""
    body = (f"<header>{nav}<h1>Step {esc(ua.step)} → step {esc(ub.step)}</h1>"
            f"<div class=meta>{esc(ua.name)} → {esc(ub.name)}: the source diff beside the clean-SASS diff of each "
            "kernel pair (paired by name, else in object order) and its instruction-mix delta (whole kernel, hottest "
            "loop)</div></header><main class=panes><div class=pane id=srcdiff><h2>source diff</h2>"
            f"{diff_rows(src)}</div><div class=pane id=sassdiff><h2>clean SASS diff</h2>"
            + ("".join(pairs) or "<p>&nbsp;no kernel pairs</p>") + "</div></main>")
    return page(f"{ua.name} -> {ub.name}: SASS diff", body, script=False)


def description(unit):
    """The step's technique, as its registration states it (.technique); "" for a twin."""
    s = step_registry().get(unit.step)
    return s.technique if s else ""


def index_page(units, diffs):
    rows = []
    for u in units:
        page_ = u.name + ".html"
        d = diffs.get(u.step)
        parent = step_registry()[u.step].parent if u.step in step_registry() else ""
        link = f"<a href='{d}'>diff with {esc(parent)}</a>" if d else ("a root" if not parent else "")
        rows.append(f"<tr><td><a href='{page_}'>{esc(u.step)}</a></td><td><a href='{page_}'>{esc(u.name)}</a></td>"
                    f"<td>{esc(description(u))}</td><td>{link}</td></tr>")
    body = ("<header><h1>The matmul ladder: source beside SASS</h1><div class=meta>one page per step "
            "(generated by <code>make sass-html</code>; no network needed)</div></header><main class=index>"
            "<table class='grid index'><tr><th>step</th><th>page</th><th>technique</th><th>the lesson: vs its parent step</th></tr>"
            + "".join(rows) + "</table></main>")
    return page("matmul ladder: SASS pages", body, script=False)


def cmd_html(args):
    out = args.out or os.path.join(args.build, "sass-html")
    os.makedirs(out, exist_ok=True)
    written = []
    if args.diff:
        ua, ub = find_unit(args.build, args.diff[0]), find_unit(args.build, args.diff[1])
        path = os.path.join(out, f"diff_{ua.step}_{ub.step}.html")
        open(path, "w").write(diff_page(ua, ub))
        written.append(path)
    units = [find_unit(args.build, s) for s in args.steps] if args.steps else ([] if args.diff else all_steps(args.build))
    for u in units:
        path = os.path.join(out, u.name + ".html")
        open(path, "w").write(step_page(u, linked_index=not args.steps))
        written.append(path)
    if not args.steps and not args.diff:
        diffs = {}
        if not args.no_diffs:  # each step against its parent (the step tree of the registrations)
            by_step = {u.step: u for u in units}
            for b in units:
                parent = step_registry()[b.step].parent if b.step in step_registry() else ""
                if parent in by_step:
                    a = by_step[parent]
                    name = f"diff_{a.step}_{b.step}.html"
                    open(os.path.join(out, name), "w").write(diff_page(a, b, linked_index=True))
                    diffs[b.step] = name
        path = os.path.join(out, "index.html")
        open(path, "w").write(index_page(units, diffs))
        written.append(path)
    for p in written:
        print(f"wrote {p}")
    return 0
