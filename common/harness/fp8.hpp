// FP8 inputs: what they are drawn from before quantization (N(0, 1), or shaped like a language model's,
// Dist), the e4m3 quantizer (amax per tensor, per row or per block, scale = amax / 448, saturating
// round-to-nearest-even conversion), the layout of the scale arrays, the fp64 oracles (of the
// dequantized product, and of the product of the inputs before quantization). The conversion functions
// are __host__ __device__: the generator on the GPU and the CPU tests call the same code.
#pragma once
#include <cuda_bf16.h>
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
/// One scale per row (rows floats): per-row scaling, cuBLASLt's "outer vector" mode
/// (CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F: one scale per row of A, one per row of B, i.e. per
/// column of C).
ScaleGrid row_grid(int64_t rows, int64_t cols);
/// One scale per column (cols floats), e.g. the factors of A's channels (llm_channel_factors).
ScaleGrid column_grid(int64_t rows, int64_t cols);
/// One scale per 128 rows, the same along the whole row (ceil(rows / 128) floats): the coarsest grid a
/// 128 x 128 block layout can carry with scales that do not change along K.
ScaleGrid row_block_grid_128(int64_t rows, int64_t cols);
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

/// The scales of `coarse` (coarse.count() floats) written out in the layout of the finer grid `fine`
/// (fine.count() floats, each fine block taking the scale of the coarse block it lies in): how a
/// per-row or per-tensor quantization runs through a block-scaled kernel, whose scale arrays then hold
/// the same value along K. Throws gemm::Error when the grids differ in shape or a coarse block
/// boundary cuts a fine block (the scale would change inside it).
std::vector<float> expand_scales(const std::vector<float>& coarse, const ScaleGrid& coarse_grid, const ScaleGrid& fine);

/// x[r][c] *= table[g.index(r, c)] for the rows x cols row-major x (g's shape); on the host, and on the
/// GPU (x and table device pointers; synchronous, throws gemm::Error on a CUDA error).
void scale_by_grid_host(std::vector<float>& x, const ScaleGrid& g, const std::vector<float>& table);
void scale_by_grid_device(float* x, const ScaleGrid& g, const float* table);

/// What inputs an FP8 problem quantizes (the step programs' --dist).
///   normal: A and B from N(0, 1), as the bf16 steps'. Every block of them has about the same largest
///           value, so one scale per tensor loses nothing to finer ones.
///   llm:    shaped like a language model's linear layer, y = x W^T (LlmShape has the numbers). A, the
///           activations (m tokens x k channels), is N(0, 1) with a few outlier channels, columns
///           scaled by 10-1000x: the pattern LLM.int8() found in the hidden states of transformers from
///           about 6.7B parameters on, a few systematic feature dimensions of large magnitude in every
///           token (Dettmers et al. 2022, arXiv 2208.07339; the magnitudes are this generator's choice).
///           B, the weights (n x k), is N(0, sigma^2) with sigma drawn per 128 x 128
///           block, the granularity of DeepSeek-V3's weight scales (arXiv 2412.19437, "Fine-Grained
///           Quantization": 1 x 128 tiles of activations, 128 x 128 blocks of weights).
enum class Dist { normal, llm };
/// "normal" or "llm".
const char* dist_name(Dist d);

/// The numbers of Dist::llm. Defaults: 0.5 % of A's k channels (rounded, at least one) scaled by
/// factors log-uniform in [10, 1000]; B's 128 x 128 blocks with sigma log-uniform in [0.1, 10], a 100x
/// spread. Both sides drawn from the problem's seed (llm_channel_factors, llm_block_sigmas).
struct LlmShape {
  double outlier_fraction = 0.005;              ///< of A's k channels; the count is max(1, round(fraction * k))
  double outlier_min = 10, outlier_max = 1000;  ///< the outlier factors, log-uniform in [min, max]
  double sigma_min = 0.1, sigma_max = 10;       ///< B's standard deviation per 128 x 128 block, log-uniform
};

