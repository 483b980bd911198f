// The consumer's K loop over one item (K tiles [pc.kt0, pc.kt1) of one tile), in the three forms the
// ladder taught: tensor_core (steps 11-14 and 22-23: the wgmma accumulators hold the whole sum, and
// wait_group 1 keeps one K tile's group queued while the previous one's stage is released), promoted
// (steps 31-32: each K tile's partial, in a fresh set of tensor-core accumulators, added into fp32
// registers, scaled by the block scales where there are any) and two_sets (step 34: promoted, with two
// sets so that one K tile's promotion runs under the next one's wgmmas).
// On the ping-pong path each warp arrives on the other consumer's order barrier once it is past its
// last full wait (step 22), so the other consumer's K loop starts while this one finishes.
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include <type_traits>

#include "../pipeline.cuh"
#include "../ptx/mbarrier.cuh"
#include "../ptx/wgmma.cuh"
#include "producer.cuh"

namespace gemm::family {

template <class C>
using ring_t = pipe::PipeState<C::STAGES>;

/// One wgmma of slab i's rows (`row`) and k step kk from the stage at desc_a / desc_b. The k step and
/// slab offsets are added in 16-byte units to the descriptor's start-address field (bits 0-13), which
/// they cannot carry out of: the stage is 1024-byte aligned and these offsets stay inside it.
template <class C>
__device__ __forceinline__ void mma(float (&d)[C::FRAG], uint64_t desc_a, uint64_t desc_b, int row, int kk, bool accumulate) {
  constexpr int eb = elem_bytes(C::spec);
  const uint64_t da = desc_a + uint64_t((row * C::BK + kk * C::WGMMA_K) * eb / 16), db = desc_b + uint64_t(kk * C::WGMMA_K * eb / 16);
  if constexpr (C::spec.elem == Elem::bf16) ptx::wgmma_m64nNk16_bf16(d, da, db, accumulate);
  else ptx::wgmma_m64nNk32_e4m3(d, da, db, accumulate);
}

/// This warp is past the item's last full wait: on the ping-pong path, the other consumer may start.
template <class C>
__device__ __forceinline__ void pass_order(SharedStorage<C>& s, int me) {
  if (C::PINGPONG && threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&s.order[1 - me]);
}

/// tensor_core: acc = A * B^T over the item's K tiles (scale-d = 0 on the first k step: no zeroing).
template <class C>
__device__ __forceinline__ void mainloop_tensor_core(SharedStorage<C>& s, ring_t<C>& ring, const stream_k::Piece& pc,
                                                     int me, float (&acc)[C::SLABS][C::FRAG]) {
  int held = -1;  // the stage of the previous K tile, released once its wgmmas are done
  for (int kt = pc.kt0; kt < pc.kt1; ++kt, ring.advance()) {
    const int st = ring.stage;
    ptx::mbarrier_wait_parity(&s.full[st], ring.phase);
#pragma unroll
    for (int i = 0; i < C::SLABS; ++i) ptx::wgmma_fence_operands(acc[i]);
    ptx::wgmma_fence();
    const uint64_t desc_a = ptx::make_desc_k_sw128(s.a[st]), desc_b = ptx::make_desc_k_sw128(s.b[st]);
#pragma unroll
    for (int kk = 0; kk < C::BK / C::WGMMA_K; ++kk)
#pragma unroll
      for (int i = 0; i < C::SLABS; ++i) mma<C>(acc[i], desc_a, desc_b, slab_row<C>(i, me), kk, kt > pc.kt0 || kk > 0);
    ptx::wgmma_commit();
    if (kt == pc.kt1 - 1) pass_order(s, me);
    ptx::wgmma_wait<1>();  // K tile kt - 1's group is complete; kt's keeps the tensor cores busy ...
#pragma unroll
    for (int i = 0; i < C::SLABS; ++i) ptx::wgmma_fence_operands(acc[i]);
    if (held >= 0 && threadIdx.x % 32 == 0) release<C>(s, held);  // ... so kt - 1's stage is free
    held = st;
  }
  ptx::wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < C::SLABS; ++i) ptx::wgmma_fence_operands(acc[i]);
  if (threadIdx.x % 32 == 0) release<C>(s, held);
}

