#include "fp8.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <random>
#include <string>

#include "buffer.hpp"

namespace gemm {

ScaleGrid per_tensor_grid(int64_t rows, int64_t cols) { return {rows, cols, std::max<int64_t>(rows, 1), std::max<int64_t>(cols, 1), 0, 0}; }

ScaleGrid row_grid(int64_t rows, int64_t cols) { return {rows, cols, 1, std::max<int64_t>(cols, 1), 1, 0}; }

ScaleGrid column_grid(int64_t rows, int64_t cols) { return {rows, cols, std::max<int64_t>(rows, 1), 1, 0, 1}; }

ScaleGrid row_block_grid_128(int64_t rows, int64_t cols) { return {rows, cols, 128, std::max<int64_t>(cols, 1), 1, 0}; }

ScaleGrid activation_grid_1x128(int64_t m, int64_t k) { return {m, k, 1, 128, 1, m}; }

ScaleGrid weight_grid_128x128(int64_t n, int64_t k) { return {n, k, 128, 128, (k + 127) / 128, 1}; }

ScaleGrid scale_grid(Scaling mode, bool is_b, int64_t rows, int64_t k) {
  if (mode == Scaling::per_tensor) return per_tensor_grid(rows, k);
  return is_b ? weight_grid_128x128(rows, k) : activation_grid_1x128(rows, k);
}

std::vector<__nv_fp8_storage_t> quantize_host(const std::vector<float>& x, const ScaleGrid& g,
                                              std::vector<float>& scales) {
  std::vector<float> amax(size_t(g.count()), 0.0f);
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t c = 0; c < g.cols; ++c) {
      float& a = amax[size_t(g.index(r, c))];
      const float v = std::fabs(x[size_t(r * g.cols + c)]);
      a = std::isnan(v) ? v : std::max(a, v);  // a NaN stays: the block cannot be quantized
    }
  scales.resize(amax.size());
  for (size_t i = 0; i < amax.size(); ++i) scales[i] = e4m3_scale_for(amax[i]);
  std::vector<__nv_fp8_storage_t> q(x.size());
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t c = 0; c < g.cols; ++c)
      q[size_t(r * g.cols + c)] = quantize_e4m3(x[size_t(r * g.cols + c)], scales[size_t(g.index(r, c))]);
  return q;
}

std::vector<double> dequantize_host(const std::vector<float>& q, const std::vector<float>& scales, const ScaleGrid& g) {
  std::vector<double> out(q.size());
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t c = 0; c < g.cols; ++c)
      out[size_t(r * g.cols + c)] = double(q[size_t(r * g.cols + c)]) * double(scales[size_t(g.index(r, c))]);
  return out;
}

std::vector<float> expand_scales(const std::vector<float>& coarse, const ScaleGrid& cg, const ScaleGrid& fg) {
  if (cg.rows != fg.rows || cg.cols != fg.cols || int64_t(coarse.size()) != cg.count())
    throw Error("expand_scales: " + std::to_string(coarse.size()) + " scales of a " + std::to_string(cg.rows) + " x " +
                std::to_string(cg.cols) + " grid cannot be written out for a " + std::to_string(fg.rows) + " x " +
                std::to_string(fg.cols) + " one");
  // A coarse block holds whole fine blocks when its edge is a multiple of the fine one (or covers the
  // whole dimension).
  auto nests = [](int64_t c, int64_t f, int64_t extent) { return c >= extent || c % f == 0; };
  if (!nests(cg.block_rows, fg.block_rows, cg.rows) || !nests(cg.block_cols, fg.block_cols, cg.cols))
    throw Error("expand_scales: blocks of " + std::to_string(cg.block_rows) + " x " + std::to_string(cg.block_cols) +
                " do not hold whole blocks of " + std::to_string(fg.block_rows) + " x " + std::to_string(fg.block_cols));
  std::vector<float> out(size_t(fg.count()));
  for (int64_t br = 0; br < fg.blocks_r(); ++br)
    for (int64_t bc = 0; bc < fg.blocks_c(); ++bc) {
      const int64_t r = br * fg.block_rows, c = bc * fg.block_cols;  // the fine block's first element
      out[size_t(fg.index(r, c))] = coarse[size_t(cg.index(r, c))];
    }
  return out;
}

void scale_by_grid_host(std::vector<float>& x, const ScaleGrid& g, const std::vector<float>& table) {
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t c = 0; c < g.cols; ++c) x[size_t(r * g.cols + c)] *= table[size_t(g.index(r, c))];
}

const char* dist_name(Dist d) { return d == Dist::llm ? "llm" : "normal"; }

