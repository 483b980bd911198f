// FP8 tests (steps with Dtype::fp8, from 30 on). CPU: the e4m3 quantizer (saturation, round to nearest
// even, subnormals, amax scaling per tensor and per block, a round trip over every byte), the scale
// grids' layouts, the fp8 tolerance and relative RMS error, the bound on the relative RMS error and a
// host model of the kernels (the tensor cores' truncation the lab measured) that passes honest FP8
// arithmetic and fails a dropped K tile at K up to 65536, the TMA checks for 1-byte elements, the
// registrations and refusals, the cuBLASLt FP8 reference's refusals, the step executable's --exact
// bound, and make profile's command lines for an fp8 step (cuBLASLt FP8 of its scaling). GPU (skipped without a device): the GPU quantizer equals the host one bit for bit, the GPU
// fp64 oracle equals the CPU one, each fp8 step in exact mode (==) and random mode against the oracle
// on a suite built around its tile (ragged M and N, M = 1, N = 1, K tails), the block-scaled steps
// with power-of-two scales that differ by up to 64x from block to block (==: an sfa or sfb index bug
// cannot pass), every fp8 step ten times bitwise identical on a stream-K shape, cuBLASLt FP8 (default
// and fast accumulation; block-scaled) against the oracle, and a problem of the wrong scaling refused.
// The llm inputs (--dist llm, fp8.hpp's Dist): CPU, the generator's outlier channels and block sigmas
// (deterministic, pinned, in range), the coarse scale grids written out as block scales, the census of
// what quantization flushed, the tolerance's running-sum size, the flag's refusals, the outliers lab's
// host model; GPU, the kept inputs are those ProblemBuffers quantized, every fp8 step passes its check
// on them, and the error against the unquantized product holds the quantization's.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include "../common/harness/compare.hpp"
#include "../common/harness/cublaslt.hpp"
#include "../common/harness/device_info.hpp"
#include "../common/harness/fp8.hpp"
#include "../common/harness/options.hpp"
#include "../common/harness/problem.hpp"
#include "../common/harness/reference.hpp"
#include "../common/harness/results.hpp"
#include "../common/harness/runner.hpp"
#include "../common/kernel_lib/tma.hpp"
#include "support.hpp"

using namespace gemm;

namespace {

std::vector<Step> fp8_steps() {
  std::vector<Step> out;
  for (const Step& s : registered_steps())
    if (!s.fixture && s.dtype == Dtype::fp8) out.push_back(s);
  return out;
}

// The Hopper tile suite (tests/support.cpp) with every K rounded up to a multiple of 16, the FP8 TMA
// steps' constraint: the K tails of 8 become tails of 16 (1032 -> 1040: 1024 and 16).
std::vector<gemm_test::Shape> fp8_shape_suite(const Tile& t) {
  std::vector<gemm_test::Shape> out;
  for (gemm_test::Shape s : gemm_test::tile_shape_suite(t)) {
    s.k = (s.k + 15) / 16 * 16;
    out.push_back(s);
  }
  out.push_back({1, 1, 16, "1 x 1, K = 16"});
  out.push_back({1, 777, 528, "M = 1, ragged N"});
  out.push_back({777, 1, 528, "N = 1, ragged M"});
  return out;
}

float q_value(float x, float scale) { return e4m3_value(quantize_e4m3(x, scale)); }

}  // namespace

TEST_CASE("e4m3 quantizer: saturation at 448, NaN kept, round to nearest even, subnormals", "[cpu][fp8]") {
  CHECK(kE4m3Max == 448.0f);
  CHECK(q_value(448.0f, 1) == 448.0f);
  CHECK(q_value(1000.0f, 1) == 448.0f);  // __NV_SATFINITE: past the largest finite value is the largest
  CHECK(q_value(-1e30f, 1) == -448.0f);
  CHECK(q_value(INFINITY, 1) == 448.0f);
  CHECK(std::isnan(q_value(NAN, 1)));
  CHECK(q_value(464.0f, 1) == 448.0f);  // 464 is halfway to 480, which e4m3 does not have: saturates
  // Near 1 the spacing is 2^-3: ties go to the even mantissa.
  CHECK(q_value(1.0625f, 1) == 1.0f);    // halfway 1 (mantissa 000) / 1.125 (001): even is 1
  CHECK(q_value(1.1875f, 1) == 1.25f);   // halfway 1.125 (001) / 1.25 (010): even is 1.25
  CHECK(q_value(1.07f, 1) == 1.125f);    // past halfway
  CHECK(q_value(-1.0625f, 1) == -1.0f);
  // Subnormals: the smallest is 2^-9; half of it is a tie with zero, which is even.
  CHECK(q_value(std::ldexp(1.0f, -9), 1) == std::ldexp(1.0f, -9));
  CHECK(q_value(std::ldexp(1.0f, -10), 1) == 0.0f);
  CHECK(q_value(std::ldexp(1.5f, -10), 1) == std::ldexp(1.0f, -9));
  // The scale divides first: x / scale is what is rounded.
  CHECK(q_value(3.0f, 0.5f) == 6.0f);
  CHECK(q_value(1000.0f, 1000.0f / 448.0f) == 448.0f);
}

TEST_CASE("e4m3 round trip: every finite byte converts to its value and back; |x - q| <= 2^-4 |x| in range", "[cpu][fp8]") {
  int finite = 0;
  for (int b = 0; b < 256; ++b) {
    const float v = e4m3_value(__nv_fp8_storage_t(b));
    if (std::isnan(v)) {
      CHECK((b & 0x7F) == 0x7F);  // S.1111.111 only
      continue;
    }
    ++finite;
    CAPTURE(b, v);
    CHECK(std::fabs(v) <= 448.0f);
    CHECK(int(quantize_e4m3(v, 1.0f)) == b);
  }
  CHECK(finite == 254);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0, 1);
  for (int i = 0; i < 10000; ++i) {
    const float x = normal(rng) * 50;
    if (std::fabs(x) < std::ldexp(1.0f, -6)) continue;  // e4m3's normal range starts at 2^-6
    CHECK(std::fabs(q_value(x, 1) - x) <= std::ldexp(std::fabs(x), -4));
  }
}

TEST_CASE("quantize_host: amax per tensor and per block; scale = amax / 448; an all-zero block gets 1", "[cpu][fp8]") {
  const int rows = 3, cols = 260;  // 3 K blocks of 128, the last one ragged (4 columns)
  std::vector<float> x(rows * cols);
  for (int i = 0; i < rows * cols; ++i) x[i] = std::sin(0.37f * i);
  x[1 * cols + 5] = -7.0f;   // amax of the tensor, in row 1, K block 0
  x[2 * cols + 258] = 3.0f;  // amax of row 2's last block
  for (int c = 128; c < 256; ++c) x[0 * cols + c] = 0.0f;  // row 0, K block 1: all zero
  std::vector<float> scales;
  std::vector<__nv_fp8_storage_t> q = quantize_host(x, per_tensor_grid(rows, cols), scales);
  REQUIRE(scales.size() == 1);
  CHECK(scales[0] == 7.0f / 448.0f);
  CHECK(e4m3_value(q[1 * cols + 5]) == -448.0f);  // the amax lands on e4m3's largest magnitude
  for (size_t i = 0; i < q.size(); ++i) CHECK(std::fabs(e4m3_value(q[i])) <= 448.0f);

  const ScaleGrid g = activation_grid_1x128(rows, cols);
  q = quantize_host(x, g, scales);
  REQUIRE(scales.size() == 9);
  CHECK(scales[size_t(g.index(1, 5))] == 7.0f / 448.0f);
  CHECK(scales[size_t(g.index(2, 258))] == 3.0f / 448.0f);
  CHECK(scales[size_t(g.index(0, 130))] == 1.0f);  // the all-zero block
  CHECK(e4m3_value(q[2 * cols + 258]) == 448.0f);
  CHECK(e4m3_value(q[0 * cols + 130]) == 0.0f);
  // Each block's own largest element lands on 448: block scaling uses the whole range in every block.
  for (int r = 0; r < rows; ++r)
    for (int kb = 0; kb < 3; ++kb) {
      float amax = 0, qmax = 0;
      for (int c = kb * 128; c < std::min(cols, kb * 128 + 128); ++c) {
        amax = std::max(amax, std::fabs(x[r * cols + c]));
        qmax = std::max(qmax, std::fabs(e4m3_value(q[r * cols + c])));
      }
      CAPTURE(r, kb);
      CHECK(qmax == (amax > 0 ? 448.0f : 0.0f));
    }
  // Dequantized, every value is within e4m3's half spacing of the original (relative 2^-4).
  std::vector<float> qf(q.size());
  for (size_t i = 0; i < q.size(); ++i) qf[i] = e4m3_value(q[i]);
  const std::vector<double> back = dequantize_host(qf, scales, g);
  for (size_t i = 0; i < x.size(); ++i) {
    const double s = scales[size_t(g.index(int64_t(i) / cols, int64_t(i) % cols))];
    CHECK(std::fabs(back[i] - x[i]) <= std::max(std::ldexp(std::fabs(double(x[i])), -4), std::ldexp(s, -9)));
  }
}

