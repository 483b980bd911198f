#!/usr/bin/env python3
"""PTX/SASS tooling for the matmul series: dump, clean, interleave, diff, check, resource table.

Needs no GPU and no CUDA install beyond the objects the build made: cuobjdump and nvdisasm are
taken from PATH, else $CUDA_HOME/bin, else the nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm pip
wheels. The PTX comes from the objects too: -lineinfo makes ptxas embed the PTX it assembled in
the cubin's .nv_debug_ptx_txt section, so `ptx` needs no nvcc either.

  sass.py --build build dump 06        SASS, clean SASS, source-interleaved view, PTX of step 06
  sass.py --build build diff 05 06     unified diff of the clean SASS + instruction-mix table
  sass.py --build build check [06 ...]  enforce sass_annotations/NN_*.expect (all steps by default)
  sass.py --build build fresh           every SASS/PTX line quoted in sass_annotations/*.md exists
  sass.py --build build resources       docs/resources.md (registers, smem, occupancy, waves)
  sass.py selftest                      the parsers and the checker on hand-made listings

The file formats (clean SASS, expectations) are described in sass_annotations/README.md.
"""
from __future__ import annotations

import argparse
import dataclasses
import difflib
import glob
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The disassembler wheels pinned for machines without a CUDA install (.ci/run installs them).
# No 13.0 wheel exists on PyPI; 13.2 disassembles the sm_90/sm_90a cubins nvcc 13.0 writes.
WHEEL_VERSION = "13.2.86"
PIP_HINT = (f"python3 -m pip install nvidia-cuda-cuobjdump=={WHEEL_VERSION} "
            f"nvidia-cuda-nvdisasm=={WHEEL_VERSION}")


class ToolError(Exception):
    pass


# ----------------------------------------------------------------------------------------------
# Finding the tools
# ----------------------------------------------------------------------------------------------

def wheel_bin_dirs():
    """bin/ folders of installed nvidia-* wheels (layouts nvidia/cu13/bin and nvidia/<pkg>/bin)."""
    roots = list(sys.path)
    try:
        import site
        roots += site.getsitepackages() + [site.getusersitepackages()]
    except Exception:  # site may be restricted in embedded interpreters
        pass
    seen, dirs = set(), []
    for root in roots:
        for d in sorted(glob.glob(os.path.join(root or ".", "nvidia", "*", "bin"))):
            if d not in seen:
                seen.add(d)
                dirs.append(d)
    return dirs


def find_tool(name):
    on_path = shutil.which(name)
    if on_path:
        return on_path
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    candidate = os.path.join(cuda_home, "bin", name)
    if os.access(candidate, os.X_OK):
        return candidate
    for d in wheel_bin_dirs():
        candidate = os.path.join(d, name)
        if os.access(candidate, os.X_OK):
            return candidate
    raise ToolError(f"{name} not found on PATH, in {cuda_home}/bin, or in an installed "
                    f"nvidia-cuda-{name} wheel. Install both disassemblers with:\n  {PIP_HINT}")


def run_tool(args, cwd=None):
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolError(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stderr.strip()}")
    return proc.stdout


def tool_version(path):
    out = run_tool([path, "--version"])
    m = re.search(r"release ([\d.]+), V([\d.]+)", out)
    return m.group(2) if m else out.strip().splitlines()[-1]


# ----------------------------------------------------------------------------------------------
# Units: a step (kernels/NN_name.cu) or a SASS twin (tests/sass_twins/name.cu)
# ----------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Unit:
    name: str      # 06_vectorized_loads, or twin_scalar_loads
    step: str      # "06", or "" for a twin
    source: str    # path of the .cu
    obj: str       # the object the build made
    ptxas: str     # the ptxas -v report
    out: str       # the dump folder


def find_unit(build, ident):
    """ident: a step number ("06"), a step name ("06_vectorized_loads") or "twin:<name>"."""
    if ident.startswith("twin:"):
        name = ident[5:]
        return Unit("twin_" + name, "", os.path.join(REPO, "tests", "sass_twins", name + ".cu"),
                    os.path.join(build, "obj", "tests", "sass_twins", name + ".o"),
                    os.path.join(build, "ptxas", "sass_twins", name + ".txt"),
                    os.path.join(build, "sass_twins", name))
    num = ident.split("_")[0]
    matches = sorted(glob.glob(os.path.join(REPO, "kernels", num + "_*.cu")))
    if ident != num:
        matches = [m for m in matches if os.path.basename(m) == ident + ".cu"]
    if len(matches) != 1:
        known = " ".join(os.path.basename(k).split("_")[0] for k in sorted(glob.glob(os.path.join(REPO, "kernels", "*.cu"))))
        raise ToolError(f"no single kernels/{ident}_*.cu (steps: {known})")
    name = os.path.basename(matches[0])[:-3]
    return Unit(name, num, matches[0], os.path.join(build, "obj", "kernels", name + ".o"),
                os.path.join(build, "ptxas", name + ".txt"), os.path.join(build, "sass", name))


