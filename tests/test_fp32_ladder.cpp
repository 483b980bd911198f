// GPU tests of the fp32 ladder's later steps (04-09b) beyond the generic shape suite of test_gpu.cpp:
// K tails (an odd number of K tiles, a count that is not a multiple of the pipeline's stages, fewer
// tiles than stages), shapes of one tile, ragged M and N, and the precise refusal of shapes whose
// rows are not 16-byte aligned (N % 4 or K % 4 != 0) by the float4 / cp.async steps 06-09b.
// Every shape runs in exact mode (small integers, compared with ==) and random-normal mode.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "../common/harness/device_info.hpp"
#include "../common/harness/runner.hpp"
#include "support.hpp"

using namespace gemm;

namespace {

// The block-tiled fp32 steps, as registered: those whose threads compute more than one output each
// (the block's BM x BN tile over fewer threads: 04, 05, ..., 09, 09b, and any step added after them;
// not 01-03, one output per thread, nor 00, no kernel of ours). Read when a test runs, never during
// static initialisation (the steps register themselves then, in an order across files that C++
// leaves unspecified).
const std::vector<std::string>& ladder() {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> out;
    for (const Step& s : registered_steps())
      if (!s.fixture && s.dtype == Dtype::fp32 && s.threads > 0 && s.tile.bm * s.tile.bn > s.threads)
        out.push_back(s.id);
    return out;
  }();
  return ids;
}
const std::set<std::string> kAligned{"06", "07", "08", "09", "09b"};  // need N % 4 == 0 and K % 4 == 0

// K values (all multiples of 4) chosen so that for every BK in {8, 16, 32} and STAGES in {2..5}
// there is a K with a partial last tile and an odd tile count, one whose tile count is not a
// multiple of STAGES and larger than STAGES, and one with fewer tiles than STAGES - 1 (the
// pipeline's prologue runs past the last tile). The coverage is asserted below, not assumed.
const std::vector<int> kTailK{4, 8, 12, 20, 28, 36, 44, 52, 68, 84, 100, 132, 164, 196, 260, 324, 388};

void run_both_modes(const std::string& id, int m, int n, int k, float alpha = 1, float beta = 0) {
  const Step step = find_step(id);
  for (bool exact : {true, false}) {
    const Problem p{Dtype::fp32, m, n, k, alpha, beta, uint64_t(m * 7 + n * 3 + k), exact};
    const CheckReport r = gemm_test::guarded_check(step, p, Oracle::cublas);
    INFO(fmt::format("step {} M={} N={} K={} alpha={} beta={} {}: {}", id, m, n, k, alpha, beta,
                     exact ? "exact" : "random", r.summary()));
    CHECK(r.passed);
  }
}

}  // namespace

TEST_CASE("the K-tail list covers odd tile counts and counts that are not a multiple of STAGES", "[cpu][fp32_ladder]") {
  for (int bk : {8, 16, 32}) {
    for (int stages : {2, 3, 4, 5}) {
      bool odd_partial = false, not_multiple = false, fewer = false;
      for (int k : kTailK) {
        const int tiles = (k + bk - 1) / bk;
        odd_partial |= tiles % 2 == 1 && tiles > 1 && k % bk != 0;
        not_multiple |= tiles > stages && tiles % stages != 0;
        fewer |= tiles < stages - 1;
      }
      INFO(fmt::format("BK={} STAGES={}", bk, stages));
      CHECK(odd_partial);
      CHECK(not_multiple);
      if (stages > 2) CHECK(fewer);
    }
  }
}

TEST_CASE("fp32 steps 04-09b handle K tails (odd tile counts, not a multiple of the stage count)", "[gpu][fp32_ladder]") {
  REQUIRE_GPU_OR_SKIP();
  for (const std::string& id : ladder())
    for (int k : kTailK) run_both_modes(id, 72, 136, k);
  // A long K whose tile count is odd for BK = 8, 16 and 32 (1044 / 32 -> 33 tiles), on full tiles.
  for (const std::string& id : ladder()) run_both_modes(id, 256, 256, 1044);
}

