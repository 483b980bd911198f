"""Listings: the cubin's ELF sections, nvdisasm -c -gi parsing, the clean SASS form (write, read,
loops) and the per-entry PTX."""
from __future__ import annotations

import dataclasses
import glob
import os
import re
import struct

from .tools import ToolError
from .units import short_name

# ----------------------------------------------------------------------------------------------
# ELF: the cubin's sections (for the embedded PTX)
# ----------------------------------------------------------------------------------------------

def elf_sections(data):
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ToolError("not a 64-bit ELF cubin")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_off = headers[shstrndx][4]
    sections = {}
    for h in headers:
        name_end = data.index(b"\0", strtab_off + h[0])
        sections[data[strtab_off + h[0]:name_end].decode()] = data[h[4]:h[4] + h[5]]
    return sections


def compiler_version(obj_bytes):
    m = re.search(rb"Cuda compilation tools, release ([\d.]+), V([\d.]+)", obj_bytes)
    return f"nvcc {m.group(1).decode()} (V{m.group(2).decode()})" if m else "nvcc unknown"


# ----------------------------------------------------------------------------------------------
# SASS parsing (nvdisasm -c -gi output)
# ----------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Insn:
    addr: int
    text: str          # "@!P0 BRA `(.L_x_0) ;" as printed, without address
    pred: str          # "@!P0" or ""
    opcode: str        # "LDG.E.128"
    operands: str
    loc: tuple = ()    # ((file, line), (file, line) it was inlined at, ...)
    target: str = ""   # branch target label


@dataclasses.dataclass
class Function:
    mangled: str
    insns: list
    labels: dict       # label -> index of the instruction it precedes

    @property
    def short(self):
        return short_name(self.mangled)


INSN_RE = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(.*?)\s*$")
LOC_RE = re.compile(r'File "([^"]+)", line (\d+)')
BRANCH_OPS = ("BRA", "JMP", "BRX", "JMX", "CALL")


def split_insn(text):
    body = text.rstrip(" ;").strip()
    pred = ""
    if body.startswith("@"):
        pred, body = body.split(None, 1)
    parts = body.split(None, 1)
    return pred, parts[0] if parts else "", parts[1] if len(parts) > 1 else ""


def location_chain(group):
    """The inlining chain, innermost first, of one run of `//##` lines. nvdisasm -gi prints one line per
    level, innermost first: `File A, line 100 inlined at File B, line 185`, then `File B, line 185
    inlined at File B, line 269`, then `File B, line 269`; so the chain is the first line's two
    locations and then each later line's outer one (wgmma.cuh:100 <- B:185 <- B:269)."""
    chain = []
    for s in group:
        locs = [(f, int(n)) for f, n in LOC_RE.findall(s)]
        for loc in locs if not chain else locs[1:] or locs:
            if not chain or chain[-1] != loc:
                chain.append(loc)
    return tuple(chain)


def parse_nvdisasm(text):
    """Functions of one cubin, in order, from `nvdisasm -c -gi`. Each instruction's `loc` is its whole
    inlining chain (location_chain), innermost first."""
    funcs, cur, loc, pending, group = [], None, (), [], []
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"^\.text\.(\S+):$", s)
        if m:
            cur = Function(m.group(1), [], {})
            funcs.append(cur)
            loc, pending, group = (), [], []
            continue
        if cur is None:
            continue
        if s.startswith("//##"):
            group.append(s)  # consecutive lines are the levels of one chain
            loc = location_chain(group)
            continue
        group = []
        m = re.match(r"^(\.L\w+):$", s)
        if m:
            pending.append(m.group(1))
            continue
        m = INSN_RE.match(line)
        if m:
            text_ = m.group(2)
            pred, op, operands = split_insn(text_)
            target = ""
            if op.split(".")[0] in BRANCH_OPS:
                t = re.search(r"`\((\.L\w+)\)", operands)
                target = t.group(1) if t else ""
            for lab in pending:
                cur.labels[lab] = len(cur.insns)
            pending = []
            cur.insns.append(Insn(int(m.group(1), 16), text_, pred, op, operands, loc, target))
    for f in funcs:
        # Labels after the last instruction (the end-of-function size label) point past the end.
        for lab in pending:
            f.labels.setdefault(lab, len(f.insns))
    return funcs


def trim_padding(insns):
    """Drops the NOP padding after the final self-branch (`.L_x_9: BRA .L_x_9`) ptxas appends."""
    end = len(insns)
    while end > 0 and insns[end - 1].opcode == "NOP":
        end -= 1
    return insns[:end]