TEST_CASE("scale grids: sfa is ceil(K/128) x M with M contiguous, sfb ceil(N/128) x ceil(K/128) row-major", "[cpu][fp8]") {
  const ScaleGrid a = activation_grid_1x128(300, 260);
  CHECK(a.count() == 300 * 3);
  CHECK(a.index(0, 0) == 0);
  CHECK(a.index(1, 0) == 1);            // the next row of A: the next float
  CHECK(a.index(0, 128) == 300);        // the next K block: M floats on
  CHECK(a.index(299, 259) == 2 * 300 + 299);
  CHECK(a.index(5, 127) == a.index(5, 0));
  const ScaleGrid b = weight_grid_128x128(300, 260);
  CHECK(b.count() == 3 * 3);
  CHECK(b.index(0, 0) == 0);
  CHECK(b.index(127, 127) == 0);
  CHECK(b.index(0, 128) == 1);          // the next K block: the next float
  CHECK(b.index(128, 0) == 3);          // the next 128 rows of B: ceil(K / 128) floats on
  CHECK(b.index(299, 259) == 8);
  const ScaleGrid t = per_tensor_grid(300, 260);
  CHECK(t.count() == 1);
  CHECK(t.index(299, 259) == 0);
  CHECK(scale_grid(Scaling::block, false, 300, 260).index(0, 128) == 300);
  CHECK(scale_grid(Scaling::block, true, 300, 260).index(128, 0) == 3);
  CHECK(scale_grid(Scaling::per_tensor, true, 300, 260).count() == 1);
}

TEST_CASE("fp8 tolerance: two bf16 ulps plus 16 u_acc sqrt(K) sqrt(K/32); exact mode 0; relative RMS error", "[cpu][fp8][tolerance]") {
  const Tolerance t{Dtype::fp8, false, 8192, 1, 0};
  CHECK(t.at(0, 0) == Approx(16.0 / 8192 * std::sqrt(8192.0) * 16).epsilon(1e-12));  // 2.83
  CHECK(t.at(0, 0) > 2.8);
  CHECK(t.at(0, 0) < 2.9);
  CHECK(t.at(100, 0) == Approx(t.at(0, 0) + 2.0 * 100 / 256).epsilon(1e-12));
  CHECK(Tolerance{Dtype::fp8, false, 4096, 1, 0}.at(0, 0) < t.at(0, 0));
  CHECK(Tolerance{Dtype::fp8, false, 16, 1, 0}.at(0, 0) == Approx(16.0 / 8192 * 4).epsilon(1e-12));  // one k32 group
  CHECK(Tolerance{Dtype::fp8, true, 8192, 1, 0}.at(5, 0) == 0);
  // A dropped K tile of 128 N(0, 1) products (std. dev. 11.3) is outside it for most elements.
  std::mt19937 rng(3);
  std::normal_distribution<double> normal(0, 1);
  int outside = 0;
  for (int e = 0; e < 1000; ++e) {
    double dropped = 0;
    for (int i = 0; i < 128; ++i) dropped += normal(rng) * normal(rng);
    outside += std::fabs(dropped) > t.at(0, 0);
  }
  CHECK(outside > 700);  // expected about 800: P(|N(0, 11.3)| < 2.83) = 0.2
  // compare's relative RMS error: got = want * (1 + 1e-3) everywhere gives 1e-3.
  const std::vector<float> want{1, -2, 3, 4}, guard{NAN};
  std::vector<float> got;
  for (float w : want) got.push_back(w * (1 + 1e-3f));
  const CheckReport r = compare(got, want, {}, guard, 2, 2, t);
  CHECK(r.passed);
  CHECK(r.rel_rms_err == Approx(1e-3).epsilon(1e-3));
  CHECK(compare(want, want, {}, guard, 2, 2, t).rel_rms_err == 0);
}

TEST_CASE("fp8 names, rates and the CPU oracle of the dequantized product", "[cpu][fp8]") {
  CHECK(std::string(dtype_name(Dtype::fp8)) == "fp8");
  CHECK(std::string(scaling_name(Scaling::per_tensor)) == "per_tensor");
  CHECK(std::string(scaling_name(Scaling::block)) == "block");
  CHECK(flop_per_clock(Dtype::fp8, 132) == 2 * flop_per_clock(Dtype::bf16, 132));
  CHECK(flop_per_clock(Dtype::fp8, 132) * 1.83e9 / 1e12 == Approx(1978.9).epsilon(1e-3));  // the datasheet's 1979
  // 2 x 2 x 3: A = [[1, 2, 3], [0.5, 0, -1]] * 0.25 (dequantized), B = [[2, 0, 1], [1, 1, 1]] * 0.5.
  const std::vector<double> a{0.25, 0.5, 0.75, 0.125, 0, -0.25}, b{1, 0, 0.5, 0.5, 0.5, 0.5};
  const std::vector<double> c = cpu_gemm_dequant(a, b, 2, 2, 3);
  CHECK(c == std::vector<double>{0.25 + 0.375, 0.75, 0.125 - 0.125, 0.0625 - 0.125});
}

TEST_CASE("TMA maps with a pitch (step 28's padded copies): the pitch is the stride, at least the columns", "[cpu][tma]") {
  const void* base = reinterpret_cast<const void*>(uintptr_t(0x10000));
  TmaMatrix t{base, 5000, 5000, 128, 64, CU_TENSOR_MAP_SWIZZLE_128B, TmaElem::bf16, 5056};
  CHECK_FALSE(tma_refusal(t).has_value());  // 10112-byte rows of which 10000 are the matrix
  t.pitch = 4992;                            // below the 5000 columns
  REQUIRE(tma_refusal(t).has_value());
  CHECK_THAT(*tma_refusal(t), Catch::Contains("pitch of 4992 elements is below the row's 5000 columns"));
  t.pitch = 5004;                            // 10008 bytes: not a multiple of 16
  REQUIRE(tma_refusal(t).has_value());
  CHECK_THAT(*tma_refusal(t), Catch::Contains("a pitch of 5004 elements of bf16 is 10008 bytes"));
  t.cols = 5001;                             // the columns alone would be refused; the pitch decides
  t.pitch = 5056;
  CHECK_FALSE(tma_refusal(t).has_value());
}

TEST_CASE("TMA maps' L2 promotion (step 39): 0 (the default, 256), 64, 128 or 256 bytes", "[cpu][tma]") {
  const void* base = reinterpret_cast<const void*>(uintptr_t(0x10000));
  TmaMatrix t{base, 4096, 4104, 128, 64, CU_TENSOR_MAP_SWIZZLE_128B, TmaElem::bf16, 0, 0};
  for (uint32_t bytes : {0u, 64u, 128u, 256u}) {
    t.l2_promotion_bytes = bytes;
    CHECK_FALSE(tma_refusal(t).has_value());
  }
  for (uint32_t bytes : {32u, 100u, 512u}) {
    t.l2_promotion_bytes = bytes;
    REQUIRE(tma_refusal(t).has_value());
    CHECK_THAT(*tma_refusal(t), Catch::Contains("L2 promotion must be 64, 128 or 256 bytes"));
  }
}

TEST_CASE("TMA maps of e4m3: rows of 16-byte multiples (K % 16), boxes of 128 one-byte columns", "[cpu][fp8][tma]") {
  const void* base = reinterpret_cast<const void*>(uintptr_t(0x10000));
  const TmaMatrix ok{base, 300, 4096, 128, 128, CU_TENSOR_MAP_SWIZZLE_128B, TmaElem::e4m3};
  CHECK_FALSE(tma_refusal(ok).has_value());
  CHECK(tma_elem_bytes(TmaElem::e4m3) == 1);
  CHECK(tma_elem_bytes(TmaElem::bf16) == 2);
  TmaMatrix t = ok;
  t.cols = 4104;  // 8 mod 16: fine for bf16, not for e4m3
  REQUIRE(tma_refusal(t).has_value());
  CHECK_THAT(*tma_refusal(t), Catch::Contains("4104 columns of e4m3 are 4104 bytes") && Catch::Contains("multiple of 16"));
  t.elem = TmaElem::bf16;
  t.box_cols = 64;  // 128 bytes of bf16
  CHECK_FALSE(tma_refusal(t).has_value());
  t = ok;
  t.box_cols = 256;  // 256 bytes of e4m3: past the 128-byte swizzle span
  REQUIRE(tma_refusal(t).has_value());
  CHECK_THAT(*tma_refusal(t), Catch::Contains("exceeds the 128-byte swizzle span"));
  t.elem = TmaElem::bf16;
  t.box_cols = 64;  // 128 bytes of bf16
  CHECK_FALSE(tma_refusal(t).has_value());
}