/// The block scales of one item for this thread (step 32): sfa is ceil(K/128) x M, M contiguous, so
/// each of its rows (the D fragment's rows 16 w + l / 4 + 8 h of each slab) has one pointer, nullptr
/// past M (it scales by 0; its outputs are clipped); the tile's sfb row holds k_tiles K blocks. Made
/// once per item, so a K tile's scales are one multiply-add and a load each.
/// Swapped (C^T = B * A^T), the kernel's rows are B's, whose 128 x 128 blocks hold a slab's 64 rows
/// whole: one sfb value a slab; its columns are A's rows, each with its own sfa value, so a thread's
/// scales follow its fragment's columns (8 j + 2 (l % 4) + e for the BN / 8 groups j and e = 0, 1):
/// BN / 4 of them, which travel in the ring (config.hpp's scales_in_ring; load_ring).
template <class C>
struct BlockScales {
  static constexpr bool SWAP = C::spec.swap;
  static_assert(!SWAP || C::spec.scales != Scales::block || scales_in_ring(C::spec), "a swapped tile's block scales travel in the ring");
  /// Scales a thread holds per slab: one per row half h, or swapped one per fragment column.
  static constexpr int SC = SWAP ? C::BN / 4 : 2;
  static_assert(SC % 2 == 0, "load_ring reads a thread's columns in pairs (BN a multiple of 8)");
  const float* a[C::SLABS][2];
  const float* b;   // the tile's row of sfb
  int64_t stride;   // C's M: from one K block of sfa to the next
  __device__ __forceinline__ BlockScales(const Params& p, const TileOrigin& o, int me) : a{}, b(nullptr), stride(p.M) {
    if constexpr (C::spec.scales != Scales::block || scales_in_ring(C::spec)) return;  // (no scales to point at: none, or in the ring)
    const int row0 = o.m0 + 16 * ((threadIdx.x % 128) / 32) + (threadIdx.x % 32) / 4;
#pragma unroll
    for (int i = 0; i < C::SLABS; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row0 + slab_row<C>(i, me) + 8 * h;
        a[i][h] = row < p.M ? p.sfa + row : nullptr;
      }
    b = p.sfb + int64_t(o.tile_n) * p.k_tiles;
  }
  /// K block kb's scales: sc[i][h] = sfa * sfb for slab i's accumulators r with scale_index(r) == h.
  __device__ __forceinline__ void load(int kb, float (&sc)[C::SLABS][SC]) const {
    static_assert(!SWAP, "a swapped tile reads its scales from the ring (load_ring)");
    const float sb = __ldg(b + kb);
#pragma unroll
    for (int i = 0; i < C::SLABS; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) sc[i][h] = (a[i][h] ? __ldg(a[i][h] + kb * stride) : 0.0f) * sb;
  }
  /// scales_in_ring: K block's scales from stage st, read after its full-barrier wait, as load()
  /// computes them from global memory (the producer zeroed rows, columns and slabs past the matrix).
  __device__ __forceinline__ void load_ring(const SharedStorage<C>& s, int st, int me, float (&sc)[C::SLABS][SC]) const {
    if constexpr (!SWAP) {  // the thread's two rows of each slab (the constructor's), the tile's one sfb (step 42)
      const int row0 = 16 * ((threadIdx.x % 128) / 32) + (threadIdx.x % 32) / 4;
#pragma unroll
      for (int i = 0; i < C::SLABS; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) sc[i][h] = s.scales[st][row0 + slab_row<C>(i, me) + 8 * h] * s.scales[st][C::BM];
      return;
    }
    const float* col = &s.scales[st][2 * (threadIdx.x % 4)];
#pragma unroll
    for (int i = 0; i < C::SLABS; ++i) {
      const float sb = s.scales[st][C::BN + slab_row<C>(i, me) / kWgmmaM];
#pragma unroll
      for (int c = 0; c < SC; c += 2) {  // columns 8 (c / 2) and + 1 from the thread's first: one 8-byte load
        const float2 a2 = *reinterpret_cast<const float2*>(col + 8 * (c / 2));
        sc[i][c] = a2.x * sb;
        sc[i][c + 1] = a2.y * sb;
      }
    }
  }
  /// Which of a slab's SC scales multiplies accumulator r of the D fragment (its row half, or its column).
  static __device__ __forceinline__ constexpr int scale_index(int r) { return SWAP ? 2 * (r / 4) + r % 2 : (r / 2) % 2; }
};

