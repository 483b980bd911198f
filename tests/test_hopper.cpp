// Hopper ladder tests (steps 10-14, bf16 C = A * B^T): a shape suite built from each step's tile and
// stage count as registered (tests/support.cpp, tile_shape_suite: one tile, less than one tile, K == BK, K tails around the stage count, ragged M and
// N, N = 8 mod 16, odd N), exact mode compared with ==, two buffers of one shape back to back, ten
// repeats bitwise identical; CPU tests of the tensor-map validation, the shape refusals and the
// watchdog. Every GPU check runs under a watchdog: a deadlocked kernel (an mbarrier phase that never
// completes) ends the run with a message naming the check, instead of hanging CI.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

#include "../common/registry.hpp"
#include "../common/runner.hpp"
#include "../common/tma.hpp"
#include "support.hpp"

using namespace gemm;
using namespace std::chrono_literals;

using gemm_test::Shape;
using gemm_test::Watchdog;

namespace {

// The Hopper steps (bf16, sm_90a) as registered, each with its tile and stage count from the registry:
// the shape suite is built around them.
std::vector<Step> hopper_steps() {
  std::vector<Step> out;
  for (const Step& s : registered_steps())
    if (!s.fixture && s.dtype == Dtype::bf16) out.push_back(s);
  return out;
}

void expect_pass(const Step& step, const Problem& p, Oracle oracle, const std::string& what) {
  gemm_test::expect_pass(step, p, oracle, what, /*refusal_fails=*/true);
}

}  // namespace

TEST_CASE("the Hopper steps are registered with their tiles", "[cpu][hopper]") {
  const std::vector<Step> steps = hopper_steps();
  CHECK(steps.size() >= 5);  // 10-14
  for (const Step& step : steps) {
    INFO("step " << step.id);
    CHECK(step.tile.bm >= 1);
    CHECK(step.tile.bn >= 1);
    CHECK(step.tile.bk >= 8);
    CHECK(step.tile.stages >= 1);
    CHECK(step.threads % 32 == 0);
    CHECK(gemm_test::tile_shape_suite(step.tile).size() >= 12);
  }
}

TEST_CASE("Hopper steps match cuBLAS on the shape suite (random normal inputs)", "[gpu][hopper]") {
  REQUIRE_HOPPER_OR_SKIP();
  for (const Step& step : hopper_steps()) {
    for (const Shape& s : gemm_test::tile_shape_suite(step.tile)) expect_pass(step, {Dtype::bf16, s.m, s.n, s.k, 1, 0, 17, false}, Oracle::cublas, s.what);
  }
}

TEST_CASE("Hopper steps are exact on small-integer inputs (==, against cuBLAS and the CPU fp64 loop)", "[gpu][hopper][exact]") {
  REQUIRE_HOPPER_OR_SKIP();
  for (const Step& step : hopper_steps()) {
    for (const Shape& s : gemm_test::tile_shape_suite(step.tile)) {
      const Problem p{Dtype::bf16, s.m, s.n, s.k, 1, 0, 23, true};
      expect_pass(step, p, Oracle::cublas, s.what);
      if (double(s.m) * s.n * s.k <= 2e7) expect_pass(step, p, Oracle::cpu_fp64, s.what);
    }
  }
}

TEST_CASE("Hopper steps: two buffers of the same shape back to back", "[gpu][hopper]") {
  REQUIRE_HOPPER_OR_SKIP();
  // Guards any caching of tensor maps or launch state: it must key on the pointers, not the shape.
  for (const Step& step : hopper_steps()) {
    const Tile& t = step.tile;
    const Problem p1{Dtype::bf16, 2 * t.bm + 5, 2 * t.bn + 8, 8 * t.bk + 8, 1, 0, 101, true};
    Problem p2 = p1;
    p2.seed = 202;
    Watchdog dog(gemm_test::describe(step, p1, "two buffers"), gemm_test::kGpuCheckLimit);
    ProblemBuffers w1(p1), w2(p2);
    for (ProblemBuffers* w : {&w1, &w2, &w1}) {
      const CheckReport r = check_step(step, *w, Oracle::cublas);
      INFO(gemm_test::describe(step, w->problem(), "two buffers back to back") << ": " << r.summary());
      CHECK(r.passed);
    }
  }
}

