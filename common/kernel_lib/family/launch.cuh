// The family's launcher (steps 24 on): a Plan (family/plan.hpp) in, one launch of the kernel of the
// configuration it names out. Everything the launch needs comes from the plan: the kernel's problem and
// grid, the split and its workspace slots, the padded copies of A and B and their pitch (step 28).
// Host code, compiled by nvcc with the kernel it launches.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <string>
#include <type_traits>

#include "../check.hpp"
#include "../launch.hpp"
#include "../registry.hpp"
#include "../tma.hpp"
#include "kernel.cuh"
#include "plan.hpp"
#include "reduce.cuh"

namespace gemm::family {

/// The error every refusal of the launcher throws: "step <id> <what> for M=.. N=.. K=..<tail>".
inline Error launch_error(const char* step, const Plan& pl, const std::string& what, const std::string& tail = "") {
  return Error("step " + std::string(step) + " " + what + " for M=" + std::to_string(pl.shape.m) + " N=" +
               std::to_string(pl.shape.n) + " K=" + std::to_string(pl.shape.k) + tail);
}

/// Launches C's kernel for `prob` (a Bf16Gemm, or an Fp8Gemm with the scaling C was built for) as `pl`
/// says, on `stream`, and after it, where pl.reduce_segments > 0, the reduction of its slices
/// (family/reduce.cuh). prob.workspace must hold pl.workspace_bytes bytes (Step::workspace_bytes of the
/// same shape, 16-byte aligned, its counters zero: cudaMalloc'd and zeroed once; every launch leaves
/// them zero again). Where pl.pitch is set, A and B are first copied into the workspace at that row
/// pitch (cudaMemcpy2DAsync, device to device, on `stream`; TMA zero-fills the boxes past K, so the
/// pad is never read) and the GEMM reads the copies: the copies stay after the split's part, so a
/// workspace reused for another shape must be zeroed again first. Throws gemm::Error, naming `step`,
/// for an FP8 problem whose scaling is not C's (or whose scale pointers are null), for a missing, small
/// or misaligned (not 16-byte) workspace, and what make_tma_2d and launch_kernel throw. Whether C's rows
/// are TMA-addressable depends on the pointer, not the shape, so it is decided here, not in the plan.
template <class C, class Problem>
void launch(const char* step, const Problem& prob, const Plan& pl, cudaStream_t stream) {
  static_assert(std::is_same_v<Problem, Bf16Gemm> == (C::spec.elem == Elem::bf16), "the problem's dtype is C's");
  using T = elem_t<C>;
  Params k{};
  if constexpr (std::is_same_v<Problem, Fp8Gemm>) {
    const bool block = C::spec.scales == Scales::block;
    if (prob.scaling != (block ? Scaling::block : Scaling::per_tensor) ||
        (block ? !prob.sfa || !prob.sfb : !prob.scale_a || !prob.scale_b))
      throw Error("step " + std::string(step) + (block ? " takes block scales: p.sfa (ceil(K/128) x M floats) and p.sfb "
                                                         "(ceil(N/128) x ceil(K/128) floats) in device memory"
                                                       : " takes per-tensor scales: p.scale_a and p.scale_b, one float "
                                                         "each in device memory"));
    k.scale_a = prob.scale_a, k.scale_b = prob.scale_b, k.sfa = prob.sfa, k.sfb = prob.sfb;
  }
  if (pl.workspace_bytes > 0 && (prob.workspace == nullptr || prob.workspace_bytes < pl.workspace_bytes))
    throw launch_error(step, pl, "needs a workspace of " + std::to_string(pl.workspace_bytes) + " bytes",
                       " (got " + std::to_string(prob.workspace_bytes) + "): reserve Step::workspace_bytes first");
  // 16 bytes: the split's partials are float4 stores, the padded copies TMA reads (cudaMalloc gives 256).
  if (pl.workspace_bytes > 0 && reinterpret_cast<uintptr_t>(prob.workspace) % 16 != 0)
    throw launch_error(step, pl, "needs a 16-byte aligned workspace");
  const T* a = reinterpret_cast<const T*>(prob.a);
  const T* b = reinterpret_cast<const T*>(prob.b);
  if (pl.pitch != 0) {  // step 28: rows that start inside a 32-byte sector, copied to a whole-K-tile pitch
    char* ws = static_cast<char*>(prob.workspace);
    const size_t row = size_t(pl.shape.k) * sizeof(T), dpitch = size_t(pl.pitch) * sizeof(T);
    CUDA_CHECK(cudaMemcpy2DAsync(ws + pl.copy_a_offset, dpitch, a, row, row, size_t(pl.shape.m), cudaMemcpyDeviceToDevice, stream));
    CUDA_CHECK(cudaMemcpy2DAsync(ws + pl.copy_b_offset, dpitch, b, row, row, size_t(pl.shape.n), cudaMemcpyDeviceToDevice, stream));
    a = reinterpret_cast<const T*>(ws + pl.copy_a_offset);
    b = reinterpret_cast<const T*>(ws + pl.copy_b_offset);
  }
  // The kernel's operands: A (km rows, wgmma's M side) and B (kn rows, its N side); swapped, B and A.
  const TmaElem te = C::spec.elem == Elem::bf16 ? TmaElem::bf16 : TmaElem::e4m3;
  constexpr CUtensorMapSwizzle SW128 = CU_TENSOR_MAP_SWIZZLE_128B;
  // With a cluster, the shared operand's box is this block's half of the tile (producer.cuh).
  constexpr uint32_t a_rows = C::BM / C::CLUSTER_N, b_rows = C::BN / C::CLUSTER_M;
  const uint32_t promo = uint32_t(pl.l2_promotion_bytes);
  k.tmap_a = make_tma_2d({C::spec.swap ? b : a, uint64_t(pl.km), uint64_t(pl.shape.k), a_rows, C::BK, SW128, te, uint64_t(pl.pitch), promo});
  k.tmap_b = make_tma_2d({C::spec.swap ? a : b, uint64_t(pl.kn), uint64_t(pl.shape.k), b_rows, C::BK, SW128, te, uint64_t(pl.pitch), promo});
  // C through TMA when its rows are addressable (N % 8 == 0, 16-byte aligned base); else register
  // stores. The box is 64 x EPI_N, its swizzle span one box row (epilogue.cuh's store_d_box_* write
  // that layout). Swapped, the accumulators hold C^T: register stores, or with stmatrix boxes of
  // kSwapEpiRows rows of C by 64 columns, transposed into place (store_dt_box16_sw128_stmatrix).
  constexpr CUtensorMapSwizzle epi_swizzle = C::EPI_N == 64   ? CU_TENSOR_MAP_SWIZZLE_128B
                                             : C::EPI_N == 32 ? CU_TENSOR_MAP_SWIZZLE_64B
                                             : C::EPI_N == 16 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                              : CU_TENSOR_MAP_SWIZZLE_NONE;
  const TmaMatrix c = C::spec.swap ? TmaMatrix{prob.c, uint64_t(pl.shape.m), uint64_t(pl.shape.n), kSwapEpiRows, 64, SW128}
                                    : TmaMatrix{prob.c, uint64_t(pl.shape.m), uint64_t(pl.shape.n), kEpiBox, C::EPI_N, epi_swizzle};
  k.tma_epilogue = (!C::spec.swap || C::spec.stmatrix) && !tma_refusal(c).has_value();
  if (k.tma_epilogue) k.tmap_c = make_tma_2d(c);
  k.M = pl.km, k.N = pl.kn, k.K = pl.shape.k;
  k.tiles_m = pl.tiles_m, k.tiles_n = pl.tiles_n, k.k_tiles = pl.k_tiles;
  k.C = prob.c;
  k.split = pl.split;
  k.reduce_segments = pl.reduce_segments;
  if (pl.reduce_segments > 0) {  // a parallel reduction's slices (no slots, no counters)
    k.reduce = static_cast<float*>(prob.workspace);
  } else if (pl.split_bytes > 0) {  // the slots, then the counters, where the plan put them
    k.split.partials = static_cast<float4*>(prob.workspace);
    k.split.arrivals = reinterpret_cast<int*>(static_cast<char*>(prob.workspace) + pl.counters_offset);
  }
  opt_in_dynamic_smem(gemm_kernel<C>, C::SMEM_BYTES);  // allows SMEM_BYTES of dynamic smem (needed above 48 KB)
  // The split's units are clusters where there is one: CLUSTER blocks each, the grid a whole number of them.
  launch_kernel({dim3(unsigned(pl.split.blocks) * C::CLUSTER), kThreads, C::SMEM_BYTES, stream, dim3(C::CLUSTER, 1, 1)},
                gemm_kernel<C>, k);
  if constexpr (C::spec.parallel_reduce) {  // the slices into C, over every SM (family/reduce.cuh)
    static_assert(!C::spec.swap, "the slices are C's own rows");
    if (pl.reduce_segments > 0)
      launch_split_k_reduce(k.reduce, pl.reduce_segments, int64_t(pl.km) * pl.kn, prob.c,
                            C::spec.scales == Scales::per_tensor ? k.scale_a : nullptr, k.scale_b, sm_count(), stream);
  }
}

/// Launches the one of the configurations Cs... whose Spec the plan chose (a step instantiates the
/// configurations its policy can pick). Throws gemm::Error if none matches: a policy that picks a
/// configuration its step does not instantiate.
template <class... Cs, class Problem>
void launch_one_of(const char* step, const Problem& prob, const Plan& pl, cudaStream_t stream) {
  const bool launched = ((Cs::spec == pl.spec ? (launch<Cs>(step, prob, pl, stream), true) : false) || ...);
  if (!launched) throw launch_error(step, pl, "planned a configuration it does not instantiate");
}

/// A family step's plan for a shape on this GPU: its policy (a step's `plan`) at gemm::sm_count().
using Policy = Plan (*)(int m, int n, int k, int sms);

/// How many shapes' plans plan_once keeps (per thread and policy): a transformer layer alternates a
/// handful of GEMM shapes (QKV, the output projection, gate and up, down), and step 29's pick alone costs
/// 6-9 us on the host (docs/notebook/hopper.md), as long as a decode GEMM runs.
inline constexpr int kPlanCacheShapes = 8;

/// `policy`'s plan for (m, n, k) on this GPU, computed once per shape: the last kPlanCacheShapes shapes'
/// plans are kept (per thread and policy; the oldest is replaced), so the workspace query and the launch
/// after it, and every repeat of a shape, read one plan. Keyed by the device too: a cluster's plan counts
/// the clusters that fit on it (menu::plan_sms). The reference lives until kPlanCacheShapes new shapes
/// have been planned on this thread. Throws what the policy and sm_count() throw (and keeps nothing then).
template <Policy policy>
const Plan& plan_once(int m, int n, int k) {
  struct Kept {
    int device = -1, m = 0, n = 0, k = 0;
    Plan plan{};
  };
  thread_local Kept kept[kPlanCacheShapes];
  thread_local int oldest = 0;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  for (const Kept& e : kept)
    if (e.device == device && e.m == m && e.n == n && e.k == k) return e.plan;
  const Plan plan = policy(m, n, k, sm_count());
  Kept& e = kept[oldest];
  oldest = (oldest + 1) % kPlanCacheShapes;
  e = {device, m, n, k, plan};
  return e.plan;
}

/// Step::bf16 or Step::fp8 of a family step (registry.hpp): C = A * B^T as `policy` plans it on this GPU,
/// on `stream`, launched with the one of Cs... the plan names (launch_one_of: its errors). `Id` is the
/// step's id, for the messages.
template <const char* Id, Policy policy, class... Cs, class Problem>
void step_launch(const Problem& p, cudaStream_t stream) {
  launch_one_of<Cs...>(Id, p, plan_once<policy>(p.m, p.n, p.k), stream);
}

/// Step::accumulation of a family FP8 step whose configurations are C, Cs... (the ones step_launch
/// names): tensor_core where the wgmma accumulators hold the whole sum (Accum::tensor_core), else
/// promoted. Every configuration must agree: the results' accumulation column names one per step.
template <class C, class... Cs>
constexpr Accumulation step_accumulation() {
  constexpr bool tc = C::spec.accum == Accum::tensor_core;
  static_assert(((tc == (Cs::spec.accum == Accum::tensor_core)) && ...),
                "a step's configurations must all promote or all not: the results name one accumulation per step");
  return tc ? Accumulation::tensor_core : Accumulation::promoted;
}

/// Step::workspace_bytes of a family step: the plan's (the split's slots and counters, then the copies
/// where it pads; 0 for neither).
template <Policy policy>
size_t step_workspace_bytes(int m, int n, int k) {
  return plan_once<policy>(m, n, k).workspace_bytes;
}

}  // namespace gemm::family
