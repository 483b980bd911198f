// The family's configuration (steps 24 on): one compile-time value that says which of the parts the
// ladder taught a kernel is assembled from. Steps 10-23 teach the parts one at a time, each inline in
// its own file; from step 24 on a step names the configurations it runs (a struct deriving from
// Config<Spec{...}>, so its kernels read `gemm_kernel<step27::Wide>` in the SASS) and its policy, the
// host rule that picks one of them and the split per shape (family/plan.hpp).
//
// Every derived constant is a constexpr function of the Spec, so the host plan computes the same
// geometry at run time from the Spec value the policy picked (the workspace a split needs, the shared
// memory a launch asks for) as the kernel has at compile time.
#pragma once
#include <cstdint>

#include "../host_device.hpp"

namespace gemm::family {

enum class Elem { bf16, e4m3 };  ///< the element type of A and B (C is always bf16)

/// How the two consumer warpgroups share the block's items (step 14: cooperative, one tile between
/// them; step 22: ping-pong, each its own tile, one's epilogue under the other's mainloop).
enum class Consumers { pingpong, cooperative };

/// Where the K loop's products are summed. tensor_core: the wgmma accumulators hold the whole sum
/// (bf16; FP8's "fast accumulation", step 30). promoted: each K tile's partial, from a fresh set of
/// tensor-core accumulators, is added into fp32 registers (step 31; FP8's 14-bit accumulation
/// promoted every 128 K). two_sets: promoted, with two sets of tensor-core accumulators so that one
/// K tile's promotion runs while the next one's wgmmas do (step 34).
enum class Accum { tensor_core, promoted, two_sets };

/// FP8 dequantization scales (registry.hpp, Scaling): none (bf16), one per tensor (applied to the
/// tile's sum in the epilogue, step 30) or 1 x 128 of A and 128 x 128 of B (applied as each K tile is
/// promoted, step 32).
enum class Scales { none, per_tensor, block };

/// A configuration. Defaults: step 23's bf16 ping-pong 128 x 128 tile, 6 stages, no cluster.
struct Spec {
  Elem elem = Elem::bf16;
  int bn = 128;        ///< the tile's N, which is its wgmma N (8 .. 256, a multiple of 8)
  bool swap = false;   ///< C^T = B * A^T: B's rows on wgmma's M side, A's on its N side (step 24)
  Consumers consumers = Consumers::pingpong;
  Accum accum = Accum::tensor_core;
  Scales scales = Scales::none;
  int stages = 6;      ///< the ring's depth (step 13)
  int promote_every = 4;  ///< promoted: k steps per promotion (4: once per K tile of 128, DeepSeek-V3's interval)
  int bm = 128;        ///< the tile's M: m64 slabs, 64 or 128 (ping-pong: each consumer all of them), 128 or 256 (cooperative: half each)
  int cluster_m = 1;   ///< blocks per cluster along M: 2 share B's tile, each loading half and multicasting it (step 17)
  int cluster_n = 1;   ///< blocks per cluster along N: 2 share A's tile the same way (both 2: a 2 x 2 cluster shares both)
  /// the epilogue writes its boxes with stmatrix (step 20) instead of 4-byte stores; swapped, with
  /// stmatrix's transposing form into boxes of C's own rows, stored by TMA (kSwapEpiRows), instead of
  /// one 2-byte store an element from registers
  bool stmatrix = false;
  /// Split-K with a separate reduction (issue 46): where the plan splits K into equal segments, each
  /// piece stores its fp32 sums to its own slice of the workspace and a second kernel sums the slices
  /// over every SM (family/reduce.cuh), in place of step 21's fixup, where one block reads them all.
  bool parallel_reduce = false;
  /// Block scales copied into the ring with each stage's boxes (step 42), as a swapped tile's always are
  /// (step 40): the consumers read them from shared memory after the full-barrier wait instead of
  /// loading them from global memory a K tile ahead.
  bool ring_scales = false;
  friend constexpr bool operator==(const Spec&, const Spec&) = default;
};

inline constexpr int kBM = 128;         ///< the default tile's M side (steps 24-34): two m64 wgmma slabs
inline constexpr int kWgmmaM = 64;      ///< rows of one wgmma (PTX ISA, "Matrix Shape": m64 only)
inline constexpr int kSwizzleBytes = 128;  ///< a K tile row is one 128-byte swizzle span (step 11)
inline constexpr int kConsumers = 2;    ///< consumer warpgroups per block (step 14)
inline constexpr int kThreads = 128 * (1 + kConsumers);  ///< warpgroup 0: producer, 1..2: consumers
inline constexpr int kProducerRegs = 40, kConsumerRegs = 232;  ///< setmaxnreg split (step 14): 128 x (40 + 2 x 232) = 64K
inline constexpr int kGroupM = 16;      ///< grouped order's tile rows per group (step 15, schedule.hpp)
inline constexpr int kEpiBox = 64;      ///< epilogue box: 64 rows (one slab) x epi_n(spec) bf16 columns (step 16)
inline constexpr int kEpiBufs = 2;      ///< boxes in flight per consumer: one written while the other's store reads
/// A swapped tile's stmatrix epilogue: boxes of kSwapEpiRows rows of C (16 columns of C^T, two stmatrix
/// 8 x 8 blocks) by 64 of its columns (one m64 slab of C^T's rows), in the first 2 KB of an epilogue buffer.
inline constexpr int kSwapEpiRows = 16;
inline constexpr int kSmemBytes = 227 * 1024;  ///< the most dynamic shared memory a block may ask for (sm_90)
/// fp32 registers of sums a consumer thread may hold: the K loop's own (acc, and tc where promoted), of
/// its 232 (kConsumerRegs). At 192 the K loop still fits where little else is live (step 34's two sets
/// beside 64 sums) but not everywhere: ptxas -v (nvcc 13.0) spills 80 bytes for a 128 x 192 ping-pong
/// tile, none at 160 (128 x 160 ping-pong, 256 x 160 cooperative). So the bound refuses what cannot
/// fit, and the menu's kernels are checked for spills in their ptxas report (tests/test_family.cpp).
inline constexpr int kMaxSumRegs = 192;
static_assert(128 * (kProducerRegs + kConsumers * kConsumerRegs) <= 65536, "the register split must fit the SM's 64K registers");

/// Bytes of one element of A and B.
GEMM_HD constexpr int elem_bytes(Spec s) { return s.elem == Elem::bf16 ? 2 : 1; }
/// The K tile: one 128-byte swizzle row of elements (64 bf16, 128 e4m3).
GEMM_HD constexpr int bk(Spec s) { return kSwizzleBytes / elem_bytes(s); }
/// wgmma's K: 32 bytes of elements (k16 bf16, k32 e4m3).
GEMM_HD constexpr int wgmma_k(Spec s) { return 32 / elem_bytes(s); }
/// m64 slabs of the tile a consumer computes: all (ping-pong: its own tile) or half (cooperative).
GEMM_HD constexpr int slabs(Spec s) {
  return s.consumers == Consumers::pingpong ? s.bm / kWgmmaM : s.bm / (kWgmmaM * kConsumers);
}
/// Blocks per cluster (1: no cluster).
GEMM_HD constexpr int cluster_size(Spec s) { return s.cluster_m * s.cluster_n; }
/// Bytes one stage of the ring holds: a BM x BK box of A and a BN x BK box of B (with a cluster, half
/// of the shared one is this block's own load and half its partner's multicast: the same bytes land).
GEMM_HD constexpr int64_t stage_bytes(Spec s) { return int64_t(s.bm + s.bn) * bk(s) * elem_bytes(s); }
/// fp32 floats of one split piece's partial sums (its stream-K slot): BM x BN, times the cluster's
/// blocks (a piece of a cluster tile is one piece of each of its tiles).
GEMM_HD constexpr int64_t slot_floats(Spec s) { return int64_t(s.bm) * s.bn * cluster_size(s); }
/// Arrival counters per split item: one, or one per consumer (cooperative: each sums its own slabs),
/// times the cluster's blocks (each block sums its own tile).
GEMM_HD constexpr int counters_per_tile(Spec s) {
  return (s.consumers == Consumers::pingpong ? 1 : kConsumers) * cluster_size(s);
}
/// The epilogue box's width in columns: the widest of 64, 32, 16, 8 that divides BN, so that a tile is
/// a whole number of boxes; its rows are 2 * epi_n bytes, and the TMA swizzle span is that row (8: none).
/// A swapped tile stores from registers and never uses its boxes: 64, the layout steps 24-28 measured.
GEMM_HD constexpr int epi_n(Spec s) {
  return s.swap || s.bn % 64 == 0 ? 64 : s.bn % 32 == 0 ? 32 : s.bn % 16 == 0 ? 16 : 8;
}
/// Whether a configuration's block scales travel in the ring: swapped tiles with block scales (C^T's
/// columns are A's rows, each with its own `sfa` value, so a K tile needs BN of them; step 40), and any
/// block-scaled tile that asks (Spec::ring_scales, step 42). A producer warp copies them, and the `sfb`
/// values, into the stage beside its boxes (producer.cuh), and the consumers read them after the same
/// full-barrier wait as the tiles, with no global load in the K loop.
GEMM_HD constexpr bool scales_in_ring(Spec s) { return s.scales == Scales::block && (s.swap || s.ring_scales); }
/// Floats of a stage's scales (SharedStorage::scales): the tile's `sfa` values (swapped BN, one a column
/// of C^T; else BM, one a row of C), then its `sfb` values (swapped one a 64-row slab, at most 4; else
/// the tile's one), in 4 floats; 1 (unused) where the scales do not travel in the ring.
GEMM_HD constexpr int ring_scale_floats(Spec s) { return scales_in_ring(s) ? (s.swap ? s.bn : s.bm) + 4 : 1; }
/// Lanes of the producer warpgroup's warp 1 that copy a stage's scales and arrive on its full barrier as they land
/// (producer.cuh's copy_ring_scales): all 32 where the scales travel in the ring, else none.
GEMM_HD constexpr int ring_scale_lanes(Spec s) { return scales_in_ring(s) ? 32 : 0; }
/// Arrivals that free a stage: one a warp of the one consumer that read it, or of both (cooperative),
/// in every block of the cluster (each block's copy of the shared half is its partner's load too); one
/// a thread where the scales travel in the ring, whose lanes all read the stage (mainloop.cuh's
/// release_read_stage says why each arrives for itself).
GEMM_HD constexpr int empty_arrivals(Spec s) {
  return (s.consumers == Consumers::pingpong ? 4 : 4 * kConsumers) * cluster_size(s) * (scales_in_ring(s) ? 32 : 1);
}
/// The producer warpgroup's roles, by thread: thread 0 issues the TMA loads; where the scales travel in
/// the ring, warp 1's lanes copy them (ring_scale_lanes), a warp of its own, so the issuer never waits
/// on the copies' lanes (step 40). kernel.cuh runs the producer on runs_producer's threads, and
/// producer.cuh's produce gives each its part.
GEMM_HD constexpr bool issues_tma(unsigned tid) { return tid == 0; }
GEMM_HD constexpr bool copies_ring_scales(Spec s, unsigned tid) { return ring_scale_lanes(s) > 0 && tid / 32 == 1; }
GEMM_HD constexpr bool runs_producer(Spec s, unsigned tid) { return issues_tma(tid) || copies_ring_scales(s, tid); }
/// Bytes of the block's shared memory for `stages` stages: the ring, the epilogue boxes, the barriers
/// and flags, rounded as the kernel's SharedStorage lays them out, plus 1024 bytes of slack to align
/// the dynamic base.
GEMM_HD constexpr int64_t smem_bytes_at(Spec s, int stages) {
  const int64_t ring = stages * stage_bytes(s);  // both arrays 1024-aligned: every box size is a multiple of 1024
  const int64_t boxes = (int64_t(kConsumers) * kEpiBufs * kEpiBox * epi_n(s) * 2 + 1023) / 1024 * 1024;
  // full, empty, order; last_piece; the ring's scales
  const int64_t tail = 8 * (2 * stages + kConsumers) + 4 * kConsumers + 4 * int64_t(stages) * ring_scale_floats(s);
  return ring + boxes + (tail + 1023) / 1024 * 1024 + 1024;
}
GEMM_HD constexpr int64_t smem_bytes(Spec s) { return smem_bytes_at(s, s.stages); }
/// The most stages whose ring fits the shared memory beside the boxes and barriers (a menu's "stages
/// from the shared memory left", issue 46; cuBLAS's kernel names show 3 to 15).
GEMM_HD constexpr int stages_that_fit(Spec s) {
  int n = 1;
  while (smem_bytes_at(s, n + 1) <= kSmemBytes) ++n;
  return n;
}
/// fp32 registers of sums one consumer thread holds: its slabs' accumulators, and the tensor cores'
/// set(s) where the sums are promoted; swapped with block scales, also the BN / 4 scales a slab of each
/// K tile in flight (two: mainloop.cuh's BlockScales, sc and the next K tile's).
GEMM_HD constexpr int sum_regs(Spec s) {
  const int frag = s.bn / 2;
  const int scales = s.swap && s.scales == Scales::block ? 2 * slabs(s) * (s.bn / 4) : 0;
  return slabs(s) * frag + (s.accum == Accum::tensor_core ? 0 : s.accum == Accum::promoted ? frag : 2 * frag) + scales;
}

/// Whether the parts can assemble `s`; the message names the first part that cannot (nullptr: yes).
GEMM_HD constexpr const char* refusal(Spec s) {
  if (s.bn < 8 || s.bn > 256 || s.bn % 8 != 0) return "wgmma's N is 8 .. 256 in steps of 8";
  if (s.elem == Elem::bf16 && (s.accum != Accum::tensor_core || s.scales != Scales::none))
    return "bf16 accumulates in the tensor cores, unscaled";
  if (s.elem == Elem::e4m3 && s.scales == Scales::none) return "e4m3 needs scales";
  if (s.scales == Scales::block && !s.swap && s.bn != 128) return "block scales need BN = 128: one 128 x 128 block of B per tile";
  if (s.scales == Scales::block && s.accum == Accum::tensor_core) return "block scales are applied as a K tile is promoted";
  // Swapped, B's rows are the tile's: a slab's 64 lie in one of B's 128-row blocks; A's rows are its
  // columns, each with its own scale (mainloop.cuh's BlockScales): BN / 4 of them a thread, which
  // sum_regs counts.
  if (s.scales == Scales::block && s.swap && s.cluster_m * s.cluster_n > 1) return "block scales of a swapped tile in a cluster: not built";
  if (s.accum != Accum::tensor_core && (s.promote_every < 1 || (bk(s) / wgmma_k(s)) % s.promote_every != 0))
    return "a promotion group lies within one K tile";
  if (s.accum == Accum::two_sets && s.promote_every != bk(s) / wgmma_k(s)) return "two sets promote once per K tile";
  if (s.consumers == Consumers::pingpong && s.bm != 64 && s.bm != 128)
    return "a ping-pong consumer computes the whole tile: BM is 64 or 128 (one or two m64 slabs)";
  if (s.consumers == Consumers::cooperative && s.bm != 128 && s.bm != 256)
    return "cooperative consumers split the tile's slabs: BM is 128 or 256";
  if (s.accum == Accum::two_sets && slabs(s) != 1)
    return "two accumulator sets fit only beside one slab of sums (cooperative BM 128, or ping-pong BM 64)";
  if (sum_regs(s) > kMaxSumRegs) return "the sums would not fit a consumer's registers (slabs x BN / 2, and tc where promoted)";
  if (s.cluster_m < 1 || s.cluster_m > 2 || s.cluster_n < 1 || s.cluster_n > 2)
    return "a cluster is 1 or 2 blocks along each of M and N (2 x 2 at most)";
  if (s.cluster_m == 2 && (s.bn / 2) % 8 != 0)
    return "each block multicasts half of B's tile: BN / 2 rows must be whole 8-row swizzle atoms (BN % 16 == 0)";
  if (s.scales == Scales::block && s.cluster_n > 1)  // (along M the pair shares B's tile and its scale row; rows past M scale by 0)
    return "block scales with a cluster along N: a partner block past N's edge would read B's scales past their end (not built)";
  if (s.ring_scales && s.scales != Scales::block) return "only block scales travel in the ring (Spec::ring_scales)";
  if (s.parallel_reduce && s.swap) return "a parallel reduction of a swapped tile would sum C^T's slices: not built (a swapped grid splits with the fixup)";
  if (s.stmatrix && !s.swap && s.bn % 64 != 0) return "stmatrix writes 64-wide epilogue boxes of an unswapped tile (BN % 64 == 0)";
  if (s.stmatrix && s.swap && s.bn % kSwapEpiRows != 0)
    return "a swapped tile's stmatrix epilogue writes boxes of 16 rows of C, two 8-column blocks of C^T (BN % 16 == 0)";
  if (s.stages < 2 || smem_bytes(s) > kSmemBytes) return "the ring must have 2 stages or more and fit 227 KB";
  return nullptr;
}

/// A configuration's compile-time constants, for the kernel and its parts. A step names its own:
/// `struct Wide : Config<Spec{.bn = 128}> {};`.
template <Spec S>
struct Config {
  static_assert(refusal(S) == nullptr, "this Spec is not one the family's parts can assemble (refusal(S) says why)");
  static constexpr Spec spec = S;
  static constexpr int BM = S.bm, BN = S.bn, BK = bk(S), STAGES = S.stages;
  static constexpr int WGMMA_K = wgmma_k(S), SLABS = slabs(S), FRAG = S.bn / 2;  // FRAG: fp32 per thread per slab
  static constexpr int CLUSTER = cluster_size(S), CLUSTER_M = S.cluster_m, CLUSTER_N = S.cluster_n;
  static constexpr int EPI_N = epi_n(S);  // the epilogue box's columns
  static constexpr uint32_t STAGE_BYTES = uint32_t(stage_bytes(S));
  static constexpr int EMPTY_ARRIVALS = empty_arrivals(S), COUNTERS = counters_per_tile(S);
  static constexpr bool PINGPONG = S.consumers == Consumers::pingpong;
  /// The fixup's unroll: 16 float4 (64 registers) of pieces loaded together; BN = 8: 8 pieces (step 27).
  static constexpr int FIXUP_BATCH = S.bn >= 64 ? 1 : 64 / S.bn;
  static constexpr size_t SMEM_BYTES = size_t(smem_bytes(S));
};

}  // namespace gemm::family
