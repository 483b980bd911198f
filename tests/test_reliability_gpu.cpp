// Reliability tests on the GPU (skipped with "skipped: no CUDA device" without one):
//   - the check catches every deliberately broken fixture (x4 swapped index, x5 tile-edge off-by-one,
//     x6 one dropped k at large K, x7 missing barrier, h1 wrong swizzle, h2 wrong descriptor offset,
//     h3 a ring stage released before its wgmmas read it);
//   - a step executable's wrong answer is exit 1 with a FAIL line (build/bin/fixture_wrong);
//   - the last fp32 step (09b) and the last bf16 step (the highest-numbered one registered) are right with M * N over 2^31 elements,
//     checked on the last rows and columns (and the first) against a CPU fp64 dot product;
//   - a shape too large for device memory is refused with exit 2 and the size it needed.
// Each GPU check runs under a watchdog (a hang fails the run naming the check).
#include <catch2/catch.hpp>
#include <cuda_bf16.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>

#include "../common/kernel_lib/check.hpp"
#include "../common/harness/device_info.hpp"
#include "../common/harness/runner.hpp"
#include "support.hpp"

using namespace gemm;
using namespace std::chrono_literals;

namespace {

/// check_step of a fixture on one shape, under the watchdog; returns the report.
CheckReport check_fixture(const std::string& id, int m, int n, int k, bool exact, uint64_t seed = 3) {
  const Step step = find_step(id);
  const std::string what = fmt::format("fixture {} M={} N={} K={}{}", id, m, n, k, exact ? " exact" : "");
  gemm_test::Watchdog dog(what, gemm_test::kGpuCheckLimit);
  const CheckReport r = check_step(step, {step.dtype, m, n, k, 1, 0, seed, exact}, Oracle::cublas);
  UNSCOPED_INFO(what << ": " << r.summary());
  return r;
}

/// Downloads rows [r0, r0 + rows) x columns [c0, c0 + cols) of an m x n row-major C (fp32 or bf16)
/// as fp32 without downloading the rest.
std::vector<float> download_block(const void* c, Dtype dtype, int64_t n, int64_t r0, int64_t rows, int64_t c0, int64_t cols) {
  const size_t es = dtype == Dtype::fp32 ? 4 : 2;
  std::vector<char> raw(size_t(rows * cols) * es);
  CUDA_CHECK(cudaMemcpy2D(raw.data(), cols * es, static_cast<const char*>(c) + (r0 * n + c0) * es, n * es, cols * es,
                          rows, cudaMemcpyDeviceToHost));
  std::vector<float> out(size_t(rows * cols));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = dtype == Dtype::fp32 ? reinterpret_cast<const float*>(raw.data())[i]
                                  : __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(raw.data())[i]);
  return out;
}

/// Runs `id` once on an exact-mode (small-integer) problem of M * N > 2^31 elements, then compares
/// the first and last `edge` rows and columns of C, with ==, to a CPU fp64 dot product of A and B
/// (exact for these inputs: every partial sum is a small integer), and checks the guard band after C
/// (a wrapped 32-bit index would land in the wrong place or past the end).
void check_large(const std::string& id, int m, int n, int k) {
  REQUIRE(int64_t(m) * n > (int64_t(1) << 31));
  const Step step = find_step(id);
  const Gpu gpu = gpu_of(query_device());
  if (auto why = refusal(step, m, n, k, &gpu)) FAIL("step " << id << " refuses " << m << " x " << n << " x " << k << ": " << *why);
  const Problem p{step.dtype, m, n, k, 1, 0, 77, true};
  const std::string what = fmt::format("step {} M={} N={} K={} exact (M*N = {})", id, m, n, k, int64_t(m) * n);
  gemm_test::Watchdog dog(what, 300s);  // allocating and checking 2^31+ elements
  ProblemBuffers ws(p);
  reserve_workspace(step, ws);  // 09b's stream-K partial sums and tile counters
  ws.reset_output(nullptr);
  launch_step(step, ws, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> a = ws.download_a(), b = ws.download_b();
  // fp32: B is k x n (b[kk * n + j]); bf16: B is n x k (b[j * k + kk]).
  auto want = [&](int64_t i, int64_t j) {
    double s = 0;
    for (int64_t kk = 0; kk < k; ++kk)
      s += double(a[i * k + kk]) * (step.dtype == Dtype::fp32 ? b[kk * n + j] : b[j * k + kk]);
    return s;
  };
  const void* c = step.dtype == Dtype::fp32 ? static_cast<const void*>(ws.fp32_args().c) : static_cast<const void*>(ws.bf16_args().c);
  const int edge = 3;
  int64_t checked = 0, wrong = 0;
  auto compare_block = [&](int64_t r0, int64_t rows, int64_t c0, int64_t cols) {
    const std::vector<float> got = download_block(c, step.dtype, n, r0, rows, c0, cols);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t q = 0; q < cols; ++q) {
        const double w = want(r0 + r, c0 + q), g = got[size_t(r * cols + q)];
        ++checked;
        if (!(g == w) && wrong++ < 5) UNSCOPED_INFO(fmt::format("C[{}][{}] = {}, want {}", r0 + r, c0 + q, g, w));
      }
  };
  compare_block(m - edge, edge, 0, n);  // the last rows: elements past 2^31
  compare_block(0, edge, 0, n);         // the first rows
  compare_block(0, m, n - edge, edge);  // the last columns
  compare_block(0, m, 0, edge);         // the first columns
  // The guard band after C is still NaN (downloaded as the elements right after C).
  const std::vector<float> guard = download_block(c, step.dtype, 1, int64_t(m) * n, ProblemBuffers::kGuard, 0, 1);
  const auto guard_writes = std::count_if(guard.begin(), guard.end(), [](float v) { return !std::isnan(v); });
  INFO(what << ": " << checked << " elements checked, " << wrong << " wrong, " << guard_writes << " guard-band writes");
  CHECK(checked == 2 * int64_t(edge) * (int64_t(m) + n));
  CHECK(wrong == 0);
  CHECK(guard_writes == 0);
}

}  // namespace

