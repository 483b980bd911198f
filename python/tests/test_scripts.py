"""CPU tests of make bench-torch's two scripts (scripts/bench_torch.py, scripts/plot_torch.py): the
shapes it runs, its refusal without PyTorch or a GPU, and that the book's table is what the committed
CSV says. run_cpu.py runs them with the package's tests; no GPU, no PyTorch needed."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))


def run(*args, env=None):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **(env or {})))


class BenchTorch(unittest.TestCase):
    def test_shapes_cover_the_issue_families(self):
        import bench_torch
        shape_sweep = bench_torch.shape_sweep
        shapes = bench_torch.shapes_of(["decode", "ragged", "square"], quick=False)
        fams = {f for f, _ in shapes}
        self.assertEqual(fams, {"decode", "ragged", "square"})
        decode = dict(shape_sweep.FAMILIES)["decode"]
        self.assertEqual([s for f, s in shapes if f == "decode"], decode)  # the sweep's own list, all of it
        self.assertIn((8192, 8192, 8192), [s for _, s in shapes])

    def test_bad_family_and_no_torch_exit_2(self):
        r = run(SCRIPTS / "bench_torch.py", "--families", "nope")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("no family 'nope'", r.stderr)
        r = run(SCRIPTS / "bench_torch.py", "--rounds", "1")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--rounds", r.stderr)
        try:
            import torch  # noqa: F401
            has_gpu = torch.cuda.is_available()
        except ImportError:
            has_gpu = False
        if has_gpu:
            self.skipTest("a GPU with PyTorch is here: the refusal path is not reachable")
        r = run(SCRIPTS / "bench_torch.py", "--quick", "--out", os.devnull)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("needs", r.stderr)


def fake_csv(path):
    import bench_torch
    meta = dict(gpu="GPU X", torch="9.9", triton="3.0", date="2026-01-01")
    rows = [dict(meta, mode="overhead", dtype="bf16", m=16, n=256, k=256, contender="torch F.linear", us_per_call="5.00"),
            dict(meta, mode="paired", dtype="bf16", scaling="", family="decode", m=1, n=4096, k=4096,
                 contender="step 29", ms="0.01000", ms_q25="0.009", ms_q75="0.011", ratio="1.0000", ratio_q25="1.0",
                 ratio_q75="1.0", rounds=30, clock_mhz=1980),
            dict(meta, mode="paired", dtype="bf16", scaling="", family="decode", m=1, n=4096, k=4096,
                 contender="torch.matmul", ms="0.00800", ms_q25="0.008", ms_q75="0.009", ratio="0.8000",
                 ratio_q25="0.79", ratio_q75="0.81", rounds=30, clock_mhz=1980),
            dict(meta, mode="paired", dtype="fp8", scaling="block", family="ragged", m=2050, n=2050, k=2048,
                 contender="torch._scaled_mm", note="refused: N must be a multiple of 16"),
            dict(meta, mode="kernels", dtype="bf16", scaling="", family="decode", m=1, n=4096, k=4096,
                 contender="step 29", kernels="Memset (Device) 6.0us; void gemm::family::gemm_kernel<gemm::family::"
                                              "menu::Kernel<22ul> >(gemm::family::Params) 22.3us"),
            dict(meta, mode="kernels", dtype="bf16", scaling="", family="decode", m=1, n=4096, k=4096,
                 contender="torch.matmul", kernels="nvjet_sm90_tst_64x8_64x16_2x1_v_bz_splitK_TNT 18.0us; void "
                 "cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16>(cublasLt::cublasSplitKParams<float>,  2.0us")]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=bench_torch.COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in bench_torch.COLUMNS})


class PlotTorch(unittest.TestCase):
    def test_tables_from_a_csv(self):
        with tempfile.TemporaryDirectory() as d:
            csv_path, book = Path(d) / "x_torch.csv", Path(d) / "book.md"
            fake_csv(csv_path)
            book.write_text("# t\n<!-- torch:table -->\nold\n<!-- /torch -->\n")
            r = run(SCRIPTS / "plot_torch.py", csv_path, "--book", book, "--check")
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # the old block is not what the CSV says
            r = run(SCRIPTS / "plot_torch.py", csv_path, "--book", book, "--summary")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("geometric mean 0.800x PyTorch's best over 1 shapes", r.stdout)
            text = book.read_text()
            self.assertIn("| decode | 1×4096×4096 | 10.0 | 0.80 [0.79–0.81] | 1980 |", text)
            self.assertIn("| torch F.linear | 5.0 |", text)
            self.assertIn("fp8 block 2050×2050×2048 by torch._scaled_mm", text)
            # the five worst (one here), named with the kernels each side launched, the memset dropped
            self.assertIn("| bf16 | 1×4096×4096 | 0.80 [0.79–0.81] | torch.matmul | "
                          "`nvjet_sm90_tst_64x8_64x16_2x1_v_bz_splitK_TNT + splitKreduce_kernel<…>` | "
                          "`gemm_kernel<menu::Kernel<22>>` |", text)
            r = run(SCRIPTS / "plot_torch.py", csv_path, "--book", book, "--check")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_no_timed_rows_or_a_bad_number_is_refused_not_written(self):
        import bench_torch
        with tempfile.TemporaryDirectory() as d:
            csv_path, book = Path(d) / "x_torch.csv", Path(d) / "book.md"
            fake_csv(csv_path)
            with open(csv_path, newline="") as f:
                rows = list(csv.DictReader(f))
            book.write_text("# t\n<!-- torch:table -->\nold\n<!-- /torch -->\n")
            for name, keep in (("only overhead and kernels rows", lambda r: r["mode"] != "paired"),
                               ("a timed row with no ratio", None)):
                with open(csv_path, "w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=bench_torch.COLUMNS)
                    w.writeheader()
                    for r in rows:
                        if keep is None and r["mode"] == "paired" and r["ms"]:
                            r = dict(r, ratio="")
                        if keep is None or keep(r):
                            w.writerow(r)
                r = run(SCRIPTS / "plot_torch.py", csv_path, "--book", book)
                self.assertEqual(r.returncode, 1, name)
                self.assertIn("error:", r.stderr, name)
                self.assertIn("old", book.read_text(), name)  # the chapter is left as it was

    def test_the_book_is_what_the_committed_csv_says(self):
        # the file make results-tables takes: the H200's when committed, else the first by name
        committed = [p for p in [ROOT / "results/nvidia_h200_torch.csv"] if p.exists()] or \
            sorted((ROOT / "results").glob("*_torch.csv"))
        if not committed:
            self.skipTest("no results/<gpu>_torch.csv yet (make bench-torch on a GPU)")
        r = run(SCRIPTS / "plot_torch.py", committed[0], "--book", ROOT / "docs/pytorch.md", "--check")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)



class DispatchRegret(unittest.TestCase):
    """scripts/dispatch_check.py --regret: step 29's pick against every entry the tuner timed at shapes off its grid."""
    TOOL = ROOT / "build/bin/dispatch_dump"
    CSV = ROOT / "results/tuning/nvidia_h100_80gb_hbm3_random_every_entry.csv"

    def test_the_committed_run_per_class(self):
        if not self.TOOL.exists():
            self.skipTest("no build/bin/dispatch_dump (make test builds it)")
        r = run(SCRIPTS / "dispatch_check.py", "--regret", self.CSV, "--gpu", "h100", "--worst", "2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("K % 16 == 0: 34 shapes, the pick", r.stdout)
        self.assertIn("K % 16 == 8: 34 shapes, the pick", r.stdout)

    def test_a_pick_is_scored_by_its_own_row_and_bad_input_is_refused(self):
        if not self.TOOL.exists():
            self.skipTest("no build/bin/dispatch_dump (make test builds it)")
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "t.csv"
            dump = subprocess.run([str(self.TOOL), "--h100", "--explain", "132", "4096:4096:4096"], capture_output=True,
                                  text=True, timeout=60)
            pick = dump.stdout.splitlines()[1].split(",")[5]
            other = "pp64x64-s12" if pick != "pp64x64-s12" else "pp128x128-s6"
            hand_rows = "4096,4096,4096,step 28,1.0,\n" if pick == "hand" else ""
            f.write_text("m,n,k,contender,ratio_vs_cublas,check\n"
                         f"4096,4096,4096,{pick},0.9,pass\n4096,4096,4096,{other},1.2,pass\n"
                         "4096,4096,4096,pp128x96-s7,5.0,FAIL\n" + hand_rows.replace("1.0,", "0.9,pass"))
            r = run(SCRIPTS / "dispatch_check.py", "--regret", f, "--gpu", "h100")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("regret (pick / best) 0.750", r.stdout)  # 0.9 against 1.2; the FAIL row's 5.0 is not a best
            f.write_text("a,b\n1,2\n")
            r = run(SCRIPTS / "dispatch_check.py", "--regret", f)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("not build/bin/tune's CSV", r.stderr)


    def test_leave_one_out_prints_the_pick_and_the_best(self):
        if not self.TOOL.exists():
            self.skipTest("no build/bin/dispatch_dump (make test builds it)")
        r = run(SCRIPTS / "dispatch_check.py", "--loo", "--gpu", "h100")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        import re
        rows = re.findall(r"regret \(pick / best\) ([\d.]+), below 0.95 on \d+; the pick ([\d.]+)x cuBLAS, "
                          r"the best ([\d.]+)x", r.stdout)
        self.assertGreaterEqual(len(rows), 2, r.stdout)
        for regret, pick, best in (tuple(map(float, row)) for row in rows):
            self.assertLessEqual(pick, best)  # the best measured there bounds any pick
            self.assertAlmostEqual(pick / best, regret, delta=0.002)  # a quotient of geometric means

    def test_leave_one_out_over_the_long_k_rows_beside_the_hand_rule(self):
        if not self.TOOL.exists():
            self.skipTest("no build/bin/dispatch_dump (make test builds it)")
        r = run(SCRIPTS / "dispatch_check.py", "--loo", "--gpu", "h100", "--k-min", "65536")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("rows with K >= 65536", r.stdout)
        import re
        rows = re.findall(r": (\d+) shapes, .*the best ([\d.]+)x, the hand rule ([\d.]+)x", r.stdout)
        self.assertEqual(sum(int(n) for n, _, _ in rows), 45, r.stdout)  # tune.py --grid long-k's shapes
        for _, best, hand in rows:
            self.assertLessEqual(float(hand), float(best) + 1e-4)  # the hand rule is one of what was measured
        for bad in (["--k-min", "65536"], ["--loo", "--k-min", "-1"]):
            r = run(SCRIPTS / "dispatch_check.py", *bad)
            self.assertNotEqual(r.returncode, 0, bad)
            self.assertIn("--k-min", r.stderr)


class TmapSpy(unittest.TestCase):
    """build/lib/libtmap_spy.so (scripts/tmap_spy.cpp) against a stand-in for libcuda (named libcuda.so.1:
    the spy wraps only pointers into such a library). A program looks the
    driver up as the CUDA runtime does (dlsym of cuGetProcAddress_v2, then cuGetProcAddress through it, then
    cuTensorMapEncodeTiled through that), or by dlsym of the function in the global scope, or asks for it
    with no driver loaded; a puts wrapper that forwards with dlsym(RTLD_NEXT) runs beside the spy."""
    SPY = ROOT / "build/lib/libtmap_spy.so"
    DRIVER = r"""
#include <cuda.h>
#include <cstdio>
#include <string_view>
extern "C" CUresult cuTensorMapEncodeTiled(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
    const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
    CUtensorMapL2promotion, CUtensorMapFloatOOBfill) { std::puts("real encode"); return CUDA_SUCCESS; }
extern "C" CUresult cuGetProcAddress_v2(const char* s, void** p, int, cuuint64_t, CUdriverProcAddressQueryResult*) {
  std::string_view n(s);
  *p = n == "cuTensorMapEncodeTiled" ? (void*)&cuTensorMapEncodeTiled : n == "cuGetProcAddress" ? (void*)&cuGetProcAddress_v2 : nullptr;
  return *p ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
"""
    PROGRAM = r"""
#include <cuda.h>
#include <dlfcn.h>
#include <cstdio>
#include <cstring>
typedef CUresult (*Proc)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
typedef CUresult (*Encode)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
    const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
    CUtensorMapFloatOOBfill);
int main(int argc, char** argv) {
  const char* mode = argv[1];
  if (std::strcmp(mode, "none") == 0) return dlsym(RTLD_DEFAULT, "cuTensorMapEncodeTiled") == nullptr ? 0 : 6;
  void* h = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL);
  if (!h) return 3;
  void* enc = nullptr;
  if (std::strcmp(mode, "runtime") == 0) {
    Proc first = (Proc)dlsym(h, "cuGetProcAddress_v2");
    void* proc = nullptr;
    if (first("cuGetProcAddress", &proc, 12000, 0, nullptr) != CUDA_SUCCESS) return 4;
    if (((Proc)proc)("cuTensorMapEncodeTiled", &enc, 12000, 0, nullptr) != CUDA_SUCCESS) return 5;
  } else {
    enc = dlsym(RTLD_DEFAULT, "cuTensorMapEncodeTiled");
  }
  CUtensorMap m;
  cuuint64_t dims[2] = {4104, 4096}, strides[1] = {8208};
  cuuint32_t box[2] = {64, 128}, es[2] = {1, 1};
  return ((Encode)enc)(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, &m, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                       CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}
"""
    WRAPPER = r"""
#include <dlfcn.h>
#include <unistd.h>
extern "C" int puts(const char* s) {  // forwards to the next puts; calling itself would be a recursion
  static int depth = 0;
  if (++depth > 2) _exit(7);
  int r = ((int (*)(const char*))dlsym(RTLD_NEXT, "puts"))(s);
  --depth;
  return r;
}
"""
    LINE = ("type=BFLOAT16 rank=2 dims=4104x4096 strides=8208 box=64x128 elem_strides=1x1 interleave=0 swizzle=128B "
            "l2_promotion=256B oob_fill=zero")

    def test_the_lookup_paths_are_logged_and_nothing_calls_itself(self):
        import shutil
        cuda = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include"
        if not self.SPY.exists():
            self.skipTest("no build/lib/libtmap_spy.so (make test builds it)")
        if not shutil.which("g++") or not (cuda / "cuda.h").exists():
            self.skipTest("no g++ or no cuda.h")
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            for name, text in (("driver", self.DRIVER), ("main", self.PROGRAM), ("wrap", self.WRAPPER)):
                (d / f"{name}.cpp").write_text(text)
            for cmd in (["g++", "-std=c++17", "-shared", "-fPIC", f"-I{cuda}", str(d / "driver.cpp"), "-o", str(d / "libcuda.so.1")],
                        ["g++", "-std=c++17", "-shared", "-fPIC", str(d / "wrap.cpp"), "-o", str(d / "libwrap.so"), "-ldl"],
                        ["g++", "-std=c++17", f"-I{cuda}", str(d / "main.cpp"), "-o", str(d / "main"), "-ldl"]):
                b = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
                self.assertEqual(b.returncode, 0, b.stderr)
            log = d / "maps.log"
            for mode, preload in (("runtime", [self.SPY]), ("global", [self.SPY]), ("none", [self.SPY]),
                                  ("runtime", [self.SPY, d / "libwrap.so"]), ("runtime", [])):
                log.unlink(missing_ok=True)
                env = dict(os.environ, LD_PRELOAD=" ".join(map(str, preload)), TMAP_SPY_LOG=str(log))
                r = subprocess.run([str(d / "main"), mode, str(d / "libcuda.so.1")], capture_output=True, text=True,
                                   timeout=60, env=env)
                what = f"{mode} with {[p.name for p in preload]}: "
                self.assertEqual(r.returncode, 0, what + r.stdout + r.stderr)  # 7: the wrapper got itself back
                lines = log.read_text().splitlines() if log.exists() else []
                if mode == "none" or not preload:
                    self.assertEqual(lines, [], what)  # no driver: the spy answers null, as glibc would
                    continue
                self.assertIn("real encode", r.stdout, what)  # the real function still encodes, once
                self.assertEqual(len(lines), 1, what + str(lines))
                self.assertIn(f"caller=main {self.LINE}", lines[0], what)


class TuneDrawGrid(unittest.TestCase):
    """scripts/tune.py --grid draw: rows between the grid's points, never a shape of the random set."""

    @classmethod
    def setUpClass(cls):
        # bench_torch (imported by an earlier test) takes scripts/ off sys.path (its profile.py would shadow
        # the standard library's): put it back for these two imports only.
        sys.path.insert(0, str(SCRIPTS))
        try:
            import shape_sweep
            import tune
        finally:
            sys.path.remove(str(SCRIPTS))
        cls.shape_sweep, cls.tune = shape_sweep, tune

    def test_draw_is_fixed_disjoint_from_the_random_set_and_of_two_classes(self):
        shape_sweep, tune = self.shape_sweep, self.tune
        draw = tune.grid("draw")
        self.assertEqual(draw, tune.grid("draw"))  # the same list every run (a committed seed)
        self.assertEqual(len(draw), tune.DRAW_COUNT)
        self.assertEqual(len(set(draw)), len(draw))
        self.assertFalse(set(draw) & set(shape_sweep.RANDOM_SHAPES))
        classes = [shape_sweep.random_class(*s) for s in draw]
        self.assertEqual(set(classes), {"aligned", "K%16==8"})
        self.assertEqual(classes.count("aligned"), classes.count("K%16==8"))
        self.assertEqual(tune.grid("draw", 2 * tune.DRAW_COUNT)[:tune.DRAW_COUNT], draw)  # a larger draw extends it
        self.assertFalse(set(tune.grid("draw", 2 * tune.DRAW_COUNT)) & set(shape_sweep.RANDOM_SHAPES))

    def test_the_committed_table_holds_the_draw_and_the_grid(self):
        # The H100 table's shapes off the default grid are the draw's first DRAW_COUNT: a change to the draw
        # (random_shapes, the seed, the sweep's shapes) would make a resumed run time other shapes.
        tune = self.tune
        table = ROOT / "results/tuning/nvidia_h100_80gb_hbm3_bf16.csv"
        with open(table, newline="") as f:
            shapes = {(int(r["m"]), int(r["n"]), int(r["k"])) for r in csv.DictReader(f)}
        off_grid = shapes - set(tune.grid("default"))
        self.assertEqual(off_grid, set(tune.grid("draw")) | set(tune.grid("long-k")))

    def test_the_long_k_grid_lies_past_the_others_in_k(self):
        # The table's reach in K (family/dispatch.hpp's kReachAbove) is 2x its longest K: the long-K grid
        # takes it past K = 65536, in the default grid's three alignment classes.
        tune = self.tune
        long_k = tune.grid("long-k")
        self.assertEqual(len(long_k), 3 * len(tune.LONG_K_M) * len(tune.LONG_K_NK))
        self.assertEqual({k % 64 for _, _, k in long_k}, {0, 8, 32})
        longest = max(k for _, _, k in tune.grid("default") + tune.grid("draw"))
        self.assertGreaterEqual(min(k for _, _, k in long_k), 2 * longest)

    def test_an_unknown_grid_is_refused(self):
        r = run(SCRIPTS / "tune.py", "--grid", "nope", "--dry-run")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("the grids are default, long-k, draw and smoke", r.stderr)
        for bad in (["--grid", "smoke", "--draw-count", "5"], ["--grid", "draw", "--draw-count", "0"],
                    ["--grid", "draw", "--draw-count", "100000000"]):
            r = run(SCRIPTS / "tune.py", *bad, "--dry-run")
            self.assertNotEqual(r.returncode, 0, bad)
            self.assertIn("--draw-count", r.stderr)


class RandomFamilies(unittest.TestCase):
    """scripts/shape_sweep.py's names of the random draws: "random" for seed 46's set, "random-S" for a
    held-out draw (bench.py --shapes --random-seed S); shapes_table.py keeps every draw out of the sweep."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, str(SCRIPTS))  # as TuneDrawGrid: bench_torch takes scripts/ off sys.path
        try:
            import shape_sweep
        finally:
            sys.path.remove(str(SCRIPTS))
        cls.sw = shape_sweep

    def test_the_names_round_trip(self):
        sw = self.sw
        self.assertEqual(sw.random_family(), "random")
        self.assertEqual(sw.random_family(sw.RANDOM_SEED), sw.RANDOM_FAMILY)
        self.assertEqual(sw.random_family(4701), "random-4701")
        self.assertEqual(sw.random_family(0), "random-0")
        for seed in (sw.RANDOM_SEED, 0, 4701, 2 ** 40):
            self.assertEqual(sw.random_seed_of(sw.random_family(seed)), seed)
            self.assertTrue(sw.is_random_family(sw.random_family(seed)))
        for fam in ("decode", "other", "random-46", "random-04701", "random-x", "random-", "random--1", "random-٣",
                    "", None):
            self.assertIsNone(sw.random_seed_of(fam), fam)
            self.assertFalse(sw.is_random_family(fam), fam)
        for bad in (-1, "4701", 4.0, True, None):
            with self.assertRaises(ValueError):
                sw.random_family(bad)
        self.assertLess(sw.random_family_key("random"), sw.random_family_key("random-7"))
        self.assertLess(sw.random_family_key("random-7"), sw.random_family_key("random-4701"))

    def test_a_held_out_draw_stays_out_of_the_sweep_and_the_decode_bar(self):
        sw = self.sw
        # a shape of the draw with M <= 16 and N % 8 == 0: one the decode bar would count were it seed 46's
        m, n, k, _ = next(d for d in sw.random_shapes(4701) if d[0] <= 16 and d[1] % 8 == 0)
        head = "step,family,m,n,k,kernel,ms,tflops,step_ratio,step_ratio_q25,step_ratio_q75,clock_mhz\n"
        rows = ["29,decode,1,4096,4096,step,0.002,1,1,1,1,1980", "29,decode,1,4096,4096,cublas,0.002,1,0.9,0.8,1.0,1980",
                f"29,random-4701,{m},{n},{k},step,0.01,1,1,1,1,1900",
                f"29,random-4701,{m},{n},{k},cublas,0.001,1,0.1,0.1,0.1,1900"]
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "s.csv"
            f.write_text(head + "\n".join(rows) + "\n")
            fams = {r["family"] for r in sw.read_results(f)}
            self.assertEqual(fams, {"decode", "random-4701"})
            _, book, r = block_from_csv(d, head, rows, "--steps", "29")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("| the sweep, 1 shapes: geometric mean (at or above 0.95×) | 0.900× (0) |", book.read_text())
            # the classes block reports the draw apart, named by its seed (its ratio 0.1, not the sweep's 0.9)
            label = "aligned" if k % 16 == 0 else "K % 16 == 8"
            self.assertIn(f"| held-out draw (seed 4701), {label}, 1 shapes | 0.100× |", book.read_text())
            self.assertNotIn("| random,", book.read_text())
            _, book, r = block_from_csv(d, head, rows, "--decode", "29")  # the sweep's and seed 46's only
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("at or above cuBLAS: 0 of 1 shapes with N % 8 == 0, geometric mean 0.900×.", book.read_text())
            t = run(SCRIPTS / "shapes_table.py", f)
            self.assertEqual(t.returncode, 0, t.stderr)
            self.assertIn("**step 29 **: geometric mean 0.900× the best reference over 1 shapes", t.stdout)
            self.assertIn("**step 29 , the held-out draw from seed 4701** (1 shapes", t.stdout)
            self.assertIn("drawn from seed 4701", t.stdout)


def block_from_csv(d, head, rows, *mode):
    """Writes rows under head as d/s.csv and a chapter d/book.md with an empty block p, runs shapes_table.py
    `mode` into it: (the CSV's path, the chapter's, the run)."""
    f, book = Path(d) / "s.csv", Path(d) / "book.md"
    f.write_text(head + "\n".join(rows) + "\n")
    book.write_text("<!-- p:table -->\n<!-- /p -->\n")
    return f, book, run(SCRIPTS / "shapes_table.py", f, "--book", book, "--block", "p", *mode)


class ShapesTable(unittest.TestCase):
    CSV = ROOT / "results/nvidia_h100_80gb_hbm3_shapes.csv"

    def test_the_chapter_blocks_are_what_the_committed_csv_says(self):
        if not self.CSV.exists():
            self.skipTest("no results/nvidia_h100_80gb_hbm3_shapes.csv")
        for block, mode in (("shapes_h100", ["--steps", "29,28"]), ("pickers_h100", ["--pickers", "29,28"]),
                            ("decode_h100", ["--decode", "29"]), ("shapes_39_h100", ["--steps", "39,29"])):
            r = run(SCRIPTS / "shapes_table.py", self.CSV, "--book", ROOT / "docs/every_shape.md", "--block", block,
                    *mode, "--check")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_a_stale_block_fails_the_check_and_is_rewritten(self):
        if not self.CSV.exists():
            self.skipTest("no results/nvidia_h100_80gb_hbm3_shapes.csv")
        with tempfile.TemporaryDirectory() as d:
            book = Path(d) / "book.md"
            book.write_text("# t\n<!-- s:table -->\n| step 29 | 9.999× |\n<!-- /s -->\n")
            args = (SCRIPTS / "shapes_table.py", self.CSV, "--book", book, "--block", "s", "--steps", "29,28")
            self.assertEqual(run(*args, "--check").returncode, 1)
            self.assertEqual(run(*args).returncode, 0)
            self.assertNotIn("9.999", book.read_text())
            self.assertIn("| random, K % 16 == 8, 34 shapes |", book.read_text())
            self.assertEqual(run(*args, "--check").returncode, 0)
            r = run(SCRIPTS / "shapes_table.py", self.CSV, "--book", book, "--block", "s", "--steps", "29,99")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no rows of step 99", r.stderr)

    def test_decode_from_a_csv(self):
        # Two shapes with M <= 16 (one at cuBLAS's speed, one slower), one with M = 17 that does not count.
        head = "step,family,m,n,k,kernel,ms,step_ratio,step_ratio_q25,step_ratio_q75,clock_mhz\n"
        rows = ["29,decode,1,1000,1000,step,0.002,1,1,1,1980", "29,decode,1,1000,1000,cublas,0.002,1.0,0.9,1.1,1980",
                "29,random,16,504,4000,step,0.01,1,1,1,1900", "29,random,16,504,4000,cublas,0.008,0.8,0.75,0.85,1900",
                "29,random,17,500,4000,step,0.01,1,1,1,1900", "29,random,17,500,4000,cublas,0.001,0.1,0.1,0.1,1900"]
        with tempfile.TemporaryDirectory() as d:
            f, book, r = block_from_csv(d, head, rows, "--decode", "29")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            text = book.read_text()
            self.assertIn("at or above cuBLAS: 1 of 2 shapes with N % 8 == 0, geometric mean 0.894×.", text)  # sqrt(0.8)
            # 2 (16*4000 + 504*4000 + 16*504) bytes = 4.176 MB: 0.42 TB/s in 0.01 ms, 0.52 in 0.008
            self.assertIn("| 16×504×4000 | 0.42 | 0.52 | 0.800 [0.750–0.850] | 1900 |", text)
            self.assertNotIn("17×500", text)
            r = run(SCRIPTS / "shapes_table.py", f, "--book", book, "--block", "p", "--decode", "28")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no shape of step 28 with M <= 16", r.stderr)
            # bad input: one line and a non-zero exit, never a traceback
            f.write_text("step,m,n,k,kernel\n29,1,2,3,step\n")
            r = run(SCRIPTS / "shapes_table.py", f, "--book", book, "--block", "p", "--decode", "29")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no column ms", r.stderr)
            self.assertNotIn("Traceback", r.stderr)
            for bad in (["--pickers", "29,29"], ["--pickers", "29"], ["--decode", "29", "--pickers", "29,28"]):
                r = run(SCRIPTS / "shapes_table.py", f, "--book", book, "--block", "p", *bad)
                self.assertNotEqual(r.returncode, 0, bad)
                self.assertTrue(r.stderr.startswith("error: "), r.stderr)
            r = run(SCRIPTS / "shapes_table.py", Path(d) / "none.csv", "--book", book, "--block", "p", "--decode", "29")
            self.assertIn("cannot read", r.stderr)

    def test_pickers_from_a_csv(self):
        # One aligned random-set shape with both references (t_best / t_picked by hand below), one with
        # K % 16 == 8 whose cuBLASLt row is missing (so it counts nowhere), and a step with no rows.
        head = "step,family,m,n,k,kernel,detail,tflops,step_ratio\n"
        rows = ["29,random,100,512,1024,step,,1.0,1.0", "29,random,100,512,1024,cublas,,1.0,0.8",
                '29,random,100,512,1024,cublaslt_best,"lt#1 (algo 6)",1.0,0.9',
                "29,random,100,512,1024,cutlass_pingpong_128x128x64_c1x1,,1.0,1.6",
                "28,random,100,512,1024,step,,1.0,1.0", "28,random,100,512,1024,cublas,,1.0,0.5",
                '28,random,100,512,1024,cublaslt_best,"lt#3 (algo 6)",1.0,0.6',
                "29,random,100,512,1032,step,,1.0,1.0", "29,random,100,512,1032,cublas,,1.0,0.7"]
        with tempfile.TemporaryDirectory() as d:
            f, book, r = block_from_csv(d, head, rows, "--pickers", "29,28")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            text = book.read_text()
            self.assertIn("| who picks, and how | aligned (1) | K % 16 == 8 (0) |", text)
            self.assertIn("CUTLASS ping-pong 128 × 128 | 0.500× | – |", text)       # 0.8 / 1.6
            self.assertIn("2 × 1 cluster | – | – |", text)                          # never timed
            self.assertIn("step 28 | 0.500× | – |", text)                           # its own best, 0.5
            self.assertIn("(its heuristic's choice) | 1.000× | – |", text)          # cuBLAS was the best
            self.assertIn("best-of-8 | 0.889× (its first choice the fastest on 1 of 1) | – |", text)  # 0.8 / 0.9
            self.assertIn("step 29 | 0.800× | – |", text)
            r = run(SCRIPTS / "shapes_table.py", f, "--book", book, "--block", "p", "--pickers", "29,27")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no random-set rows of step 27", r.stderr)



class Fp8Table(unittest.TestCase):
    CSV = ROOT / "results/nvidia_h200_fp8_shapes.csv"

    def test_the_chapter_blocks_are_what_the_committed_csv_says(self):
        if not self.CSV.exists():
            self.skipTest("no results/nvidia_h200_fp8_shapes.csv")
        for step in ("35", "36", "37"):
            r = run(SCRIPTS / "fp8_table.py", self.CSV, "--step", step, "--book", ROOT / "docs/fp8.md",
                    "--block", f"fp8_{step}", "--check")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_the_square_size_blocks_are_what_the_committed_csv_says(self):
        square = ROOT / "results/nvidia_h200.csv"
        if not square.exists():
            self.skipTest("no results/nvidia_h200.csv")
        for step in ("30", "31", "32", "33", "34"):
            r = run(SCRIPTS / "fp8_table.py", square, "--step", step, "--book", ROOT / "docs/fp8.md",
                    "--block", f"fp8_{step}", "--sol", "--check")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_rows_from_a_csv_and_a_stale_block(self):
        with tempfile.TemporaryDirectory() as d:
            path, book = Path(d) / "x_fp8_shapes.csv", Path(d) / "book.md"
            cols = ["step", "m", "n", "k", "kernel", "tflops", "step_ratio", "step_ratio_q25", "step_ratio_q75",
                    "rel_rms_err", "clock_mhz"]
            rows = [["37", 16, 4096, 4096, "step", "38.6", "1", "1", "1", "0.000662", "2010"],
                    ["37", 16, 4096, 4096, "cublaslt_best", "46.9", "0.8339", "0.7845", "0.8573", "0.000662", "2010"],
                    ["37", 16, 4096, 4096, "cublaslt_fast", "46.3", "0.8280", "0.79", "0.86", "0.0023", "2010"]]
            with open(path, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(cols)
                w.writerows(rows)
            book.write_text("# t\n<!-- f:table -->\nold\n<!-- /f -->\n")
            args = (SCRIPTS / "fp8_table.py", path, "--step", "37", "--book", book, "--block", "f")
            self.assertEqual(run(*args, "--check").returncode, 1)
            self.assertEqual(run(*args).returncode, 0)
            self.assertIn("| 16 × 4096 × 4096 | 38.60 | 0.834 [0.784–0.857] | 0.828 | 2010 | 0.000662 (0.000662) |",
                          book.read_text())
            self.assertEqual(run(*args, "--sol").returncode, 0)
            self.assertIn("| 16 × 4096 × 4096 | 38.60 | 0.834 [0.784–0.857] | 0.828 | 2010 | – | 0.000662 (0.000662) |",
                          book.read_text())
            r = run(SCRIPTS / "fp8_table.py", path, "--step", "36")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no rows of step 36", r.stderr)


if __name__ == "__main__":
    unittest.main()
