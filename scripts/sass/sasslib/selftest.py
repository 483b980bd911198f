"""`selftest`: the parsers, the loop finder, the rules and the constant reader on hand-made input
(run by tests/test_sass.cpp)."""
from __future__ import annotations

import os
import tempfile

from .checks import eval_rule
from .consts import Refused, eval_count, read_constants
from .diff import category, config_key, pair_functions, unpaired
from .listing import CleanFunction, clean_lines, parse_nvdisasm, read_clean, write_clean
from .resources import occupancy
from .tools import ToolError
from .units import Unit, short_name

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

# Two sibling loops: one HGMMA (the K loop) and, after it, three FADDs (a fixup's reads, as in step
# 21): the hottest loop is the one with tensor-core math, though it has fewer math instructions.
SELFTEST_TENSOR_NVDISASM = """
.text._ZN6step998kernel_bEPf:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
.L_x_7:
        /*0010*/                   HGMMA.64x256x16.F32.BF16 R24, gdesc[UR20], R24 ;
        /*0020*/               @P0 BRA `(.L_x_7) ;
.L_x_8:
        /*0030*/                   LDG.E.128.STRONG.GPU R4, desc[UR4][R2.64] ;
        /*0040*/                   FADD R24, R24, R4 ;
        /*0050*/                   FADD R25, R25, R5 ;
        /*0060*/                   FADD R26, R26, R6 ;
        /*0070*/               @P1 BRA `(.L_x_8) ;
        /*0080*/                   EXIT ;
.L_x_9:
        /*0090*/                   BRA `(.L_x_9);
"""

# A tile loop whose mbarrier wait ptxas moved out of line (steps 22-23): the inline TRYWAIT's retry is
# a stub after the EXIT that loops on itself and returns with `BRA` to the instruction after the
# inline `@!P0 BRA`. That return is no loop of the source: the tile loop is the one that ends at the
# `@P1 BRA` back to the wait, not one stretched to the stub.
SELFTEST_STUB_NVDISASM = """
.text._ZN6step998kernel_cEPf:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
.L_x_10:
        /*0010*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R2+URZ], R3 ;
        /*0020*/              @!P0 BRA `(.L_x_12) ;
.L_x_11:
        /*0030*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR20], R24 ;
        /*0040*/               @P1 BRA `(.L_x_10) ;
        /*0050*/                   STG.E.64 desc[UR4][R4.64], R24 ;
        /*0060*/                   EXIT ;
.L_x_12:
        /*0070*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R2+URZ], R3 ;
        /*0080*/              @!P0 BRA `(.L_x_12) ;
        /*0090*/                   BRA `(.L_x_11) ;
.L_x_13:
        /*00a0*/                   BRA `(.L_x_13);
"""

