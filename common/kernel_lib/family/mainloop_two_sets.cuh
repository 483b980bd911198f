// The promoted K loop with two sets of tensor-core accumulators (step 34): a consumer that owns one m64
// slab (cooperative 128-row tile, step 34; ping-pong 64-row tile, step 36), 64 fp32 sums a thread,
// has registers left for two sets of tensor-core accumulators.
// An item's i-th K tile goes into tc[i % 2]; after its wgmmas are issued, wait_group 1 waits only for
// the previous K tile's group, whose partial is promoted while this one's run: the tensor cores always
// have a group queued (step 23's wait, with the promotion in its shadow). The set is a register name,
// so the loop is unrolled by two, and the first K tile is peeled (ptxas serializes every wgmma of a
// loop that starts with a wait on a set no group wrote yet; the notebook, "Step 33's first build").
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include <type_traits>

#include "mainloop.cuh"

namespace gemm::family {

template <class C>
__device__ __forceinline__ void mainloop_two_sets(SharedStorage<C>& s, const Params& p, ring_t<C>& ring,
                                                  const stream_k::Piece& pc, const TileOrigin& o, int me,
                                                  float (&acc)[C::SLABS][C::FRAG], float (&tc)[2][C::FRAG]) {
  static_assert(C::SLABS == 1, "two sets fit beside one slab of sums: a cooperative 128-row or a ping-pong 64-row tile");
#pragma unroll
  for (int r = 0; r < C::FRAG; ++r) acc[0][r] = 0.0f;
  float sc[2][1][BlockScales<C>::SC] = {};  // the scales of the K tile in tc[0] / tc[1], loaded as its wgmmas are issued
  int held = -1;           // the stage of the previous K tile, released once its partial is promoted
  const BlockScales<C> scales(p, o, me);
  // One K tile into tc[b]; then, but for the item's first, the previous K tile's (in tc[1 - b])
  // promotion in the shadow of these wgmmas.
  auto k_tile = [&](int kt, auto b_c, auto promote_previous) {
    constexpr int b = decltype(b_c)::value;
    const int st = ring.stage;
    if constexpr (C::spec.scales == Scales::block && !scales_in_ring(C::spec)) scales.load(kt, sc[b]);  // read a K tile later
    ptx::mbarrier_wait_parity(&s.full[st], ring.phase);
    if constexpr (scales_in_ring(C::spec)) scales.load_ring(s, st, me, sc[b]);  // landed with the stage
    const uint64_t desc_a = ptx::make_desc_k_sw128(s.a[st]), desc_b = ptx::make_desc_k_sw128(s.b[st]);
    ptx::wgmma_fence_operands(tc[b]);
    ptx::wgmma_fence();  // orders these wgmmas after the adds that last read tc[b], two K tiles ago
#pragma unroll
    for (int kk = 0; kk < C::BK / C::WGMMA_K; ++kk) mma<C>(tc[b], desc_a, desc_b, slab_row<C>(0, me), kk, kk > 0);
    ptx::wgmma_commit();
    if (kt == pc.kt1 - 1) pass_order(s, me);  // ping-pong: past the item's last full wait (step 22)
    if constexpr (decltype(promote_previous)::value) {
      ptx::wgmma_wait<1>();  // the previous K tile's group is complete; this one keeps the tensor cores busy
      ptx::wgmma_fence_operands(tc[1 - b]);
      promote<C>(acc[0], tc[1 - b], sc[1 - b][0]);
      release_read_stage<C>(s, held);  // its wgmmas are done reading the stage
    }
    held = st;
    ring.advance();
  };
  using Zero = std::integral_constant<int, 0>;
  using One = std::integral_constant<int, 1>;
  k_tile(pc.kt0, Zero{}, std::false_type{});
  int kt = pc.kt0 + 1;
  for (; kt + 1 < pc.kt1; kt += 2) {  // unrolled by two: the set is a register name, fixed at compile time
    k_tile(kt, One{}, std::true_type{});
    k_tile(kt + 1, Zero{}, std::true_type{});
  }
  if (kt < pc.kt1) {  // one K tile left, into tc[1]
    k_tile(kt, One{}, std::true_type{});
    ptx::wgmma_wait<0>();
    ptx::wgmma_fence_operands(tc[1]);
    promote<C>(acc[0], tc[1], sc[1][0]);
  } else {  // the last K tile is in tc[0]
    ptx::wgmma_wait<0>();
    ptx::wgmma_fence_operands(tc[0]);
    promote<C>(acc[0], tc[0], sc[0][0]);
  }
  release_read_stage<C>(s, held);
}

}  // namespace gemm::family