namespace {

// A uniform double in [0, 1) from 53 bits of the engine: the same on every platform (the standard fixes
// mt19937_64's output, not uniform_real_distribution's).
double unit(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

// log-uniform in [lo, hi]
double log_uniform(std::mt19937_64& rng, double lo, double hi) { return lo * std::exp(unit(rng) * std::log(hi / lo)); }

void check_shape(const LlmShape& s) {
  auto positive_range = [](double lo, double hi) { return std::isfinite(lo) && std::isfinite(hi) && lo > 0 && lo <= hi; };
  if (!(s.outlier_fraction >= 0 && s.outlier_fraction <= 1) || !positive_range(s.outlier_min, s.outlier_max) ||
      !positive_range(s.sigma_min, s.sigma_max))
    throw Error("llm inputs: the outlier fraction must be in [0, 1], and the outlier factors and weight sigmas finite "
                "positive ranges with min <= max");
}

// One engine per side, so that A's draws do not move when B's shape changes: the seed mixed with a
// constant per stream (splitmix64's increment, the golden ratio in 64 bits).
std::mt19937_64 stream(uint64_t seed, uint64_t which) { return std::mt19937_64(seed ^ (0x9E3779B97F4A7C15ull * (which + 1))); }

}  // namespace

std::vector<float> llm_channel_factors(int64_t k, uint64_t seed, const LlmShape& s) {
  check_shape(s);
  std::vector<float> f(size_t(std::max<int64_t>(k, 0)), 1.0f);
  if (k <= 0) return f;
  const int64_t count = std::clamp<int64_t>(std::llround(s.outlier_fraction * double(k)), 1, k);
  std::mt19937_64 rng = stream(seed, 0);
  std::vector<int64_t> order(static_cast<size_t>(k));  // the channels, shuffled
  for (int64_t i = 0; i < k; ++i) order[size_t(i)] = i;
  for (int64_t i = 0; i < count; ++i) {  // the first `count` places of a Fisher-Yates shuffle
    const int64_t j = i + int64_t(rng() % uint64_t(k - i));
    std::swap(order[size_t(i)], order[size_t(j)]);
    f[size_t(order[size_t(i)])] = float(log_uniform(rng, s.outlier_min, s.outlier_max));
  }
  return f;
}

std::vector<float> llm_block_sigmas(int64_t n, int64_t k, uint64_t seed, const LlmShape& s) {
  check_shape(s);
  std::mt19937_64 rng = stream(seed, 1);
  std::vector<float> sigma(size_t(weight_grid_128x128(n, k).count()));
  for (float& v : sigma) v = float(log_uniform(rng, s.sigma_min, s.sigma_max));
  return sigma;
}

Fp8Census fp8_census(const std::vector<float>& x, const std::vector<__nv_fp8_storage_t>& q) {
  if (x.size() != q.size())
    throw Error("fp8_census: " + std::to_string(x.size()) + " inputs and " + std::to_string(q.size()) + " e4m3 values");
  Fp8Census c;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == 0.0f) continue;
    ++c.nonzero;
    const unsigned bits = q[i] & 0x7Fu;  // S.EEEE.MMM without the sign
    if (bits == 0) ++c.flushed;
    else if ((bits >> 3) == 0) ++c.subnormal;  // exponent field 0, mantissa not: 2^-9 .. 7 * 2^-9
  }
  return c;
}

