// The producer (step 13, persistent from step 15, stream-K pieces from step 23): one thread of
// warpgroup 0 walks the block's items in order, the data-parallel tiles and then its stream-K or
// split-K pieces (its whole warp where block scales travel in the ring, step 40), and for each K tile
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
/// Measurement builds of step 40 (make fp8-variants): how the producer warp's lanes bring a stage's
/// scales in. 0: registers, kScaleLag stages (RingScales::load, store); 1: 4-byte cp.async and
/// cp.async.mbarrier.arrive.noinc, the lane's arrive firing when its copies land (PTX ISA,
/// "cp.async.mbarrier.arrive"); 2: cp.async, one group a stage, wait_group STAGES - 2 and a plain arrive
/// on the stage STAGES - 2 back.
#ifndef GEMM_FAMILY_RING_SCALES_COPY
#define GEMM_FAMILY_RING_SCALES_COPY 0
#endif
#ifndef GEMM_FAMILY_SHARED_HALF_FIRST
#define GEMM_FAMILY_SHARED_HALF_FIRST 0
#endif

/// Where the block scales travel in the ring (config.hpp's scales_in_ring): lane j of the producer warp
/// holds floats j and j + 32, ... of a stage's scales for K block kt of the tile at `o`, loaded from
/// global memory into registers (no alignment rule, where a TMA box of `sfa` would need M % 4 == 0): the
/// tile's BN columns of `sfa` (C's M = the kernel's N apart per K block), then each 64-row slab's
/// `sfb`, zero past the matrix. store() writes them into the stage kScaleLag stages later.
template <class C>
struct RingScales {
  static constexpr int SLAB_SCALES = C::BM / kWgmmaM;
  static_assert(!scales_in_ring(C::spec) || SLAB_SCALES <= 4, "ring_scale_floats keeps 4 floats for the slabs' sfb");
  static constexpr int PER_LANE = (C::BN + SLAB_SCALES + 31) / 32;  ///< floats a lane holds a stage
  float v[PER_LANE];
  __device__ __forceinline__ void load(const Params& p, const TileOrigin& o, int kt) {
    const int lane = int(threadIdx.x % 32);
#pragma unroll
    for (int u = 0; u < PER_LANE; ++u) {
      const int i = lane + 32 * u;
      v[u] = 0.0f;
      if (i < C::BN) {
        const int col = o.n0 + i;  // a row of A
        if (col < p.N) v[u] = __ldg(p.sfa + int64_t(kt) * p.N + col);
      } else if (i < C::BN + SLAB_SCALES) {
        const int row = o.m0 + (i - C::BN) * kWgmmaM;  // a row of B, the slab's first
        if (row < p.M) v[u] = __ldg(p.sfb + int64_t(row / 128) * p.k_tiles + kt);
      }
    }
  }
  /// GEMM_FAMILY_RING_SCALES_COPY builds: the lane's floats of K block kt copied straight into stage st
  /// by 4-byte cp.async (src-size 0 writes the zero past the matrix), no register in between.
  static __device__ __forceinline__ void copy(SharedStorage<C>& s, const Params& p, const TileOrigin& o, int kt, int st) {
    const int lane = int(threadIdx.x % 32);
#pragma unroll
    for (int u = 0; u < PER_LANE; ++u) {
      const int i = lane + 32 * u;
      const float* src = p.sfa;
      int bytes = 0;
      if (i < C::BN) {
        const int col = o.n0 + i;
        if (col < p.N) src = p.sfa + int64_t(kt) * p.N + col, bytes = 4;
      } else if (i < C::BN + SLAB_SCALES) {
        const int row = o.m0 + (i - C::BN) * kWgmmaM;
        if (row < p.M) src = p.sfb + int64_t(row / 128) * p.k_tiles + kt, bytes = 4;
      } else {
        continue;
      }
      ptx::cp_async_4(ptx::smem_addr(&s.scales[st][i]), src, bytes);
    }
  }
  /// Stores the lane's floats into stage st and arrives on its full barrier: an ordinary store, then a
  /// release (the consumers' wait on the barrier orders their reads after it).
  __device__ __forceinline__ void store(SharedStorage<C>& s, int st) const {
    const int lane = int(threadIdx.x % 32);
#pragma unroll
    for (int u = 0; u < PER_LANE; ++u)
      if (lane + 32 * u < C::BN + SLAB_SCALES) s.scales[st][lane + 32 * u] = v[u];
    ptx::mbarrier_arrive(&s.full[st]);
  }
};