TEST_CASE("Hopper steps: ten repeats are bitwise identical", "[gpu][hopper]") {
  REQUIRE_HOPPER_OR_SKIP();
  for (const Step& step : hopper_steps()) {
    const Problem p{Dtype::bf16, 777, 1000, 1048, 1, 0, 9, false};
    Watchdog dog(gemm_test::describe(step, p, "ten repeats"), gemm_test::kGpuCheckLimit);
    ProblemBuffers ws(p);
    reserve_workspace(step, ws);
    std::vector<float> first;
    for (int rep = 0; rep < 10; ++rep) {
      ws.reset_output(nullptr);
      launch_step(step, ws, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<float> c = ws.download_c();
      if (rep == 0) {
        first = c;
        const CheckReport r = ws.check_against(ws.cublas_reference());
        INFO(gemm_test::describe(step, p, "first of ten repeats") << ": " << r.summary());
        CHECK(r.passed);
        continue;
      }
      INFO(gemm_test::describe(step, p, fmt::format("repeat {}", rep)));
      REQUIRE(c.size() == first.size());
      CHECK(std::memcmp(c.data(), first.data(), c.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("Hopper steps refuse K % 8 != 0 and need compute capability 9.0", "[cpu][hopper]") {
  for (const Step& step : hopper_steps()) {
    INFO("step " << step.id);
    CHECK(step.dtype == Dtype::bf16);
    CHECK(step.required_cc == 90);  // sm_90a code only: the harness refuses other GPUs by this
    for (int k : {1, 4, 12, 60, 1001}) {
      const auto why = shape_refusal(step, 64, 64, k);
      REQUIRE(why.has_value());
      CHECK_THAT(*why, Catch::Contains("K % 8 == 0"));
    }
    for (int k : {8, 16, 64, 72, 4104}) CHECK_FALSE(shape_refusal(step, 100, 100, k).has_value());
    CHECK(shape_refusal(step, 100, 0, 64).has_value());
  }
}

TEST_CASE("tensor-map validation names the requirement it refuses", "[cpu][hopper][tma]") {
  alignas(128) static unsigned char buf[256];
  const TmaMatrix ok{buf, 1000, 4096, 128, 64, CU_TENSOR_MAP_SWIZZLE_128B};
  CHECK_FALSE(tma_refusal(ok).has_value());
  auto refused = [](TmaMatrix t) { return tma_refusal(t).value_or("(accepted)"); };
  TmaMatrix t = ok;
  t.base = buf + 8;
  CHECK_THAT(refused(t), Catch::Contains("16-byte aligned base"));
  t = ok;
  t.cols = 4100;  // 8200 bytes: not a multiple of 16
  CHECK_THAT(refused(t), Catch::Contains("multiple of 16 bytes"));
  t = ok;
  t.rows = 0;
  CHECK_THAT(refused(t), Catch::Contains("[1, 2^32]"));
  t = ok;
  t.box_rows = 257;
  CHECK_THAT(refused(t), Catch::Contains("[1, 256]"));
  t = ok;
  t.box_cols = 4;  // 8 bytes
  t.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CHECK_THAT(refused(t), Catch::Contains("box inner extent must be a multiple of 16 bytes"));
  t = ok;
  t.box_cols = 128;  // 256 bytes: wider than the 128-byte swizzle span
  CHECK_THAT(refused(t), Catch::Contains("swizzle span"));
  t.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;  // without a swizzle the same box is fine
  CHECK_FALSE(tma_refusal(t).has_value());
  t = ok;
  t.box_cols = 64;
  t.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;  // 128-byte rows do not fit a 64-byte span
  CHECK_THAT(refused(t), Catch::Contains("64-byte swizzle span"));
  // make_tma_2d refuses with the same message before it ever asks the driver.
  t = ok;
  t.base = buf + 2;
  CHECK_THROWS_WITH(make_tma_2d(t), Catch::Contains("16-byte aligned base"));
}

TEST_CASE("the watchdog fires on an overrun and stays quiet otherwise", "[cpu][hopper][watchdog]") {
  std::atomic<int> fired{0};
  std::string named;
  auto handler = [&](const std::string& what) {
    named = what;
    fired = 1;
  };
  {
    Watchdog dog("quick work", 2000ms, handler);
  }
  CHECK(fired == 0);
  {
    Watchdog dog("stuck work", 20ms, handler);
    std::this_thread::sleep_for(300ms);
  }
  CHECK(fired == 1);
  CHECK(named == "stuck work");
}
