"""The instruction mix (whole kernel and hottest loop) and `diff` of two units' clean SASS or PTX."""
from __future__ import annotations

import difflib
import os
import re
import sys

from .dump import ensure_dumped
from .listing import BRANCH_OPS, clean_functions
from .tools import ToolError
from .units import find_unit

# ----------------------------------------------------------------------------------------------
# Instruction mix and diff
# ----------------------------------------------------------------------------------------------

MEM_OPS = ("LDG", "STG", "LDS", "STS", "LDL", "STL", "LDGSTS", "LDSM", "STSM", "LD", "ST", "ATOMS", "RED", "ATOMG")
WIDTHS = ("U8", "S8", "U16", "S16", "8", "16", "32", "64", "128")


def category(opcode):
    """The instruction-mix row an opcode counts in (None: not tallied)."""
    parts = opcode.split(".")
    base = parts[0]
    if base in ("LDG", "STG", "LDS", "STS", "LDL", "STL"):
        width = next((p for p in parts[1:] if p in WIDTHS), "32")
        return f"{base}.{width}"
    if base in ("FFMA", "FMUL", "FADD", "HMMA", "IMMA", "LDGSTS", "LDSM", "STSM", "BAR", "SYNCS", "MEMBAR",
                "WARPGROUP", "USETMAXREG", "UTMALDG", "UTMASTG", "UBLKCP", "DEPBAR", "EXIT"):
        if base == "HMMA":
            return ".".join(parts[:2])
        return base
    if base in ("HGMMA", "QGMMA"):
        return ".".join(parts[:2])  # HGMMA.64x256x16 / QGMMA.64x128x32 (FP8): the shape
    if base in BRANCH_OPS:
        return "branch"
    return None


def live(insns):
    """Instructions that can execute: `@!PT` (predicate never true) ones are placeholders ptxas
    emits, e.g. `@!PT LDS RZ, [RZ]` next to cp.async waits; rules and the mix ignore them."""
    return [i for i in insns if i.pred != "@!PT"]


def mix(insns):
    insns = live(insns)
    counts = {"all": len(insns)}
    for ins in insns:
        c = category(ins.opcode)
        if c:
            counts[c] = counts.get(c, 0) + 1
    return counts


def loop_insns(func):
    h = func.hottest_loop()
    return func.insns[h[0]:h[1] + 1] if h else []


def mix_counts(f):
    """(whole kernel, hottest loop) instruction mix of one clean function, backward branches included."""
    whole, loop = mix(f.insns), mix(loop_insns(f))
    whole["backward branches"] = len(f.backedges())
    h = f.hottest_loop()
    loop["backward branches"] = sum(1 for b, t in f.backedges() if h and h[0] <= t and b <= h[1])
    return whole, loop


def mix_keys(*counts):
    """The rows of a mix table: `all` first, then the categories by name, backward branches last."""
    return sorted(set().union(*counts), key=lambda k: (k != "all", k == "backward branches", k))


def mix_table(fa, fb, a_name, b_name):
    (whole_a, loop_a), (whole_b, loop_b) = mix_counts(fa), mix_counts(fb)
    keys = mix_keys(whole_a, whole_b)
    rows = [f"| {'instruction':<20} | {a_name:>8} | {b_name:>8} | {'delta':>7} | {'loop ' + a_name:>9} | {'loop ' + b_name:>9} | {'delta':>7} |",
            "|" + "|".join(["-" * 22, "-" * 10, "-" * 10, "-" * 9, "-" * 11, "-" * 11, "-" * 9]) + "|"]
    for k in keys:
        a, b = whole_a.get(k, 0), whole_b.get(k, 0)
        la, lb = loop_a.get(k, 0), loop_b.get(k, 0)
        rows.append(f"| {k:<20} | {a:>8} | {b:>8} | {b - a:>+7} | {la:>9} | {lb:>9} | {lb - la:>+7} |")
    def where(f):
        h = f.hottest_loop()
        return f"instructions {h[0]}..{h[1]} of {len(f.insns)}" if h else "no loop"
    rows.append("")
    rows.append(f"hottest loop (the loop with the most math instructions of its own): {a_name} {where(fa)}; {b_name} {where(fb)}")
    return "\n".join(rows)