TEST_CASE("fp32 steps 04-09b on shapes of exactly one tile and smaller", "[gpu][fp32_ladder]") {
  REQUIRE_GPU_OR_SKIP();
  struct S { int m, n, k; };
  for (const std::string& id : ladder()) {
    for (S s : {S{64, 64, 8}, S{128, 128, 8}, S{128, 128, 16}, S{128, 128, 32}, S{128, 64, 16}, S{64, 128, 16},
                S{128, 256, 16}, S{256, 128, 16}, S{4, 4, 4}, S{1, 4, 4}, S{3, 8, 12}})
      run_both_modes(id, s.m, s.n, s.k);
    // The step's own tile (registry metadata): one tile with one and two K tiles, and one short by a
    // row and a float4 column with a K tail.
    const Tile t = find_step(id).tile;
    for (S s : {S{t.bm, t.bn, t.bk}, S{t.bm, t.bn, 2 * t.bk}, S{t.bm - 1, t.bn - 4, t.bk + 4}})
      run_both_modes(id, s.m, s.n, s.k);
  }
}

TEST_CASE("the fp32 ladder is registered with its tiles", "[cpu][fp32_ladder]") {
  CHECK(ladder().size() >= 7);  // 04-09 and 09b
  for (const std::string& id : ladder()) {
    const Step step = find_step(id);
    INFO("step " << id);
    CHECK(step.tile.bm >= 4);
    CHECK(step.tile.bn >= 4);
    CHECK(step.tile.bk >= 1);
    CHECK(step.tile.stages >= 1);
    CHECK(step.threads >= 32);
  }
}

TEST_CASE("fp32 steps 04-09b handle ragged M and N, with alpha and beta", "[gpu][fp32_ladder]") {
  REQUIRE_GPU_OR_SKIP();
  struct S { int m, n, k; };
  for (const std::string& id : ladder()) {
    for (S s : {S{1000, 1004, 1028}, S{129, 132, 64}, S{257, 260, 36}, S{130, 4, 12}, S{1, 1024, 256},
                S{1023, 4, 8}, S{384, 512, 128}})
      run_both_modes(id, s.m, s.n, s.k);
    run_both_modes(id, 1000, 1004, 1028, 1.5f, -0.75f);  // beta != 0: C is read, edges included
    run_both_modes(id, 131, 260, 20, -2.0f, 0.5f);
  }
}

TEST_CASE("step 09b's stream-K tail: pieces of tiles summed across blocks, counters reset between launches", "[gpu][fp32_ladder]") {
  REQUIRE_GPU_OR_SKIP();
  const Step step = find_step("09b");
  REQUIRE(step.tile.bm == 128);  // the shapes below are counted in 128 x 256 tiles
  REQUIRE(step.tile.bn == 256);
  // Step 09b gives the last partial wave of 128 x 256 tiles to its stream-K kernel when the grid has
  // at least one full wave. On a 132-SM H200 (one block per SM) every shape below reaches it:
  //   900 x 4868 x 72: 160 tiles = 1 wave + 28, so all 160 are shared (5 K tiles each, a tail);
  //   1000 x 7424 x 260: 232 tiles = 1 wave + 100, the 100 are shared (17 K tiles, a tail);
  //   4100 x 4100 x 200: 561 tiles = 4 waves + 33, the last 165 are shared; M and N ragged;
  //   1000 x 4868 x 1036 with alpha and beta: C is read once, by the block that sums the pieces;
  //   900 x 4868 x 16: the same tiles with one K tile each, so no tile is ever split.
  // Exact mode compares with ==, so a piece missing or added twice fails. Every shape runs twice in
  // a row: the second launch finds the per-tile arrival counters only if the first reset them.
  struct S { int m, n, k; float alpha, beta; };
  for (S s : {S{900, 4868, 72, 1, 0}, S{1000, 7424, 260, 1, 0}, S{4100, 4100, 200, 1, 0},
              S{1000, 4868, 1036, 1.5f, -0.75f}, S{900, 4868, 16, 1, 0}})
    for (int repeat = 0; repeat < 2; ++repeat) run_both_modes("09b", s.m, s.n, s.k, s.alpha, s.beta);
}