def all_steps(build):
    return [find_unit(build, os.path.basename(k)[:-3]) for k in sorted(glob.glob(os.path.join(REPO, "kernels", "*.cu")))]


def all_twins(build):
    return [find_unit(build, "twin:" + os.path.basename(k)[:-3])
            for k in sorted(glob.glob(os.path.join(REPO, "tests", "sass_twins", "*.cu")))]


# ----------------------------------------------------------------------------------------------
# Names
# ----------------------------------------------------------------------------------------------

def short_name(mangled):
    """Last identifier of an Itanium nested name: _ZN6step0111sgemm_naiveE... -> sgemm_naive."""
    m = re.match(r"_ZN?(L?)(.*)", mangled)
    if not m or not mangled.startswith("_Z"):
        return mangled
    rest, last = m.group(2), mangled
    while True:
        d = re.match(r"(\d+)", rest)
        if not d:
            break
        n = int(d.group(1))
        ident = rest[len(d.group(1)):len(d.group(1)) + n]
        last, rest = ident, rest[len(d.group(1)) + n:]
    return last


def demangle(names):
    cxxfilt = shutil.which("c++filt")
    if not cxxfilt or not names:
        return {n: n for n in names}
    out = subprocess.run([cxxfilt], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
    return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}


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


def parse_nvdisasm(text):
    """Functions of one cubin, in order, from `nvdisasm -c -gi`."""
    funcs, cur, loc, pending = [], None, (), []
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"^\.text\.(\S+):$", s)
        if m:
            cur = Function(m.group(1), [], {})
            funcs.append(cur)
            loc, pending = (), []
            continue
        if cur is None:
            continue
        if s.startswith("//##"):
            loc = tuple((f, int(n)) for f, n in LOC_RE.findall(s))
            continue
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

    def backedges(self):
        """(branch index, target index) for every branch to an earlier (or the same) instruction,
        except the self-branch ptxas puts after the last EXIT (never reached: a trap for runaway PCs)."""
        edges = []
        for ins in self.insns:
            if ins.target and ins.target in self.labels:
                t = self.labels[ins.target]
                if t < ins.index or (t == ins.index and ins.index < len(self.insns) - 1):
                    edges.append((ins.index, t))
        return edges

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

    def own_math(self, loop):
        """Math instructions of `loop` that are not inside a loop nested in it."""
        inner = self.nested(loop)
        return sum(1 for i in self.insns[loop[0]:loop[1] + 1]
                   if is_math(i.opcode) and not any(l[0] <= i.index <= l[1] for l in inner))

    def hottest_loop(self):
        """The loop with the most math instructions (FFMA/HMMA/HGMMA/...) of its own, not counting
        those of loops nested in it; ties go to the innermost. None when the function has no loop."""
        loops = self.loops()
        if not loops:
            return None
        return max(loops, key=lambda l: (self.own_math(l), -(l[1] - l[0])))

    def outer_loop(self, loop):
        """The outermost loop that contains `loop` (the loop itself when it is outermost)."""
        if loop is None:
            return None
        holders = [l for l in self.loops() if l[0] <= loop[0] and loop[1] <= l[1]]
        return max(holders, key=lambda l: l[1] - l[0])


def is_math(opcode):
    base = opcode.split(".")[0]
    return base in ("FFMA", "FFMA2", "HFMA2", "HMMA", "HGMMA", "IMMA", "DFMA", "FMUL", "FADD") and not opcode.startswith("HFMA2.MMA")


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
    return CleanFunction(short, header.get("mangled", ""), header.get("function", ""), header, insns, labels)


def clean_functions(unit):
    files = sorted(glob.glob(os.path.join(unit.out, "*.sass")))
    files = [f for f in files if not f.endswith((".cuobjdump.sass", ".nvdisasm.sass"))]
    return [read_clean(f) for f in files]


# ----------------------------------------------------------------------------------------------
# PTX (from the cubin's .nv_debug_ptx_txt section)
# ----------------------------------------------------------------------------------------------

