"""`dump`: raw SASS, clean SASS per kernel, the source-interleaved view and the PTX of one unit."""
from __future__ import annotations

import glob
import os
import re
import shutil
import tempfile

from .listing import compiler_version, elf_sections, parse_nvdisasm, split_ptx, trim_padding, write_clean
from .tools import REPO, ToolError, find_tool, run_tool, tool_version
from .units import demangle

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


def file_bases(funcs):
    """The clean files' base names of a cubin's functions, in order: the short name, numbered _1, _2,
    ... in object order when template instantiations share it."""
    shorts, used, out = {}, {}, []
    for f in funcs:
        shorts[f.short] = shorts.get(f.short, 0) + 1
    for f in funcs:
        base = f.short
        if shorts[base] > 1:
            used[base] = used.get(base, 0) + 1
            base = f"{base}_{used[base]}"
        out.append(base)
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
    cache, written = {}, []
    ptx_raw = sections.get(".nv_debug_ptx_txt", b"")
    ptx_text = "\n".join(s.decode(errors="replace") for s in ptx_raw.split(b"\0"))
    ptx_entries = split_ptx(ptx_text)
    if ptx_raw:
        with open(os.path.join(unit.out, unit.name + ".ptx"), "w") as f:
            f.write(f"// PTX of {unit.name} as ptxas assembled it (the cubin's .nv_debug_ptx_txt section, "
                    f"embedded by -lineinfo) | {meta['compiler']}\n{ptx_text}\n")
    for func, base in zip(funcs, file_bases(funcs)):
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
