// GPU tests: every registered fp32 and bf16 step against cuBLAS (and, for small shapes, the CPU fp64 loop) on the
// shape suite (tests/support.cpp); exact mode; beta != 0 and beta == 0 with a NaN-filled C; the
// broken fixtures must fail. Every check runs under the watchdog (expect_pass / guarded_check, and
// the per-test-case one of main.cpp). Skipped with "skipped: no CUDA device" where there is no GPU.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <tuple>

#include "../common/harness/device_info.hpp"
#include "../common/kernel_lib/launch.hpp"
#include "../common/harness/runner.hpp"
#include "support.hpp"

using namespace gemm;

using gemm_test::expect_pass;
using gemm_test::Shape;

namespace {

std::vector<Shape> shape_suite() { return gemm_test::generic_shape_suite(); }

struct S {  // the hand-picked shapes of single tests
  int m, n, k;
};

bool small(const Shape& s) { return double(s.m) * s.n * s.k <= 4e7; }

// fp8 steps have their own suite (tests/test_fp8.cpp): their K % 16 == 0 refuses most of these shapes.
std::vector<Step> real_steps() {
  std::vector<Step> out;
  for (const Step& s : gemm_test::runnable_steps())
    if (s.dtype != Dtype::fp8) out.push_back(s);
  return out;
}

// Every step must have run at least `min_checks` of a test's shapes.
void require_coverage(const Step& step, int checks, int min_checks) {
  INFO(fmt::format("step {} ran {} of the shapes (at least {} required)", step.id, checks, min_checks));
  CHECK(checks >= min_checks);
}

}  // namespace

TEST_CASE("every step matches cuBLAS on the shape suite (random normal inputs)", "[gpu]") {
  REQUIRE_GPU_OR_SKIP();
  for (const Step& step : real_steps()) {
    int checks = 0;
    for (const Shape& s : shape_suite()) checks += expect_pass(step, {step.dtype, s.m, s.n, s.k, 1, 0, 7, false}, Oracle::cublas);
    require_coverage(step, checks, 12);
  }
}

TEST_CASE("every step matches the CPU fp64 loop on small shapes", "[gpu]") {
  REQUIRE_GPU_OR_SKIP();
  for (const Step& step : real_steps()) {
    int checks = 0;
    for (const Shape& s : shape_suite())
      if (small(s)) checks += expect_pass(step, {step.dtype, s.m, s.n, s.k, 1, 0, 11, false}, Oracle::cpu_fp64);
    require_coverage(step, checks, 8);
  }
}

TEST_CASE("every step is exact on small-integer inputs (compared with ==)", "[gpu][exact]") {
  REQUIRE_GPU_OR_SKIP();
  for (const Step& step : real_steps()) {
    int checks = 0;
    for (S s : {S{512, 512, 512}, {127, 131, 137}, {96, 33, 161}, {1, 1, 1}, {257, 129, 5},
                    {127, 136, 144}, {40, 168, 96}, {1, 304, 200}})
      checks += expect_pass(step, {step.dtype, s.m, s.n, s.k, 1, 0, 5, true}, Oracle::cublas);
    require_coverage(step, checks, 4);
  }
}

TEST_CASE("fp32 steps honour alpha and beta (C read only when beta != 0)", "[gpu]") {
  REQUIRE_GPU_OR_SKIP();
  for (const Step& step : real_steps()) {
    if (step.dtype != Dtype::fp32) continue;
    int checks = 0;
    for (S s : {S{127, 131, 137}, {512, 512, 512}, {33, 161, 96}, {127, 136, 144}, {40, 168, 96}}) {
      checks += expect_pass(step, {Dtype::fp32, s.m, s.n, s.k, 1.5f, -0.75f, 3, false}, Oracle::cublas);
      checks += expect_pass(step, {Dtype::fp32, s.m, s.n, s.k, 2.0f, 3.0f, 3, true}, Oracle::cublas);
      checks += expect_pass(step, {Dtype::fp32, s.m, s.n, s.k, -1.0f, 0.0f, 3, true}, Oracle::cpu_fp64);
    }
    require_coverage(step, checks, 9);
  }
}