def split_ptx(ptx):
    """{mangled entry name: its PTX lines}, comments dropped, $L__ labels renumbered per entry."""
    entries, cur, name = {}, None, None
    for line in ptx.splitlines():
        m = re.match(r"^\.(?:visible |weak )?\.entry (\S+?)\(", line.strip())
        if m:
            name, cur = m.group(1), []
            entries[name] = cur
        if cur is not None and line.strip():
            cur.append(line.rstrip())
        if cur is not None and line.strip() == "}":
            cur = None
    for name, lines in entries.items():
        order = {}
        def ren(m):
            return order.setdefault(m.group(0), f"$L{len(order)}")
        entries[name] = [re.sub(r"\$L__\w+", ren, l) for l in lines]
    return entries


# ----------------------------------------------------------------------------------------------
# dump
# ----------------------------------------------------------------------------------------------

def src_path(path):
    """A debug-info path as a repository path when it points into this repository (or a copy)."""
    if os.path.exists(path) and os.path.abspath(path).startswith(REPO + os.sep):
        return os.path.relpath(path, REPO)
    m = re.search(r"(?:^|/)((?:kernels|common|tests)/.*)$", path)
    if m and os.path.exists(os.path.join(REPO, m.group(1))):
        return m.group(1)
    return path


def interleave(func, source_cache):
    """Each run of instructions under the source line it came from (nvdisasm -gi line info)."""
    out, last = [], None
    for ins in trim_padding(func.insns):
        if ins.loc != last:
            last = ins.loc
            if ins.loc:
                (f, n), chain = ins.loc[0], ins.loc[1:]
                rel = src_path(f)
                if rel not in source_cache:
                    p = rel if os.path.isabs(rel) else os.path.join(REPO, rel)
                    source_cache[rel] = open(p).read().splitlines() if os.path.exists(p) else []
                lines = source_cache[rel]
                code = lines[n - 1].strip() if 0 < n <= len(lines) else "(source not found)"
                via = "".join(f"  [inlined at {src_path(cf)}:{cn}]" for cf, cn in chain)
                out.append(f"\n{rel}:{n}{via}\n    | {code}")
            else:
                out.append("\n(no line information)")
        out.append(f"        /*{ins.addr:04x}*/ {ins.text}")
    return out


def dump(unit, quiet=False):
    if not os.path.exists(unit.obj):
        raise ToolError(f"{unit.obj} does not exist: build it first (make {unit.step or 'test'})")
    cuobjdump, nvdisasm = find_tool("cuobjdump"), find_tool("nvdisasm")
    os.makedirs(unit.out, exist_ok=True)
    for old in glob.glob(os.path.join(unit.out, "*")):
        os.remove(old)
    raw = run_tool([cuobjdump, "-sass", unit.obj])
    with open(os.path.join(unit.out, unit.name + ".cuobjdump.sass"), "w") as f:
        f.write(raw)
    with tempfile.TemporaryDirectory() as tmp:
        run_tool([cuobjdump, "-xelf", "all", os.path.abspath(unit.obj)], cwd=tmp)
        cubins = sorted(glob.glob(os.path.join(tmp, "*.cubin")))
        if len(cubins) > 1:
            raise ToolError(f"{unit.obj}: expected one cubin, found {len(cubins)} (one target per step)")
        if not cubins:  # host-only step (00: cuBLAS): nothing to disassemble
            with open(os.path.join(unit.out, "dump.stamp"), "w") as f:
                f.write("\n")
            if not quiet:
                print(f"{unit.name}: no device code (no kernel functions)")
            return []
        cubin = os.path.join(unit.out, unit.name + ".cubin")
        shutil.copy(cubins[0], cubin)
    dis = run_tool([nvdisasm, "-c", "-gi", cubin])
    with open(os.path.join(unit.out, unit.name + ".nvdisasm.sass"), "w") as f:
        f.write(dis)
    data = open(cubin, "rb").read()
    sections = elf_sections(data)
    target = re.search(r"\.target\s+(sm_\w+)", dis)
    meta = {"compiler": compiler_version(open(unit.obj, "rb").read()),
            "target": target.group(1) if target else "unknown",
            "nvdisasm": tool_version(nvdisasm)}
    funcs = parse_nvdisasm(dis)
    names = demangle([f.mangled for f in funcs])
    shorts = {}
    for f in funcs:
        shorts[f.short] = shorts.get(f.short, 0) + 1
    used, cache, written = {}, {}, []
    ptx_raw = sections.get(".nv_debug_ptx_txt", b"")
    ptx_text = "\n".join(s.decode(errors="replace") for s in ptx_raw.split(b"\0"))
    ptx_entries = split_ptx(ptx_text)
    if ptx_raw:
        with open(os.path.join(unit.out, unit.name + ".ptx"), "w") as f:
            f.write(f"// PTX of {unit.name} as ptxas assembled it (the cubin's .nv_debug_ptx_txt section, "
                    f"embedded by -lineinfo) | {meta['compiler']}\n{ptx_text}\n")
    for func in funcs:
        base = func.short
        if shorts[base] > 1:  # template instantiations share a name: number them in object order
            used[base] = used.get(base, 0) + 1
            base = f"{base}_{used[base]}"
        path = os.path.join(unit.out, base + ".sass")
        write_clean(path, func, unit, meta, names[func.mangled])
        with open(os.path.join(unit.out, base + ".interleaved.txt"), "w") as f:
            f.write(f"// {names[func.mangled]} | step {unit.name} | {meta['compiler']} | {meta['target']}\n"
                    "// each source line, then the SASS it produced (nvdisasm -gi line info from -lineinfo)\n")
            f.write("\n".join(interleave(func, cache)) + "\n")
        if func.mangled in ptx_entries:
            with open(os.path.join(unit.out, base + ".ptx"), "w") as f:
                f.write(f"// clean PTX of {base} | step {unit.name} | {meta['compiler']} | target {meta['target']}\n"
                        f"// function {names[func.mangled]}\n// labels renumbered $L0, $L1, ... per entry\n")
                f.write("\n".join(ptx_entries[func.mangled]) + "\n")
        written.append(base)
    with open(os.path.join(unit.out, "dump.stamp"), "w") as f:
        f.write(" ".join(written) + "\n")
    if not quiet:
        print(f"{unit.name}: {meta['compiler']}, {meta['target']}, {len(funcs)} kernel function(s) -> {unit.out}/")
        print(f"  {unit.name}.cuobjdump.sass   cuobjdump -sass (addresses and encodings)")
        print(f"  {unit.name}.nvdisasm.sass    nvdisasm -gi (line info, labels)")
        if ptx_raw:
            print(f"  {unit.name}.ptx              the PTX ptxas assembled")
        for b in written:
            print(f"  {b}.sass / {b}.interleaved.txt" + (f" / {b}.ptx" if os.path.exists(os.path.join(unit.out, b + '.ptx')) else ""))
    return written


