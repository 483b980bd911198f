// CUTLASS reference GEMMs (common/harness/cutlass_ref.hpp): the table and the refusals on the CPU (nothing is
// launched), and on a Hopper GPU each configuration against cuBLAS through gemm::ProblemBuffers, the same
// buffers, NaN-filled C, guard band and tolerance as the steps.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstring>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "../common/harness/buffer.hpp"
#include "../common/kernel_lib/check.hpp"
#include "../common/harness/cutlass_ref.hpp"
#include "../common/harness/problem.hpp"
#include "support.hpp"

using namespace gemm;

// The Makefile defines GEMM_CUTLASS_CONFIGS as the number of common/harness/cutlass/*.cu it linked in (0
// when it found no CUTLASS headers).
#ifndef GEMM_CUTLASS_CONFIGS
#error "GEMM_CUTLASS_CONFIGS must be defined (the Makefile sets it)"
#endif

namespace {

// A shape with null pointers: the refusals check shapes (and alignment) only.
Bf16Gemm shape(int m, int n, int k) { return Bf16Gemm{m, n, k, nullptr, nullptr, nullptr}; }

}  // namespace

TEST_CASE("CUTLASS references: the build links every configuration, with unique names", "[cpu][cutlass]") {
  CHECK(cutlass_ref::config_count() == GEMM_CUTLASS_CONFIGS);
  if (GEMM_CUTLASS_CONFIGS > 0) CHECK(cutlass_ref::config_count() >= 2);  // cooperative and ping-pong
  std::set<std::string> names;
  for (int i = 0; i < cutlass_ref::config_count(); ++i) {
    const std::string name = cutlass_ref::config_name(i);
    INFO("configuration " << i << ": " << name);
    CHECK(name.rfind("cutlass_", 0) == 0);
    CHECK(name.size() > std::strlen("cutlass_"));
    CHECK(names.insert(name).second);
    if (i > 0) CHECK(std::string(cutlass_ref::config_name(i - 1)) < name);  // ordered by name
  }
  CHECK_THROWS_AS(cutlass_ref::config_name(-1), Error);
  CHECK_THROWS_AS(cutlass_ref::config_name(cutlass_ref::config_count()), Error);
  CHECK_THROWS_AS(cutlass_ref::refusal(cutlass_ref::config_count(), shape(8, 8, 8)), Error);
}

TEST_CASE("CUTLASS references refuse K % 8, N % 8, empty shapes and misaligned pointers; accept the rest", "[cpu][cutlass]") {
  if (cutlass_ref::config_count() == 0) {
    gemm_test::mark_skipped("built without the CUTLASS headers (scripts/deps.sh installs them)");
    return;
  }
  alignas(16) static __nv_bfloat16 buf[64];
  for (int i = 0; i < cutlass_ref::config_count(); ++i) {
    INFO("configuration " << cutlass_ref::config_name(i));
    for (int k : {1, 4, 12, 60, 1001}) {
      const auto why = cutlass_ref::refusal(i, shape(256, 256, k));
      REQUIRE(why.has_value());
      CHECK_THAT(*why, Catch::Contains(fmt::format("K={} is not a multiple of 8", k)));
    }
    for (int n : {1, 12, 1001}) {
      const auto why = cutlass_ref::refusal(i, shape(256, n, 64));
      REQUIRE(why.has_value());
      CHECK_THAT(*why, Catch::Contains(fmt::format("N={} is not a multiple of 8", n)));
    }
    CHECK(cutlass_ref::refusal(i, shape(0, 64, 64)).has_value());
    CHECK(cutlass_ref::refusal(i, shape(64, 64, 0)).has_value());
    Bf16Gemm misaligned = shape(64, 64, 64);
    misaligned.a = buf + 1;  // 2 bytes off
    CHECK_THAT(cutlass_ref::refusal(i, misaligned).value_or("(accepted)"), Catch::Contains("16-byte aligned"));
    // Ragged M, and N, K multiples of 8 that are ragged against every tile: CUTLASS's can_implement
    // (host only) accepts them.
    for (auto [m, n, k] : {std::tuple{1, 8, 8}, {127, 136, 144}, {4096, 4096, 4096}, {3, 8200, 72}}) {
      const auto why = cutlass_ref::refusal(i, shape(m, n, k));
      INFO("M=" << m << " N=" << n << " K=" << k << ": " << why.value_or("accepted"));
      CHECK_FALSE(why.has_value());
    }
  }
}