TEST_CASE("fp8 steps: registered as fp8 with their scaling, parent and tile; K % 16 refused with the reason", "[cpu][fp8][registry]") {
  const std::vector<Step> steps = fp8_steps();
  REQUIRE(!steps.empty());
  const Step s30 = find_step("30");
  CHECK(s30.dtype == Dtype::fp8);
  CHECK(s30.scaling == Scaling::per_tensor);
  CHECK(s30.parent == "23");
  CHECK(s30.required_cc == 90);
  CHECK(s30.fp8 != nullptr);
  CHECK(s30.bf16 == nullptr);
  CHECK(s30.tile.bk * 1 == 128);  // one 128-byte swizzle row of one-byte elements
  const Step s31 = find_step("31");
  CHECK(s31.dtype == Dtype::fp8);
  CHECK(s31.scaling == Scaling::per_tensor);
  CHECK(s31.parent == "30");
  CHECK(s31.tile.bk == 128);
  const Step s32 = find_step("32");
  CHECK(s32.dtype == Dtype::fp8);
  CHECK(s32.scaling == Scaling::block);
  CHECK(s32.parent == "31");
  CHECK(s32.tile.bk == 128);  // one 1 x 128 scale block of A per K tile
  CHECK(s32.tile.bn == 128);  // one 128 x 128 scale block of B per tile and K tile
  for (const Step& s : steps) {
    CAPTURE(s.id);
    CHECK(s.required_cc == 90);
    for (int k : {8, 24, 1000, 4104}) {
      const auto why = refusal(s, 256, 256, k);
      REQUIRE(why.has_value());
      CHECK_THAT(*why, Catch::Contains("K % 16 == 0") && Catch::Contains(fmt::format("K={}", k)));
    }
    for (auto [m, n, k] : {std::tuple{1, 1, 16}, {4096, 4096, 4096}, {1, 8192, 8192}, {777, 1, 528}})
      CHECK_FALSE(refusal(s, m, n, k).has_value());
    const Gpu ampere{8, 0, "A100"};
    CHECK(refusal(s, 256, 256, 256, &ampere).has_value());
  }
  // A registration with the wrong launcher for fp8 is refused.
  Step bad = s30;
  bad.id = "zz_fp8";
  bad.fp8 = nullptr;
  CHECK_THROWS_AS(register_step(bad), Error);
}

TEST_CASE("cuBLASLt FP8 reference: K % 16 and block scaling with fast accumulation are refused before any CUDA call", "[cpu][fp8][reference]") {
  Fp8Gemm p{64, 64, 40, nullptr, nullptr, nullptr};
  CHECK_THROWS_WITH(LtGemm(p, false, 4), Catch::Contains("K % 16 == 0"));
  p.k = 64;
  p.scaling = Scaling::block;
  CHECK_THROWS_WITH(LtGemm(p, true, 4), Catch::Contains("block scaling has no fast-accumulation mode"));
}

TEST_CASE("fp8 step executable: --exact past K = 1024 and --alpha are refused with exit 2", "[cpu][fp8][exe]") {
  if (!gemm_test::have_executables({"30_fp8_wgmma"})) return;
  const std::string exe = (gemm_test::binary_dir() / "30_fp8_wgmma").string();
  auto r = gemm_test::run_command(exe + " --exact --m 64 --n 64 --k 2048");
  INFO(r.output);
  REQUIRE(r.exited);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("fp8 exact mode needs K <= 1024"));
  r = gemm_test::run_command(exe + " --m 64 --n 64 --k 64 --alpha 2");
  REQUIRE(r.exited);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("--alpha and --beta apply to fp32 steps only"));
  r = gemm_test::run_command(exe + " --m 64 --n 64 --k 72");
  REQUIRE(r.exited);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("K % 16 == 0"));
}

TEST_CASE("make profile on an fp8 step: cuBLASLt FP8 of the step's scaling is the reference side, and the step takes its flags", "[cpu][fp8][profile]") {
  // ncu needs a GPU, so this checks what scripts/profile.py would run (--dry-run: its two ncu command
  // lines) and that the step executable takes the reference side's flags as printed: on a machine
  // without a GPU it gets as far as looking for one (exit 2, "no CUDA device found"), past the flags
  // and the fp8 refusal below; with one, it runs them (exit 0). bf16 steps keep cuBLAS.
  if (!gemm_test::have_repo("scripts/profile.py and kernels/steps.json")) return;
  if (!gemm_test::have_executables({"23_pingpong_stream_k", "30_fp8_wgmma", "32_fp8_block_scaled"})) return;
  if (gemm_test::run_command("python3 --version").status != 0) {
    gemm_test::mark_skipped("no python3 on PATH");
    return;
  }
  const auto repo = gemm_test::repo_dir();
  const std::string build = gemm_test::binary_dir().parent_path().string();
  struct Case {
    const char *id, *exe, *what, *label;
  };
  for (const Case& c : {Case{"30", "30_fp8_wgmma", "cublaslt", "cuBLASLt FP8 per-tensor"},
                        Case{"32", "32_fp8_block_scaled", "cublaslt", "cuBLASLt FP8 block-scaled (1x128 A, 128x128 B)"},
                        Case{"23", "23_pingpong_stream_k", "cublas", "cuBLAS"}}) {
    const std::string exe = (gemm_test::binary_dir() / c.exe).string();
    const auto r = gemm_test::run_command("python3 '" + (repo / "scripts/profile.py").string() + "' " + c.id +
                                          " --dry-run --m 256 --n 256 --k 256 --ncu ncu --build '" + build + "'");
    INFO("step " << c.id << ": " << r.output);
    REQUIRE(r.exited);
    REQUIRE(r.status == 0);
    std::string step_line, ref_line;
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("step (", 0) == 0) step_line = line;
      if (line.rfind("reference (", 0) == 0) ref_line = line;
    }
    const std::string flags = " --m 256 --n 256 --k 256 --profile-once ";
    CHECK(step_line.rfind(std::string("step (") + c.exe + "): ncu --clock-control none ", 0) == 0);
    CHECK_THAT(step_line, Catch::EndsWith(exe + flags + "step"));
    CHECK(ref_line.rfind(std::string("reference (") + c.label + "): ncu --clock-control none ", 0) == 0);
    CHECK_THAT(ref_line, Catch::EndsWith(exe + flags + c.what));
    if (std::string(c.what) != "cublaslt") continue;
    // The reference side's flags, as printed, given to the step executable.
    const size_t at = ref_line.find(exe);
    REQUIRE(at != std::string::npos);
    const auto run = gemm_test::run_command(ref_line.substr(at) + " 2>&1");
    INFO(run.output);
    REQUIRE(run.exited);
    if (gemm::cuda_device_count() == 0) {
      CHECK(run.status == 2);
      CHECK_THAT(run.output, Catch::Contains("no CUDA device found"));
    } else {
      CHECK(run.status == 0);
    }
  }
  // cuBLAS has no FP8 GEMM: the bf16 steps' reference flag is refused for an fp8 step, before any GPU
  // is looked for, with the flag to use and the step's scaling.
  const auto r = gemm_test::run_command((gemm_test::binary_dir() / "32_fp8_block_scaled").string() +
                                        " --m 256 --n 256 --k 256 --profile-once cublas 2>&1");
  INFO(r.output);
  REQUIRE(r.exited);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("cuBLAS has no FP8 GEMM") && Catch::Contains("--profile-once cublaslt") &&
                           Catch::Contains("(block)"));
  CHECK(parse_options_or_throw({"--profile-once", "cublaslt"}).profile_once == "cublaslt");
}

// ---- LLM-shaped inputs (--dist llm) and the outliers lab (docs/fp8.md, "What block scaling buys") ----