/// Stages between a lane's load of a stage's scales and its store into the stage (with its arrive on
/// the stage's full barrier): kScaleLag stages later, so the loads' latency passes under the next
/// stages' issue instead of stalling the producer. A consumer waiting for stage j then needs the
/// producer to reach stage j + kScaleLag, which it can while the ring holds kScaleLag + 2 stages
/// (two-set consumers keep one stage past the one they wait for). Two, not more: the producer warp
/// runs on kProducerRegs (40) registers, and at BN = 64 a lane holds 3 floats a stage; four stages of
/// them spilled. Each held stage is a RingScales of its own, picked by the unrolled `u == slot` test:
/// a dynamic index into an array of registers would put the array in local memory. (A 4-byte cp.async
/// into the stage needs no registers and is as right; step 40's first builds used it, with lane 0 alone
/// freeing a stage, and with every lane freeing it it has not been tried: docs/notebook/fp8.md.)
inline constexpr int kScaleLag = 2;

template <class C>
__device__ __forceinline__ void produce(SharedStorage<C>& s, const Params& p) {
  constexpr int A_ROWS = C::BM / C::CLUSTER_N, B_ROWS = C::BN / C::CLUSTER_M;  // the boxes this block loads
  const int r = rank<C>(), rm = r % C::CLUSTER_M, rn = r / C::CLUSTER_M;  // cluster_grouped's placement
  uint16_t row_mask = 0, col_mask = 0;  // the blocks sharing this block's A rows, its B columns
  for (int j = 0; j < C::CLUSTER_N; ++j) row_mask |= uint16_t(1u << (rm + C::CLUSTER_M * j));
  for (int i = 0; i < C::CLUSTER_M; ++i) col_mask |= uint16_t(1u << (i + C::CLUSTER_M * rn));
  pipe::PipeState<C::STAGES> ring;  // runs on across items
  RingScales<C> held[kScaleLag];    // scales_in_ring: this lane's scales of the last kScaleLag stages, not yet stored
  int loaded = 0;                   // stages whose scales this lane loaded
  static_assert(!scales_in_ring(C::spec) || kScaleLag + 2 <= C::STAGES, "the ring must hold the scales' lag");
  for_each_item<C>(p, [&](const stream_k::Piece& pc) {
    const TileOrigin o = tile_origin<C>(p, pc.t);
    for (int kt = pc.kt0; kt < pc.kt1; ++kt, ring.advance()) {
      const int st = ring.stage;
      ptx::mbarrier_wait_parity(&s.empty[st], ring.phase ^ 1);
      if constexpr (scales_in_ring(C::spec) && GEMM_FAMILY_RING_SCALES_COPY == 3) {  // warp 1 copies, thread 0 issues
        if (threadIdx.x >= 32) {
          RingScales<C>::copy(s, p, o, kt, st);
          asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(ptx::smem_addr(&s.full[st])) : "memory");
          continue;
        }
      } else if constexpr (scales_in_ring(C::spec) && GEMM_FAMILY_RING_SCALES_COPY == 1) {
        RingScales<C>::copy(s, p, o, kt, st);
        asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(ptx::smem_addr(&s.full[st])) : "memory");
        if (threadIdx.x % 32 != 0) continue;
      } else if constexpr (scales_in_ring(C::spec) && GEMM_FAMILY_RING_SCALES_COPY == 2) {
        constexpr int LAG = C::STAGES - 2;
        RingScales<C>::copy(s, p, o, kt, st);
        ptx::cp_async_commit();
        ptx::cp_async_wait<LAG>();
        if (loaded >= LAG) ptx::mbarrier_arrive(&s.full[(st + C::STAGES - LAG) % C::STAGES]);
        ++loaded;
        if (threadIdx.x % 32 != 0) continue;
      } else if constexpr (scales_in_ring(C::spec)) {  // the whole warp is here: its lanes carry the scales
        const int slot = loaded % kScaleLag;
#pragma unroll
        for (int u = 0; u < kScaleLag; ++u)  // unrolled: each slot keeps registers of its own
          if (u == slot) {  // the stage of kScaleLag stages ago gets its scales, and this one's are loaded
            if (loaded >= kScaleLag) held[u].store(s, (st + C::STAGES - kScaleLag) % C::STAGES);
            held[u].load(p, o, kt);
          }
        ++loaded;
        if (threadIdx.x % 32 != 0) continue;  // lane 0 issues the boxes
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
  if constexpr (scales_in_ring(C::spec) && GEMM_FAMILY_RING_SCALES_COPY == 2) {
    constexpr int LAG = C::STAGES - 2;
    ptx::cp_async_wait<0>();
    for (int i = loaded < LAG ? loaded : LAG; i >= 1; --i) ptx::mbarrier_arrive(&s.full[(ring.stage + C::STAGES - i) % C::STAGES]);
  } else if constexpr (scales_in_ring(C::spec) && GEMM_FAMILY_RING_SCALES_COPY == 0) {  // the last kScaleLag stages (or fewer) get theirs, oldest first
    for (int i = loaded < kScaleLag ? loaded : kScaleLag; i >= 1; --i) {
      const int slot = (loaded - i) % kScaleLag;
#pragma unroll
      for (int u = 0; u < kScaleLag; ++u)
        if (u == slot) held[u].store(s, (ring.stage + C::STAGES - i) % C::STAGES);
    }
  }
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