/// A's channel factors for k channels and `seed`: k floats, 1 for an ordinary channel and the factor of
/// an outlier one (distinct channels, chosen uniformly). Deterministic in (k, seed, s) on every platform:
/// std::mt19937_64, whose output the C++ standard fixes, mapped to [0, 1) here (not through
/// std::uniform_real_distribution, whose output it leaves to the library). Throws gemm::Error when s is
/// not a distribution (a fraction outside [0, 1], a factor or sigma <= 0 or non-finite, min > max).
std::vector<float> llm_channel_factors(int64_t k, uint64_t seed, const LlmShape& s);
/// B's standard deviations for an n x k B and `seed`: one per 128 x 128 block, in weight_grid_128x128's
/// layout (ceil(n/128) x ceil(k/128), row-major), log-uniform in [sigma_min, sigma_max]. Deterministic
/// as llm_channel_factors, from another stream of the same seed. Throws as it does.
std::vector<float> llm_block_sigmas(int64_t n, int64_t k, uint64_t seed, const LlmShape& s);

/// What quantization did to one operand's values: of its `nonzero` inputs, how many became 0
/// (`flushed`: |x / scale| at or below half of e4m3's smallest subnormal, 2^-10) and how many became
/// subnormal (`subnormal`: 0 < |q| < 2^-6, so fewer than e4m3's 3 mantissa bits are left). x is the
/// input, q its e4m3 bytes (the same count; throws gemm::Error otherwise).
struct Fp8Census {
  int64_t nonzero = 0, flushed = 0, subnormal = 0;
};
Fp8Census fp8_census(const std::vector<float>& x, const std::vector<__nv_fp8_storage_t>& q);

/// The fp64 oracle on the GPU: want[i][j] = bf16(sum_k (qa[i][k] * sa) * (qb[j][k] * sb)) in fp64,
/// rounded once to bf16 (round to nearest even) and stored as fp32 (m x n row-major, device). qa is
/// m x k, qb n x k, row-major e4m3; ga, gb their scale grids. Synchronous; throws gemm::Error on a
/// CUDA error. About 2 m n k fp64 FLOP: a second or so at 8192^3 on an H200.
void oracle_fp8_device(const __nv_fp8_storage_t* qa, const float* sa, const ScaleGrid& ga,
                       const __nv_fp8_storage_t* qb, const float* sb, const ScaleGrid& gb, int m, int n, int k,
                       float* want);

/// The fp64 product of inputs before quantization, on the GPU: want[i][j] = sum_k double(a[i][k]) *
/// double(b[j][k]), rounded once to fp32 (not to bf16: it is the real product, and a step's bf16
/// rounding is part of the step's error against it). a is m x k, b n x k, row-major fp32; want m x n
/// row-major (device). Synchronous; throws gemm::Error on a CUDA error. The same kernel and cost as
/// oracle_fp8_device.
void oracle_fp32_device(const float* a, const float* b, int m, int n, int k, float* want);

/// The fp64 oracle of a bf16 product on the GPU: want[i][j] = sum_k double(a[i][k]) * double(b[j][k]),
/// rounded once to bf16 (held in fp32). a is m x k, b n x k, row-major bf16; want m x n row-major
/// (device). What a bf16 check asks where cuBLAS's C and a step's disagree (ProblemBuffers::bf16_oracle).
/// Synchronous; throws gemm::Error on a CUDA error. The same kernel and cost as oracle_fp8_device.
void oracle_bf16_device(const __nv_bfloat16* a, const __nv_bfloat16* b, int m, int n, int k, float* want);

/// Largest K for FP8 exact mode (--exact: integers in [-2, 2], power-of-two scales). Every partial sum
/// of the integer products is at most 4 K = 2^12 in magnitude, an integer that needs 13 significant
/// bits; Hopper's FP8 tensor cores keep about 14 (the DeepSeek-V3 technical report, arXiv 2412.19437,
/// "Increasing Accumulation Precision": "around 14 bits" on the H800), so every partial sum is exact
/// and the result is compared with ==. The fp32 limit of the other dtypes (options.hpp) is far higher.
inline constexpr int kMaxExactKFp8 = 1024;

}  // namespace gemm