def ensure_dumped(unit):
    stamp = os.path.join(unit.out, "dump.stamp")
    if not os.path.exists(stamp) or (os.path.exists(unit.obj) and os.path.getmtime(stamp) < os.path.getmtime(unit.obj)):
        dump(unit, quiet=True)


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
    if base == "HGMMA":
        return ".".join(parts[:2])  # HGMMA.64x256x16: the shape
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


def mix_table(fa, fb, a_name, b_name):
    whole_a, whole_b = mix(fa.insns), mix(fb.insns)
    loop_a, loop_b = mix(loop_insns(fa)), mix(loop_insns(fb))
    for f, whole, loop in ((fa, whole_a, loop_a), (fb, whole_b, loop_b)):
        whole["backward branches"] = len(f.backedges())
        h = f.hottest_loop()
        loop["backward branches"] = sum(1 for b, t in f.backedges() if h and h[0] <= t and b <= h[1])
    keys = sorted(set(whole_a) | set(whole_b), key=lambda k: (k != "all", k == "backward branches", k))
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


def pair_functions(fa, fb):
    """Same short name first; otherwise in object order."""
    by_b = {f.short: f for f in fb}
    pairs, rest_a, rest_b = [], [], [f for f in fb]
    for f in fa:
        if f.short in by_b:
            pairs.append((f, by_b[f.short]))
            rest_b.remove(by_b[f.short])
        else:
            rest_a.append(f)
    pairs += list(zip(rest_a, rest_b))
    return pairs


def read_clean_ptx(unit, short):
    p = os.path.join(unit.out, short + ".ptx")
    return [l for l in open(p).read().splitlines() if not l.startswith("//")] if os.path.exists(p) else None


