// What the family kernel is given (steps 24 on): the plan's numbers, the tensor maps, C and the scales,
// in one struct passed as a __grid_constant__ parameter (so TMA can take the maps' addresses in
// parameter space, as a separate CUtensorMap parameter did in steps 11-23), and the block's shared
// memory for a configuration C.
#pragma once
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "../stream_k.hpp"
#include "config.hpp"

namespace gemm::family {

/// The kernel's parameters, filled by launch() from a Plan (family/plan.hpp).
struct Params {
  int M, N, K;                    ///< the kernel's problem: C's, or C^T's when swapped (M = C's N)
  int tiles_m, tiles_n, k_tiles;  ///< the plan's tile grid over M x N, and K tiles of BK
  CUtensorMap tmap_a;             ///< the kernel's A operand (swapped: B), BM x BK boxes
  CUtensorMap tmap_b;             ///< the kernel's B operand (swapped: A), BN x BK boxes
  CUtensorMap tmap_c;             ///< C in 64 x 64 boxes, where tma_epilogue
  bool tma_epilogue;              ///< C's rows are TMA-addressable (N % 8 == 0, aligned); else register stores
  __nv_bfloat16* C;               ///< the real row-major C (m x n), swapped or not
  const float* scale_a;           ///< Scales::per_tensor: one float each (device memory)
  const float* scale_b;
  const float* sfa;               ///< Scales::block: ceil(K/128) x M floats, M contiguous
  const float* sfb;               ///< Scales::block: ceil(N/128) x ceil(K/128) floats
  stream_k::Split split;          ///< the plan's split, its partials and counters attached
  float* reduce;                  ///< Plan::reduce_segments > 0: the s fp32 M x N slices the pieces store (family/reduce.cuh)
  int reduce_segments;            ///< Plan::reduce_segments: s, or 0 (the split's pieces meet in the fixup)
};

/// The element type of A and B for a configuration.
template <class C>
using elem_t = std::conditional_t<C::spec.elem == Elem::bf16, __nv_bfloat16, __nv_fp8_e4m3>;

/// The block's shared memory (step 23's, sized by C): the ring's stages, the epilogue boxes (unused by a
/// swapped tile, which stores from registers), the ring's barriers, the ping-pong order barriers and
/// the fixup's last-piece flags.
template <class C>
struct SharedStorage {
  alignas(1024) elem_t<C> a[C::STAGES][C::BM * C::BK];  // BM x 128 bytes per stage: stays 1024-byte aligned
  alignas(1024) elem_t<C> b[C::STAGES][C::BN * C::BK];  // BN x 128 bytes: a multiple of 1024 for every BN
  alignas(1024) __nv_bfloat16 c[kConsumers][kEpiBufs][kEpiBox * C::EPI_N];  // 64 x EPI_N: 8 KB at 64, swizzled by its row
  uint64_t full[C::STAGES];    // producer -> consumer: the stage's bytes have landed
  uint64_t empty[C::STAGES];   // consumer -> producer: the stage's wgmmas are done reading it
  uint64_t order[kConsumers];  // ping-pong: consumer c may start its next item (step 22)
  int last_piece[kConsumers];  // fixup: this consumer counted its tile's last piece (issuer -> warpgroup)
  /// scales_in_ring: the stage's K block of `sfa` (swapped BN floats, one per column of C^T; else BM, one
  /// per row of C) and then its `sfb` (each slab's, or the tile's one), landed when the full barrier
  /// completes (config.hpp's ring_scale_floats; producer.cuh's copy_ring_scales)
  alignas(16) float scales[C::STAGES][ring_scale_floats(C::spec)];
};

/// The first row of slab i of this consumer's part of a tile: slab i (ping-pong, every slab is its
/// own) or slab me * SLABS + i (cooperative, half the slabs each).
template <class C>
__device__ __forceinline__ int slab_row(int i, int me) { return (C::PINGPONG ? i : me * C::SLABS + i) * kWgmmaM; }

}  // namespace gemm::family
