#!/usr/bin/env python3
"""Tuning sweep of the fp32 steps 05-09 on the GPU at hand.

  scripts/tune_fp32.py build [--build build] [--steps 05 ... 09] [-j 2]   (any machine with nvcc)
  <build>/bin/tune_fp32 --csv results/tuning/fp32_h200.csv              (on the GPU machine)

`build` enumerates each step's template-parameter grid, drops the points that would break one of
the step's static_asserts (the same invariants, restated here, and a compile error if they drift)
or fall outside the sweep's range, and writes one .cu per step under <build>/tune/ that includes
kernels/NN_*.cu and instantiates the remaining points. ptxas -v of every instantiation is kept in
<build>/tune/NN.ptxas.txt. The binary prunes what uses local memory (a spill or stack frame, read
from cudaFuncGetAttributes), checks the rest against cuBLAS (exact mode on a ragged shape, then
random-normal at the timing size) before timing them with the harness's time_launch, times the best
few at every size, writes every point (pruned ones with their reason) to the CSV and prints the
best configuration of each step by its worst ratio to cuBLAS over the sizes."""
import argparse
import itertools
import pathlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = pathlib.Path(__file__).resolve().parent.parent
STEP_FILES = {"05": "05_2d_blocktiling", "06": "06_vectorized_loads", "07": "07_bank_conflict_free",
              "08": "08_warptiling", "09": "09_async_copy_pipeline"}
SMEM_STATIC = 48 * 1024       # static __shared__ limit per block
SMEM_DYNAMIC = 227 * 1024     # opt-in dynamic shared memory per block on sm_90


