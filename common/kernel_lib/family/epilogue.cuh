// After an item's K loop (steps 16, 18, 21, 23, 24, 30): the fixup of a split piece, the per-tensor
// dequantization, and the stores. On the ping-pong path the other consumer's K loop runs meanwhile.
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include "../ptx/barrier.cuh"
#include "../ptx/epilogue.cuh"
#include "../ptx/fence.cuh"
#include "../ptx/tma.cuh"
#include "producer.cuh"

namespace gemm::family {

/// The fixup of a split piece (step 21's, per consumer when cooperative, step 33): store this
/// consumer's part of the piece in the unit's slot, count it; the consumer that counts the last piece
/// of the tile sums them all, in unit order, whichever arrived last (the same bits on every run), into
/// acc. Returns whether this consumer stores the tile. Slots: 2P of slot_floats fp32 (P units: blocks,
/// or clusters), [slot][rank][slab][FRAG/4][128 threads] float4, slot 2c + 1 for unit c's piece at the
/// tile's K tile 0, else 2c; counters_per_tile counters per split item, one per block of the cluster
/// and consumer (cooperative) or per block (ping-pong).
template <class C>
__device__ __forceinline__ bool fixup(SharedStorage<C>& s, const Params& p, const stream_k::Piece& pc, int me,
                                      float (&acc)[C::SLABS][C::FRAG]) {
  const stream_k::Split& split = p.split;
  const int64_t x0 = int64_t(pc.t - split.dp_tiles) * p.k_tiles;  // the tile's first K tile in iters
  const int c_first = split.block_of(x0), c_last = split.block_of(x0 + p.k_tiles - 1);
  const int t128 = threadIdx.x % 128;
  const int64_t mine = int64_t(rank<C>()) * (C::BM * C::BN / 4) + (C::PINGPONG ? 0 : me * (C::SLABS * C::FRAG / 4 * 128)) + t128;
  auto piece = [&](int c) {
    return split.partials + int64_t(c == c_first ? 2 * c + 1 : 2 * c) * (slot_floats(C::spec) / 4) + mine;
  };
  float4* slot = piece(unit<C>());
#pragma unroll
  for (int i = 0; i < C::SLABS; ++i)
#pragma unroll
    for (int q = 0; q < C::FRAG / 4; ++q)
      __stcg(slot + (i * C::FRAG / 4 + q) * 128, make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]));
  __threadfence();  // the piece is visible to every block before it is counted
  const int wg = 1 + me;
  ptx::named_barrier_sync(wg, 128);
  if (t128 == 0) {
    int* count = &split.arrivals[(pc.t - split.dp_tiles) * C::COUNTERS + rank<C>() * (C::PINGPONG ? 1 : kConsumers) + (C::PINGPONG ? 0 : me)];
    const bool last = atomicAdd(count, 1) == c_last - c_first;
    if (last) *count = 0;  // every piece has arrived: reset for the next launch
    s.last_piece[me] = last;
  }
  ptx::named_barrier_sync(wg, 128);
  if (!s.last_piece[me]) return false;
  __threadfence();
#pragma unroll
  for (int i = 0; i < C::SLABS; ++i)
#pragma unroll
    for (int r = 0; r < C::FRAG; ++r) acc[i][r] = 0.0f;
  // Unrolled FIXUP_BATCH times: full batches load their pieces together (the adds stay in block order).
#pragma unroll C::FIXUP_BATCH
  for (int c = c_first; c <= c_last; ++c) {
    const float4* src = piece(c);
#pragma unroll
    for (int i = 0; i < C::SLABS; ++i)
#pragma unroll
      for (int q = 0; q < C::FRAG / 4; ++q) {
        const float4 v = __ldcg(src + (i * C::FRAG / 4 + q) * 128);
        acc[i][4 * q] += v.x, acc[i][4 * q + 1] += v.y, acc[i][4 * q + 2] += v.z, acc[i][4 * q + 3] += v.w;
      }
  }
  return true;
}