TEST_CASE("the cuBLAS wrapper matches the CPU fp64 loop on small non-square shapes", "[gpu][reference]") {
  REQUIRE_GPU_OR_SKIP();
  const Step ref = find_step("00");
  for (S s : {S{3, 5, 7}, {7, 5, 3}, {1, 64, 33}, {100, 17, 250}})
    for (bool exact : {false, true}) {
      CHECK(expect_pass(ref, {Dtype::fp32, s.m, s.n, s.k, 1, 0, 21, exact}, Oracle::cpu_fp64));
      CHECK(expect_pass(ref, {Dtype::fp32, s.m, s.n, s.k, 2, 1, 21, exact}, Oracle::cpu_fp64));
    }
}

TEST_CASE("a tall matrix past the grid-y limit runs on step 01 (M on grid x)", "[gpu]") {
  REQUIRE_GPU_OR_SKIP();
  const int m = 65535 * 32 + 5;  // ceil(m / 32) = 65536 blocks: over the grid-y limit
  CHECK(expect_pass(find_step("01"), {Dtype::fp32, m, 3, 2, 1, 0, 4, true}, Oracle::cublas));
}

TEST_CASE("the check catches each deliberately broken kernel", "[gpu][fixture]") {
  REQUIRE_GPU_OR_SKIP();
  SECTION("skipping the last K tile") {
    for (S s : {S{64, 64, 64}, {33, 17, 200}, {16, 16, 16}}) {
      CHECK_FALSE(gemm_test::guarded_check(find_step("x1"), {Dtype::fp32, s.m, s.n, s.k, 1, 0, 1, false}).passed);
      CHECK_FALSE(gemm_test::guarded_check(find_step("x1"), {Dtype::fp32, s.m, s.n, s.k, 1, 0, 1, true}).passed);
    }
  }
  SECTION("writing one row past the end of C (guard band)") {
    const CheckReport r = gemm_test::guarded_check(find_step("x2"), {Dtype::fp32, 40, 24, 8, 1, 0, 1, true});
    CHECK_FALSE(r.passed);
    CHECK(r.mismatches == 0);  // every element of C is right ...
    CHECK(r.guard_writes == 24);  // ... but one whole row landed after it
  }
  SECTION("reading C when beta == 0 (C holds NaN)") {
    const CheckReport r = gemm_test::guarded_check(find_step("x3"), {Dtype::fp32, 40, 24, 8, 1, 0, 1, true});
    CHECK_FALSE(r.passed);
    CHECK(r.mismatches == 40 * 24);
    // The same kernel is right when beta != 0: only the beta == 0 contract is broken.
    CHECK(gemm_test::guarded_check(find_step("x3"), {Dtype::fp32, 40, 24, 8, 1, 2, 1, true}).passed);
  }
}

TEST_CASE("an unsupported shape is refused with a reason, not run", "[gpu]") {
  REQUIRE_GPU_OR_SKIP();
  const Problem p{Dtype::fp32, 3'000'000, 1, 1, 1, 0, 1, false};
  CHECK_THROWS_WITH(check_step(find_step("02"), p), Catch::Contains("grid axis y"));
}

TEST_CASE("device description names the GPU, SM count, L2, driver and CUDA versions", "[gpu]") {
  REQUIRE_GPU_OR_SKIP();
  const std::string d = describe(query_device());
  CHECK(d.find("SMs") != std::string::npos);
  CHECK(d.find("L2") != std::string::npos);
  CHECK(d.find("driver CUDA") != std::string::npos);
  CHECK(d.find("cuBLAS") != std::string::npos);
}

TEST_CASE("launch helpers: the cached SM count is the device's", "[gpu][launch]") {
  REQUIRE_GPU_OR_SKIP();
  CHECK(sm_count() == query_device().sm_count);
}