def clean_lines(func):
    """Instruction lines with addresses gone and labels renumbered .L0, .L1... per function."""
    insns = trim_padding(func.insns)
    order = {}
    by_index = {}
    for lab, idx in sorted(func.labels.items(), key=lambda kv: kv[1]):
        if idx < len(insns) and lab not in order:
            order[lab] = f".L{len(order)}"
            by_index.setdefault(idx, []).append(order[lab])
    out = []
    for i, ins in enumerate(insns):
        for lab in by_index.get(i, []):
            out.append(f"{lab}:")
        text = re.sub(r"\.L_x_\d+", lambda m: order.get(m.group(0), m.group(0)), ins.text)
        text = re.sub(r"\s+", " ", text)
        out.append("        " + text)
    return out


# ----------------------------------------------------------------------------------------------
# Clean SASS files: the header and the parser the checker and the diff use
# ----------------------------------------------------------------------------------------------

@dataclasses.dataclass
class CleanInsn:
    index: int
    text: str
    pred: str
    opcode: str
    operands: str
    target: str        # ".L3" for branches


@dataclasses.dataclass
class CleanFunction:
    short: str
    mangled: str
    demangled: str
    header: dict
    insns: list
    labels: dict       # ".L3" -> instruction index
    base: str = ""     # the clean file's base name: short, or short_1, short_2 ... for template instantiations

    def backedges(self):
        """(branch index, target index) for every branch to an earlier (or the same) instruction,
        except the self-branch ptxas puts after the last EXIT (never reached: a trap for runaway PCs)
        and the return branch of an out-of-line stub. ptxas moves an mbarrier wait's retry loop to
        the end of the function: `@!P0 BRA stub` inline, and the stub (its own TRYWAIT loop) ends in
        `BRA back` to the instruction after that branch. The return jumps backwards but closes no
        loop of the source; counted as one, it would stretch the loop around the wait to the end of
        the function (step 23's tile loop would have held both copies of its epilogue)."""
        edges = []
        for ins in self.insns:
            if ins.target and ins.target in self.labels:
                t = self.labels[ins.target]
                if t < ins.index or (t == ins.index and ins.index < len(self.insns) - 1):
                    if not self._stub_return(ins, t):
                        edges.append((ins.index, t))
        return edges

    def _stub_return(self, ins, t):
        """`ins` (a branch back to t) returns from an out-of-line stub: the instruction before t
        branches forward into a block that starts after t and at or before `ins`."""
        if t == 0 or ins.pred:
            return False
        before = self.insns[t - 1]
        stub = self.labels.get(before.target) if before.target else None
        return stub is not None and t < stub <= ins.index

    def loops(self):
        """Loops as instruction ranges [start, end] (end = the backward branch), outermost first."""
        spans = {}
        for b, t in self.backedges():
            # Several back-edges to one header form one loop: keep the latest branch.
            spans[t] = max(spans.get(t, b), b)
        return sorted(((t, b) for t, b in spans.items()), key=lambda s: (s[0], -s[1]))

    def nested(self, loop):
        """Loops strictly inside `loop`."""
        return [l for l in self.loops() if l != loop and loop[0] <= l[0] and l[1] <= loop[1]]

    def own_math(self, loop, kind=None):
        """Math instructions of `loop` (those `kind` accepts; default is_math) that are not inside a
        loop nested in it."""
        kind = kind or is_math
        inner = self.nested(loop)
        return sum(1 for i in self.insns[loop[0]:loop[1] + 1]
                   if kind(i.opcode) and not any(l[0] <= i.index <= l[1] for l in inner))

    def hottest_loop(self):
        """The loop with the most math instructions (FFMA/HMMA/HGMMA/...) of its own, not counting
        those of loops nested in it; ties go to the innermost. A loop with tensor-core instructions
        beats any loop without them (one HGMMA.64x256x16 is 262,144 multiply-adds, one FADD 32): step
        21's fixup loop has 128 FADDs, its K loop 4 HGMMAs, and the K loop is the hot one. None when
        the function has no loop. Among loops with tensor-core instructions, one with no such loop
        nested in it wins over its holder: a K loop peeled or unrolled (step 33's, its first and last K
        tiles outside it) leaves the item loop around it as many wgmmas of its own, but the inner loop
        runs them once per iteration of the item loop's many."""
        loops = self.loops()
        if not loops:
            return None

        def tensor_inside(l):
            return any(self.own_math(n, is_tensor_math) > 0 for n in self.nested(l))

        def key(l):
            return (self.own_math(l, is_tensor_math) > 0, not tensor_inside(l), self.own_math(l))

        top = max(key(l) for l in loops)
        best = [l for l in loops if key(l) == top]
        # Ties: the innermost (a loop that holds no other tied loop), then the first (the data-parallel
        # copy of a K loop before its stream-K copy).
        inner = [l for l in best if not any(o != l and l[0] <= o[0] and o[1] <= l[1] for o in best)]
        return min(inner, key=lambda l: l[0])

    def outer_loop(self, loop):
        """The outermost loop that contains `loop` (the loop itself when it is outermost)."""
        if loop is None:
            return None
        holders = [l for l in self.loops() if l[0] <= loop[0] and loop[1] <= l[1]]
        return max(holders, key=lambda l: l[1] - l[0])


