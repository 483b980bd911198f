// The family's menu on the GPU (issue 46): every entry of family/menu.hpp through the harness's check,
// on shapes built from its own tile (tests enumerate the menu, not a hand list): its tile suite
// (one tile, less than one, K tails around its ring, ragged M and N, N = 8 mod 16, odd N), K % 16 == 8,
// a cluster whose partner block lies past the edge, the narrow epilogue boxes at ragged N, hundreds of
// short items a block (the epilogue's buffers back to back), a grid under one wave with a long K
// (split-K or stream-K), and that split shape the same bits on ten runs.
// Every check runs under the watchdog (a hang ends the run naming the check).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "../common/harness/problem.hpp"
#include "../common/harness/runner.hpp"
#include "../common/kernel_lib/family/menu_steps.hpp"
#include "../common/kernel_lib/launch.hpp"
#include "support.hpp"

using namespace gemm;
using gemm_test::Shape;

namespace {

// The shapes one entry runs on, from its tile: the kernel's problem is C's (swapped: C^T's, so the
// tile's rows run along N and its columns along M; a narrow swapped tile keeps M at or under its width).
std::vector<Shape> entry_shapes(const Step& step, const family::menu::Entry& e) {
  const family::Spec s = e.spec;
  const int bm = s.bm * s.cluster_m, bn = s.bn * s.cluster_n;  // a cluster tile
  const int ring = 64 * s.stages;
  if (s.swap && !e.one_column) {  // cuBLAS's orientation: any number of columns of M
    const int w = s.bn;
    return {{1, 1000, 4104, "M = 1, ragged N, K % 16 == 8"},
            {3 * w + 5, 2 * s.bm + 3, 1032, "three columns of M and a ragged fourth, ragged N, K % 16 == 8"},
            {3 * w + 5, 1000, 1032, "a ragged fourth column, N % 8 == 0 (C's rows TMA-addressable), K % 16 == 8"},
            {w + 1, 3 * s.bm + 5, ring + 72, "one column and one row of M past it, K one ring and a tail"},
            {2 * w - 8, 4095, 8200, "two columns, the second ragged, odd N, K % 16 == 8"},
            {2 * w, 32 * s.bm, 16384, "a grid under one wave with a long K: split"},
            {4 * w + 3, 8192, 8, "many short items: the transposed stores back to back"}};
  }
  if (s.swap) {
    const int w = s.bn;  // C's M per tile column of C^T
    return {{1, 1000, 4104, "M = 1, ragged N, K % 16 == 8"},
            {w, 3 * s.bm + 5, ring + 72, "M = the tile width, K one ring and a tail"},
            {w / 2 + 1, 2 * s.bm * s.cluster_m + 1, 520, "M inside the tile width, an odd tile count along N"},
            {std::max(1, w - 1), 4095, 8200, "odd N, K % 16 == 8"},
            {w, 4096, 16384, "a grid under one wave with a long K: split"}};
  }
  std::vector<Shape> out = gemm_test::tile_shape_suite(step.tile);
  out.push_back({3 * bm + 1, 5 * bn - 3, 1032, "ragged M and N, K % 16 == 8"});
  out.push_back({2 * bm + 7, 2 * bn + 8, 392, "an odd tile count along M: the last cluster's partner past M"});
  out.push_back({2 * bm, 2 * bn + 9, 200, "an odd tile count along N: the last cluster's partner past N"});
  out.push_back({2 * s.bm, 2 * s.bn, 32768, "a grid under one wave with a long K: split"});
  out.push_back({257, s.bn + 8, 64, "N = BN + 8: the last tile's boxes all but one past N"});
  // Hundreds of one-K-tile items a block: the epilogue's stores run back to back, so a box buffer
  // rewritten while its last store still reads it shows (fuzz found it at 64 x 64, one box a tile).
  out.push_back({1 << 22, 8, 8, "many short items: the epilogue's box buffers back to back"});
  return out;
}

}  // namespace

