// Epilogue helpers: storing accumulator fragments to C. Later steps add theirs here.
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

namespace ptx {

/// Stores the D fragment of one m64nNk16 wgmma (this thread's N/2 fp32 accumulators) as bf16 into
/// row-major C (M x N, leading dimension N) at (row0, col0), clipping rows >= M and columns >= N.
/// Fragment layout ("Register Fragments and Shared Memory Matrix Layouts", wgmma .m64nNk16 D):
/// warp w of the warpgroup holds rows 16w..16w+15; accumulator i of lane l sits at
///   row 16w + l/4 + 8*((i/2) % 2),  column 8*(i/4) + 2*(l%4) + i%2,
/// so each pair (i, i+1) with i even is two adjacent columns: one 4-byte bf16x2 store when N is
/// even (then the pair's address is 4-byte aligned), two 2-byte stores otherwise.
template <int R>
__device__ __forceinline__ void store_d_fragment_bf16(const float (&d)[R], __nv_bfloat16* C, int M, int N,
                                                      int64_t row0, int64_t col0) {
  static_assert(R % 4 == 0, "an m64nNk16 fragment holds N/2 accumulators per thread, N a multiple of 8");
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  const int64_t r_base = row0 + 16 * warp + lane / 4;
  const int64_t c_base = col0 + 2 * (lane % 4);
  const bool pairs = N % 2 == 0;
#pragma unroll
  for (int j = 0; j < R / 4; ++j) {
    const int64_t col = c_base + 8 * j;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = r_base + 8 * h;
      if (row >= M || col >= N) continue;
      const float v0 = d[4 * j + 2 * h], v1 = d[4 * j + 2 * h + 1];
      __nv_bfloat16* p = C + row * N + col;
      if (pairs) {  // col even and N even: col + 1 < N as well
        *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(v0, v1);
      } else {
        p[0] = __float2bfloat16_rn(v0);
        if (col + 1 < N) p[1] = __float2bfloat16_rn(v1);
      }
    }
  }
}

}  // namespace ptx
