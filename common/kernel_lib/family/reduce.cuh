// Split-K with a separate reduction (issue 46; Spec::parallel_reduce): the GEMM's split pieces have
// stored their fp32 sums, one km x kn slice per K segment (family/epilogue.cuh's finish), and this
// kernel sums the slices into C, spread over the GPU (up to kReduceBlocksPerSM blocks an SM; 64 blocks
// at 256 x 256, whose 65536 elements are 16384 threads of four). Step 21's fixup sums a tile's pieces
// in the block that counts the last one: with 30 segments of one tile, one block reads 29 partials alone while the other
// SMs have exited. Here each thread sums V elements of every slice, in slice order from zero, which is
// the fixup's order (pieces in unit order, from acc = 0): the same bits as the fixup gives. Its loads
// go out kReduceBatch slices at a time, so a sum of s slices waits on ceil(s / kReduceBatch) trips to
// L2, not s.
// Device and host code: include from a file nvcc compiles for sm_90a (family/launch.cuh does).
#pragma once
#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "../launch.hpp"

namespace gemm::family {

inline constexpr int kReduceThreads = 256;   ///< threads per block of the reduction
inline constexpr int kReduceBlocksPerSM = 8;  ///< its grid: at most this many blocks per SM (grid-stride past that)
/// Slices a thread loads before it adds them. Each trip to L2 is about a microsecond; a first version
/// loaded one slice at a time, and at 256 x 256 with 33 slices (16384 threads of four elements) its 33
/// trips made the reduction slower than the GEMM (docs/notebook/hopper.md, "Parallel split-K: the
/// pieces summed in a second kernel").
inline constexpr int kReduceBatch = 16;

/// C[i] = bf16(scale * (slices[0][i] + slices[1][i] + ... + slices[s - 1][i])) for i < elems, where
/// slices[j] = `slices` + j * elems (row-major km x kn, the GEMM's C unswapped) and scale =
/// *scale_a * *scale_b, or 1 where scale_a is null. V = 4: elems % 4 == 0 (so every slice is 16-byte
/// aligned) and C 8-byte aligned; else V = 1. Launched as a programmatic dependent of the GEMM
/// (launch.hpp): it may start as the GEMM's blocks exit and waits (griddepcontrol.wait, PTX ISA
/// "griddepcontrol") until the GEMM has finished and its stores are visible before it reads a slice.
template <int V>
__global__ void __launch_bounds__(kReduceThreads) split_k_reduce(const float* __restrict__ slices, int s, int64_t elems,
                                                                 __nv_bfloat16* __restrict__ C, const float* scale_a,
                                                                 const float* scale_b) {
  using Vec = std::conditional_t<V == 4, float4, float>;
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const float scale = scale_a ? __ldg(scale_a) * __ldg(scale_b) : 1.0f;
  const int64_t groups = elems / V, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; g < groups; g += stride) {
    float sum[V] = {};
    // kReduceBatch slices' loads in flight together, then added in slice order: one trip to L2 a batch.
    for (int j0 = 0; j0 < s; j0 += kReduceBatch) {
      Vec v[kReduceBatch];
#pragma unroll
      for (int b = 0; b < kReduceBatch; ++b)
        if (j0 + b < s) v[b] = __ldcs(reinterpret_cast<const Vec*>(slices + (j0 + b) * elems) + g);  // read once
#pragma unroll
      for (int b = 0; b < kReduceBatch; ++b)
        if (j0 + b < s) {
          if constexpr (V == 4) sum[0] += v[b].x, sum[1] += v[b].y, sum[2] += v[b].z, sum[3] += v[b].w;
          else sum[0] += v[b];
        }
    }
    if constexpr (V == 4) {
      const __nv_bfloat162 lo = __floats2bfloat162_rn(scale * sum[0], scale * sum[1]);
      const __nv_bfloat162 hi = __floats2bfloat162_rn(scale * sum[2], scale * sum[3]);
      uint2 out;
      out.x = *reinterpret_cast<const uint32_t*>(&lo);
      out.y = *reinterpret_cast<const uint32_t*>(&hi);
      reinterpret_cast<uint2*>(C)[g] = out;
    } else {
      C[g] = __float2bfloat16_rn(scale * sum[0]);
    }
  }
}

/// Enqueues split_k_reduce on `stream` for `s` slices of `elems` floats at `slices` (16-byte aligned)
/// into C (elems bf16), scale_a and scale_b as there (nullptr: unscaled), on at most
/// kReduceBlocksPerSM x `sms` blocks. Throws gemm::Error when the launch is refused. A template only so
/// that its kernels are instantiated where a parallel_reduce configuration launches them (launch.cuh),
/// not in every step that includes the launcher.
template <int = 0>
void launch_split_k_reduce(const float* slices, int s, int64_t elems, __nv_bfloat16* C, const float* scale_a,
                                  const float* scale_b, int sms, cudaStream_t stream) {
  const bool vec = elems % 4 == 0 && reinterpret_cast<uintptr_t>(C) % 8 == 0;
  const int64_t groups = vec ? elems / 4 : elems;
  const int64_t want = (groups + kReduceThreads - 1) / kReduceThreads, most = int64_t(kReduceBlocksPerSM) * (sms < 1 ? 1 : sms);
  const dim3 grid(unsigned(want < most ? want : most));
  const LaunchConfig cfg{grid, kReduceThreads, 0, stream, dim3(1, 1, 1), /*programmatic_dependent=*/true};
  if (vec) launch_kernel(cfg, split_k_reduce<4>, slices, s, elems, C, scale_a, scale_b);
  else launch_kernel(cfg, split_k_reduce<1>, slices, s, elems, C, scale_a, scale_b);
}

}  // namespace gemm::family
