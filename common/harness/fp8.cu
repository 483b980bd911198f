#include "fp8.hpp"

#include <cuda_bf16.h>

#include <algorithm>

#include "buffer.hpp"

namespace gemm {

ScaleGrid per_tensor_grid(int64_t rows, int64_t cols) { return {rows, cols, std::max<int64_t>(rows, 1), std::max<int64_t>(cols, 1), 0, 0}; }

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

// The oracle: a 64 x 64 tile of C per block of 256 threads, each thread 4 x 4 outputs in fp64; A and B
// dequantized into shared memory in fp64, 16 K at a time.
constexpr int OT = 64, OK = 16;
__global__ void __launch_bounds__(256) oracle(const __nv_fp8_storage_t* qa, const float* sa, ScaleGrid ga,
                                              const __nv_fp8_storage_t* qb, const float* sb, ScaleGrid gb, int m,
                                              int n, int k, float* want) {
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
        s_a[kk][r] = i < m && kg < k ? double(e4m3_value(qa[i * k + kg])) * double(sa[ga.index(i, kg)]) : 0.0;
        s_b[kk][r] = j < n && kg < k ? double(e4m3_value(qb[j * k + kg])) * double(sb[gb.index(j, kg)]) : 0.0;
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
        if (i < m && j < n) want[i * n + j] = __bfloat162float(__double2bfloat16(acc[u][v]));
      }
  }
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
  // x: N tiles (up to 2^31 - 1 blocks); y: M tiles, capped at 65535 and strided in the kernel.
  const dim3 grid(unsigned((n + OT - 1) / OT), unsigned(std::min<int64_t>((int64_t(m) + OT - 1) / OT, 65535)));
  oracle<<<grid, 256>>>(qa, sa, ga, qb, sb, gb, m, n, k, want);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace gemm
