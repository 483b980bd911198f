"""ptxas reports, the expectations of sass_annotations/*.expect (`check`) and the freshness of the
SASS/PTX quoted in sass_annotations/NN_*.md (`fresh`)."""
from __future__ import annotations

import dataclasses
import glob
import os
import re

from .consts import eval_count, source_constants
from .diff import live
from .dump import ensure_dumped
from .listing import clean_functions, is_math
from .tools import REPO, ToolError
from .units import all_steps, find_unit

# ----------------------------------------------------------------------------------------------
# ptxas reports
# ----------------------------------------------------------------------------------------------

def parse_ptxas(path):
    """{mangled: {registers, smem, stack, spill_stores, spill_loads, barriers}}, and the raw lines."""
    if not os.path.exists(path):
        raise ToolError(f"no ptxas report {path}: build the step (the Makefile writes it)")
    text = open(path).read()
    funcs, cur = {}, None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line) or re.search(r"Function properties for (\S+)", line)
        if m:
            cur = funcs.setdefault(m.group(1), {"registers": 0, "smem": 0, "stack": 0, "spill_stores": 0,
                                                "spill_loads": 0, "barriers": 0})
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            cur["stack"], cur["spill_stores"], cur["spill_loads"] = map(int, m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m:
            cur["registers"] = int(m.group(1))
            b = re.search(r"used (\d+) barriers", line)
            s = re.search(r"(\d+) bytes smem", line)
            cur["barriers"] = int(b.group(1)) if b else 0
            cur["smem"] = int(s.group(1)) if s else 0
    return funcs, text.splitlines()


# ----------------------------------------------------------------------------------------------
# Expectations (the format is in sass_annotations/README.md)
# ----------------------------------------------------------------------------------------------

OPS = {"==": lambda a, b: a == b, "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b,
       "<": lambda a, b: a < b, ">": lambda a, b: a > b, "!=": lambda a, b: a != b}
RULE_RE = re.compile(
    r"^(?P<scope>kernel|loop|outer)\s+(?:(?P<verb>has|lacks|has-line|lacks-line)\s+(?P<pat>\S.*?)"
    r"|count\s+(?P<cpat>\S+)\s+(?P<cop>==|<=|>=|<|>|!=)\s+(?P<cn>[\w*+\-/() ]+?)"
    r"|(?P<metric>backedges|math-loops)\s+(?P<bop>==|<=|>=|<|>|!=)\s+(?P<bn>\d+))$"
    r"|^ptxas\s+(?:(?P<field>registers|smem|stack|spill_stores|spill_loads|barriers)\s+(?P<pop>==|<=|>=|<|>|!=)\s+(?P<pn>\d+)"
    r"|lacks\s+(?P<ppat>.+))$")


@dataclasses.dataclass
class Expectations:
    rules: list            # (function regex or None, rule text, line number, file, constants)
    launch: list           # (function regex or None, key, value, constants): threads, tile_m, tile_n, grid,
                           # dynamic_smem for the resource table; a `function` line scopes them too
    # constants: the `const NAME = EXPR` lines of the rule's own file, in order ({NAME: EXPR}); they are
    # evaluated over the step's source constants and the ones before them (with_constants).


CONST_RE = re.compile(r"^const\s+(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<expr>\S.*)$")


def parse_expect(path, _including=(), func_re=None, consts=None):
    """The rules and launch lines of an .expect file. `const NAME = EXPR` defines a constant for the
    rules after it; `include FILE` (a path under sass_annotations/) adds that file's rules as if its
    lines stood there: they start in the includer's `function` scope with its constants, and what they
    change stays inside the included file (the family's rules, shared by the steps that run them)."""
    rules, launch, consts = [], [], dict(consts or {})
    if os.path.abspath(path) in _including:
        raise ToolError(f"{path}: included from itself ({' -> '.join(_including)})")
    for n, raw in enumerate(open(path), 1):
        line = raw.split(" #")[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        if line.startswith("include "):
            sub = os.path.join(REPO, "sass_annotations", line[len("include "):].strip())
            if not os.path.exists(sub):
                raise ToolError(f"{path}:{n}: include {sub}: no such file")
            inc = parse_expect(sub, _including + (os.path.abspath(path),), func_re, consts)
            rules += inc.rules
            launch += inc.launch
            continue
        m = CONST_RE.match(line)
        if m:
            consts = {**consts, m.group("name"): m.group("expr")}
            continue
        if line.startswith("function "):
            func_re = line[len("function "):].strip()
            continue
        if line.startswith("launch "):
            toks = line.split()[1:]
            for k, v in zip(toks[::2], toks[1::2]):
                launch.append((func_re, k, v, consts))
            continue
        if not RULE_RE.match(line):
            raise ToolError(f"{path}:{n}: not a rule: {line!r} (see sass_annotations/README.md)")
        rules.append((func_re, line, n, path, consts))
    return Expectations(rules, launch)


def with_constants(source_consts, file_consts):
    """The step's source constants plus a file's `const` lines, each evaluated over those before it."""
    if not file_consts:
        return source_consts
    out = dict(source_consts)
    for name, expr in file_consts.items():
        out[name] = eval_count(expr, out)
    return out


def expect_files(unit):
    files = [os.path.join(REPO, "sass_annotations", "all.expect")]
    if unit.step:
        files += sorted(glob.glob(os.path.join(REPO, "sass_annotations", unit.step + "_*.expect")))
    return [f for f in files if os.path.exists(f)]


def eval_rule(rule, func, ptxas_props, ptxas_lines, consts=None):
    """(passed, detail) for one rule on one function."""
    m = RULE_RE.match(rule)
    if not m:
        raise ToolError(f"not a rule: {rule!r}")
    g = m.groupdict()
    if g["field"]:
        props = ptxas_props.get(func.mangled)
        if props is None:
            return False, "function not in the ptxas report"
        v = props[g["field"]]
        return OPS[g["pop"]](v, int(g["pn"])), f"{g['field']} = {v}"
    if g["ppat"]:
        hits = [l for l in ptxas_lines if re.search(g["ppat"], l)]
        return not hits, (f"ptxas said: {hits[0].strip()}" if hits else "no such ptxas line")
    scope = g["scope"]
    insns = func.insns
    where = "kernel"
    if scope in ("loop", "outer"):
        h = func.hottest_loop()
        if scope == "outer":
            h = func.outer_loop(h)
        if h is None:
            return False, "the function has no loop"
        insns = func.insns[h[0]:h[1] + 1]
        where = f"{scope} instructions {h[0]}..{h[1]}"
    if g["metric"] == "backedges":
        lo, hi = insns[0].index, insns[-1].index
        n = sum(1 for b, t in func.backedges() if lo <= b <= hi and lo <= t <= hi)
        return OPS[g["bop"]](n, int(g["bn"])), f"{n} backward branches in {where}"
    if g["metric"] == "math-loops":
        lo, hi = insns[0].index, insns[-1].index
        inner = [l for l in func.loops() if lo <= l[0] and l[1] <= hi and (l[0], l[1]) != (lo, hi)]
        n = sum(1 for l in inner if any(is_math(i.opcode) for i in func.insns[l[0]:l[1] + 1]))
        return OPS[g["bop"]](n, int(g["bn"])), f"{n} loop(s) holding math instructions nested in {where}"
    insns = live(insns)
    if g["verb"] in ("has", "lacks"):
        rx = re.compile(g["pat"])
        hits = [i for i in insns if rx.fullmatch(i.opcode)]
    elif g["verb"]:
        rx = re.compile(g["pat"])
        hits = [i for i in insns if rx.search(i.text)]
    if g["verb"]:
        ok = bool(hits) if g["verb"].startswith("has") else not hits
        return ok, f"{len(hits)} in {where}" + (f", e.g. `{hits[0].text}`" if hits else "")
    rx = re.compile(g["cpat"])
    n = sum(1 for i in insns if rx.fullmatch(i.opcode))
    want = eval_count(g["cn"], consts or {})
    return OPS[g["cop"]](n, want), f"{n} in {where}" + ("" if g["cn"].strip().isdigit() else f" ({g['cn'].strip()} = {want})")


def check_unit(unit, rules=None):
    """[(passed, function short name, rule, detail, where)] for every rule on every selected function."""
    ensure_dumped(unit)
    funcs = clean_functions(unit)
    props, plines = parse_ptxas(unit.ptxas)
    if rules is None:
        rules = [r for f in expect_files(unit) for r in parse_expect(f).rules]
    else:
        rules = [(None, r, 0, "command line", {}) for r in rules]
    results, consts = [], source_constants(unit.source)
    if not funcs and unit.step != "00":
        # Only step 00 (cuBLAS) has no device code; anywhere else an empty dump means the kernel was
        # not compiled in (an uninstantiated template, a dropped launcher), and every rule would
        # otherwise pass by having nothing to look at.
        return [(False, "-", rule, "no kernel function in the dump (only step 00 may have none)",
                 f"{os.path.relpath(path, REPO) if os.path.isabs(path) else path}:{n}")
                for _, rule, n, path, _consts in rules]
    for func_re, rule, n, path, file_consts in rules:
        where = f"{os.path.relpath(path, REPO) if os.path.isabs(path) else path}:{n}"
        chosen = [f for f in funcs if func_re is None or re.search(func_re, f.demangled or f.short)]
        if not chosen and func_re is None:
            continue  # step 00 (cuBLAS) has no device code: nothing to check
        if not chosen:
            results.append((False, "-", rule, f"no kernel function matches /{func_re}/", where))
        for f in chosen:
            ok, detail = eval_rule(rule, f, props, plines, with_constants(consts, file_consts))
            results.append((ok, f.short, rule, detail, where))
    return results


def cmd_check(args):
    if args.twin:
        units = [find_unit(args.build, "twin:" + args.twin)]
    elif args.steps:
        units = [find_unit(args.build, s) for s in args.steps]
    else:
        units = all_steps(args.build)
    failed = 0
    for u in units:
        for ok, fname, rule, detail, where in check_unit(u, args.rule or None):
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'} {u.name} {fname} [{rule}] {detail} ({where})")
    print(f"{failed} rule(s) failed")
    return 1 if failed else 0


# ----------------------------------------------------------------------------------------------
# Annotation freshness
# ----------------------------------------------------------------------------------------------

def quoted_lines(md_path):
    """(kind, line number, text) for every line inside ```sass / ```ptx blocks, skipping comments,
    elisions (...) and blank lines."""
    return [(kind, n, text) for kind, _, segments, _step in quoted_blocks(md_path) for seg in segments for n, text in seg]


def quoted_blocks(md_path):
    """[(kind, first line number, segments, step)] for every ```sass / ```ptx block: the quoted lines of
    a block, split into segments at elisions (a line starting with ...); comment lines (// or #) and
    blank lines are skipped. Each segment is [(line number, text)], an address prefix /*0040*/ dropped.
    A fence that names a step, ```sass 22, is checked against that step's dump (step "22"); else step
    is None and the caller's steps apply."""
    blocks, kind, cur = [], None, None
    for n, line in enumerate(open(md_path), 1):
        s = line.strip()
        if s.startswith("```"):
            if kind is None:
                info = s[3:].split()
                kind = info[0] if info else ""
                step = info[1] if len(info) > 1 and kind in ("sass", "ptx") else None
                cur = (kind, n + 1, [[]], step)
            else:
                if kind in ("sass", "ptx"):
                    segments = [seg for seg in cur[2] if seg]
                    if segments:
                        blocks.append((cur[0], cur[1], segments, cur[3]))
                kind = None
            continue
        if kind not in ("sass", "ptx") or not s or s.startswith(("//", "#")):
            continue
        if s.startswith("..."):
            cur[2].append([])
            continue
        cur[2][-1].append((n, re.sub(r"^/\*[0-9a-f]+\*/\s*", "", s)))
    return blocks


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def listing_lines(path):
    """The normalized, non-comment, non-blank lines of one function's clean SASS or PTX file."""
    return [norm(l) for l in open(path) if l.strip() and not l.lstrip().startswith("//")]


def function_listings(unit, kind):
    """{file name: [lines]} of every function of a dumped unit: clean SASS (kind "sass") or PTX."""
    ext = ".sass" if kind == "sass" else ".ptx"
    out = {}
    for f in sorted(glob.glob(os.path.join(unit.out, "*" + ext))):
        if f.endswith((".cuobjdump.sass", ".nvdisasm.sass")):
            continue
        out[os.path.basename(f)] = listing_lines(f)
    return out


def find_block(segments, lines):
    """True when the segments appear in `lines` in order, each as consecutive lines (an elision
    between segments may skip any number of lines). Greedy earliest match: optimal for this."""
    pos = 0
    for seg in segments:
        want = [norm(t) for _, t in seg]
        hit = next((i for i in range(pos, len(lines) - len(want) + 1) if lines[i:i + len(want)] == want), None)
        if hit is None:
            return False
        pos = hit + len(want)
    return True


def first_missing(segments, listings):
    """For a stale block: the first quoted line found in no function at all, or None when every
    line exists somewhere (then only the order, contiguity or single-function rule is broken)."""
    everything = set()
    for lines in listings.values():
        everything |= set(lines)
    for seg in segments:
        for n, t in seg:
            if norm(t) not in everything:
                return n, t
    return None


def check_md(md, listings_by_unit, label, listings_of=None):
    """Prints a STALE line for every quoted block of `md` that is not, in order and contiguous
    (elisions aside), inside one function of one of the units (or of the step its fence names, through
    `listings_of(step)` -> (unit, listings)); returns (blocks, stale)."""
    stale = 0
    blocks = quoted_blocks(md)
    for kind, start, segments, step in blocks:
        units, where = listings_by_unit, label
        if step is not None:
            if listings_of is None:
                raise ToolError(f"{md}:{start}: a fence names step {step}, but no step dumps are at hand")
            unit, ls = listings_of(step)
            units, where = {unit.name: ls}, unit.name
        ok = any(find_block(segments, lines) for listings in units.values() for lines in listings[kind].values())
        if ok:
            continue
        stale += 1
        all_listings = {f"{u}/{f}": l for u, ls in units.items() for f, l in ls[kind].items()}
        miss = first_missing(segments, all_listings)
        why = (f"line {miss[0]} is in no function: {miss[1]}" if miss else
               "every line exists, but not in this order and contiguous (mark skipped lines with ...) in one function")
        print(f"STALE {os.path.relpath(md, REPO)}:{start}: {kind} block of {sum(map(len, segments))} line(s) "
              f"not in the current dump of {where}: {why}")
    return len(blocks), stale


def cmd_fresh(args):
    """Every ```sass / ```ptx block of sass_annotations/NN_*.md must appear in its step's dump (or in the
    dump of the step its fence names: ```sass 22), and every such block of docs/*.md and
    docs/notebook/*.md in the dump of some step: in order, contiguous between elisions (...), inside one
    function. --md FILE --step NN checks one file against one step."""
    stale = 0
    units = {}

    def listings(step):
        if step not in units:
            unit = find_unit(args.build, step)
            ensure_dumped(unit)
            units[step] = (unit, {"sass": function_listings(unit, "sass"), "ptx": function_listings(unit, "ptx")})
        return units[step]

    if getattr(args, "md", None):
        jobs = [(os.path.abspath(args.md), [args.step] if args.step else [u.step for u in all_steps(args.build)])]
    else:
        jobs = [(md, [os.path.basename(md).split("_")[0]])
                for md in sorted(glob.glob(os.path.join(REPO, "sass_annotations", "[0-9][0-9]*_*.md")))]
        docs = sorted(glob.glob(os.path.join(REPO, "docs", "*.md")) + glob.glob(os.path.join(REPO, "docs", "notebook", "*.md")))
        jobs += [(md, [u.step for u in all_steps(args.build)]) for md in docs]
    for md, steps in jobs:
        by_unit = {listings(s)[0].name: listings(s)[1] for s in steps}
        label = next(iter(by_unit)) if len(by_unit) == 1 else "any step"
        n, bad = check_md(md, by_unit, label, listings)
        stale += bad
        print(f"{os.path.relpath(md, REPO)}: {n} quoted block(s) checked against {label}")
    print(f"{stale} stale quote(s)")
    return 1 if stale else 0