TEST_CASE("the check catches the broken fp32 fixtures: swapped index, tile-edge off-by-one, dropped k, missing barrier", "[gpu][fixture][reliability]") {
  REQUIRE_GPU_OR_SKIP();
  SECTION("x4: C stored at [col * M + row] (every write inside C, every value finite)") {
    for (bool exact : {true, false}) {
      CHECK_FALSE(check_fixture("x4", 64, 64, 64, exact).passed);
      CHECK_FALSE(check_fixture("x4", 33, 17, 40, exact).passed);
    }
    CHECK(check_fixture("x4", 1, 100, 40, true).passed);  // M == 1: the swap is harmless, and the check says so
  }
  SECTION("x5: the last column of B read as zeros (finite, wrong values at the right edge only)") {
    for (bool exact : {true, false}) {
      const CheckReport r = check_fixture("x5", 100, 70, 50, exact);
      CHECK_FALSE(r.passed);
      CHECK(r.mismatches <= 100);  // at most the last column, which proves where it looked
      CHECK(r.guard_writes == 0);
    }
  }
  SECTION("x6: one product dropped (k == 4096): caught at K = 8192, harmless below") {
    for (bool exact : {true, false}) {
      const CheckReport r = check_fixture("x6", 48, 40, 8192, exact);
      CHECK_FALSE(r.passed);
      if (!exact) CHECK(r.mismatches > 0.8 * 48 * 40);  // the tolerance is far below one product
      CHECK(check_fixture("x6", 48, 40, 4096, exact).passed);
    }
  }
  SECTION("x7: shared-memory tiles without __syncthreads (racecheck's fixture)") {
    // Warps read tile entries before other warps write them: with many K tiles and blocks the
    // result is wrong somewhere.
    CHECK_FALSE(check_fixture("x7", 1024, 1024, 1024, true).passed);
    CHECK_FALSE(check_fixture("x7", 1024, 1024, 1024, false).passed);
  }
}

TEST_CASE("the check catches the broken Hopper fixtures: wrong swizzle, wrong descriptor offset, early stage release", "[gpu][hopper][fixture][reliability]") {
  REQUIRE_HOPPER_OR_SKIP();
  for (const char* id : {"h1", "h2", "h3"}) {
    INFO("fixture " << id);
    for (bool exact : {true, false}) {
      CHECK_FALSE(check_fixture(id, 256, 256, 256, exact).passed);
      CHECK_FALSE(check_fixture(id, 131, 72, 200, exact).passed);
    }
  }
  // The fixtures differ from step 11 in one place: step 11 passes the same shapes.
  CHECK(check_step(find_step("11"), {Dtype::bf16, 256, 256, 256, 1, 0, 3, true}).passed);
}

TEST_CASE("a step executable that computes a wrong answer exits 1 with a FAIL line", "[gpu][exe][reliability]") {
  REQUIRE_GPU_OR_SKIP();
  if (!gemm_test::have_executables({"fixture_wrong"})) return;
  const auto r = gemm_test::run_command((gemm_test::binary_dir() / "fixture_wrong").string() + " --m 64 --n 48 --k 32 --check-only");
  INFO(r.output);
  REQUIRE(r.exited);
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Catch::Contains("check against cuBLAS FAIL") && Catch::Contains("elements outside tolerance"));
  // The same executable on a shape where the bug is harmless (M == 1) passes: exit 0, PASS.
  const auto ok = gemm_test::run_command((gemm_test::binary_dir() / "fixture_wrong").string() + " --m 1 --n 48 --k 32 --check-only");
  INFO(ok.output);
  CHECK(ok.status == 0);
  CHECK_THAT(ok.output, Catch::Contains("PASS"));
}

TEST_CASE("step 09b, the last fp32 step, is right with M * N over 2^31: 46348 x 46344 x 64, last rows and columns", "[gpu][large][reliability]") {
  REQUIRE_GPU_OR_SKIP();
  check_large("09b", 46348, 46344, 64);  // N % 4 == 0 and K % 4 == 0 (16-byte rows)
}

TEST_CASE("the last bf16 step is right with M * N over 2^31: 46345 x 46352 x 64, last rows and columns", "[gpu][hopper][large][reliability]") {
  REQUIRE_HOPPER_OR_SKIP();
  std::string last;  // registered_steps() is sorted by id; fixtures are not steps of the ladder
  for (const Step& s : gemm::registered_steps())
    if (s.dtype == Dtype::bf16 && !s.fixture && s.id != "00") last = s.id;
  REQUIRE_FALSE(last.empty());
  INFO("step " << last);
  check_large(last, 46345, 46352, 64);  // K % 8 == 0 (TMA row stride), M ragged
}

TEST_CASE("a shape too large for device memory is refused with exit 2 and the size it needed", "[gpu][exe][reliability]") {
  REQUIRE_GPU_OR_SKIP();
  if (!gemm_test::have_executables({"09_async_copy_pipeline"})) return;
  const auto r = gemm_test::run_command((gemm_test::binary_dir() / "09_async_copy_pipeline").string() +
                                        " --m 300000 --n 300000 --k 64 --check-only");
  INFO(r.output);
  REQUIRE(r.exited);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("refuses M=300000 N=300000 K=64") && Catch::Contains("cannot allocate") &&
                           Catch::Contains("GiB"));
}