def is_tensor_math(opcode):
    # QGMMA: the FP8 (e4m3/e5m2) wgmma, as cuobjdump spells it (step 30's dump).
    return opcode.split(".")[0] in ("HMMA", "HGMMA", "QGMMA", "IMMA") and not opcode.startswith("HFMA2.MMA")


def is_math(opcode):
    base = opcode.split(".")[0]
    return base in ("FFMA", "FFMA2", "HFMA2", "HMMA", "HGMMA", "QGMMA", "IMMA", "DFMA", "FMUL", "FADD") and not opcode.startswith("HFMA2.MMA")


def write_clean(path, func, unit, meta, demangled):
    header = [
        f"// clean SASS of {func.short} | step {unit.name} | {meta['compiler']} | target {meta['target']} "
        f"| disassembler nvdisasm {meta['nvdisasm']}",
        f"// function {demangled}",
        f"// mangled {func.mangled}",
        "// addresses, encodings and control codes stripped; labels renumbered .L0, .L1, ... per function",
    ]
    with open(path, "w") as f:
        f.write("\n".join(header + clean_lines(func)) + "\n")


def read_clean(path):
    header, insns, labels = {}, [], {}
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("//"):
            m = re.match(r"// (clean SASS of|function|mangled) (.*)", line)
            if m:
                header[m.group(1)] = m.group(2)
            continue
        s = line.strip()
        if not s:
            continue
        if s.endswith(":") and s.startswith(".L"):
            labels[s[:-1]] = len(insns)
            continue
        pred, op, operands = split_insn(s)
        t = re.search(r"`\((\.L\d+)\)", operands)
        target = t.group(1) if t and op.split(".")[0] in BRANCH_OPS else ""
        insns.append(CleanInsn(len(insns), s, pred, op, operands, target))
    short = header.get("clean SASS of", os.path.basename(path)).split(" |")[0]
    base = os.path.basename(path)[:-len(".sass")] if path.endswith(".sass") else short
    return CleanFunction(short, header.get("mangled", ""), header.get("function", ""), header, insns, labels, base)


def clean_functions(unit):
    files = sorted(glob.glob(os.path.join(unit.out, "*.sass")))
    files = [f for f in files if not f.endswith((".cuobjdump.sass", ".nvdisasm.sass"))]
    return [read_clean(f) for f in files]


# ----------------------------------------------------------------------------------------------
# PTX (from the cubin's .nv_debug_ptx_txt section)
# ----------------------------------------------------------------------------------------------

def split_ptx(ptx):
    """{mangled entry name: its PTX lines}, comments dropped, $L__ labels renumbered per entry."""
    entries, cur, name, depth, opened = {}, None, None, 0, False
    for line in ptx.splitlines():
        m = re.match(r"^\.(?:visible |weak )?\.entry (\S+?)\(", line.strip())
        if m:
            name, cur, depth, opened = m.group(1), [], 0, False
            entries[name] = cur
        if cur is not None and line.strip():
            cur.append(line.rstrip())
            # The entry ends where its braces balance again: inline asm brings its own { } blocks.
            code = line.split("//", 1)[0]
            depth += code.count("{") - code.count("}")
            opened |= "{" in code
            if opened and depth <= 0:
                cur = None
    for name, lines in entries.items():
        order = {}
        def ren(m):
            return order.setdefault(m.group(0), f"$L{len(order)}")
        entries[name] = [re.sub(r"\$L__\w+", ren, l) for l in lines]
    return entries
