"""`resources`: docs/resources.md (registers, shared memory, occupancy and waves on the H200)."""
from __future__ import annotations

import os
import re

from .checks import expect_files, parse_expect, parse_ptxas, with_constants
from .consts import eval_count, source_constants
from .dump import ensure_dumped
from .listing import clean_functions
from .units import all_steps, display_name, short_name

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


RESOURCE_COLUMNS = ("step", "kernel", "regs", "smem static", "smem dynamic", "stack", "spill st/ld", "threads",
                    "blocks/SM (limit)", "occupancy", "waves")


def unit_rows(unit, size=4096):
    """The cells of docs/resources.md's rows for one step (RESOURCE_COLUMNS), one row per kernel in the
    ptxas report's order; a step that is not built gives one row saying so."""
    if not os.path.exists(unit.ptxas):
        return [[unit.step, "(not built)"] + [""] * 9]
    rows = []
    props, _ = parse_ptxas(unit.ptxas)
    names = {}  # mangled -> the name a `function` regex is matched against, as for rules
    if os.path.exists(unit.obj):
        ensure_dumped(unit)
        names = {f.mangled: f.demangled or f.short for f in clean_functions(unit)}
    consts = source_constants(unit.source)
    entries = [e for f in expect_files(unit) for e in parse_expect(f).launch]
    for mangled, p in props.items():
        fname = names.get(mangled, short_name(mangled))
        launch = {k: eval_count(v, with_constants(consts, fc)) for func_re, k, v, fc in entries
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
                grid = -(-size // launch["tile_m"]) * -(-size // launch["tile_n"])
            if grid and blocks:
                waves = f"{-(-grid // (blocks * H200['sms']))}"
                waves += f" ({grid / (blocks * H200['sms']):.2f})"
        # Template arguments only where two instantiations share a name (step 24's <false> and <true>).
        label = short_name(mangled)
        if sum(short_name(x) == label for x in props) > 1:
            label = display_name(label, names.get(mangled))
        rows.append([unit.step, f"`{label}`", str(p["registers"]), str(p["smem"]),
                     "?" if uses_dynamic else str(dyn), str(p["stack"]), f"{p['spill_stores']}/{p['spill_loads']}",
                     str(threads or "?"), lim, occ, waves])
    return rows


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
        for cells in unit_rows(unit, args.size):
            if cells[1] == "(not built)":
                rows.append(f"| {unit.step} | (not built) | | | | | | | | | |")
            else:
                rows.append("| " + " | ".join(cells) + " |")
    rows += ["", "Waves: whole waves (and the exact ratio); a last partial wave leaves SMs idle. "
             "Steps without `launch tile_m`/`tile_n` (or `grid`) show none; "
             "`launch cluster N` (a cluster launch) is noted beside blocks/SM: a cluster sits in one GPC, so the "
             "grid counts the clusters that can be resident (cudaOccupancyMaxActiveClusters), 66 x 2 on the H200 if every GPC pairs its SMs; "
             "a kernel with dynamic shared memory (`.extern .shared` in its PTX) needs `launch dynamic_smem` "
             "in its `.expect` file before its occupancy can be computed."]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    open(args.out, "w").write("\n".join(rows) + "\n")
    print(f"wrote {args.out}")