def config_key(f):
    """A template instantiation's arguments with any step's namespace dropped, so that two steps'
    kernels of the same configuration name pair up: gemm_kernel<step41::Swapped<16> > and
    gemm_kernel<step40::Swapped<16> > both read "Swapped<16>"; None for a function that is no
    template instantiation."""
    m = re.search(re.escape(f.short) + r"<(.*)>\(", f.demangled or "")
    return re.sub(r"\bstep\w*::", "", m.group(1)).replace(" ", "") if m else None


def pair_functions(fa, fb):
    """Same short name first: a function of A against the function of B with its name and its
    configuration (config_key: step 41's gemm_kernel<Block> against step 40's gemm_kernel<Block>, not
    against its Swapped ones), or, where no function of B has that configuration, against every
    function of B with its name (template instantiations, e.g. step 24's kernel<false> and
    kernel<true> against step 23's one kernel); otherwise in object order."""
    pairs, rest_a, rest_b = [], [], list(fb)
    for f in fa:
        same = [g for g in fb if g.short == f.short]
        key = config_key(f)
        if key is not None and any(config_key(g) == key for g in same):
            same = [g for g in same if config_key(g) == key]
        if same:
            pairs += [(f, g) for g in same]
            rest_b = [g for g in rest_b if all(g is not x for x in same)]
        else:
            rest_a.append(f)
    pairs += list(zip(rest_a, rest_b))
    return pairs


def unpaired(fa, fb, pairs):
    """The functions of either side that pair_functions left out (a configuration one side alone has)."""
    return [f for f in fa if all(f is not a for a, _ in pairs)] + [g for g in fb if all(g is not b for _, b in pairs)]


def read_clean_ptx(unit, short):
    p = os.path.join(unit.out, short + ".ptx")
    return [l for l in open(p).read().splitlines() if not l.startswith("//")] if os.path.exists(p) else None


def cmd_diff(args):
    ua, ub = find_unit(args.build, args.a), find_unit(args.build, args.b)
    for u in (ua, ub):
        ensure_dumped(u)
    fa, fb = clean_functions(ua), clean_functions(ub)
    out = []
    pairs = pair_functions(fa, fb)
    for f in unpaired(fa, fb, pairs):  # said, not dropped silently
        print(f"note: {f.demangled or f.short} has no counterpart on the other side", file=sys.stderr)
    for a, b in pairs:
        if args.what == "ptx":
            la, lb = read_clean_ptx(ua, a.base or a.short), read_clean_ptx(ub, b.base or b.short)
            if la is None or lb is None:
                raise ToolError("no PTX in the cubin: build with -lineinfo")
            ext = ".ptx"
        else:
            # Keep the labels in the text so loop heads are visible in the diff.
            la = read_body(os.path.join(ua.out, (a.base or a.short) + ".sass"))
            lb = read_body(os.path.join(ub.out, (b.base or b.short) + ".sass"))
            ext = ".sass"
        na, nb = a.base or a.short, b.base or b.short
        out.append(f"==== {ua.name}/{na}{ext}  vs  {ub.name}/{nb}{ext}")
        out += [f"// A: {a.header.get('clean SASS of', '')}", f"// B: {b.header.get('clean SASS of', '')}"]
        out += [f"// A: {a.demangled}", f"// B: {b.demangled}"] if na != a.short or nb != b.short else []
        out += list(difflib.unified_diff(la, lb, f"{ua.name}/{na}{ext}", f"{ub.name}/{nb}{ext}", lineterm="", n=3))
        out.append("")
        out.append(f"instruction mix, {a.short} ({ua.step}) -> {b.short} ({ub.step}): whole kernel and hottest loop")
        out.append(mix_table(a, b, ua.step or ua.name, ub.step or ub.name))
        out.append("")
    pairs = pair_functions(fa, fb)
    if len({id(a) for a, _ in pairs}) != len(fa) or len({id(b) for _, b in pairs}) != len(fb):
        out.append(f"note: {ua.name} has {len(fa)} kernel function(s), {ub.name} has {len(fb)}; unpaired ones are not shown")
    text = "\n".join(out) + "\n"
    path = os.path.join(args.build, "sass", f"diff_{ua.step}_{ub.step}.{args.what}.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").write(text)
    sys.stdout.write(text)
    print(f"(written to {path})")


def read_body(path):
    return [l.rstrip() for l in open(path) if not l.startswith("//") and l.strip()]