TEST_CASE("llm inputs: outlier channels and block sigmas are deterministic, pinned, in range and log-uniform", "[cpu][fp8][dist]") {
  const LlmShape s;  // the defaults the book describes: 0.5 % of K, factors 10-1000, sigmas 0.1-10
  CHECK(s.outlier_fraction == 0.005);
  CHECK(s.outlier_min == 10);
  CHECK(s.outlier_max == 1000);
  CHECK(s.sigma_min == 0.1);
  CHECK(s.sigma_max == 10);
  // Pinned: the committed results of the outliers lab were drawn from these (mt19937_64's output is
  // fixed by the C++ standard, and nothing else enters); a change here changes every llm input.
  const std::vector<float> f = llm_channel_factors(1024, 2026, s);
  REQUIRE(f.size() == 1024);
  std::vector<std::pair<int, float>> outliers;
  for (int c = 0; c < 1024; ++c)
    if (f[size_t(c)] != 1.0f) outliers.push_back({c, f[size_t(c)]});
  REQUIRE(outliers.size() == 5);  // round(0.005 * 1024) = 5
  const std::pair<int, float> pinned[] = {{232, 119.997864f}, {396, 30.7322617f}, {472, 292.807892f}, {722, 40.5359688f}, {926, 260.279755f}};
  for (int i = 0; i < 5; ++i) {
    CHECK(outliers[size_t(i)].first == pinned[i].first);
    CHECK(outliers[size_t(i)].second == Approx(pinned[i].second).epsilon(1e-6));
  }
  CHECK(llm_channel_factors(1024, 2026, s) == f);  // the same seed, the same inputs
  CHECK(llm_channel_factors(1024, 2027, s) != f);
  // Counts: at least one outlier, and round(fraction * K); factors log-uniform in [10, 1000], so their
  // log10 averages about 2 over many.
  const std::vector<float> one = llm_channel_factors(1, 1, s);
  CHECK((one.size() == 1 && one[0] >= 10.0f));
  const std::vector<float> many = llm_channel_factors(1 << 16, 7, s);
  double sum_log = 0;
  int count = 0;
  for (float v : many)
    if (v != 1.0f) {
      CHECK(v >= 10.0f);
      CHECK(v <= 1000.0f);
      sum_log += std::log10(v), ++count;
    }
  CHECK(count == 328);  // round(0.005 * 65536)
  CHECK(sum_log / count == Approx(2.0).margin(0.15));
  // B: one sigma per 128 x 128 block, in sfb's layout (ceil(300/128) x ceil(260/128) = 3 x 3), pinned.
  const std::vector<float> sigma = llm_block_sigmas(300, 260, 2026, s);
  REQUIRE(sigma.size() == 9);
  CHECK(sigma[0] == Approx(0.194031805f).epsilon(1e-6));
  CHECK(sigma[4] == Approx(8.87942028f).epsilon(1e-6));
  for (float v : sigma) {
    CHECK(v >= 0.1f);
    CHECK(v <= 10.0f);
  }
  CHECK(llm_block_sigmas(300, 260, 2026, s) == sigma);
  // Not a distribution: refused with the reason.
  LlmShape bad = s;
  bad.outlier_min = 2000;
  CHECK_THROWS_WITH(llm_channel_factors(64, 1, bad), Catch::Contains("min <= max"));
  bad = s;
  bad.sigma_min = 0;
  CHECK_THROWS_WITH(llm_block_sigmas(64, 64, 1, bad), Catch::Contains("positive"));
  bad = s;
  bad.outlier_fraction = 2;
  CHECK_THROWS_AS(llm_channel_factors(64, 1, bad), Error);
}

TEST_CASE("coarse scale grids (per row, per column, per 128 rows) and their scales written out as block scales", "[cpu][fp8][dist]") {
  const ScaleGrid row = row_grid(300, 260), col = column_grid(300, 260), rb = row_block_grid_128(300, 260);
  CHECK(row.count() == 300);
  CHECK(row.index(7, 259) == 7);
  CHECK(col.count() == 260);
  CHECK(col.index(299, 11) == 11);
  CHECK(rb.count() == 3);
  CHECK(rb.index(129, 200) == 1);
  // Per row of A in sfa's layout (1 x 128): every K block of row r holds row r's scale.
  std::vector<float> coarse(300);
  for (int r = 0; r < 300; ++r) coarse[size_t(r)] = 1.0f + r;
  const ScaleGrid fa = activation_grid_1x128(300, 260);
  const std::vector<float> sfa = expand_scales(coarse, row, fa);
  REQUIRE(int64_t(sfa.size()) == fa.count());
  for (int r = 0; r < 300; ++r)
    for (int c : {0, 128, 259}) CHECK(sfa[size_t(fa.index(r, c))] == 1.0f + r);
  // Per 128 rows of B in sfb's layout (128 x 128): the same along K.
  const ScaleGrid fb = weight_grid_128x128(300, 260);
  const std::vector<float> sfb = expand_scales({5, 6, 7}, rb, fb);
  for (int r : {0, 127, 128, 299})
    for (int c : {0, 200}) CHECK(sfb[size_t(fb.index(r, c))] == 5.0f + r / 128);
  // Per tensor into either layout: one value everywhere.
  const std::vector<float> one = expand_scales({0.25f}, per_tensor_grid(300, 260), fa);
  CHECK(std::all_of(one.begin(), one.end(), [](float v) { return v == 0.25f; }));
  // A finer grid cannot be coarsened, nor a grid of another shape written out.
  CHECK_THROWS_WITH(expand_scales(sfa, fa, row), Catch::Contains("do not hold whole blocks"));
  CHECK_THROWS_WITH(expand_scales(coarse, row, activation_grid_1x128(301, 260)), Catch::Contains("cannot be written out"));
}

TEST_CASE("fp8_census counts what quantization flushed to zero or left subnormal; per-tensor scales flush what block scales keep", "[cpu][fp8][dist]") {
  // Scale 1: 2^-12 rounds to 0 (below 2^-10), 2^-8 is a subnormal (2 * 2^-9), 1 keeps 3 mantissa bits; 0 is not counted.
  const std::vector<float> x = {0.0f, 1.0f, std::ldexp(1.0f, -12), std::ldexp(1.0f, -8)};
  std::vector<__nv_fp8_storage_t> q;
  for (float v : x) q.push_back(quantize_e4m3(v, 1.0f));
  const Fp8Census c = fp8_census(x, q);
  CHECK(c.nonzero == 3);
  CHECK(c.flushed == 1);
  CHECK(c.subnormal == 1);
  CHECK_THROWS_AS(fp8_census(x, {}), Error);
  // One channel 10^5 times the rest (a 64 x 1024 A): one scale for the tensor puts the ordinary values
  // 2^16 below its largest, subnormal or past e4m3's 2^-9 floor; 1 x 128 blocks keep every block in
  // range but the outlier's own block in each row.
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0, 1);
  const int m = 64, k = 1024;
  std::vector<float> a(size_t(m) * k);
  for (float& v : a) v = normal(rng);
  std::vector<float> f(k, 1.0f);
  f[300] = 1e5f;
  scale_by_grid_host(a, column_grid(m, k), f);
  CHECK(a[size_t(5 * k + 300)] != 0);
  std::vector<float> scales;
  const Fp8Census tensor = fp8_census(a, quantize_host(a, per_tensor_grid(m, k), scales));
  const Fp8Census block = fp8_census(a, quantize_host(a, activation_grid_1x128(m, k), scales));
  CHECK(tensor.nonzero == int64_t(m) * k);
  CHECK(tensor.flushed + tensor.subnormal > tensor.nonzero * 9 / 10);
  // At most the outlier's 1 x 128 block of each row (127 of every 1024 values; more than half of them) and a
  // handful of tiny values elsewhere.
  CHECK(block.flushed + block.subnormal < block.nonzero / 7);
  CHECK(block.flushed + block.subnormal > int64_t(m) * 64);
}

TEST_CASE("fp8 tolerance on other inputs than N(0,1): the running sum's size is the reference's RMS", "[cpu][fp8][tolerance]") {
  Tolerance t{Dtype::fp8, false, 4096};
  const double base = t.at(0, 0);
  t.sum_rms = 64;  // sqrt(4096): what N(0, 1) inputs give, the same tolerance
  CHECK(t.at(0, 0) == Approx(base));
  t.sum_rms = 6400;
  CHECK(t.at(0, 0) == Approx(100 * base));
  CHECK(rms({3.0f, -4.0f, NAN}) == Approx(std::sqrt(12.5)));
  CHECK(rms({}) == 0);
}

namespace {

// The FP8 tensor cores' add as the accuracy lab measured it on the H200 (lab/fp8_accumulator.cu,
// results/nvidia_h200_fp8_accumulator.md): one k32 wgmma aligns the accumulator and its products to the
// largest one's exponent and drops every bit of each below 2^-13 of it (kUnitRoundoffFp8Accum), toward
// zero, before it adds them. `p` are products of e4m3 values (exact in fp64); so is the result.
double tensor_core_add(double acc, const double* p, int count) {
  double big = std::fabs(acc);
  for (int i = 0; i < count; ++i) big = std::max(big, std::fabs(p[i]));
  if (big == 0) return 0;
  const double step = std::ldexp(1.0, std::ilogb(big)) * kUnitRoundoffFp8Accum;
  double sum = std::trunc(acc / step) * step;
  for (int i = 0; i < count; ++i) sum += std::trunc(p[i] / step) * step;
  return sum;
}

// An m x n x k FP8 problem on the host: N(0, 1) inputs quantized to e4m3 with `scaling`'s grids, and the
// harness's oracle of its dequantized product (fp64, rounded once to bf16).
struct HostFp8 {
  int m, n, k;
  Scaling scaling;
  ScaleGrid ga, gb;
  std::vector<float> qa, qb, sa, sb, want;