def cmd_diff(args):
    ua, ub = find_unit(args.build, args.a), find_unit(args.build, args.b)
    for u in (ua, ub):
        ensure_dumped(u)
    fa, fb = clean_functions(ua), clean_functions(ub)
    out = []
    for a, b in pair_functions(fa, fb):
        if args.what == "ptx":
            la, lb = read_clean_ptx(ua, a.short), read_clean_ptx(ub, b.short)
            if la is None or lb is None:
                raise ToolError("no PTX in the cubin: build with -lineinfo")
            ext = ".ptx"
        else:
            # Keep the labels in the text so loop heads are visible in the diff.
            la = read_body(os.path.join(ua.out, a.short + ".sass"))
            lb = read_body(os.path.join(ub.out, b.short + ".sass"))
            ext = ".sass"
        out.append(f"==== {ua.name}/{a.short}{ext}  vs  {ub.name}/{b.short}{ext}")
        out += [f"// A: {a.header.get('clean SASS of', '')}", f"// B: {b.header.get('clean SASS of', '')}"]
        out += list(difflib.unified_diff(la, lb, f"{ua.name}/{a.short}{ext}", f"{ub.name}/{b.short}{ext}", lineterm="", n=3))
        out.append("")
        out.append(f"instruction mix, {a.short} ({ua.step}) -> {b.short} ({ub.step}): whole kernel and hottest loop")
        out.append(mix_table(a, b, ua.step or ua.name, ub.step or ub.name))
        out.append("")
    if len(fa) != len(fb):
        out.append(f"note: {ua.name} has {len(fa)} kernel function(s), {ub.name} has {len(fb)}; unpaired ones are not shown")
    text = "\n".join(out) + "\n"
    path = os.path.join(args.build, "sass", f"diff_{ua.step}_{ub.step}.{args.what}.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").write(text)
    sys.stdout.write(text)
    print(f"(written to {path})")


def read_body(path):
    return [l.rstrip() for l in open(path) if not l.startswith("//") and l.strip()]


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
    rules: list            # (function regex or None, rule text, line number, file)
    launch: list           # (function regex or None, key, value): threads, tile_m, tile_n, grid,
                           # dynamic_smem for the resource table; a `function` line scopes them too