namespace {

struct Shape {
  int m, n, k;
  const char* what;
};

// One tile and less, K shorter than one K tile, ragged M / N / K tails, N = 8 mod 16, and shapes
// with more tiles than SMs (the persistent scheduler's second round).
constexpr Shape kShapes[] = {
    {128, 256, 64, "one 128x256 tile, one K tile"},
    {1, 8, 8, "1 x 8, K = 8"},
    {67, 24, 40, "less than one tile"},
    {300, 8, 200, "N = 8"},
    {127, 136, 144, "ragged M, N = 8 mod 16"},
    {509, 520, 1032, "ragged, K tail of 8"},
    {2053, 4104, 520, "more tiles than SMs"},
    {4096, 4096, 4096, "4096^3"},
};

/// Runs configuration i on the workspace's buffers (C reset to NaN first) and waits for it.
void run_once(int i, ProblemBuffers& ws) {
  const Bf16Gemm p = ws.bf16_args();
  DeviceBuffer<char> scratch(cutlass_ref::workspace_bytes(i, p));
  ws.reset_output(nullptr);
  cutlass_ref::run(i, p, scratch.get(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace

TEST_CASE("CUTLASS references match cuBLAS (random normal within the bf16 tolerance; exact inputs ==)", "[gpu][hopper][cutlass]") {
  REQUIRE_HOPPER_OR_SKIP();
  REQUIRE(cutlass_ref::config_count() == GEMM_CUTLASS_CONFIGS);
  if (cutlass_ref::config_count() == 0) {
    gemm_test::mark_skipped("built without the CUTLASS headers (scripts/deps.sh installs them)");
    return;
  }
  for (int i = 0; i < cutlass_ref::config_count(); ++i) {
    for (const Shape& s : kShapes) {
      for (bool exact : {false, true}) {
        ProblemBuffers ws(Problem{Dtype::bf16, s.m, s.n, s.k, 1, 0, exact ? 31u : 17u, exact});
        const std::string name = fmt::format("{} M={} N={} K={}{} ({})", cutlass_ref::config_name(i), s.m,
                                             s.n, s.k, exact ? " exact" : "", s.what);
        const auto why = cutlass_ref::refusal(i, ws.bf16_args());
        INFO(name << ": " << why.value_or("accepted"));
        REQUIRE_FALSE(why.has_value());
        run_once(i, ws);
        const CheckReport r = ws.check_against(ws.cublas_reference());
        INFO(name << " against cuBLAS: " << r.summary());
        CHECK(r.passed);
      }
    }
  }
}

TEST_CASE("CUTLASS references: ten repeats are bitwise identical, two buffers back to back", "[gpu][hopper][cutlass]") {
  REQUIRE_HOPPER_OR_SKIP();
  if (cutlass_ref::config_count() == 0) {
    gemm_test::mark_skipped("built without the CUTLASS headers (scripts/deps.sh installs them)");
    return;
  }
  for (int i = 0; i < cutlass_ref::config_count(); ++i) {
    INFO(cutlass_ref::config_name(i));
    ProblemBuffers w1(Problem{Dtype::bf16, 777, 1000, 1048, 1, 0, 9, false});
    ProblemBuffers w2(Problem{Dtype::bf16, 777, 1000, 1048, 1, 0, 10, false});
    std::vector<float> first;
    for (int rep = 0; rep < 10; ++rep) {
      run_once(i, w1);
      const std::vector<float> c = w1.download_c();
      if (rep == 0) first = c;
      INFO("repeat " << rep);
      REQUIRE(c.size() == first.size());
      CHECK(std::memcmp(c.data(), first.data(), c.size() * sizeof(float)) == 0);
    }
    CHECK(w1.check_against(w1.cublas_reference()).passed);
    for (ProblemBuffers* w : {&w2, &w1}) {
      run_once(i, *w);
      const CheckReport r = w->check_against(w->cublas_reference());
      INFO("seed " << w->problem().seed << ": " << r.summary());
      CHECK(r.passed);
    }
  }
}