  HostFp8(int m_, int n_, int k_, Scaling s, uint32_t seed)
      : m(m_), n(n_), k(k_), scaling(s), ga(scale_grid(s, false, m_, k_)), gb(scale_grid(s, true, n_, k_)) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> a(size_t(m) * k), b(size_t(n) * k);
    for (float& v : a) v = normal(rng);
    for (float& v : b) v = normal(rng);
    for (const __nv_fp8_storage_t q : quantize_host(a, ga, sa)) qa.push_back(e4m3_value(q));
    for (const __nv_fp8_storage_t q : quantize_host(b, gb, sb)) qb.push_back(e4m3_value(q));
    const std::vector<double> c = cpu_gemm_dequant(dequantize_host(qa, sa, ga), dequantize_host(qb, sb, gb), m, n, k);
    for (double v : c) want.push_back(__bfloat162float(__double2bfloat16(v)));
  }

  // What an FP8 kernel stores, modelled: each k32 group of e4m3 products added into the tensor cores'
  // accumulator (tensor_core_add); `promoted`: that accumulator restarted every K tile of kFp8KTile and
  // its partial added into an fp32 sum, times the tile's block scales where there are any (the FFMA
  // of steps 32-36; step 31's FADD), else over the whole of K (step 30); per-tensor scales multiplied
  // in at the end (the epilogue); rounded to bf16. K tile `skip` (-1: none) is left out, as a K loop
  // that loses one iteration would.
  std::vector<float> kernel(bool promoted, int64_t skip) const {
    std::vector<float> out(size_t(m) * n);
    std::vector<double> p(32);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double tc = 0;
        float acc = 0;
        for (int kt = 0; kt * kFp8KTile < k; ++kt) {
          if (kt == skip) continue;
          if (promoted) tc = 0;
          for (int g = kt * kFp8KTile; g < std::min(k, (kt + 1) * kFp8KTile); g += 32) {
            const int count = std::min(32, k - g);
            for (int x = 0; x < count; ++x) p[x] = double(qa[size_t(i) * k + g + x]) * qb[size_t(j) * k + g + x];
            tc = tensor_core_add(tc, p.data(), count);
          }
          if (!promoted) continue;
          const float block = scaling == Scaling::block
                                  ? sa[size_t(ga.index(i, kt * kFp8KTile))] * sb[size_t(gb.index(j, kt * kFp8KTile))]
                                  : 1.0f;
          acc = std::fma(float(tc), block, acc);
        }
        float c = promoted ? acc : float(tc);
        if (scaling == Scaling::per_tensor) c *= sa[0] * sb[0];
        out[size_t(i) * n + j] = __bfloat162float(__float2bfloat16(c));
      }
    return out;
  }
};

}  // namespace

TEST_CASE("fp8 relative RMS bound: half of one K tile's share up to K = 2^16, then 4x the accumulation model; N(0,1) only", "[cpu][fp8][tolerance]") {
  const auto bound = [](int k, int64_t elements = 256) { return Tolerance{Dtype::fp8, false, k}.rel_rms_bound(elements); };
  CHECK(bound(8192) == Approx(0.5 * std::sqrt(128.0 / 8192)));                  // 0.0625
  CHECK(bound(65536) == Approx(std::ldexp(1.0, -6) * std::sqrt(2.0)).epsilon(1e-12));  // 2^-5.5: both terms
  CHECK(bound(65536) == Approx(4.0 / 8192 * std::sqrt(65536 / 32.0)).epsilon(1e-12));
  CHECK(bound(1 << 18) == Approx(4.0 / 8192 * std::sqrt((1 << 18) / 32.0)));    // the accumulation term past 2^16
  CHECK(bound(1 << 18) > 0.5 * std::sqrt(128.0 / (1 << 18)));
  CHECK(bound(65536, kRmsBoundMinElements - 1) == 0);  // too few elements for an RMS
  CHECK(Tolerance{Dtype::fp8, true, 65536}.rel_rms_bound(256) == 0);  // exact mode: ==
  Tolerance llm{Dtype::fp8, false, 65536};
  llm.sum_rms = 1000;  // inputs not N(0, 1): no bound
  CHECK(llm.rel_rms_bound(256) == 0);
  CHECK(Tolerance{Dtype::bf16, false, 65536}.rel_rms_bound(256) == 0);
  CHECK(Tolerance{Dtype::fp32, false, 65536}.rel_rms_bound(256) == 0);
  // The K tile the bound counts is the FP8 steps' BK.
  for (const Step& s : registered_steps())
    if (s.dtype == Dtype::fp8) CHECK(s.tile.bk == kFp8KTile);
}

TEST_CASE("fp8 check on host data at K up to 65536: honest FP8 arithmetic passes, a kernel that drops one K tile fails", "[cpu][fp8][tolerance]") {
  // 16 x 16 outputs (at K = 65536 the per-element tolerance alone rejects only a few percent of a
  // dropped tile's elements), inputs N(0, 1) quantized per tensor and per block, the oracle
  // of the dequantized product, and the kernels modelled by HostFp8::kernel under the tensor-core
  // truncation the lab measured: whole K in the tensor cores (step 30), promoted every K tile
  // (31; 32-36 with block scales), and promoted with one K tile (the middle one) left out.
  const int m = 16, n = 16;
  for (int k : {1024, 16384, 65536}) {
    for (Scaling s : {Scaling::per_tensor, Scaling::block}) {
      const HostFp8 h(m, n, k, s, 47);
      const Tolerance tol{Dtype::fp8, false, k};
      struct Case {
        const char* what;
        bool promoted, honest;
      };
      for (const Case& c : {Case{"whole K in the tensor cores", false, true}, Case{"promoted every K tile", true, true},
                            Case{"promoted, one K tile dropped", true, false}}) {
        if (!c.promoted && s == Scaling::block) continue;  // block scales are applied as each K tile is promoted
        const CheckReport r = compare(h.kernel(c.promoted, c.honest ? -1 : k / kFp8KTile / 2), h.want, {}, {}, m, n, tol);
        INFO("K = " << k << ", " << scaling_name(s) << ", " << c.what << ": " << r.summary() << "; " << r.mismatches
                    << " elements outside the per-element tolerance, relative RMS error " << r.rel_rms_err << ", bound "
                    << r.rel_rms_bound);
        CHECK(r.rel_rms_bound > 0);
        if (c.honest) {
          CHECK(r.passed);
          CHECK(r.rel_rms_err < r.rel_rms_bound / 3);  // honest arithmetic is far inside the bound
        } else {
          CHECK_FALSE(r.passed);
          CHECK(r.rel_rms_err > 1.5 * r.rel_rms_bound);  // about sqrt(128 / K), twice the bound
          CHECK_THAT(r.summary(), Catch::Contains("relative RMS error") && Catch::Contains("above its bound"));
        }
      }
    }
  }
}

TEST_CASE("--dist: normal by default, llm for fp8 steps; refused with --exact, for other dtypes and as an unknown name", "[cpu][fp8][dist][cli]") {
  CHECK(parse_options_or_throw({}).dist == "normal");
  CHECK(parse_options_or_throw({"--dist", "llm"}).dist == "llm");
  CHECK_THROWS_AS(parse_options_or_throw({"--dist", "lognormal"}), Error);
  CHECK_THROWS_WITH(parse_options_or_throw({"--dist", "llm", "--exact"}), Catch::Contains("--exact draws small integers"));
  // The problem refuses before any CUDA call (p_ is initialised first).
  Problem bf{Dtype::bf16, 64, 64, 64};
  bf.dist = Dist::llm;
  CHECK_THROWS_WITH(ProblemBuffers{bf}, Catch::Contains("fp8 problems with random inputs only"));
  Problem exact{Dtype::fp8, 64, 64, 64, 1, 0, 1, true};
  exact.keep_unquantized = true;
  CHECK_THROWS_WITH(ProblemBuffers{exact}, Catch::Contains("exact mode"));
  CHECK_THROWS_WITH(fp8_inputs(exact), Catch::Contains("random inputs"));
  CHECK(std::string(dist_name(Dist::llm)) == "llm");
  CHECK(std::string(dist_name(Dist::normal)) == "normal");
}

TEST_CASE("--dist llm in step executables: a bf16 step and --exact are refused with exit 2", "[cpu][fp8][dist][exe]") {
  if (!gemm_test::have_executables({"30_fp8_wgmma", "23_pingpong_stream_k"})) return;
  auto r = gemm_test::run_command((gemm_test::binary_dir() / "23_pingpong_stream_k").string() + " --m 64 --n 64 --k 64 --dist llm");
  INFO(r.output);
  REQUIRE(r.exited);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("refuses --dist llm"));
  r = gemm_test::run_command((gemm_test::binary_dir() / "30_fp8_wgmma").string() + " --m 64 --n 64 --k 64 --dist llm --exact");
  REQUIRE(r.exited);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("--exact draws small integers"));
}