SELFTEST_CONSTANTS = """
constexpr int BM = 128, BN = 2 * BM;  // the comment's 99 is no value
constexpr int CONSUMERS = 2;
constexpr int THREADS = 128 * (1 + CONSUMERS);
constexpr int WGMMA_N = BN, CONSUMER_WARPS = 4 * CONSUMERS;
constexpr uint32_t STAGE_BYTES = (BM + BN) * 64 * sizeof(__nv_bfloat16);
constexpr int NEG = -3, HEX = 0x28, TRUNC = NEG / 2, MODN = NEG % 2;
constexpr int BAD = foo(3);
constexpr size_t SMEM_BYTES = sizeof(SharedStorage) + 1024;
constexpr int USES_BAD = BAD + 1;
constexpr int LATER = AFTER * 2;
constexpr int AFTER = 1;
  constexpr int INDENTED = 5;  // not namespace scope: not read
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
    tensor = parse_nvdisasm(SELFTEST_TENSOR_NVDISASM)
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "kernel_b.sass")
        write_clean(p, tensor[0], Unit("99_x", "99", "", "", "", tmp),
                    {"compiler": "nvcc 0", "target": "sm_90a", "nvdisasm": "0"}, "k(float*)")
        g = read_clean(p)
    expect(len(g.loops()) == 2, f"two sibling loops, got {g.loops()}")
    hot = g.hottest_loop()
    expect(hot is not None and any(i.opcode.startswith("HGMMA") for i in g.insns[hot[0]:hot[1] + 1]),
           f"hottest = the HGMMA loop over the 3-FADD loop, got {hot}")
    stubbed = parse_nvdisasm(SELFTEST_STUB_NVDISASM)
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "kernel_c.sass")
        write_clean(p, stubbed[0], Unit("99_x", "99", "", "", "", tmp),
                    {"compiler": "nvcc 0", "target": "sm_90a", "nvdisasm": "0"}, "k(float*)")
        h = read_clean(p)
    expect(h.loops() == [(1, 4), (7, 8)], f"the tile loop and the stub's retry, not the stub's return, got {h.loops()}")
    expect(h.outer_loop(h.hottest_loop()) == (1, 4), f"the tile loop ends at its own back branch, got {h.outer_loop(h.hottest_loop())}")
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
    def kernel(step, cfg):  # a family kernel of one step and configuration, no instructions
        return CleanFunction("gemm_kernel", "", f"void gemm::family::gemm_kernel<{step}::{cfg}>(gemm::family::Params)", {}, [], {})
    fa = [kernel("step40", "Block"), kernel("step40", "Swapped<16> ")]
    fb = [kernel("step41", "Swapped<16> "), kernel("step41", "Block"), kernel("step41", "Swapped<32> ")]
    got = [(config_key(a), config_key(b)) for a, b in pair_functions(fa, fb)]
    expect(got == [("Block", "Block"), ("Swapped<16>", "Swapped<16>")], f"kernels paired by configuration, got {got}")
    lone = [CleanFunction("kernel", "", "void kernel<false>(int)", {}, [], {})]
    both = [CleanFunction("kernel", "", "void kernel<true>(int)", {}, [], {}), CleanFunction("kernel", "", "void kernel<false>(int)", {}, [], {})]
    expect(len(pair_functions(lone, both)) == 1, "a configuration both sides have pairs alone")
    expect(unpaired(lone, both, pair_functions(lone, both)) == both[:1], "the configuration one side alone has is named")
    expect(len(pair_functions(both[:1], lone)) == 1, "a configuration the other side lacks: every function with the name")
    plain = CleanFunction("kernel", "", "void kernel(Foo<int>)", {}, [], {})
    expect(config_key(plain) is None, "a template parameter is no template argument")
    expect(len(pair_functions([CleanFunction("kernel", "", "void kernel(int)", {}, [], {})], both)) == 2,
           "no template argument: every function of the other side with the name")
    consts = read_constants(SELFTEST_CONSTANTS)
    want = {"BM": 128, "BN": 256, "CONSUMERS": 2, "THREADS": 384, "WGMMA_N": 256, "CONSUMER_WARPS": 8,
            "STAGE_BYTES": 49152, "NEG": -3, "HEX": 40, "TRUNC": -1, "MODN": -1, "AFTER": 1}
    got = {k: v for k, v in consts.items() if not isinstance(v, Refused)}
    expect(got == want, f"constants evaluated as C++ integer arithmetic: {got}")
    for name, why in (("BAD", "foo"), ("SMEM_BYTES", "sizeof(SharedStorage)"), ("USES_BAD", "BAD"), ("LATER", "AFTER")):
        r = consts.get(name)
        expect(isinstance(r, Refused) and why in r.reason, f"{name} refused naming {why}: {r}")
    try:
        eval_count("BAD * 2", consts)
        expect(False, "an expression using a refused constant raises")
    except ToolError as e:
        expect("BAD = `foo(3)`" in str(e), f"the refusal names the constant: {e}")
    expect(eval_count("(THREADS/128)*BM%100", consts) == 84, "expressions of the constants")
    for msg in failures:
        print("selftest FAIL:", msg)
    print(f"selftest: {len(failures)} failure(s)")
    return 1 if failures else 0