/// A promoted loop's release of stage st, by each warp's lane 0 (producer.cuh's release), or by every
/// lane where the scales travel in the ring: every lane has read the stage, and each arrives for its
/// own reads (config.hpp's empty_arrivals counts them) before the producer copies the next scales
/// there. __syncwarp, then lane 0's arrive, orders them as well (PTX ISA, "Memory Consistency Model"),
/// but compute-sanitizer's racecheck does not follow that chain and reports the producer's copies
/// against the reads; it follows each lane's own arrive (CUDA 13.0: tests/probes/racecheck_ring.cu,
/// modes st, st32 and noinc32).
template <class C>
__device__ __forceinline__ void release_read_stage(SharedStorage<C>& s, int st) {
  if (scales_in_ring(C::spec) || threadIdx.x % 32 == 0) release<C>(s, st);
}

/// acc[r] += tc[r], scaled by sc[scale_index(r)] under block scales: the promotion (FADD or FFMA).
template <class C>
__device__ __forceinline__ void promote(float (&acc)[C::FRAG], const float (&tc)[C::FRAG], const float (&sc)[BlockScales<C>::SC]) {
#pragma unroll
  for (int r = 0; r < C::FRAG; ++r)
    acc[r] += C::spec.scales == Scales::block ? tc[r] * sc[BlockScales<C>::scale_index(r)] : tc[r];
}

/// promoted: acc = the sum of every K tile's partial, each from the tensor cores' tc (one set, shared
/// by the slabs in turn, so each group ends in a full drain: wait_group 0), promote_every k steps at a time.
template <class C>
__device__ __forceinline__ void mainloop_promoted(SharedStorage<C>& s, const Params& p, ring_t<C>& ring,
                                                  const stream_k::Piece& pc, const TileOrigin& o, int me,
                                                  float (&acc)[C::SLABS][C::FRAG], float (&tc)[C::FRAG]) {
  constexpr int EVERY = C::spec.promote_every, GROUPS = C::BK / C::WGMMA_K / EVERY;
  constexpr int SC = BlockScales<C>::SC;
  float sc[C::SLABS][SC] = {};
  const BlockScales<C> scales(p, o, me);  // (empty without block scales)
  if constexpr (C::spec.scales == Scales::block && !scales_in_ring(C::spec)) scales.load(pc.kt0, sc);
#pragma unroll
  for (int i = 0; i < C::SLABS; ++i)
#pragma unroll
    for (int r = 0; r < C::FRAG; ++r) acc[i][r] = 0.0f;
  for (int kt = pc.kt0; kt < pc.kt1; ++kt, ring.advance()) {
    const int st = ring.stage;
    float next[C::SLABS][SC] = {};  // K tile kt + 1's scales, in flight under kt's wgmmas
    if constexpr (C::spec.scales == Scales::block && !scales_in_ring(C::spec))
      if (kt + 1 < pc.kt1) scales.load(kt + 1, next);
    ptx::mbarrier_wait_parity(&s.full[st], ring.phase);
    if constexpr (scales_in_ring(C::spec)) scales.load_ring(s, st, me, sc);  // landed with the stage
    const uint64_t desc_a = ptx::make_desc_k_sw128(s.a[st]), desc_b = ptx::make_desc_k_sw128(s.b[st]);
#pragma unroll
    for (int i = 0; i < C::SLABS; ++i)
#pragma unroll
      for (int g = 0; g < GROUPS; ++g) {  // one promotion group: EVERY k steps of slab i
        ptx::wgmma_fence_operands(tc);
        ptx::wgmma_fence();  // orders the wgmmas after the adds that last read tc
#pragma unroll
        for (int kk = g * EVERY; kk < (g + 1) * EVERY; ++kk)  // scale-d = 0 on the group's first: tc = A*B
          mma<C>(tc, desc_a, desc_b, slab_row<C>(i, me), kk, kk > g * EVERY);
        ptx::wgmma_commit();
        if (i == 0 && g == 0 && kt == pc.kt1 - 1) pass_order(s, me);  // the other consumer's wgmmas fill the drain
        ptx::wgmma_wait<0>();  // the group is complete: tc may be read
        ptx::wgmma_fence_operands(tc);
        promote<C>(acc[i], tc, sc[i]);
      }
    release_read_stage<C>(s, st);  // every wgmma reading stage st is done
#pragma unroll
    for (int i = 0; i < C::SLABS; ++i)
#pragma unroll
      for (int c = 0; c < SC; ++c) sc[i][c] = next[i][c];
  }
}

}  // namespace gemm::family