def blocktile_grid(step):
    """Steps 05-07: (BM, BN, BK, TM, TN). Yields (params, reason-or-None)."""
    vec = step != "05"
    for bm, bn, bk, tm, tn in itertools.product([64, 128, 256], [64, 128, 256], [8, 16], [4, 8], [4, 8]):
        p = dict(BM=bm, BN=bn, BK=bk, TM=tm, TN=tn)
        threads = (bm // tm) * (bn // tn)
        per = 4 if vec else 1
        pad = 4 if step == "07" else 0
        why = None
        if threads % 32 or threads > 1024: why = "invariant: whole warps, <= 1024 threads"
        elif (bm * bk // per) % threads or (bk * bn // per) % threads: why = "invariant: loads do not divide evenly among threads"
        elif (bk * (bm + pad) + bk * bn) * 4 > SMEM_STATIC: why = "invariant: static shared memory over 48 KB"
        elif threads not in (128, 256): why = "range: 128 or 256 threads"
        elif tm * tn < 32: why = "range: thread tile of at least 32 outputs"
        yield p, why


def warptile_grid(step):
    """Steps 08, 09: (BM, BN, BK, WM, WN, TM, TN[, STAGES], MINB)."""
    stages_list = [2, 3, 4] if step == "09" else [None]
    for bm, bn, bk, tm, tn, (wtr, wtc), stages, minb in itertools.product(
            [64, 128, 256], [64, 128, 256], [8, 16, 32], [8, 16], [8, 16], [(4, 8), (8, 4)],
            stages_list, [1, 2]):
        wm, wn = tm * wtr, tn * wtc
        p = dict(BM=bm, BN=bn, BK=bk, WM=wm, WN=wn, TM=tm, TN=tn)
        if stages: p["STAGES"] = stages
        p["MINB"] = minb
        why = None
        threads = (bm // wm) * (bn // wn) * 32 if bm % wm == 0 and bn % wn == 0 else 0
        # both keep the transposed sAT (rows padded to BM + 4); 08 double-buffers it, 09 has STAGES buffers
        smem = (stages if stages else 2) * (bk * (bm + 4) + bk * bn) * 4
        a_per = 1 if stages else 4  # floats per copy of A: 09 copies single floats, 08 loads float4
        if not threads: why = "invariant: warp tiles do not cover the block tile"
        elif threads > 1024 or minb * threads > 2048: why = "invariant: too many threads (block or SM)"
        elif (bm * bk // a_per) % threads or (bk * bn // 4) % threads: why = "invariant: loads do not divide evenly among threads"
        elif threads % (bn // 4): why = "invariant: the threads must cover whole rows of the B tile"
        elif step == "09" and (bm % 32 or 32 % bk): why = "invariant: a warp's copies of A must cover 32 / BK rows x BK k"
        elif step == "08" and smem > SMEM_STATIC: why = "invariant: two static buffers over 48 KB"
        elif step == "09" and minb * smem > SMEM_DYNAMIC: why = "invariant: MINB blocks' stages over 227 KB"
        elif step == "08" and bk == 32 and tm * tn > 64: why = "range: BK=32 only with thread tiles <= 64"
        elif tm * tn not in (64, 128): why = "range: thread tile of 64 or 128 outputs"
        elif threads not in (128, 256): why = "range: 128 or 256 threads"
        elif (bm, bn) not in ((128, 64), (64, 128), (128, 128), (128, 256), (256, 128)): why = "range: block tile 128x64, 64x128, 128x128, 128x256 or 256x128"
        elif minb == 2 and tm * tn * threads > 64 * 256: why = "range: MINB=2 only where 2 blocks' accumulators fit in the register file"
        elif (wtr, wtc) != (4, 8): why = "range: 4x8 lanes (a warp tile of 4 TM rows x 8 TN columns)"
        elif step == "09" and bk == 32 and stages == 4: why = "range: BK=32 with 2 or 3 stages"
        elif step == "09" and bk == 8 and stages < 4: why = "range: BK=8 only with 4 stages"
        yield p, why


def grid(step):
    return blocktile_grid(step) if step in ("05", "06", "07") else warptile_grid(step)


def template_args(step, p):
    keys = ["BM", "BN", "BK", "TM", "TN"] if step in ("05", "06", "07") else \
        ["BM", "BN", "BK", "WM", "WN", "TM", "TN"] + (["STAGES"] if step == "09" else []) + ["MINB"]
    return ", ".join(str(p[k]) for k in keys)


KERNEL = {"05": "sgemm_2d_blocktiling", "06": "sgemm_vectorized_loads", "07": "sgemm_bank_conflict_free",
          "08": "sgemm_warptiling", "09": "sgemm_async_copy_pipeline"}


def write_tu(step, out):
    lines = [f"// Generated by scripts/tune_fp32.py: the sweep's instantiations of step {step}.",
             f'#include "../../kernels/{STEP_FILES[step]}.cu"', '#include "../../scripts/tune_fp32.hpp"', "",
             "namespace {"]
    n_ok = n_pruned = 0
    for i, (p, why) in enumerate(grid(step)):
        params = " ".join(f"{k}={v}" for k, v in p.items())
        if why:
            lines.append(f'const bool p{i} = tune::add_pruned({{"{step}", "{params}", "{why}"}});')
            n_pruned += 1
            continue
        args = template_args(step, p)
        ns = f"step{step}"
        smem = f"{ns}::Tiles<{args}>::SMEM_BYTES" if step == "09" else "0"
        lines.append(f'const bool c{i} = tune::add({{"{step}", "{params}", &{ns}::launch_tiles<{args}>, '
                     f'reinterpret_cast<const void*>(&{ns}::{KERNEL[step]}<{args}>), {ns}::Tiles<{args}>::THREADS, {smem}}});')
        n_ok += 1
    lines += ["}  // namespace", ""]
    out.write_text("\n".join(lines))
    return n_ok, n_pruned


NVCC_FLAGS = ["-O3", "-std=c++20", "-DFMT_HEADER_ONLY", "-lineinfo", "--expt-relaxed-constexpr",
              "-Xcompiler", "-Wall,-Wextra", "-gencode", "arch=compute_90,code=sm_90"]


def run(cmd, log=None):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if log: pathlib.Path(log).write_text(r.stdout + r.stderr)
    if r.returncode:
        sys.stderr.write(r.stdout + r.stderr)
        raise SystemExit(f"failed: {' '.join(map(str, cmd))}")
    return r


def build(args):
    build = pathlib.Path(args.build)
    tdir = build / "tune"
    tdir.mkdir(parents=True, exist_ok=True)
    nvcc = args.nvcc
    common = sorted(p for p in (build / "obj" / "common").glob("*.o") if p.name != "main.o")
    if not common:
        raise SystemExit(f"no harness objects in {build}/obj/common: run `make BUILD={build} 05` first")
    jobs = []
    for step in args.steps:
        tu = tdir / f"tune_{step}.cu"
        n_ok, n_pruned = write_tu(step, tu)
        print(f"step {step}: {n_ok} configurations to compile, {n_pruned} pruned by invariant or range")
        jobs.append([nvcc, *NVCC_FLAGS, "-Xptxas", "-v", "-c", str(tu), "-o", str(tdir / f"tune_{step}.o")])
    jobs.append(["g++", "-O2", "-std=c++20", "-DFMT_HEADER_ONLY", "-Wall", "-Wextra", f"-I{args.cuda}/include",
                 "-c", str(ROOT / "scripts" / "tune_fp32_main.cpp"), "-o", str(tdir / "tune_main.o")])
    with ThreadPoolExecutor(args.jobs) as ex:
        list(ex.map(lambda j: run(j, str(pathlib.Path(j[-1]).with_suffix(".ptxas.txt"))), jobs))
    objs = [str(tdir / f"tune_{s}.o") for s in args.steps] + [str(tdir / "tune_main.o")] + list(map(str, common))
    (build / "bin").mkdir(exist_ok=True)
    run([nvcc, *objs, "-o", str(build / "bin" / "tune_fp32"), "-cudart", "static", "-lcublas", "-lcurand"])
    print(f"built {build}/bin/tune_fp32")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--build", default=str(ROOT / "build"))
    b.add_argument("--steps", nargs="+", default=list(STEP_FILES))
    b.add_argument("-j", "--jobs", type=int, default=2)
    b.add_argument("--cuda", default="/usr/local/cuda")
    b.add_argument("--nvcc", default="/usr/local/cuda/bin/nvcc")
    c = sub.add_parser("count")
    c.add_argument("--steps", nargs="+", default=list(STEP_FILES))
    args = ap.parse_args()
    if args.cmd == "build":
        build(args)
    else:
        for s in args.steps:
            ok = [p for p, why in grid(s) if not why]
            print(s, len(ok))
            for p in ok: print("   ", p)


if __name__ == "__main__":
    main()