namespace {

unsigned grid_for(int64_t count) { return unsigned(std::clamp<int64_t>((count + 255) / 256, 1, 65536)); }

// amax of each block as the bits of a non-negative float (their integer order is the float order, so
// atomicMax on the bits is a max on the values; a NaN's bits, 0x7fc00000 and up, exceed every finite
// one and win). One warp per (row, column block) segment: a warp-wide max, then one atomic.
__global__ void __launch_bounds__(256) amax_blocks(const float* x, ScaleGrid g, unsigned* amax_bits) {
  const int64_t segments = g.rows * g.blocks_c();
  const int lane = threadIdx.x % 32;
  for (int64_t w = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32; w < segments;
       w += int64_t(gridDim.x) * blockDim.x / 32) {
    const int64_t r = w / g.blocks_c(), c0 = (w % g.blocks_c()) * g.block_cols;
    const int64_t c1 = std::min(c0 + g.block_cols, g.cols);
    unsigned m = 0;
    for (int64_t c = c0 + lane; c < c1; c += 32) m = max(m, __float_as_uint(fabsf(x[r * g.cols + c])));
    for (int off = 16; off > 0; off /= 2) m = max(m, __shfl_xor_sync(0xffffffffu, m, off));
    if (lane == 0) atomicMax(&amax_bits[g.index(r, c0)], m);
  }
}

__global__ void __launch_bounds__(256) scales_from_amax(const unsigned* amax_bits, float* scales, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    scales[i] = e4m3_scale_for(__uint_as_float(amax_bits[i]));
}

__global__ void __launch_bounds__(256) quantize(const float* x, ScaleGrid g, const float* scales, __nv_fp8_storage_t* q) {
  const int64_t count = g.rows * g.cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    q[i] = quantize_e4m3(x[i], scales[g.index(i / g.cols, i % g.cols)]);
}

__global__ void __launch_bounds__(256) scale_by_grid(float* x, ScaleGrid g, const float* table) {
  const int64_t count = g.rows * g.cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    x[i] *= table[g.index(i / g.cols, i % g.cols)];
}

// The oracles' operands, element (row, kk) of a rows x k row-major matrix as a double: dequantized
// e4m3 (q * its block's scale), or fp32 as it is.
struct DequantizedE4m3 {
  const __nv_fp8_storage_t* q;
  const float* s;
  ScaleGrid g;
  __device__ double operator()(int64_t row, int64_t kk, int k) const {
    return double(e4m3_value(q[row * k + kk])) * double(s[g.index(row, kk)]);
  }
};
struct Fp32Values {
  const float* x;
  __device__ double operator()(int64_t row, int64_t kk, int k) const { return double(x[row * k + kk]); }
};
struct Bf16Values {
  const __nv_bfloat16* x;
  __device__ double operator()(int64_t row, int64_t kk, int k) const { return double(__bfloat162float(x[row * k + kk])); }
};

// The oracle: a 64 x 64 tile of C per block of 256 threads, each thread 4 x 4 outputs in fp64; A and B
// converted into shared memory in fp64, 16 K at a time. Rounded once at the end, to bf16 (kToBf16: the
// dequantized product, which a correct kernel's bf16 C matches to the tolerance) or to fp32 only.
constexpr int OT = 64, OK = 16;
template <class LoadA, class LoadB, bool kToBf16>
__global__ void __launch_bounds__(256) oracle(LoadA load_a, LoadB load_b, int m, int n, int k, float* want) {
  __shared__ double s_a[OK][OT + 1], s_b[OK][OT + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t j0 = int64_t(blockIdx.x) * OT;
  // Tile rows strided by gridDim.y (at most 65535, the grid's y limit), so any M is covered.
  for (int64_t i0 = int64_t(blockIdx.y) * OT; i0 < m; i0 += int64_t(gridDim.y) * OT) {
    double acc[4][4] = {};
    for (int k0 = 0; k0 < k; k0 += OK) {
      for (int e = threadIdx.x; e < OT * OK; e += blockDim.x) {
        const int r = e / OK, kk = e % OK;
        const int64_t i = i0 + r, j = j0 + r, kg = k0 + kk;
        s_a[kk][r] = i < m && kg < k ? load_a(i, kg, k) : 0.0;
        s_b[kk][r] = j < n && kg < k ? load_b(j, kg, k) : 0.0;
      }
      __syncthreads();
      for (int kk = 0; kk < OK; ++kk)
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
          for (int v = 0; v < 4; ++v) acc[u][v] += s_a[kk][ty + 16 * u] * s_b[kk][tx + 16 * v];
      __syncthreads();
    }
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        const int64_t i = i0 + ty + 16 * u, j = j0 + tx + 16 * v;
        if (i < m && j < n) want[i * n + j] = kToBf16 ? __bfloat162float(__double2bfloat16(acc[u][v])) : float(acc[u][v]);
      }
  }
}

// x: N tiles (up to 2^31 - 1 blocks); y: M tiles, capped at 65535 and strided in the kernel.
dim3 oracle_grid(int m, int n) {
  return dim3(unsigned((n + OT - 1) / OT), unsigned(std::min<int64_t>((int64_t(m) + OT - 1) / OT, 65535)));
}

}  // namespace

void quantize_device(const float* x, const ScaleGrid& g, __nv_fp8_storage_t* q, float* scales) {
  DeviceBuffer<unsigned> amax(size_t(g.count()));
  CUDA_CHECK(cudaMemset(amax.get(), 0, amax.bytes()));
  amax_blocks<<<grid_for(g.rows * g.blocks_c() * 32), 256>>>(x, g, amax.get());
  CUDA_CHECK_LAUNCH();
  scales_from_amax<<<grid_for(g.count()), 256>>>(amax.get(), scales, g.count());
  CUDA_CHECK_LAUNCH();
  quantize<<<grid_for(g.rows * g.cols), 256>>>(x, g, scales, q);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
}

void oracle_fp8_device(const __nv_fp8_storage_t* qa, const float* sa, const ScaleGrid& ga,
                       const __nv_fp8_storage_t* qb, const float* sb, const ScaleGrid& gb, int m, int n, int k,
                       float* want) {
  oracle<DequantizedE4m3, DequantizedE4m3, true><<<oracle_grid(m, n), 256>>>({qa, sa, ga}, {qb, sb, gb}, m, n, k, want);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
}

void oracle_fp32_device(const float* a, const float* b, int m, int n, int k, float* want) {
  oracle<Fp32Values, Fp32Values, false><<<oracle_grid(m, n), 256>>>({a}, {b}, m, n, k, want);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
}

void oracle_bf16_device(const __nv_bfloat16* a, const __nv_bfloat16* b, int m, int n, int k, float* want) {
  oracle<Bf16Values, Bf16Values, true><<<oracle_grid(m, n), 256>>>({a}, {b}, m, n, k, want);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
}

void scale_by_grid_device(float* x, const ScaleGrid& g, const float* table) {
  scale_by_grid<<<grid_for(g.rows * g.cols), 256>>>(x, g, table);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace gemm