TEST_CASE("step 09b launched back to back on one stream, with no synchronization between launches", "[gpu][fp32_ladder]") {
  REQUIRE_GPU_OR_SKIP();
  // check_step synchronizes after every launch; here five launches are queued at once on the legacy
  // default stream: a data-parallel-only shape (20 tiles), then a stream-K-only shape (160 tiles on
  // 132 SMs) twice with beta = 1, so that the second launch reads what the first wrote, then a shape
  // with both kernels twice. On a 132-SM GPU that is every order of the two kernels.
  const Step step = find_step("09b");
  ProblemBuffers only_dp({Dtype::fp32, 128, 4868, 64, 1, 0, 11, true});
  ProblemBuffers only_sk({Dtype::fp32, 900, 4868, 72, 1, 1, 12, true});
  ProblemBuffers both({Dtype::fp32, 4100, 4100, 200, 1, 0, 13, true});
  for (ProblemBuffers* w : {&only_dp, &only_sk, &both}) {
    reserve_workspace(step, *w);
    w->reset_output(nullptr);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> c0 = only_sk.download_c();
  step.fp32(only_dp.fp32_args(), nullptr);
  step.fp32(only_sk.fp32_args(), nullptr);
  step.fp32(only_sk.fp32_args(), nullptr);
  step.fp32(both.fp32_args(), nullptr);
  step.fp32(both.fp32_args(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(only_dp.check_against(only_dp.cublas_reference()).passed);
  CHECK(both.check_against(both.cublas_reference()).passed);
  // Twice C = A B + C from C0: A B + (A B + C0) = 2 (A B + C0) - C0, exact for these small integers.
  std::vector<float> want = only_sk.cublas_reference();
  for (size_t i = 0; i < want.size(); ++i) want[i] = 2 * want[i] - c0[i];
  const CheckReport r = only_sk.check_against(want);
  INFO(r.summary());
  CHECK(r.passed);
}

TEST_CASE("step 09b's workspace: declared per shape, refused when short, counters left at zero", "[gpu][fp32_ladder]") {
  REQUIRE_GPU_OR_SKIP();
  const Step step = find_step("09b");
  REQUIRE(step.workspace_bytes != nullptr);
  // 128 x 4868: 20 tiles, less than one wave on any GPU with more than 20 SMs: no stream-K, no workspace.
  CHECK(step_workspace_bytes(step, 128, 4868, 64) == 0);
  // 900 x 4868 (160 tiles) reaches stream-K on a 132-SM H200: 2P slots of 128 x 256 floats + 2P counters.
  const size_t need = step_workspace_bytes(step, 900, 4868, 72);
  const int sms = query_device().sm_count;
  if (sms == 132) CHECK(need == size_t(2) * 132 * (128 * 256 + 1) * 4);
  ProblemBuffers pb({Dtype::fp32, 900, 4868, 72, 1, 0, 31, true});
  if (need > 0) {  // a launcher given less than it needs says so instead of writing past the buffer
    pb.reserve_workspace(need - 4);
    CHECK_THROWS_WITH(step.fp32(pb.fp32_args(), nullptr), Catch::Contains("needs a workspace of"));
  }
  for (int rep = 0; rep < 3; ++rep) CHECK(check_step(step, pb).passed);
  // The last block to store a piece of a shared tile resets its counter: the 2P ints after the slots
  // are all zero again, as the next launch needs them (the harness zeroes them only once).
  if (need > 0) {
    const size_t p2 = need / (size_t(128) * 256 * 4 + 4);  // 2P
    std::vector<int> c(p2, -1);
    CUDA_CHECK(cudaMemcpy(c.data(), static_cast<const char*>(pb.fp32_args().workspace) + p2 * 128 * 256 * 4,
                          p2 * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(std::count(c.begin(), c.end(), 0) == std::ptrdiff_t(p2));
  }
}

TEST_CASE("step 09b's stream-K kernel really runs, on a shape derived from this GPU's SM count", "[gpu][fp32_ladder]") {
  REQUIRE_GPU_OR_SKIP();
  const Step step = find_step("09b");
  // One tile column of 4 * SMs + 1 tiles of 128 x 256: whatever the blocks per SM (P = SMs x blocks
  // per SM divides 4 * SMs for 1, 2 or 4 blocks per SM), there is at least one full wave and one tile
  // left over, so the split sends the tail to the stream-K kernel and declares its workspace.
  const int sms = query_device().sm_count;
  const int m = 128 * (4 * sms + 1), n = 256, k = 72;  // K = 72: 5 K tiles of 16, a tail
  const size_t need = step_workspace_bytes(step, m, n, k);
  REQUIRE(need > 0);
  const size_t per_slot = size_t(128) * 256 * 4, p2 = need / (per_slot + 4);  // 2P slots, then 2P counters
  REQUIRE(need == p2 * (per_slot + 4));
  INFO("SMs " << sms << ", P = " << p2 / 2);
  ProblemBuffers pb({Dtype::fp32, m, n, k, 1, 0, 41, true});
  pb.reserve_workspace(need);
  // Fill the partial-sum slots with a sentinel (0xFF bytes: NaN) and leave the counters at zero: a slot
  // that no longer holds it was written by the stream-K kernel, which is the only writer.
  void* ws = pb.fp32_args().workspace;
  CUDA_CHECK(cudaMemset(ws, 0xFF, p2 * per_slot));
  CUDA_CHECK(cudaMemset(static_cast<char*>(ws) + p2 * per_slot, 0, p2 * 4));
  CHECK(check_step(step, pb).passed);
  std::vector<uint32_t> slots(p2 * per_slot / 4);
  CUDA_CHECK(cudaMemcpy(slots.data(), ws, p2 * per_slot, cudaMemcpyDeviceToHost));
  const auto written = std::count_if(slots.begin(), slots.end(), [](uint32_t v) { return v != 0xFFFFFFFFu; });
  CHECK(written > 0);
}

TEST_CASE("step 09b refuses a C of more than 2^30 tiles, whose tile numbers would overflow", "[cpu][fp32_ladder]") {
  const Step step = find_step("09b");
  const auto why = refusal(step, 65535 * 128, 2147483644, 4);  // 65535 x 8388608 tiles
  REQUIRE(why.has_value());
  CHECK_THAT(*why, Catch::Contains("549747425280 tiles of 128x256") && Catch::Contains("2^30"));
  CHECK_FALSE(refusal(step, 65535 * 128, 4096, 4).has_value());  // 65535 x 16 tiles
}

TEST_CASE("steps 06-09b refuse N % 4 != 0 and K % 4 != 0 with the reason; 04 and 05 run them", "[gpu][fp32_ladder]") {
  REQUIRE_GPU_OR_SKIP();
  struct S { int m, n, k; const char* why; };
  for (const std::string& id : ladder()) {
    const Step step = find_step(id);
    for (S s : {S{64, 66, 64, "N=66 is not a multiple of 4"}, S{64, 64, 66, "K=66 is not a multiple of 4"},
                S{33, 161, 96, "N=161 is not a multiple of 4"}, S{8, 8, 5, "K=5 is not a multiple of 4"}}) {
      INFO(fmt::format("step {} M={} N={} K={}", id, s.m, s.n, s.k));
      if (kAligned.count(id)) {
        const auto why = refusal(step, s.m, s.n, s.k);
        REQUIRE(why.has_value());
        CHECK_THAT(*why, Catch::Contains(s.why) && Catch::Contains("16-byte aligned"));
        CHECK_THROWS_WITH(check_step(step, {Dtype::fp32, s.m, s.n, s.k, 1, 0, 1, true}), Catch::Contains(s.why));
      } else {
        CHECK_FALSE(refusal(step, s.m, s.n, s.k).has_value());
        CHECK(gemm_test::guarded_check(step, {Dtype::fp32, s.m, s.n, s.k, 1, 0, 1, true}).passed);
      }
    }
    // Aligned shapes are never refused, however ragged M is.
    CHECK_FALSE(refusal(step, 1, 4, 4).has_value());
    CHECK_FALSE(refusal(step, 4097, 4100, 4104).has_value());
  }
}
