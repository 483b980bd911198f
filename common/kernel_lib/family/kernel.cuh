// The family kernel (steps 24 on): step 23's persistent, warp-specialized, stream-K kernel assembled
// from the parts the ladder taught, for a configuration C (family/config.hpp). Warpgroup 0 produces
// (family/producer.cuh), warpgroups 1 and 2 consume: ping-pong (step 22: items alternate between them,
// each skips the other's K tiles in the ring, order barriers hand the tensor cores over) or cooperative
// (steps 14 and 33: both take every item, one m64 slab each). Each item is a K loop
// (family/mainloop*.cuh) and its fixup and stores (family/epilogue.cuh).
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include "../ptx/cluster.cuh"
#include "../ptx/mbarrier.cuh"
#include "../ptx/setmaxnreg.cuh"
#include "../ptx/smem.cuh"
#include "epilogue.cuh"
#include "mainloop.cuh"
#include "mainloop_two_sets.cuh"

namespace gemm::family {

/// One consumer's walk over the block's items (me: 0 or 1), calling compute(piece) for each of its own.
/// Ping-pong (step 23): the data-parallel tiles alternate, tile j = (t - unit) / P being
/// consumer j % 2's, in a loop of their own (the stream-K walk's 64-bit divisions have no
/// uniform-datapath form); the split pieces continue the alternation, the ring restarting from the
/// position after all data-parallel K tiles. Cooperative: every item. With the tensor cores holding
/// the sums, in for_each_item's order but in one loop, so that compute (the K loop and the fixup) is
/// inlined once: with a loop per kind of item ptxas (nvcc 13.0) serializes every wgmma of that kernel
/// (C7515), though either loop alone compiles clean; the promoted K loops keep the two loops, which
/// they compile clean in and where one loop costs spills (docs/notebook/hopper.md, "C7515 on the
/// cooperative entries").
template <class C, class F>
__device__ __forceinline__ void consumer_walk(const Params& p, ring_t<C>& ring, int me, F&& compute) {
  if constexpr (!C::PINGPONG && C::spec.accum != Accum::tensor_core) {
    for_each_item<C>(p, compute);
  } else if constexpr (!C::PINGPONG) {
    stream_k::Walk walk(p.split, p.k_tiles, unit<C>());
    int t = unit<C>();
    for (stream_k::Piece pc;;) {
      if (t < p.split.dp_tiles) pc = stream_k::Piece{t, 0, p.k_tiles}, t += units<C>();
      else if (!walk.next(pc)) break;
      compute(pc);
    }
  } else {
    const stream_k::Split& split = p.split;
    const int u = unit<C>(), P = units<C>();
    if (me == 1) ring.advance_by(p.k_tiles);  // tile j = 0 is consumer 0's
    for (int t = u + me * P; t < split.dp_tiles; t += kConsumers * P) {
      compute(stream_k::Piece{t, 0, p.k_tiles});
      ring.advance_by(p.k_tiles);  // past the other consumer's next tile
    }
    if (split.sk_tiles > 0) {
      const int dp_items = split.dp_tiles > u ? (split.dp_tiles - 1 - u) / P + 1 : 0;
      const int64_t before = int64_t(dp_items) * p.k_tiles;  // K tiles the producer loaded before the first piece
      ring.stage = int(before % C::STAGES);
      ring.phase = uint32_t((before / C::STAGES) & 1);
      stream_k::Walk walk(split, p.k_tiles, u);
      int j = dp_items;
      for (stream_k::Piece pc; walk.next(pc); ++j) {
        if (j % kConsumers == me) compute(pc);
        else ring.advance_by(pc.kt1 - pc.kt0);  // the other consumer's piece
      }
    }
  }
}

/// Consumer me's whole life: its items' K loops, fixups and stores.
template <class C>
__device__ __forceinline__ void consume(SharedStorage<C>& s, const Params& p, int me) {
  const uint64_t evict_first = ptx::l2_policy_evict_first();  // C's stores: the first lines L2 gives up
  float scale_ab = 1.0f;  // per-tensor scales: D = scale_a * scale_b * (A B^T), loaded once (step 30)
  if constexpr (C::spec.scales == Scales::per_tensor) scale_ab = __ldg(p.scale_a) * __ldg(p.scale_b);
  ring_t<C> ring;  // the producer's walk (ping-pong: less the other consumer's items)
  // The sums: zeroed once where the tensor cores hold them (every item's first wgmma overwrites them,
  // scale-d = 0), per item where they are promoted.
  float acc[C::SLABS][C::FRAG] = {};
  float tc[C::spec.accum == Accum::two_sets ? 2 : 1][C::spec.accum == Accum::tensor_core ? 1 : C::FRAG] = {};
  int mine = 0;  // this consumer's items so far (one order-barrier phase each)
  int boxes_stored = 0;  // this consumer's epilogue boxes so far (finish: which buffer is next)
  consumer_walk<C>(p, ring, me, [&](const stream_k::Piece& pc) {
    const TileOrigin o = tile_origin<C>(p, pc.t);
    if constexpr (C::PINGPONG) {
      // The order barriers (step 22): item j waits for the other consumer's item j - 1 to pass its last
      // full wait (consumer 0's first item has none before it). Each completes one phase per item.
      if (me == 1) ptx::mbarrier_wait_parity(&s.order[1], uint32_t(mine & 1));
      else if (mine > 0) ptx::mbarrier_wait_parity(&s.order[0], uint32_t((mine - 1) & 1));
      ++mine;
    }
    if constexpr (C::spec.accum == Accum::tensor_core) mainloop_tensor_core<C>(s, ring, pc, me, acc);
    else if constexpr (C::spec.accum == Accum::promoted) mainloop_promoted<C>(s, p, ring, pc, o, me, acc, tc[0]);
    else mainloop_two_sets<C>(s, p, ring, pc, o, me, acc, tc);
    finish<C>(s, p, pc, o, me, evict_first, scale_ab, acc, boxes_stored);
  });
  if (threadIdx.x % 128 == 0) ptx::tma_store_wait_all<0>();  // no store may read shared memory after the block exits
}

/// The family kernel: one block of kThreads per SM at most (the plan's grid, in clusters of C::CLUSTER
/// along x), C = A * B^T (or C^T's tiles when swapped) over the plan's items.
template <class C>
__global__ void __launch_bounds__(kThreads, 1)  // the ", 1" gives ptxas the entry cap setmaxnreg needs
gemm_kernel(const __grid_constant__ Params p) {
  static_assert(sizeof(SharedStorage<C>) + 1024 == C::SMEM_BYTES, "smem_bytes(spec) is the kernel's shared memory");
  // A parallel reduction's kernel may be launched now (family/reduce.cuh): it waits for this grid to
  // finish before it reads, so its launch can overlap this grid's run instead of following its last
  // block (whether it does was not measured: ncu runs kernels one at a time).
  if constexpr (C::spec.parallel_reduce) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  extern __shared__ uint8_t smem_raw[];
  SharedStorage<C>& s = *reinterpret_cast<SharedStorage<C>*>(ptx::smem_align_up<1024>(smem_raw));
  if (threadIdx.x == 0) {
    for (int st = 0; st < C::STAGES; ++st) {
      ptx::mbarrier_init(&s.full[st], 1 + ring_scale_lanes(C::spec));  // the issuer, and the lanes copying the scales
      ptx::mbarrier_init(&s.empty[st], C::EMPTY_ARRIVALS);
    }
    if constexpr (C::PINGPONG)
      for (int c = 0; c < kConsumers; ++c) ptx::mbarrier_init(&s.order[c], 4);  // every warp of the other consumer
    ptx::fence_mbarrier_init();  // .release.cluster: the inits are visible to a cluster partner too
  }
  // The last block-wide barrier: after this the roles never wait for each other's threads. With a
  // cluster it is cluster-wide: the partner multicasts into this block's stages and arrives on its
  // barriers only once they are initialised (step 17).
  if constexpr (C::CLUSTER == 1) __syncthreads();
  else ptx::cluster_sync();
  // The warpgroup index, broadcast from lane 0: the same value, but now ptxas knows it is warp-uniform,
  // and so is everything computed from it (the consumer's ring position, its descriptors; step 23).
  const int wg = __shfl_sync(0xffffffffu, int(threadIdx.x / 128), 0);
  if (wg == 0) {  // producer warpgroup: one thread issues (warp 1 copies scales that travel in the ring)
    ptx::setmaxnreg_dec<kProducerRegs>();
    if (runs_producer(C::spec, threadIdx.x)) produce<C>(s, p);
  } else {
    ptx::setmaxnreg_inc<kConsumerRegs>();
    consume<C>(s, p, wg - 1);
  }
  if constexpr (C::CLUSTER > 1) {
    // No block may exit while its partner can still multicast into its shared memory or arrive on its
    // barriers: both blocks' consumers have waited for every stage (so every multicast landed) and
    // made every remote arrive before they get here. __syncwarp reconverges the producer's warp
    // (thread 0 ran the loop alone) before the .aligned cluster barrier.
    __syncwarp();
    ptx::cluster_sync();
  }
}

}  // namespace gemm::family
