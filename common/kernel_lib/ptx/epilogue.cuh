// Epilogue helpers: storing accumulator fragments to C. Later steps add theirs here.
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "../swizzle.hpp"
#include "stmatrix.cuh"

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

/// The same fragment as fp32 into row-major `D` (M x N, leading dimension N) at (row0, col0),
/// clipping rows >= M and columns >= N: a split piece's slice of a parallel reduction (issue 46,
/// family/reduce.cuh). Each pair is one 8-byte store when N is even (D 8-byte aligned), two otherwise;
/// st.global.cg: the slices are read back once, by the reduction, from L2.
template <int R>
__device__ __forceinline__ void store_d_fragment_f32(const float (&d)[R], float* D, int M, int N, int64_t row0,
                                                     int64_t col0) {
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
      float* p = D + row * N + col;
      if (pairs) {
        __stcg(reinterpret_cast<float2*>(p), make_float2(v0, v1));
      } else {
        __stcg(p, v0);
        if (col + 1 < N) __stcg(p + 1, v1);
      }
    }
  }
}

/// The transposed store, for a kernel that computed C^T = B * A^T with swapped operands (step 24, small
/// M): `d` is the D fragment of one m64nNk16 wgmma holding a 64 x N tile of C^T, and it is written
/// as bf16 into row-major C (M x N, leading dimension N), clipping rows >= M and columns >= N of C.
/// Fragment row r (wgmma's M side: the rows of B) is C's column n0 + r, fragment column c (wgmma's N
/// side: the rows of A) is C's row m0 + c. With the D fragment layout of store_d_fragment_bf16 (PTX
/// ISA, "Register Fragments and Shared Memory Matrix Layouts", wgmma .m64nNk16 D), accumulator i of
/// lane l of warp w goes to
///   C[m0 + 8*(i/4) + 2*(l%4) + i%2][n0 + 16w + l/4 + 8*((i/2) % 2)].
/// A pair (i, i+1) is two rows of C, so every value is its own 2-byte store: the 8 lanes with one l%4
/// write 16 contiguous bytes of one C row. Meant for a small C (M <= 64 rows), where these stores are
/// a sliver of the traffic.
template <int R>
__device__ __forceinline__ void store_dt_fragment_bf16(const float (&d)[R], __nv_bfloat16* C, int M, int N,
                                                       int64_t n0, int64_t m0) {
  static_assert(R % 4 == 0, "an m64nNk16 fragment holds N/2 accumulators per thread, N a multiple of 8");
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  const int64_t n_base = n0 + 16 * warp + lane / 4;
  const int64_t m_base = m0 + 2 * (lane % 4);
#pragma unroll
  for (int j = 0; j < R / 4; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t n = n_base + 8 * h;
      if (n >= N) continue;
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int64_t m = m_base + 8 * j + e;
        if (m < M) C[m * N + n] = __float2bfloat16_rn(d[4 * j + 2 * h + e]);
      }
    }
}

/// Writes columns 64*box .. 64*box+63 of this warpgroup's m64nNk16 D fragment (see above), as bf16,
/// into `dst`: a 64 x 64 bf16 box (64 rows of 128 bytes, 8 KB, 1024-byte aligned) in the layout a
/// TMA store with CU_TENSOR_MAP_SWIZZLE_128B reads (gemm::swizzle::byte_offset<128>). Each thread
/// writes 16 bf16x2 words. The swizzle makes them free of bank conflicts: the 32 lanes of one store
/// cover 8 rows (l/4) x 4 words (l%4) of one 16-byte chunk column j, and row r's chunk j lands in
/// chunk j ^ (r % 8), so the 8 rows fill all 32 banks (unswizzled, all 8 rows would hit the same
/// 4 banks: an 8-way conflict). Call with `box` a compile-time constant after unrolling (the
/// accumulator index must be static, or d would be copied to local memory).
template <int R>
__device__ __forceinline__ void store_d_box_sw128(const float (&d)[R], int box, void* dst) {
  static_assert(R % 32 == 0, "the fragment must hold whole 64-column boxes (N a multiple of 64)");
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  uint8_t* base = static_cast<uint8_t*>(dst);
#pragma unroll
  for (int j = 0; j < 8; ++j)  // 16-byte chunk j of the box row: columns 8j .. 8j+7
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t row = 16 * warp + lane / 4 + 8 * h;
      const int i = 4 * (8 * box + j) + 2 * h;  // accumulator of column 64*box + 8j + 2*(l%4), row above
      const uint32_t linear = row * 128 + 16 * j + 4 * (lane % 4);
      *reinterpret_cast<__nv_bfloat162*>(base + gemm::swizzle::byte_offset<128>(linear)) =
          __floats2bfloat162_rn(d[i], d[i + 1]);
    }
}

