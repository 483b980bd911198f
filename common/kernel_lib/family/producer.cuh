// The producer (step 13, persistent from step 15, stream-K pieces from step 23): one thread of
// warpgroup 0 walks the block's items in order, the data-parallel tiles and then its stream-K or
// split-K pieces (and warp 1, where block scales travel in the ring, step 40), and for each K tile
// waits for the stage to be empty, arms its full barrier with the bytes to expect and issues the two TMA
// loads. The ring position runs on across items, so the next item's loads start as soon as stages free up.
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include "../pipeline.cuh"
#include "../ptx/cp_async.cuh"
#include "../ptx/cluster.cuh"
#include "../ptx/mbarrier.cuh"
#include "../ptx/tma.cuh"
#include "../schedule.hpp"
#include "params.cuh"

namespace gemm::family {

/// This block's place in the grid. Without a cluster, a unit is a block; with one (step 17), a unit is
/// a cluster: the plan's items are cluster tiles (CLUSTER_M x CLUSTER_N tiles), the cluster takes
/// them as one block would, and its block of rank r computes tile r of each. Cluster dims are
/// (CLUSTER, 1, 1), so the blocks of cluster u are CLUSTER * u .. + CLUSTER - 1 and rank = blockIdx.x % CLUSTER.
template <class C>
__device__ __forceinline__ int unit() { return int(blockIdx.x) / C::CLUSTER; }
template <class C>
__device__ __forceinline__ int units() { return int(gridDim.x) / C::CLUSTER; }
template <class C>
__device__ __forceinline__ int rank() { return int(blockIdx.x) % C::CLUSTER; }

/// The tile of item t (grouped order, step 15; with a cluster, tile rank() of cluster tile t) on the
/// plan's grid: its first row and column. A cluster tile may reach past the grid (tiles_m odd, say):
/// that block's tile lies past M, its own loads are zero-filled and its stores clipped away.
struct TileOrigin {
  int m0, n0, tile_n;
};
template <class C>
__device__ __forceinline__ TileOrigin tile_origin(const Params& p, int t) {
  schedule::TileCoord tile;
  if constexpr (C::CLUSTER == 1) tile = schedule::grouped(t, p.tiles_m, p.tiles_n, kGroupM);
  else tile = schedule::cluster_grouped(t, rank<C>(), p.tiles_m, p.tiles_n, C::CLUSTER_M, C::CLUSTER_N, kGroupM / C::CLUSTER_M);
  return {tile.m * C::BM, tile.n * C::BN, tile.n};
}

/// Calls f(piece) for every item of this unit, in the one order all roles walk: the data-parallel
/// tiles t = unit, + units, ... whole, then the unit's range of the split (stream_k::Walk).
template <class C, class F>
__device__ __forceinline__ void for_each_item(const Params& p, F&& f) {
  for (int t = unit<C>(); t < p.split.dp_tiles; t += units<C>()) f(stream_k::Piece{t, 0, p.k_tiles});
  stream_k::Walk walk(p.split, p.k_tiles, unit<C>());
  for (stream_k::Piece pc; walk.next(pc);) f(pc);
}

/// The producer thread's loop: every K tile of every item of the block into the ring. With a cluster
/// of two along M the pair's tiles share B's: each block loads its own A box and half of B's rows,
/// multicast into both blocks' stage (along N: A's, the same way); each full barrier still expects
/// STAGE_BYTES, its own boxes and its partners' parts (step 17). A 2 x 2 cluster does both: the block
/// at (rm, rn) loads part rn of A's box for the blocks of its tile row (same rm) and part rm of B's for
/// those of its tile column (same rn), so each block issues half of each box's rows.
/// A measurement build's switch (make order-variant, build/bin/variant_tune_shared_first): with a pair
/// along M, issue B's multicast half before this block's own A box, the order cuBLAS's kernel of the same
/// configuration issues them in (docs/notebook/hopper.md, "The H200's table completed"). A pair along N
/// already issues its shared half (A's) first. Off in every step and in build/bin/tune.
#ifndef GEMM_FAMILY_SHARED_HALF_FIRST
#define GEMM_FAMILY_SHARED_HALF_FIRST 0
#endif

/// Where the block scales travel in the ring (config.hpp's scales_in_ring): lane j of warp 1 (beside
/// thread 0, which issues the boxes) copies floats j, j + 32, ... of the scales for K block kt of the
/// tile at `o` into stage st with 4-byte cp.async (no alignment rule, where a TMA box must start 16
/// bytes into global memory): the tile's `sfa` values (C's M apart per K block; swapped, its BN columns
/// are A's rows, step 40; else its BM rows, step 42), then its `sfb` values (swapped, each 64-row slab's;
/// else the tile's one, BN = 128; a row of B is a column of C: the kernel's rows swapped, its columns
/// not), zero past the matrix (src-size 0). Then
/// cp.async.mbarrier.arrive.noinc on the stage's full barrier: an arrive that fires when the lane's
/// copies have landed, one of the barrier's 1 + 32 expected arrivals (PTX ISA,
/// "cp.async.mbarrier.arrive"), so no producer thread waits for a scale.
template <class C>
__device__ __forceinline__ void copy_ring_scales(SharedStorage<C>& s, const Params& p, const TileOrigin& o, int kt, int st) {
  constexpr bool SWAP = C::spec.swap;
  constexpr int A_SCALES = SWAP ? C::BN : C::BM, B_SCALES = SWAP ? C::BM / kWgmmaM : 1;
  static_assert(B_SCALES <= 4, "ring_scale_floats keeps 4 floats for the tile's sfb");
#pragma unroll
  for (int i = int(threadIdx.x % 32); i < A_SCALES + B_SCALES; i += 32) {
    const float* src = p.sfa;  // (read nothing: bytes = 0 writes the zero)
    int bytes = 0;
    const int a_row = (SWAP ? o.n0 : o.m0) + i, a_rows = SWAP ? p.N : p.M;  // a row of A (C's M of them)
    const int b_row = SWAP ? o.m0 + (i - A_SCALES) * kWgmmaM : o.n0;  // a row of B: the slab's first, or the tile's
    if (i < A_SCALES && a_row < a_rows) src = p.sfa + int64_t(kt) * a_rows + a_row, bytes = 4;
    if (i >= A_SCALES && b_row < (SWAP ? p.M : p.N)) src = p.sfb + int64_t(b_row / 128) * p.k_tiles + kt, bytes = 4;
    ptx::cp_async_4(ptx::smem_addr(&s.scales[st][i]), src, bytes);
  }
  ptx::cp_async_mbarrier_arrive_noinc(&s.full[st]);
}

template <class C>
__device__ __forceinline__ void produce(SharedStorage<C>& s, const Params& p) {
  constexpr int A_ROWS = C::BM / C::CLUSTER_N, B_ROWS = C::BN / C::CLUSTER_M;  // the boxes this block loads
  const int r = rank<C>(), rm = r % C::CLUSTER_M, rn = r / C::CLUSTER_M;  // cluster_grouped's placement
  uint16_t row_mask = 0, col_mask = 0;  // the blocks sharing this block's A rows, its B columns
  for (int j = 0; j < C::CLUSTER_N; ++j) row_mask |= uint16_t(1u << (rm + C::CLUSTER_M * j));
  for (int i = 0; i < C::CLUSTER_M; ++i) col_mask |= uint16_t(1u << (i + C::CLUSTER_M * rn));
  pipe::PipeState<C::STAGES> ring;  // runs on across items
  for_each_item<C>(p, [&](const stream_k::Piece& pc) {
    const TileOrigin o = tile_origin<C>(p, pc.t);
    for (int kt = pc.kt0; kt < pc.kt1; ++kt, ring.advance()) {
      const int st = ring.stage;
      ptx::mbarrier_wait_parity(&s.empty[st], ring.phase ^ 1);
      if constexpr (scales_in_ring(C::spec)) {  // warp 1's lanes copy the scales, thread 0 issues the boxes
        if (copies_ring_scales(C::spec, threadIdx.x)) copy_ring_scales<C>(s, p, o, kt, st);
        if (!issues_tma(threadIdx.x)) continue;  // (config.hpp: the producer's roles)
      }
      ptx::mbarrier_arrive_expect_tx(&s.full[st], C::STAGE_BYTES);  // whole boxes: TMA counts the zero fill
      if constexpr (GEMM_FAMILY_SHARED_HALF_FIRST && C::CLUSTER_M == 2 && C::CLUSTER_N == 1) {
        ptx::tma_load_2d_multicast(s.b[st] + rm * B_ROWS * C::BK, &p.tmap_b, kt * C::BK, o.n0 + rm * B_ROWS, &s.full[st], col_mask);
        ptx::tma_load_2d(s.a[st], &p.tmap_a, kt * C::BK, o.m0, &s.full[st]);
        continue;
      }
      if constexpr (C::CLUSTER_N == 1) ptx::tma_load_2d(s.a[st], &p.tmap_a, kt * C::BK, o.m0, &s.full[st]);
      else ptx::tma_load_2d_multicast(s.a[st] + rn * A_ROWS * C::BK, &p.tmap_a, kt * C::BK, o.m0 + rn * A_ROWS, &s.full[st], row_mask);
      if constexpr (C::CLUSTER_M == 1) ptx::tma_load_2d(s.b[st], &p.tmap_b, kt * C::BK, o.n0, &s.full[st]);
      else ptx::tma_load_2d_multicast(s.b[st] + rm * B_ROWS * C::BK, &p.tmap_b, kt * C::BK, o.n0 + rm * B_ROWS, &s.full[st], col_mask);
    }
  });
}

/// A consumer warp releases stage st: in its own block, and with a cluster in every block of it (its
/// partners' producers multicast into this block's stage too, so they must wait for these readers; in a
/// 2 x 2 cluster the diagonal block shares nothing with this one and waits for it all the same, which
/// keeps one arrival count for every cluster shape).
template <class C>
__device__ __forceinline__ void release(SharedStorage<C>& s, int st) {
  if constexpr (C::CLUSTER == 1) ptx::mbarrier_arrive(&s.empty[st]);
  else
    for (int cta = 0; cta < C::CLUSTER; ++cta) ptx::mbarrier_arrive_cluster(&s.empty[st], uint32_t(cta));
}

}  // namespace gemm::family