TEST_CASE("menu: every entry matches cuBLAS on shapes from its own tile (random normal and exact)", "[gpu][hopper][menu]") {
  REQUIRE_HOPPER_OR_SKIP();
  const std::vector<Step> steps = family::menu::bf16_steps();
  REQUIRE(steps.size() == family::menu::kBf16.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i];
    int ran = 0;
    for (const Shape& sh : entry_shapes(step, family::menu::kBf16[i])) {
      const std::string what = step.name + ": " + sh.what;
      ran += gemm_test::expect_pass(step, {Dtype::bf16, sh.m, sh.n, sh.k, 1, 0, 53, false}, Oracle::cublas, what);
      gemm_test::expect_pass(step, {Dtype::bf16, sh.m, sh.n, sh.k, 1, 0, 59, true}, Oracle::cublas, what + " (exact)");
    }
    INFO(step.name);
    CHECK(ran >= 5);  // every entry takes at least five of its shapes (refused ones are skipped, not counted)
  }
}

TEST_CASE("menu: a split shape is the same bits on ten runs, every entry", "[gpu][hopper][menu][stream_k]") {
  REQUIRE_HOPPER_OR_SKIP();
  const std::vector<Step> steps = family::menu::bf16_steps();
  for (size_t i = 0; i < steps.size(); ++i) {
    const family::Spec s = family::menu::kBf16[i].spec;
    // Few tiles and a long K: 24's, 26's or 23's rule splits it on 132 SMs.
    const Problem p = s.swap ? Problem{Dtype::bf16, s.bn, 4096, 16384, 1, 0, 61, false}
                             : Problem{Dtype::bf16, 2 * s.bm, 2 * s.bn, 32768, 1, 0, 61, false};
    INFO(steps[i].name);
    CHECK(steps[i].workspace_bytes(p.m, p.n, p.k) > 0);  // the plan split it
    gemm_test::expect_same_bits_ten_times(steps[i], p, steps[i].name + " split");
  }
}

TEST_CASE("menu: parallel split-K gives the fixup's bits, each -psk entry against its twin", "[gpu][hopper][menu][stream_k]") {
  REQUIRE_HOPPER_OR_SKIP();
  const std::vector<Step> steps = family::menu::bf16_steps();
  int psk = 0, compared = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const family::Spec s = family::menu::kBf16[i].spec;
    if (!s.parallel_reduce) continue;
    ++psk;
    family::Spec t = s;
    t.parallel_reduce = false;
    const int twin = family::menu::entry_of(t);  // the same kernel with step 21's fixup
    INFO(steps[i].name);
    REQUIRE(twin >= 0);
    const int bm = s.bm * s.cluster_m, bn = s.bn * s.cluster_n;
    // Two cluster tiles and a long K (M x N % 4 == 0: the reduction's four-wide path); one ragged
    // cluster tile, odd M and N (M x N odd: its one-wide path; no TMA store in the twin), K % 16 == 8.
    for (const Shape& sh : {Shape{2 * bm, 2 * bn, 32768, "two cluster tiles, a long K"},
                            Shape{bm - 37, bn - 19, 16392, "one ragged tile, odd N, K % 16 == 8"}}) {
      const std::string what = steps[i].name + " against " + steps[size_t(twin)].name + ": " + sh.what;
      INFO(what);
      CHECK(family::menu::launch_plan(i, sh.m, sh.n, sh.k).reduce_segments >= 2);  // the plan reduces in a second kernel
      CHECK(family::menu::launch_plan(size_t(twin), sh.m, sh.n, sh.k).split.sk_tiles > 0);  // and the twin splits too
      const Problem p{Dtype::bf16, sh.m, sh.n, sh.k, 1, 0, 67, false};
      gemm_test::Watchdog dog(gemm_test::describe(steps[i], p, what), gemm_test::kGpuCheckLimit);
      ProblemBuffers a(p), b(p);  // the same seed: the same A and B
      reserve_workspace(steps[i], a);
      reserve_workspace(steps[size_t(twin)], b);
      a.reset_output(nullptr);
      b.reset_output(nullptr);
      launch_step(steps[i], a, nullptr);
      launch_step(steps[size_t(twin)], b, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const CheckReport r = a.check_against_reference(a.reference());
      INFO(r.summary());
      CHECK(r.passed);
      const std::vector<float> ca = a.download_c(), cb = b.download_c();
      REQUIRE(ca.size() == cb.size());
      CHECK(std::memcmp(ca.data(), cb.data(), ca.size() * sizeof(float)) == 0);
      ++compared;
    }
  }
  CHECK(psk >= 1);
  CHECK(compared == 2 * psk);
}