TEST_CASE("the outliers lab: --help, bad input, and its host model's CSV (no GPU)", "[cpu][fp8][dist][exe]") {
  if (!gemm_test::have_executables({"lab_fp8_outliers"})) return;
  const std::string exe = (gemm_test::binary_dir() / "lab_fp8_outliers").string();
  auto r = gemm_test::run_command(exe + " --help");
  REQUIRE(r.exited);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("--cpu-model") && Catch::Contains("--outlier-maxes"));
  r = gemm_test::run_command(exe + " --ks 100 --cpu-model");
  REQUIRE(r.exited);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("not a multiple of 16"));
  r = gemm_test::run_command(exe + " --block-step 31");
  REQUIRE(r.exited);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("--block-step a block-scaled one"));
  if (cuda_device_count() == 0) {
    r = gemm_test::run_command(exe + " --ks 256");
    REQUIRE(r.exited);
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Catch::Contains("no CUDA device"));
  }
  // The host model at 32 x 32 x 256: a header and one row per inputs and scaling (2 x 4), the llm rows
  // with the ordinary channels' error, the normal rows without.
  const std::string csv = (std::filesystem::temp_directory_path() / ("gemm_outliers_" + std::to_string(::getpid()) + ".csv")).string();
  r = gemm_test::run_command(exe + " --cpu-model --m 32 --n 32 --ks 256 --csv " + csv);
  INFO(r.output);
  REQUIRE(r.exited);
  CHECK(r.status == 0);
  std::ifstream in(csv);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::filesystem::remove(csv);
  REQUIRE(lines.size() == 9);
  CHECK(lines[0].rfind("dist,outlier_max,m,n,k,seed,scaling,accumulation,kernel,detail,err_unquantized,err_dequantized,check,err_ordinary,", 0) == 0);
  CHECK(lines[1].rfind("normal,,32,32,256,2026,per_tensor,exact,fp64 oracle,", 0) == 0);
  CHECK(lines[8].rfind("llm,1000,32,32,256,2026,block,exact,fp64 oracle,", 0) == 0);
  CHECK(lines[1].find(",-,,") != std::string::npos);   // normal: no err_ordinary
  CHECK(lines[8].find(",-,0.0") != std::string::npos);  // llm: err_ordinary, a few percent
  // The chapter's tables from such a CSV (no matplotlib needed), and the chapter's block: what the
  // committed CSV says, or the placeholder while there is none.
  if (!gemm_test::have_repo("scripts/plot_fp8_outliers.py and docs/fp8.md")) return;
  const auto repo = gemm_test::repo_dir();
  const std::string script = "python3 " + (repo / "scripts/plot_fp8_outliers.py").string();
  if (gemm_test::run_command("python3 --version").status != 0) {
    gemm_test::mark_skipped("no python3 on PATH");
    return;
  }
  const std::string csv2 = csv + ".2";
  r = gemm_test::run_command(exe + " --cpu-model --m 32 --n 32 --ks 256,512 --csv " + csv2 + " && " + exe +
                             " --cpu-model --m 32 --n 32 --dists llm --ks 256 --outlier-maxes 100,100000 --csv " + csv2 +
                             " && " + script + " " + csv2 + " --table");
  std::filesystem::remove(csv2);
  INFO(r.output);
  REQUIRE(r.exited);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("| per tensor | exact (fp64), no kernel | the quantized inputs' fp64 product |") &&
                           Catch::Contains("| K = 256 | K = 512 | N(0, 1), K = 512 |") && Catch::Contains("| 100000× | 1 × 128 of A"));
  // The committed lab run: the H200's when there is one, else another GPU's (make results-tables takes the same).
  std::filesystem::path committed = repo / "results/nvidia_h200_fp8_outliers.csv";
  if (!std::filesystem::exists(committed)) {
    std::vector<std::filesystem::path> found;
    for (const auto& e : std::filesystem::directory_iterator(repo / "results"))
      if (e.path().filename().string().ends_with("_fp8_outliers.csv")) found.push_back(e.path());
    std::sort(found.begin(), found.end());
    if (!found.empty()) committed = found.front();
  }
  r = gemm_test::run_command(script + (std::filesystem::exists(committed) ? " " + committed.string() : std::string(" --placeholder")) +
                             " --book " + (repo / "docs/fp8.md").string() + " --check");
  INFO(r.output);
  CHECK(r.status == 0);
}

// ---- GPU -------------------------------------------------------------------------------------------