/// store_d_box_sw128 for a box of W = 32, 16 or 8 columns (the family's tiles whose BN is not a
/// multiple of 64): columns W*box .. W*box+W-1 of the fragment into a 64 x W bf16 box whose rows are
/// 2W bytes, in the layout a TMA store with the swizzle span of one row reads (CU_TENSOR_MAP_SWIZZLE_64B
/// for W = 32, _32B for 16, none for 8: gemm::swizzle::byte_offset<2W>). The box must be aligned to
/// 1024 bytes. Each thread writes W/4 bf16x2 words; `box` a compile-time constant after unrolling.
template <int W, int R>
__device__ __forceinline__ void store_d_box_narrow(const float (&d)[R], int box, void* dst) {
  static_assert(W == 32 || W == 16 || W == 8, "a narrow box is 32, 16 or 8 columns (a row of 64, 32 or 16 bytes)");
  static_assert(R % (W / 2) == 0, "the fragment must hold whole boxes (N a multiple of W)");
  constexpr uint32_t RB = 2 * W;  // bytes of a box row
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  uint8_t* base = static_cast<uint8_t*>(dst);
#pragma unroll
  for (int j = 0; j < W / 8; ++j)  // 16-byte chunk j of the box row: columns 8j .. 8j+7
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t row = 16 * warp + lane / 4 + 8 * h;
      const int i = 4 * (W / 8 * box + j) + 2 * h;  // accumulator of column W*box + 8j + 2*(l%4), row above
      const uint32_t linear = row * RB + 16 * j + 4 * (lane % 4);
      uint32_t off = linear;
      if constexpr (RB >= 32) off = gemm::swizzle::byte_offset<RB>(linear);
      *reinterpret_cast<__nv_bfloat162*>(base + off) = __floats2bfloat162_rn(d[i], d[i + 1]);
    }
}

/// The same 64 x 64 box as store_d_box_sw128 (same swizzled layout, same values), written with
/// stmatrix instead of 16 4-byte stores per thread: each 8 x 8 bf16 block of the fragment (rows
/// 16w + 8h .. +7, columns 8j .. 8j+7 of the box) is exactly one stmatrix m8n8 matrix, lane l holding
/// row l/4, columns 2*(l%4)..+1 (PTX ISA, "stmatrix", and the wgmma D fragment above). One x4
/// instruction stores four of them: matrices (j, h) = (2q, 0), (2q, 1), (2q+1, 0), (2q+1, 1), and
/// lane l gives the address of row l%8 of matrix l/8. A matrix row is 16 contiguous bytes (one
/// swizzle chunk), so each row address goes through the 128-byte swizzle whole; the 8 rows of one
/// matrix land in 8 different chunks of the 128-byte bank window: conflict-free. 4 stmatrix.x4 per
/// thread per box instead of 16 STS.
template <int R>
__device__ __forceinline__ void store_d_box_sw128_stmatrix(const float (&d)[R], int box, void* dst) {
  static_assert(R % 32 == 0, "the fragment must hold whole 64-column boxes (N a multiple of 64)");
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  uint8_t* base = static_cast<uint8_t*>(dst);
  const int mat = lane / 8;  // the matrix whose row address this lane gives
  const uint32_t row = 16 * warp + 8 * (mat % 2) + lane % 8;
#pragma unroll
  for (int q = 0; q < 4; ++q) {  // chunks 2q and 2q+1 of the box row: columns 16q .. 16q+15
    uint32_t r[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // matrix i: chunk j = 2q + i/2, row half h = i%2
      const int acc = 4 * (8 * box + 2 * q + i / 2) + 2 * (i % 2);
      const __nv_bfloat162 v = __floats2bfloat162_rn(d[acc], d[acc + 1]);
      r[i] = *reinterpret_cast<const uint32_t*>(&v);
    }
    const uint32_t linear = row * 128 + 16 * (2 * q + mat / 2);
    stmatrix_x4(base + gemm::swizzle::byte_offset<128>(linear), r[0], r[1], r[2], r[3]);
  }
}

/// Rows 16 jj .. 16 jj + 15 of C from this warpgroup's m64nNk16 D fragment of C^T (a swapped tile: the
/// fragment's rows are C's columns, its columns C's rows), as a 16 x 64 bf16 box of C (16 rows of 128
/// bytes, 2 KB, 1024-byte aligned) in the layout a TMA store with CU_TENSOR_MAP_SWIZZLE_128B reads. One
/// stmatrix.x4.trans a thread: the fragment's 8 x 8 blocks (j, h) = (2jj, 0), (2jj, 1), (2jj + 1, 0),
/// (2jj + 1, 1) (rows 16w + 8h .., columns 8j ..), each stored transposed, so that block (j, h)'s column
/// r becomes box row 8 (j - 2jj) + r, chunk 2w + h (the 8 rows of C^T it holds are 8 columns of C, 16
/// bytes). The 8 rows of one block land in chunks (2w + h) ^ r of their rows: 8 different chunks of the
/// bank window, conflict-free. Where the 2-byte register stores (store_dt_fragment_bf16) write 16-byte
/// runs of C, a TMA store writes whole lines.
template <int R>
__device__ __forceinline__ void store_dt_box16_sw128_stmatrix(const float (&d)[R], int jj, void* dst) {
  static_assert(R % 8 == 0, "the fragment must hold whole pairs of 8-column blocks (N a multiple of 16)");
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  uint32_t r[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {  // block i: j = 2jj + i/2, h = i%2
    const int acc = 4 * (2 * jj + i / 2) + 2 * (i % 2);
    const __nv_bfloat162 v = __floats2bfloat162_rn(d[acc], d[acc + 1]);
    r[i] = *reinterpret_cast<const uint32_t*>(&v);
  }
  stmatrix_x4_trans(static_cast<uint8_t*>(dst) + gemm::swizzle::dt_box16_row_offset(warp, lane), r[0], r[1], r[2], r[3]);
}

}  // namespace ptx
