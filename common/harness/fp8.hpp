// FP8 inputs: the e4m3 quantizer (amax per tensor or per block, scale = amax / 448, saturating
// round-to-nearest-even conversion), the layout of the scale arrays, and the fp64 oracle of the
// dequantized product. The conversion functions are __host__ __device__: the generator on the GPU
// and the CPU tests call the same code.
#pragma once
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "../kernel_lib/registry.hpp"

namespace gemm {

/// e4m3's largest finite magnitude: 1.75 * 2^8 = 448 (S.1111.110; S.1111.111 is NaN, and e4m3 has no
/// infinity). OCP 8-bit Floating Point Specification (OFP8) rev. 1.0, table 1; CUDA Math API, FP8
/// intrinsics (__NV_E4M3).
inline constexpr float kE4m3Max = 448.0f;

/// The dequantization scale of a block whose largest |x| is `amax`: amax / 448, so that the block's
/// largest value lands on e4m3's largest finite one. An all-zero (or empty) block gets scale 1: its
/// quantized values are zero whatever the scale, and 1 keeps x / scale finite. A non-finite amax
/// (a NaN or an infinity in the data) is returned as is: the data cannot be quantized, and the NaN
/// it produces fails every check.
__host__ __device__ inline float e4m3_scale_for(float amax) { return amax > 0.0f ? amax / kE4m3Max : (amax == 0.0f ? 1.0f : amax); }

/// q = e4m3(x / scale): rounded to nearest, ties to even, saturated to +-448 (__NV_SATFINITE: a
/// magnitude past 448 becomes 448, never NaN; a NaN stays NaN). CUDA Math API,
/// __nv_cvt_float_to_fp8. Returns the raw byte.
__host__ __device__ inline __nv_fp8_storage_t quantize_e4m3(float x, float scale) {
  return __nv_cvt_float_to_fp8(x / scale, __NV_SATFINITE, __NV_E4M3);
}

/// The value of an e4m3 byte, exactly (every e4m3 value is an fp32 value).
__host__ __device__ inline float e4m3_value(__nv_fp8_storage_t q) {
  __nv_fp8_e4m3 v;
  v.__x = q;
  return float(v);
}

/// Where the scales of one rows x cols row-major operand live: element (r, c) belongs to the block
/// (r / block_rows, c / block_cols), whose scale is scales[(r / block_rows) * stride_r +
/// (c / block_cols) * stride_c]. count() floats in all.
struct ScaleGrid {
  int64_t rows = 1, cols = 1;
  int64_t block_rows = 1, block_cols = 1;
  int64_t stride_r = 0, stride_c = 0;
  __host__ __device__ int64_t blocks_r() const { return (rows + block_rows - 1) / block_rows; }
  __host__ __device__ int64_t blocks_c() const { return (cols + block_cols - 1) / block_cols; }
  __host__ __device__ int64_t count() const { return blocks_r() * blocks_c(); }
  __host__ __device__ int64_t index(int64_t r, int64_t c) const {
    return (r / block_rows) * stride_r + (c / block_cols) * stride_c;
  }
};

/// One scale for the whole rows x cols tensor.
ScaleGrid per_tensor_grid(int64_t rows, int64_t cols);
/// A's 1 x 128 blocks (block mode): sfa is ceil(k / 128) x m, m contiguous (registry.hpp, Fp8Gemm).
ScaleGrid activation_grid_1x128(int64_t m, int64_t k);
/// B's 128 x 128 blocks (block mode): sfb is ceil(n / 128) x ceil(k / 128), row-major.
ScaleGrid weight_grid_128x128(int64_t n, int64_t k);
/// The grid of A (`is_b` false, rows = m) or B (rows = n) of an m x n x k problem under `mode`.
ScaleGrid scale_grid(Scaling mode, bool is_b, int64_t rows, int64_t k);

/// The quantizer on the host (for tests and small inputs): x is rows x cols row-major; returns the
/// e4m3 bytes and fills `scales` (grid.count() floats) with e4m3_scale_for(amax of each block).
std::vector<__nv_fp8_storage_t> quantize_host(const std::vector<float>& x, const ScaleGrid& grid,
                                              std::vector<float>& scales);
/// The same on the GPU: x (rows x cols fp32, device) -> q (device bytes), scales (device, grid.count()).
/// Synchronous; throws gemm::Error on a CUDA error.
void quantize_device(const float* x, const ScaleGrid& grid, __nv_fp8_storage_t* q, float* scales);

/// The dequantized operand on the host, in fp64: double(q) * double(scale of its block).
std::vector<double> dequantize_host(const std::vector<float>& q, const std::vector<float>& scales, const ScaleGrid& grid);

/// The fp64 oracle on the GPU: want[i][j] = bf16(sum_k (qa[i][k] * sa) * (qb[j][k] * sb)) in fp64,
/// rounded once to bf16 (round to nearest even) and stored as fp32 (m x n row-major, device). qa is
/// m x k, qb n x k, row-major e4m3; ga, gb their scale grids. Synchronous; throws gemm::Error on a
/// CUDA error. About 2 m n k fp64 FLOP: a second or so at 8192^3 on an H200.
void oracle_fp8_device(const __nv_fp8_storage_t* qa, const float* sa, const ScaleGrid& ga,
                       const __nv_fp8_storage_t* qb, const float* sb, const ScaleGrid& gb, int m, int n, int k,
                       float* want);

/// Largest K for FP8 exact mode (--exact: integers in [-2, 2], power-of-two scales). Every partial sum
/// of the integer products is at most 4 K = 2^12 in magnitude, an integer that needs 13 significant
/// bits; Hopper's FP8 tensor cores keep about 14 (the DeepSeek-V3 technical report, arXiv 2412.19437,
/// "Increasing Accumulation Precision": "around 14 bits" on the H800), so every partial sum is exact
/// and the result is compared with ==. The fp32 limit of the other dtypes (options.hpp) is far higher.
inline constexpr int kMaxExactKFp8 = 1024;

}  // namespace gemm