def parse_expect(path):
    rules, launch, func_re = [], [], None
    for n, raw in enumerate(open(path), 1):
        line = raw.split(" #")[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        if line.startswith("function "):
            func_re = line[len("function "):].strip()
            continue
        if line.startswith("launch "):
            toks = line.split()[1:]
            for k, v in zip(toks[::2], toks[1::2]):
                launch.append((func_re, k, v))
            continue
        if not RULE_RE.match(line):
            raise ToolError(f"{path}:{n}: not a rule: {line!r} (see sass_annotations/README.md)")
        rules.append((func_re, line, n, path))
    return Expectations(rules, launch)


def expect_files(unit):
    files = [os.path.join(REPO, "sass_annotations", "all.expect")]
    if unit.step:
        files += sorted(glob.glob(os.path.join(REPO, "sass_annotations", unit.step + "_*.expect")))
    return [f for f in files if os.path.exists(f)]


def source_constants(path):
    """NAME -> value of the `constexpr int NAME = <int>, ...;` declarations at namespace scope of a
    step's source (the tile constants), so a rule can say `count FFMA == TM*TN*BK`."""
    consts = {}
    if path and os.path.exists(path):
        for m in re.finditer(r"^constexpr int ([^;]+);", open(path).read(), re.M):
            for name, value in re.findall(r"(\w+)\s*=\s*(\d+)", m.group(1)):
                consts[name] = int(value)
    return consts


def eval_count(expr, consts):
    names = re.findall(r"[A-Za-z_]\w*", expr)
    missing = [n for n in names if n not in consts]
    if missing:
        raise ToolError(f"`{expr}`: {', '.join(missing)} not among the constexpr int constants of the source")
    # Integer arithmetic as in C++: `/` divides exactly only when it should, so use floor division.
    return int(eval(re.sub(r"/+", "//", expr), {"__builtins__": {}}, dict(consts)))


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
        rules = [(None, r, 0, "command line") for r in rules]
    results, consts = [], source_constants(unit.source)
    for func_re, rule, n, path in rules:
        where = f"{os.path.relpath(path, REPO) if os.path.isabs(path) else path}:{n}"
        chosen = [f for f in funcs if func_re is None or re.search(func_re, f.demangled or f.short)]
        if not chosen and func_re is None:
            continue  # a step without device code (00: cuBLAS) has nothing to check
        if not chosen:
            results.append((False, "-", rule, f"no kernel function matches /{func_re}/", where))
        for f in chosen:
            ok, detail = eval_rule(rule, f, props, plines, consts)
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
    out, kind = [], None
    for n, line in enumerate(open(md_path), 1):
        s = line.strip()
        if s.startswith("```"):
            kind = s[3:].strip() if kind is None else None
            continue
        if kind in ("sass", "ptx") and s and not s.startswith(("//", "...", "#")):
            s = re.sub(r"^/\*[0-9a-f]+\*/\s*", "", s)
            out.append((kind, n, s))
    return out


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def cmd_fresh(args):
    stale = 0
    mds = sorted(glob.glob(os.path.join(REPO, "sass_annotations", "[0-9][0-9]*_*.md")))
    for md in mds:
        step = os.path.basename(md).split("_")[0]
        unit = find_unit(args.build, step)
        ensure_dumped(unit)
        sass = set()
        for f in glob.glob(os.path.join(unit.out, "*.sass")):
            if not f.endswith((".cuobjdump.sass", ".nvdisasm.sass")):
                sass |= {norm(l) for l in open(f) if not l.startswith("//")}
        ptx = set()
        for f in glob.glob(os.path.join(unit.out, "*.ptx")):
            ptx |= {norm(l) for l in open(f) if not l.startswith("//")}
        quotes = quoted_lines(md)
        for kind, n, text in quotes:
            if norm(text) not in (sass if kind == "sass" else ptx):
                stale += 1
                print(f"STALE {os.path.relpath(md, REPO)}:{n}: {kind} line not in the current dump of {unit.name}: {text}")
        print(f"{os.path.relpath(md, REPO)}: {len(quotes)} quoted line(s) checked against {unit.out}")
    print(f"{stale} stale quote(s)")
    return 1 if stale else 0


# ----------------------------------------------------------------------------------------------
# Resource table
# ----------------------------------------------------------------------------------------------

# H200 = GH100, compute capability 9.0 (CUDA C Programming Guide, "Compute Capabilities",
# technical specifications table; CUDA Occupancy Calculator's allocation granularities).
H200 = {"sms": 132, "max_threads": 2048, "max_warps": 64, "max_blocks": 32, "regs": 65536,
        "reg_unit": 256, "smem": 233472, "smem_reserved_per_block": 1024, "smem_unit": 128}


def ceil_to(x, unit):
    return (x + unit - 1) // unit * unit


def occupancy(regs, smem_bytes, threads, gpu=H200):
    """(blocks per SM, limiter): registers are allocated per warp in units of 256, shared memory per
    block in units of 128 bytes plus 1 KB the runtime reserves for each block on sm_90."""
    warps = (threads + 31) // 32
    limits = {"threads": min(gpu["max_warps"] // warps, gpu["max_blocks"])}
    per_warp = ceil_to(max(regs, 1) * 32, gpu["reg_unit"])
    limits["registers"] = (gpu["regs"] // per_warp) // warps
    per_block = ceil_to(smem_bytes + gpu["smem_reserved_per_block"], gpu["smem_unit"])
    limits["shared memory"] = gpu["smem"] // per_block
    limiter = min(limits, key=lambda k: limits[k])
    return limits[limiter], limiter


def maxntid(unit, mangled):
    p = os.path.join(unit.out, unit.name + ".ptx")
    if not os.path.exists(p):
        return None
    text = open(p).read()
    m = re.search(re.escape(mangled) + r"\((?:[^)]*)\)\s*\.maxntid\s+(\d+),\s*(\d+),\s*(\d+)", text)
    return int(m.group(1)) * int(m.group(2)) * int(m.group(3)) if m else None


def uses_extern_shared(unit):
    """True when the step's PTX declares `.extern .shared` (dynamic shared memory)."""
    p = os.path.join(unit.out, unit.name + ".ptx")
    return os.path.exists(p) and ".extern .shared" in open(p).read()


def cmd_resources(args):
    rows = ["# Resources per step (generated: `make resources`; do not edit)", "",
            "Registers, static shared memory, stack and spills from each step's ptxas -v report "
            "(`build/ptxas/NN_name.txt`); threads per block from the kernel's `__launch_bounds__` "
            "(`.maxntid` in its PTX), unless the step's `.expect` file gives `launch threads`; dynamic shared memory "
            "and the tile from `launch` lines in `sass_annotations/NN_*.expect`. "
            "Theoretical occupancy on the H200 (132 SMs, 64 warps, 32 blocks, 64 K registers and 228 KB shared "
            "memory per SM; registers allocated per warp in units of 256; 1 KB of shared memory reserved per block). "
            f"Waves = ceil(blocks / (blocks per SM x 132)) at M = N = {args.size}.", "",
            "| step | kernel | regs | smem static | smem dynamic | stack | spill st/ld | threads | blocks/SM (limit) | occupancy | waves |",
            "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    for unit in all_steps(args.build):
        if not os.path.exists(unit.ptxas):
            rows.append(f"| {unit.step} | (not built) | | | | | | | | | |")
            continue
        props, _ = parse_ptxas(unit.ptxas)
        names = {}  # mangled -> the name a `function` regex is matched against, as for rules
        if os.path.exists(unit.obj):
            ensure_dumped(unit)
            names = {f.mangled: f.demangled or f.short for f in clean_functions(unit)}
        consts = source_constants(unit.source)
        entries = [e for f in expect_files(unit) for e in parse_expect(f).launch]
        for mangled, p in props.items():
            fname = names.get(mangled, short_name(mangled))
            launch = {k: eval_count(v, consts) for func_re, k, v in entries
                      if func_re is None or re.search(func_re, fname)}
            threads = int(launch["threads"]) if "threads" in launch else maxntid(unit, mangled)
            dyn = launch.get("dynamic_smem")
            uses_dynamic = dyn is None and uses_extern_shared(unit)
            dyn = int(dyn or 0)
            occ, waves, lim = "", "", ""
            if uses_dynamic:
                lim = "? (dynamic smem not declared)"
            elif threads:
                blocks, limiter = occupancy(p["registers"], p["smem"] + dyn, threads)
                occ = f"{100 * blocks * ((threads + 31) // 32) / H200['max_warps']:.1f} %"
                lim = f"{blocks} ({limiter})"
                if int(launch.get("cluster", 1)) > 1:  # cluster launch: blocks are placed in clusters of this size
                    lim += f", clusters of {int(launch['cluster'])}"
                grid = None
                if "grid" in launch:
                    grid = int(launch["grid"])
                elif "tile_m" in launch and "tile_n" in launch:
                    grid = -(-args.size // launch["tile_m"]) * -(-args.size // launch["tile_n"])
                if grid and blocks:
                    waves = f"{-(-grid // (blocks * H200['sms']))}"
                    waves += f" ({grid / (blocks * H200['sms']):.2f})"
            rows.append(f"| {unit.step} | `{short_name(mangled)}` | {p['registers']} | {p['smem']} | {'?' if uses_dynamic else dyn} | {p['stack']} | "
                        f"{p['spill_stores']}/{p['spill_loads']} | {threads or '?'} | {lim} | {occ} | {waves} |")
    rows += ["", "Waves: whole waves (and the exact ratio); a last partial wave leaves SMs idle. "
             "Steps without `launch tile_m`/`tile_n` (or `grid`) show none; "
             "`launch cluster N` (a cluster launch) is noted beside blocks/SM: a cluster sits in one GPC, so the "
             "grid counts the clusters that can be resident (cudaOccupancyMaxActiveClusters), 66 x 2 on the H200 if every GPC pairs its SMs; "
             "a kernel with dynamic shared memory (`.extern .shared` in its PTX) needs `launch dynamic_smem` "
             "in its `.expect` file before its occupancy can be computed."]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    open(args.out, "w").write("\n".join(rows) + "\n")
    print(f"wrote {args.out}")


# ----------------------------------------------------------------------------------------------
# Self-test: the parsers and the rules on hand-made listings (run by tests/test_sass.cpp)
# ----------------------------------------------------------------------------------------------

SELFTEST_NVDISASM = """
.text._ZN6step998kernel_aEPf:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
.L_x_3:
        /*0010*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0020*/                   LDS.128 R8, [R0] ;
.L_x_4:
        /*0030*/                   FFMA R12, R4, R8, R12 ;
        /*0040*/                   FFMA R13, R5, R9, R13 ;
        /*0050*/               @P0 BRA `(.L_x_4) ;
        /*0060*/                   LDL R7, [R1] ;
        /*0070*/              @!P1 BRA `(.L_x_3) ;
        /*0080*/                   STG.E.64 desc[UR4][R2.64], R12 ;
        /*0090*/                   EXIT ;
.L_x_5:
        /*00a0*/                   BRA `(.L_x_5);
        /*00b0*/                   NOP;
.L_x_6:
"""


def selftest():
    failures = []
    def expect(cond, what):
        if not cond:
            failures.append(what)
    funcs = parse_nvdisasm(SELFTEST_NVDISASM)
    expect(len(funcs) == 1 and funcs[0].short == "kernel_a", "one function named kernel_a")
    lines = clean_lines(funcs[0])
    expect(lines[1] == ".L0:" and "BRA `(.L1)" in lines[7], f"labels renumbered in order: {lines}")
    expect(not any("NOP" in l for l in lines), "trailing NOP padding dropped")
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "kernel_a.sass")
        unit = Unit("99_x", "99", "", "", "", tmp)
        write_clean(p, funcs[0], unit, {"compiler": "nvcc 0", "target": "sm_90", "nvdisasm": "0"}, "k(float*)")
        f = read_clean(p)
    expect(f.loops() == [(1, 7), (3, 5)], f"two nested loops, got {f.loops()}")
    expect(f.hottest_loop() == (3, 5), f"hottest = inner FFMA loop, got {f.hottest_loop()}")
    expect(f.outer_loop(f.hottest_loop()) == (1, 7), "outer loop of the hottest")
    props = {f.mangled: {"registers": 40, "smem": 0, "stack": 8, "spill_stores": 0, "spill_loads": 0, "barriers": 0}}
    cases = [("kernel has LDG\\.E\\.128", True), ("kernel has LDS\\.64", False), ("kernel lacks LDL|STL", False),
             ("loop count FFMA == 2", True), ("loop count FFMA == 3", False), ("loop count FFMA == TM*TN", True), ("outer math-loops == 1", True), ("loop backedges == 1", True),
             ("outer backedges == 1", False), ("outer backedges == 2", True), ("kernel has-line STG\\.E\\.64 .*R12", True),
             ("ptxas stack == 0", False), ("ptxas registers <= 40", True), ("ptxas lacks (?i)serialized", True)]
    for rule, want in cases:
        got, detail = eval_rule(rule, f, props, ["ptxas info : Used 40 registers"], {"TM": 2, "TN": 1})
        expect(got == want, f"rule [{rule}] gave {got} ({detail}), want {want}")
    expect(category("LDG.E.128.CONSTANT") == "LDG.128" and category("LDG.E.LTC128B") == "LDG.32"
           and category("STS.U8") == "STS.U8" and category("HGMMA.64x256x16.F32.BF16") == "HGMMA.64x256x16",
           "width / shape categories")
    expect(occupancy(32, 0, 1024) == (2, "threads"), f"32 regs x 1024 threads: 2 blocks, got {occupancy(32, 0, 1024)}")
    expect(occupancy(128, 0, 256)[0] == 2, "128 regs x 256 threads: 2 blocks (65536 / 32768)")
    expect(occupancy(32, 100 * 1024, 128) == (2, "shared memory"), "100 KB smem: 2 blocks")
    expect(short_name("_ZN6step0111sgemm_naiveEiiifPKfS1_fPf") == "sgemm_naive", "short name")
    for msg in failures:
        print("selftest FAIL:", msg)
    print(f"selftest: {len(failures)} failure(s)")
    return 1 if failures else 0


# ----------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the build folder (make's BUILD)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("dump", help="dump SASS, clean SASS, interleaved view and PTX of steps or twins")
    p.add_argument("units", nargs="+", help="step numbers, step names or twin:<name>")
    p.add_argument("--quiet", action="store_true")
    p = sub.add_parser("ptx", help="like dump, then print the clean PTX of each kernel function")
    p.add_argument("step")
    p = sub.add_parser("sass", help="like dump, then list the files")
    p.add_argument("step")
    p = sub.add_parser("diff", help="unified diff of clean SASS (or PTX) plus an instruction-mix table")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--what", choices=("sass", "ptx"), default="sass")
    p = sub.add_parser("check", help="enforce the expectations")
    p.add_argument("steps", nargs="*")
    p.add_argument("--twin", help="check tests/sass_twins/<name>.cu instead of steps")
    p.add_argument("--rule", action="append", help="check only this rule (repeatable)")
    sub.add_parser("fresh", help="every line quoted in sass_annotations/NN_*.md is in the current dump")
    p = sub.add_parser("resources", help="write the resource table")
    p.add_argument("--out", default=os.path.join(REPO, "docs", "resources.md"))
    p.add_argument("--size", type=int, default=4096)
    sub.add_parser("selftest")
    sub.add_parser("tools", help="print where cuobjdump and nvdisasm were found")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    try:
        if args.cmd == "dump":
            for u in args.units:
                dump(find_unit(args.build, u), quiet=args.quiet)
        elif args.cmd in ("sass", "ptx"):
            unit = find_unit(args.build, args.step)
            written = dump(unit)
            if args.cmd == "ptx":
                for b in written:
                    p = os.path.join(unit.out, b + ".ptx")
                    if os.path.exists(p):
                        print(f"\n==== {p}")
                        sys.stdout.write(open(p).read())
        elif args.cmd == "diff":
            cmd_diff(args)
        elif args.cmd == "check":
            return cmd_check(args)
        elif args.cmd == "fresh":
            return cmd_fresh(args)
        elif args.cmd == "resources":
            cmd_resources(args)
        elif args.cmd == "selftest":
            return selftest()
        elif args.cmd == "tools":
            for t in ("cuobjdump", "nvdisasm"):
                p = find_tool(t)
                print(f"{t}: {p} ({tool_version(p)})")
    except ToolError as e:
        print(f"sass.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