TEST_CASE("the GPU quantizer equals the host quantizer bit for bit (per tensor, 1 x 128, 128 x 128)", "[gpu][fp8]") {
  REQUIRE_GPU_OR_SKIP();
  const int rows = 200, cols = 400;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> x(rows * cols);
  for (float& v : x) v = normal(rng);
  x[17] = 0;
  for (int c = 256; c < 384; ++c) x[5 * cols + c] = 0;  // an all-zero 1 x 128 block
  DeviceBuffer<float> dx(x.size());
  CUDA_CHECK(cudaMemcpy(dx.get(), x.data(), x.size() * 4, cudaMemcpyHostToDevice));
  for (const ScaleGrid& g : {per_tensor_grid(rows, cols), activation_grid_1x128(rows, cols), weight_grid_128x128(rows, cols)}) {
    CAPTURE(g.count());
    std::vector<float> want_scales;
    const std::vector<__nv_fp8_storage_t> want = quantize_host(x, g, want_scales);
    DeviceBuffer<__nv_fp8_storage_t> dq(x.size());
    DeviceBuffer<float> ds(size_t(g.count()));
    quantize_device(dx.get(), g, dq.get(), ds.get());
    std::vector<__nv_fp8_storage_t> got(x.size());
    std::vector<float> got_scales(size_t(g.count()));
    CUDA_CHECK(cudaMemcpy(got.data(), dq.get(), got.size(), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(got_scales.data(), ds.get(), ds.bytes(), cudaMemcpyDeviceToHost));
    CHECK(got_scales == want_scales);
    CHECK(std::memcmp(got.data(), want.data(), got.size()) == 0);
  }
}

TEST_CASE("the GPU fp64 oracle equals the CPU one (per tensor and block scales, exact and random)", "[gpu][fp8][reference]") {
  REQUIRE_GPU_OR_SKIP();
  for (Scaling sc : {Scaling::per_tensor, Scaling::block})
    for (bool exact : {false, true})
      for (auto [m, n, k] : {std::tuple{1, 1, 16}, {67, 130, 272}, {130, 67, 400}}) {
        Problem p{Dtype::fp8, m, n, k, 1, 0, 5, exact, sc};
        ProblemBuffers ws(p);
        const std::vector<float> gpu = ws.fp8_oracle(), cpu = ws.cpu_reference();
        // Two fp64 sums in different orders, each rounded once to bf16: equal but at a bf16 tie.
        const CheckReport r = compare(gpu, cpu, {}, {NAN}, m, n, Tolerance{Dtype::bf16, exact, 1, 1, 0});
        INFO(scaling_name(sc) << (exact ? " exact " : " ") << m << "x" << n << "x" << k << ": " << r.summary());
        CHECK(r.passed);
        if (exact) CHECK(r.max_abs_err == 0);
      }
}

TEST_CASE("fp8 steps: exact mode (==) and random N(0,1) against the fp64 oracle on the shapes of their tile", "[gpu][fp8]") {
  REQUIRE_GPU_OR_SKIP();
  for (const Step& step : gemm_test::runnable_steps()) {
    if (step.dtype != Dtype::fp8) continue;
    for (const gemm_test::Shape& s : fp8_shape_suite(step.tile)) {
      gemm_test::expect_pass(step, {Dtype::fp8, s.m, s.n, s.k, 1, 0, 31, false, step.scaling}, Oracle::cublas, s.what, true);
      if (s.k <= kMaxExactKFp8)
        gemm_test::expect_pass(step, {Dtype::fp8, s.m, s.n, s.k, 1, 0, 37, true, step.scaling}, Oracle::cublas,
                               s.what + " (exact)", true);
    }
    // Small shapes against the CPU fp64 loop too (the oracle of the oracle).
    for (auto [m, n, k] : {std::tuple{65, 33, 80}, {1, 129, 144}, {129, 1, 144}})
      gemm_test::expect_pass(step, {Dtype::fp8, m, n, k, 1, 0, 41, false, step.scaling}, Oracle::cpu_fp64, "small", true);
    // Stream-K's fixup (a last partial wave at 4096 x 4224: 33 x 32 = 1056 tiles on 132 SMs: 8 waves) and
    // an exact run past one wave.
    gemm_test::expect_pass(step, {Dtype::fp8, 4096 + 128, 4224, 1024, 1, 0, 43, true, step.scaling}, Oracle::cublas,
                           "several waves, exact", true);
    gemm_test::expect_pass(step, {Dtype::fp8, 2100, 4100, 2048, 1, 0, 47, false, step.scaling}, Oracle::cublas,
                           "ragged, several waves", true);
  }
}

TEST_CASE("fp8 steps refuse a problem of another scaling instead of reading null scales", "[gpu][fp8]") {
  REQUIRE_GPU_OR_SKIP();
  for (const Step& step : gemm_test::runnable_steps()) {
    if (step.dtype != Dtype::fp8) continue;
    CAPTURE(step.id);
    const Scaling other = step.scaling == Scaling::per_tensor ? Scaling::block : Scaling::per_tensor;
    ProblemBuffers ws({Dtype::fp8, 128, 128, 128, 1, 0, 1, true, other});
    CHECK_THROWS_WITH(launch_step(step, ws, nullptr), Catch::Contains(std::string("with ") + scaling_name(other) + " scales"));
    // The launcher itself refuses too (a caller that bypasses launch_step), naming the scaling it takes.
    CHECK_THROWS_AS(step.fp8(ws.fp8_args(), nullptr), Error);
  }
}

namespace {

// Power-of-two scales 2^e, e uniform in [-3, 3] per block: neighbouring blocks differ by up to 64x, so
// a kernel that reads another block's sfa or sfb (row, K block or N block off by one, the two grids'
// strides swapped) is off by a power of two almost everywhere. The products sfa * sfb span 2^-6..2^6,
// and a K tile's partial of integers in [-2, 2] is at most 512 = 2^9, so with K <= 1024 (8 K tiles)
// every scaled partial sum fits in fp32's 24 bits: exact, and compared with ==.
std::vector<float> wild_scales(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> e(-3, 3);
  std::vector<float> out(count);
  for (float& v : out) v = std::ldexp(1.0f, e(rng));
  return out;
}

}  // namespace

TEST_CASE("block-scaled fp8 steps: scales that change by up to 64x from block to block, exact (==)", "[gpu][fp8]") {
  REQUIRE_GPU_OR_SKIP();
  for (const Step& step : gemm_test::runnable_steps()) {
    if (step.dtype != Dtype::fp8 || step.scaling != Scaling::block) continue;
    // Ragged M and N, K tails (K % 128 = 16, 112, 64), M = 1, N = 1, and several tiles of each; M of 17,
    // 33 and 64 (step 40's 32- and 64-wide swapped tiles, A's scales a column each, from the ring), and
    // a tile wider than M and N (1 x 16 x 128, 3 x 100 x 144).
    for (auto [m, n, k] : {std::tuple{300, 260, 400}, {129, 385, 1008}, {1, 200, 272}, {257, 1, 528}, {640, 896, 1024},
                           {131, 1000, 128}, {17, 1000, 528}, {33, 385, 1008}, {64, 260, 400}, {1, 16, 128}, {3, 100, 144},
                           {64, 129, 272}}) {
      gemm_test::Watchdog dog(fmt::format("step {} wild block scales {}x{}x{}", step.id, m, n, k), gemm_test::kGpuCheckLimit);
      ProblemBuffers ws({Dtype::fp8, m, n, k, 1, 0, 53, true, Scaling::block});
      ws.upload_scales(wild_scales(size_t(ws.grid_a().count()), 59u + uint32_t(m)),
                       wild_scales(size_t(ws.grid_b().count()), 61u + uint32_t(n)));
      reserve_workspace(step, ws);
      const std::vector<float> want = ws.fp8_oracle();
      ws.reset_output(nullptr);
      launch_step(step, ws, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const CheckReport r = ws.check_against(want);
      INFO("step " << step.id << " " << m << "x" << n << "x" << k << ": " << r.summary());
      CHECK(r.passed);
      CHECK(r.max_abs_err == 0);
    }
  }
}

// ---- the shape rules on FP8 (Step::caps.split_k among the fp8 steps: 35 on) ----------------------
// M <= 64 on the 64-row tile (M = 1, 64, and 65: the first M on 34's tile), grids under one wave split
// into equal K segments (16 x 2112 x 7168: 17 tiles of 56 K tiles, 7 segments; 128 x 7168 x 16384: 56
// tiles, 2 segments), a K tail in a split's last segment (64 x 1000 x 8208 and 33 x 8 x 5136: K % 128 =
// 16), ragged N; the split's fixup the same bits on ten runs.
TEST_CASE("fp8 steps with the shape rules: small M, split-K grids under one wave, the same bits", "[gpu][fp8][small_m]") {
  REQUIRE_GPU_OR_SKIP();
  int ran = 0;
  for (const Step& step : gemm_test::runnable_steps()) {
    if (step.dtype != Dtype::fp8 || !step.caps.split_k) continue;
    ++ran;
    for (auto [m, n, k] : {std::tuple{1, 2112, 7168}, {16, 2112, 7168}, {64, 1000, 8208}, {65, 300, 8192}, {128, 7168, 16384},
                           {33, 8, 5136}, {16, 24576, 1536}, {16, 67712, 4224}, {17, 1000, 4112}, {32, 2112, 7168}}) {
      // (16 x 24576 x 1536: 192 short tiles, both ping-pong consumers busy; 16 x 67712 x 4224: 529 short
      // tiles, past four waves, so the last wave's stream-K pieces reach the second consumer too; 17 and
      // 32: the first and last M of step 38's 32-wide swapped tile)
      CAPTURE(step.id, m, n, k);
      gemm_test::expect_pass(step, {Dtype::fp8, m, n, k, 1, 0, 73, false, step.scaling}, Oracle::cublas, "shape rules", true);
    }
    for (auto [m, n, k] : {std::tuple{16, 2112, 7168}, {128, 7168, 16384}}) {
      CAPTURE(step.id, m, n, k);
      REQUIRE(step.workspace_bytes(m, n, k) > 0);  // the plan split K there
      gemm_test::expect_same_bits_ten_times(step, {Dtype::fp8, m, n, k, 1, 0, 79, false, step.scaling}, "split-K");
    }
  }
  CHECK(ran > 0);  // step 35 on
}

TEST_CASE("fp8 steps: ten runs on a stream-K shape are bitwise identical", "[gpu][fp8]") {
  REQUIRE_GPU_OR_SKIP();
  for (const Step& step : gemm_test::runnable_steps()) {
    if (step.dtype != Dtype::fp8) continue;
    // 4 x 8 = 32 tiles of 64 K tiles on the H200's 132 SMs: under a quarter wave, so make_split shares
    // every tile's K tiles between about four blocks (a fixup per tile), and 2304 x 3840 (540 tiles:
    // 4 waves and 12) of 36 K tiles, past make_split's break-even ((132 - 12) * 36 > 132 * 32), with
    // the last wave's tiles split.
    for (auto [m, n, k] : {std::tuple{512, 1024, 8192}, {2304, 3840, 4608}}) {
      CAPTURE(step.id, m, n, k);
      REQUIRE(step.workspace_bytes != nullptr);
      REQUIRE(step.workspace_bytes(m, n, k) > 0);  // the shape does take the stream-K path here
      gemm_test::expect_same_bits_ten_times(step, {Dtype::fp8, m, n, k, 1, 0, 67, false, step.scaling}, "stream-K");
    }
  }
}

TEST_CASE("cuBLASLt FP8 (default and fast accumulation) matches the fp64 oracle; exact mode with ==", "[gpu][fp8][reference]") {
  REQUIRE_GPU_OR_SKIP();
  for (bool fast : {false, true})
    for (bool exact : {false, true})
      for (auto [m, n, k] : {std::tuple{256, 512, 1024}, {1, 304, 208}, {300, 16, 96}}) {
        ProblemBuffers ws({Dtype::fp8, m, n, k, 1, 0, 13, exact, Scaling::per_tensor});
        const std::vector<float> want = ws.fp8_oracle();
        const Fp8Gemm g = ws.fp8_args();
        LtGemm lt(g, fast, 1);
        REQUIRE(lt.count() >= 1);
        ws.reset_output(nullptr);
        lt.run(0, g.a, g.b, g.c, nullptr);
        const CheckReport r = ws.check_against(want);
        INFO((fast ? "fast accumulation " : "default accumulation ") << (exact ? "exact " : "") << m << "x" << n << "x"
                                                                     << k << ": " << r.summary());
        CHECK(r.passed);
      }
}

TEST_CASE("cuBLASLt FP8 block-scaled (VEC128 A, BLK128x128 B) matches the fp64 oracle; exact mode with ==", "[gpu][fp8][reference]") {
  REQUIRE_GPU_OR_SKIP();
  // Aligned shapes first (M, N, K multiples of 128: the scale layouts cuBLASLt reads are ours byte
  // for byte), then ragged M, N and K blocks, where the padding of cublaslt.cpp's sfb copy and
  // the unpadded sfa are what is tested: a failure there names the layout guess that was wrong.
  for (bool exact : {false, true})
    for (auto [m, n, k] : {std::tuple{256, 512, 1024}, {512, 384, 512}, {300, 260, 400}, {1, 304, 208}, {130, 16, 96}}) {
      ProblemBuffers ws({Dtype::fp8, m, n, k, 1, 0, 71, exact, Scaling::block});
      if (exact)
        ws.upload_scales(wild_scales(size_t(ws.grid_a().count()), 73), wild_scales(size_t(ws.grid_b().count()), 79));
      const std::vector<float> want = ws.fp8_oracle();
      const Fp8Gemm g = ws.fp8_args();
      // cuBLASLt 13 on the H200 had no block-scaled algorithm for 300 x 260 x 400 (M % 4 == 0, four K
      // blocks) either: "aligned" is what it ran, M, N and K multiples of 128.
      const bool aligned = m % 128 == 0 && n % 128 == 0 && k % 128 == 0;
      std::unique_ptr<LtGemm> lt;
      try {
        lt = std::make_unique<LtGemm>(g, false, 1);
      } catch (const Error& e) {
        // A ragged shape cuBLASLt has no block-scaled algorithm for is a limit of the reference (the
        // step exe then runs without it), not a layout bug; an aligned one must run.
        INFO(m << "x" << n << "x" << k << ": " << e.what());
        CHECK_FALSE(aligned);
        if (!aligned) WARN("cuBLASLt block-scaled FP8 has no algorithm for " << m << "x" << n << "x" << k << ": " << e.what());
        continue;
      }
      REQUIRE(lt->count() >= 1);
      ws.reset_output(nullptr);
      lt->run(0, g.a, g.b, g.c, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const CheckReport r = ws.check_against(want);
      INFO("block-scaled " << (exact ? "exact (wild scales) " : "") << m << "x" << n << "x" << k << ": " << r.summary());
      CHECK(r.passed);
    }
}

TEST_CASE("--dist llm on the GPU: the kept inputs are what was quantized, outliers and all; every fp8 step passes its check on them", "[gpu][fp8][dist]") {
  REQUIRE_GPU_OR_SKIP();
  for (Scaling sc : {Scaling::per_tensor, Scaling::block}) {
    Problem p{Dtype::fp8, 200, 300, 1024, 1, 0, 2026, false, sc};
    p.dist = Dist::llm;
    ProblemBuffers ws(p);
    REQUIRE(ws.has_unquantized());
    // fp8_inputs(p) draws what the buffers quantized: the host quantizer on them gives the same bytes.
    const Fp8Inputs in = fp8_inputs(p);
    std::vector<float> a(size_t(p.m) * p.k), b(size_t(p.n) * p.k);
    CUDA_CHECK(cudaMemcpy(a.data(), in.a.get(), a.size() * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(b.data(), in.b.get(), b.size() * 4, cudaMemcpyDeviceToHost));
    std::vector<float> sa, sb;
    const std::vector<__nv_fp8_storage_t> qa = quantize_host(a, ws.grid_a(), sa), qb = quantize_host(b, ws.grid_b(), sb);
    const std::vector<float> da = ws.download_a(), db = ws.download_b();
    int64_t differ = 0;
    for (size_t i = 0; i < qa.size(); ++i) differ += e4m3_value(qa[i]) != da[i];
    for (size_t i = 0; i < qb.size(); ++i) differ += e4m3_value(qb[i]) != db[i];
    CAPTURE(scaling_name(sc));
    CHECK(differ == 0);
    CHECK(sa == ws.download_scales_a());
    CHECK(sb == ws.download_scales_b());
    // The outlier channels are there: each one's RMS over the rows is its factor (N(0, 1) times it).
    const std::vector<float> f = llm_channel_factors(p.k, p.seed, p.llm);
    int off = 0;  // channels whose RMS over the 200 rows is not their factor within 30 % (6 standard deviations)
    for (int c = 0; c < p.k; ++c) {
      double s2 = 0;
      for (int r = 0; r < p.m; ++r) s2 += double(a[size_t(r) * p.k + c]) * a[size_t(r) * p.k + c];
      off += std::fabs(std::sqrt(s2 / p.m) / f[size_t(c)] - 1) > 0.3;
    }
    CHECK(off == 0);
    CHECK(std::count_if(f.begin(), f.end(), [](float v) { return v >= 10; }) == 5);
    // Normal inputs with the same seed are the same draws before the shaping: an ordinary channel equal.
    Problem pn = p;
    pn.dist = Dist::normal;
    const Fp8Inputs normal = fp8_inputs(pn);
    std::vector<float> an(a.size());
    CUDA_CHECK(cudaMemcpy(an.data(), normal.a.get(), an.size() * 4, cudaMemcpyDeviceToHost));
    int changed = 0;
    for (int c = 0; c < p.k; ++c) changed += f[size_t(c)] == 1.0f ? an[size_t(c)] != a[size_t(c)] : an[size_t(c)] == a[size_t(c)];
    CHECK(changed == 0);
  }
  for (const Step& step : gemm_test::runnable_steps()) {
    if (step.dtype != Dtype::fp8) continue;
    for (auto [m, n, k] : {std::tuple{256, 256, 4096}, {300, 260, 1040}}) {
      Problem p{Dtype::fp8, m, n, k, 1, 0, 53, false, step.scaling};
      p.dist = Dist::llm;
      gemm_test::expect_pass(step, p, Oracle::cublas, "llm inputs", true);
      // Against the real product the error is the quantization's, e4m3's 3 mantissa bits: a few percent,
      // far above the arithmetic's (the check's) and below 10 %.
      ProblemBuffers ws2(p);
      reserve_workspace(step, ws2);
      ws2.reset_output(nullptr);
      launch_step(step, ws2, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const double vs_deq = ws2.check_against(ws2.fp8_oracle()).rel_rms_err, vs_real = ws2.check_against(ws2.unquantized_product()).rel_rms_err;
      INFO("error against the dequantized product " << vs_deq << ", against the unquantized " << vs_real);
      CHECK(vs_real > 3 * vs_deq);
      CHECK(vs_real > 0.01);
      CHECK(vs_real < 0.1);
    }
  }
}

TEST_CASE("cuBLASLt FP8 with per-row (outer-vector) scales matches the fp64 oracle of its dequantized product", "[gpu][fp8][reference][dist]") {
  REQUIRE_GPU_OR_SKIP();
  const int m = 256, n = 384, k = 1024;
  Problem p{Dtype::fp8, m, n, k, 1, 0, 61, false};
  p.dist = Dist::llm;
  const Fp8Inputs in = fp8_inputs(p);
  const ScaleGrid ga = row_grid(m, k), gb = row_grid(n, k);
  DeviceBuffer<__nv_fp8_storage_t> qa(size_t(m) * k), qb(size_t(n) * k);
  DeviceBuffer<float> sa(size_t(ga.count())), sb(size_t(gb.count())), want(size_t(m) * n);
  DeviceBuffer<__nv_bfloat16> c(size_t(m) * n);
  quantize_device(in.a.get(), ga, qa.get(), sa.get());
  quantize_device(in.b.get(), gb, qb.get(), sb.get());
  oracle_fp8_device(qa.get(), sa.get(), ga, qb.get(), sb.get(), gb, m, n, k, want.get());
  std::vector<float> deq(want.size());
  CUDA_CHECK(cudaMemcpy(deq.data(), want.get(), want.bytes(), cudaMemcpyDeviceToHost));
  Fp8Gemm g{m, n, k, reinterpret_cast<const __nv_fp8_e4m3*>(qa.get()), reinterpret_cast<const __nv_fp8_e4m3*>(qb.get()), c.get()};
  g.scale_a = sa.get();
  g.scale_b = sb.get();
  for (bool fast : {false, true}) {
    std::unique_ptr<LtGemm> lt;
    try {
      lt = std::make_unique<LtGemm>(g, fast, 1, LtScales::outer_vector);
    } catch (const Error& e) {  // a mode cuBLASLt has no algorithm for is its limit, said so
      WARN("cuBLASLt outer-vector FP8" << (fast ? " fast accumulation" : "") << ": " << e.what());
      continue;
    }
    CUDA_CHECK(cudaMemset(c.get(), 0xFF, c.bytes()));
    lt->run(0, g.a, g.b, g.c, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<__nv_bfloat16> h(c.size());
    CUDA_CHECK(cudaMemcpy(h.data(), c.get(), c.bytes(), cudaMemcpyDeviceToHost));
    std::vector<float> got(h.size());
    for (size_t i = 0; i < h.size(); ++i) got[i] = __bfloat162float(h[i]);
    Tolerance tol{Dtype::fp8, false, k};
    tol.sum_rms = rms(deq);
    const CheckReport r = compare(got, deq, {}, {}, m, n, tol);
    INFO("outer vector" << (fast ? " fast" : "") << ": " << r.summary());
    CHECK(r.passed);
  }
}
