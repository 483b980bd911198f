// The shared test helpers declared in support.hpp (the GPU-skip and command helpers are in main.cpp).
#include "support.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include "../common/harness/device_info.hpp"

namespace gemm_test {

using namespace gemm;

std::vector<Shape> generic_shape_suite() {
  std::vector<Shape> s{{512, 512, 512, "square"},  {127, 131, 137, "ragged primes"}, {509, 521, 523, "ragged primes"},
                       {1, 300, 200, "M = 1"},      {300, 1, 200, "N = 1"},            {300, 200, 1, "K = 1"},
                       {1, 1, 1, "1 x 1 x 1"},      {257, 129, 5, "K smaller than every tile"},
                       {64, 64, 64, "one small tile"}, {16, 16, 16, "less than a tile"}};
  // Six orderings of three distinct sizes: once with odd sizes (steps that take any shape), once
  // with multiples of 8 that are still ragged against every tile (steps that need 16-byte rows).
  for (auto [a, b, c] : {std::tuple{33, 96, 161}, std::tuple{40, 96, 168}})
    for (auto [m, n, k] : {std::tuple{a, b, c}, {a, c, b}, {b, a, c}, {b, c, a}, {c, a, b}, {c, b, a}})
      s.push_back({m, n, k, "an ordering of three sizes"});
  // Ragged M and N with N and K multiples of 8, for the vector (N, K % 4) and TMA (K % 8) steps.
  for (auto [m, n, k] : {std::tuple{127, 136, 144}, {509, 520, 536}, {300, 8, 200}, {1, 304, 200}, {257, 128, 8}})
    s.push_back({m, n, k, "ragged M and N, N and K multiples of 8"});
  return s;
}

std::vector<Shape> tile_shape_suite(const Tile& t) {
  std::vector<Shape> s{
      {t.bm, t.bn, t.bk, "one tile"},
      {t.bm / 2 + 3, t.bn / 2 - 8, 40, "less than one tile"},
      {1, 1, 8, "1 x 1, K = 8"},
      {1, 300, 64, "M = 1"},
      {300, 1, 64, "N = 1"},
      {2 * t.bm, 2 * t.bn, t.bk, "K == BK: a single K iteration"},
      {3 * t.bm + 17, 2 * t.bn + 40, 200, "ragged M and N"},
      {t.bm + 1, t.bn + 8, 136, "N = 8 mod 16"},
      {2 * t.bm + 8, t.bn + 24, 64, "M and N = 8 mod 16: 8-row and 24-column edge tiles"},
      {96, 24, 64, "N = 24 (8 mod 16), less than a wgmma N"},
      {65, 33, 72, "odd N (scalar stores)"},
      {509, 517, 1032, "ragged, K tail of 8"},
  };
  // K tails against the ring of stages: one tile short of a full ring, a ring exactly, one K tile
  // past it (the producer's first wait on a stage that a consumer must release), two rings + a tail.
  const int ring = t.bk * t.stages;
  for (int k : {ring - t.bk + 8, ring - 8, ring, ring + 8, 2 * ring + t.bk + 24})
    if (k > 0) s.push_back({2 * t.bm - 3, t.bn + 24, k, fmt::format("K = {} against {} stages of {}", k, t.stages, t.bk)});
  return s;
}

std::string describe(const Step& step, const Problem& p, const std::string& what) {
  return fmt::format("step {} {} M={} N={} K={} alpha={} beta={} seed={}{}{}", step.id, dtype_name(step.dtype), p.m,
                     p.n, p.k, p.alpha, p.beta, p.seed, p.exact ? " exact" : "", what.empty() ? "" : " (" + what + ")");
}

CheckReport guarded_check(const Step& step, const Problem& p, Oracle oracle, const std::string& what) {
  Watchdog dog(describe(step, p, what), kGpuCheckLimit);
  return check_step(step, p, oracle);
}

bool expect_pass(const Step& step, const Problem& p, Oracle oracle, const std::string& what, bool refusal_fails) {
  const std::string name = describe(step, p, what);
  const Gpu gpu = gpu_of(query_device());
  if (auto why = refusal(step, p.m, p.n, p.k, &gpu)) {
    if (refusal_fails) FAIL_CHECK(name << " was refused: " << *why);
    return false;
  }
  const CheckReport r = guarded_check(step, p, oracle, what);
  INFO(name << " against " << (oracle == Oracle::cublas ? "cuBLAS" : "CPU fp64") << ": " << r.summary());
  CHECK(r.passed);
  return true;
}

std::vector<Step> runnable_steps() {
  const DeviceInfo d = query_device();
  std::vector<Step> out;
  for (const Step& s : registered_steps()) {
    if (s.fixture) continue;
    if (!s.required_cc || s.required_cc == d.cc_major * 10 + d.cc_minor)
      out.push_back(s);
    else
      mark_skipped("the Hopper steps need compute capability 9.0");  // counted, not silent
  }
  return out;
}

std::filesystem::path repo_dir() {
  namespace fs = std::filesystem;
  auto is_repo = [](const fs::path& d) {
    return fs::exists(d / "Makefile") && fs::is_directory(d / "kernels") && fs::is_directory(d / "scripts");
  };
  if (is_repo(fs::current_path())) return fs::current_path();
  const fs::path above = binary_dir().parent_path().parent_path();
  return is_repo(above) ? above : fs::path();
}

bool have_repo(const std::string& what) {
  if (!repo_dir().empty()) return true;
  const std::string why = "no repository next to this binary (it needs " + what + ")";
  mark_skipped(why.c_str());
  return false;
}

bool have_executables(const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (std::filesystem::exists(binary_dir() / name)) continue;
    const std::string why = "no " + name + " next to this binary (" + binary_dir().string() + ")";
    if (!repo_dir().empty()) FAIL(why + ": build it with `make`");
    mark_skipped((why + "; copy the step executables beside it to run this test").c_str());
    return false;
  }
  return true;
}

/// Runs `step` on `p` ten times: the first result checked against the step's reference (cuBLAS; fp8:
/// the fp64 oracle), the other nine required to be the same bits (a fixed summation order in every
/// fixup; what stream-K and split-K must keep).
void expect_same_bits_ten_times(const Step& step, const Problem& p, const std::string& what) {
  Watchdog dog(describe(step, p, "ten runs, " + what), kGpuCheckLimit);
  ProblemBuffers ws(p);
  reserve_workspace(step, ws);
  const std::vector<float> want = ws.reference();
  std::vector<float> first;
  for (int rep = 0; rep < 10; ++rep) {
    ws.reset_output(nullptr);
    launch_step(step, ws, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> c = ws.download_c();
    if (rep == 0) {
      first = c;
      const CheckReport r = ws.check_against_reference(want);
      INFO(describe(step, p, "first of ten runs, " + what) << ": " << r.summary());
      CHECK(r.passed);
      continue;
    }
    INFO(describe(step, p, fmt::format("run {}, {}", rep, what)));
    REQUIRE(c.size() == first.size());
    CHECK(std::memcmp(c.data(), first.data(), c.size() * sizeof(float)) == 0);
  }
}

}  // namespace gemm_test
