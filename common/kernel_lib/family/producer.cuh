// The producer (step 13, persistent from step 15, stream-K pieces from step 23): one thread of
// warpgroup 0 walks the block's items in order, the data-parallel tiles and then its stream-K or
// split-K pieces, and for each K tile of each item waits for the stage to be empty, arms its full
// barrier with the bytes to expect and issues the two TMA loads. The ring position runs on across
// items, so the next item's loads start as soon as stages free up.
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include "../pipeline.cuh"
#include "../ptx/mbarrier.cuh"
#include "../ptx/tma.cuh"
#include "../schedule.hpp"
#include "params.cuh"

namespace gemm::family {

/// The tile of item t (grouped order, step 15) on the plan's grid: its first row and column.
struct TileOrigin {
  int m0, n0, tile_n;
};
template <class C>
__device__ __forceinline__ TileOrigin tile_origin(const Params& p, int t) {
  const schedule::TileCoord tile = schedule::grouped(t, p.tiles_m, p.tiles_n, kGroupM);
  return {tile.m * C::BM, tile.n * C::BN, tile.n};
}

/// Calls f(piece) for every item of this block, in the one order all roles walk: the data-parallel
/// tiles t = blockIdx.x, + gridDim.x, ... whole, then the block's range of the split (stream_k::Walk).
template <class F>
__device__ __forceinline__ void for_each_item(const Params& p, F&& f) {
  for (int t = blockIdx.x; t < p.split.dp_tiles; t += gridDim.x) f(stream_k::Piece{t, 0, p.k_tiles});
  stream_k::Walk walk(p.split, p.k_tiles);
  for (stream_k::Piece pc; walk.next(pc);) f(pc);
}

/// The producer thread's loop: every K tile of every item of the block into the ring.
template <class C>
__device__ __forceinline__ void produce(SharedStorage<C>& s, const Params& p) {
  pipe::PipeState<C::STAGES> ring;  // runs on across items
  for_each_item(p, [&](const stream_k::Piece& pc) {
    const TileOrigin o = tile_origin<C>(p, pc.t);
    for (int kt = pc.kt0; kt < pc.kt1; ++kt, ring.advance()) {
      const int st = ring.stage;
      ptx::mbarrier_wait_parity(&s.empty[st], ring.phase ^ 1);
      ptx::mbarrier_arrive_expect_tx(&s.full[st], C::STAGE_BYTES);  // whole boxes: TMA counts the zero fill
      ptx::tma_load_2d(s.a[st], &p.tmap_a, kt * C::BK, o.m0, &s.full[st]);
      ptx::tma_load_2d(s.b[st], &p.tmap_b, kt * C::BK, o.n0, &s.full[st]);
    }
  });
}

}  // namespace gemm::family