/// The item's tile (this consumer's slabs of it) to C: fixup first where it is a split piece (or, with a
/// parallel reduction, the piece's sums to its slice of the workspace and nothing more), then the
/// per-tensor dequantization (scale_ab = scale_a * scale_b), then the stores: transposed from registers (swapped, step 24), from
/// registers where C's rows are not TMA-addressable, else through swizzled 64 x EPI_N boxes (written
/// with 4-byte stores, or stmatrix, step 20) and TMA stores with the L2 evict-first policy
/// `evict_first` that run on into the next item (steps 16 and 18). `boxes_stored` counts this
/// consumer's boxes so far: the two buffers alternate across items, not from buffer 0 at each item.
template <class C>
__device__ __forceinline__ void finish(SharedStorage<C>& s, const Params& p, const stream_k::Piece& pc,
                                       const TileOrigin& o, int me, uint64_t evict_first, float scale_ab,
                                       float (&acc)[C::SLABS][C::FRAG], int& boxes_stored) {
  const bool split = pc.kt0 != 0 || pc.kt1 != p.k_tiles;
  if constexpr (C::spec.parallel_reduce) {
    if (split && p.reduce_segments > 0) {  // this piece's sums to its slice; family/reduce.cuh sums them into C
      float* slice = p.reduce + int64_t(unit<C>() % p.reduce_segments) * p.M * p.N;
#pragma unroll
      for (int i = 0; i < C::SLABS; ++i)
        ptx::store_d_fragment_f32(acc[i], slice, p.M, p.N, int64_t(o.m0) + slab_row<C>(i, me), o.n0);
      return;
    }
  }
  if (split && !fixup<C>(s, p, pc, me, acc)) return;
  if constexpr (C::spec.scales == Scales::per_tensor) {  // once, on the whole sum: scaling is linear (step 30)
#pragma unroll
    for (int i = 0; i < C::SLABS; ++i)
#pragma unroll
      for (int r = 0; r < C::FRAG; ++r) acc[i][r] *= scale_ab;
  }
  if constexpr (C::spec.swap) {  // acc is a tile of C^T: slab i holds C's columns m0 + 64i.., its rows n0..
    bool boxed = false;
    if constexpr (C::spec.stmatrix) boxed = p.tma_epilogue;
    if (boxed) {  // transposed by stmatrix into boxes of C's rows, stored by TMA
      const bool issuer = threadIdx.x % 128 == 0;
      const int wg = 1 + me;
      constexpr int kBoxes = C::SLABS * (C::BN / kSwapEpiRows);
      const int first = kBoxes % kEpiBufs == 0 ? 0 : boxes_stored;
#pragma unroll
      for (int i = 0; i < C::SLABS; ++i)
#pragma unroll
        for (int jj = 0; jj < C::BN / kSwapEpiRows; ++jj) {
          __nv_bfloat16* buf = s.c[me][(first + i * (C::BN / kSwapEpiRows) + jj) % kEpiBufs];
          if (issuer) ptx::tma_store_wait_read<kEpiBufs - 1>();  // as below
          ptx::named_barrier_sync(wg, 128);
          if constexpr (C::spec.stmatrix) ptx::store_dt_box16_sw128_stmatrix(acc[i], jj, buf);
          ptx::fence_proxy_async_shared();
          ptx::named_barrier_sync(wg, 128);
          if (issuer) {  // C's columns o.m0 + the slab's rows of C^T, its rows o.n0 + 16 jj (clipped at M, N)
            ptx::tma_store_2d_hint(&p.tmap_c, buf, o.m0 + slab_row<C>(i, me), o.n0 + jj * kSwapEpiRows, evict_first);
            ptx::tma_store_commit();
          }
        }
      if constexpr (kBoxes % kEpiBufs != 0) boxes_stored += kBoxes;
    } else {
#pragma unroll
      for (int i = 0; i < C::SLABS; ++i)  // C's M x N is the kernel's N x M
        ptx::store_dt_fragment_bf16(acc[i], p.C, p.N, p.M, int64_t(o.m0) + slab_row<C>(i, me), o.n0);
    }
  } else if (!p.tma_epilogue) {
#pragma unroll
    for (int i = 0; i < C::SLABS; ++i)
      ptx::store_d_fragment_bf16(acc[i], p.C, p.M, p.N, int64_t(o.m0) + slab_row<C>(i, me), o.n0);
  } else {
    const bool issuer = threadIdx.x % 128 == 0;  // issues, commits and waits for this consumer's TMA stores
    const int wg = 1 + me;
    // With an odd number of boxes a tile (64 x 64 ping-pong: one; 64 x 96: three), starting each item at
    // buffer 0 would write the buffer whose store, the last one, the wait below still lets run.
    constexpr int kBoxes = C::SLABS * (C::BN / C::EPI_N);
    const int first = kBoxes % kEpiBufs == 0 ? 0 : boxes_stored;
#pragma unroll
    for (int i = 0; i < C::SLABS; ++i)
#pragma unroll
      for (int box = 0; box < C::BN / C::EPI_N; ++box) {
        __nv_bfloat16* buf = s.c[me][(first + i * (C::BN / C::EPI_N) + box) % kEpiBufs];
        if (issuer) ptx::tma_store_wait_read<kEpiBufs - 1>();  // the store that last read buf is done with it ...
        ptx::named_barrier_sync(wg, 128);                       // ... and the whole warpgroup knows it
        if constexpr (C::spec.stmatrix) ptx::store_d_box_sw128_stmatrix(acc[i], box, buf);
        else if constexpr (C::EPI_N == 64) ptx::store_d_box_sw128(acc[i], box, buf);
        else ptx::store_d_box_narrow<C::EPI_N>(acc[i], box, buf);
        ptx::fence_proxy_async_shared();   // these generic-proxy writes, before the async-proxy TMA reads them
        ptx::named_barrier_sync(wg, 128);  // every thread's part of the box is written
        if (issuer) {
          ptx::tma_store_2d_hint(&p.tmap_c, buf, o.n0 + box * C::EPI_N, o.m0 + slab_row<C>(i, me), evict_first);  // clipped at M, N
          ptx::tma_store_commit();
        }
      }
    if constexpr (kBoxes % kEpiBufs != 0) boxes_stored += kBoxes;
  }
}

}  // namespace gemm::family
