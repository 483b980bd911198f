// The accuracy lab, part 1: how many bits does Hopper's FP8 tensor core keep when it adds?
// One warpgroup, one 64 x 128 x K tile, wgmma.m64n128k32.f32.e4m3.e4m3 (the instruction of steps 30
// on), fp32 accumulators written out as they are (no bf16 rounding, unlike a step's C). Each output
// element is a crafted sum: a big product 2^16 and one small product +-2^(16-e), every other product 0.
// If the adder kept fp32's 24 bits the result would be 2^16 +- 2^(16-e) for every e <= 23; the largest
// e that survives is the number of bits below the leading one that the tensor core keeps.
//   row r < 18 (r' = r) or 18 <= r < 36 (r' = r - 18, the small product negative):
//     A[r][0] = 2^8, A[r][k1] = +-2^(8 - r'); B[0][0] = B[0][k1] = 2^8; B[1][0] = 2^8, B[1][k1] = 2^-9
//   so column 0 has e = r' (0..17) and column 1 has e = 17 + r' (17..34).
// The placement k1 of the small product says which adder is measured: k1 = 1 or 16, the same wgmma
// (its internal sum of 32 products); k1 = 32 or 96, a later wgmma adding into the accumulator D; and
// with the small product first (the last placement: the small factors of A and B at k = 0, the big
// ones at k = 32): D holds the small one when the big one arrives. PTX ISA: "Asynchronous Warpgroup
// Level Matrix Multiply-Accumulate" (.e4m3, K = 32); "Register Fragments and Shared Memory Matrix
// Layouts" (the D fragment).
// Run: make lab-fp8 && build/bin/lab_fp8_accumulator   (sm_90a; exit 2 without a Hopper GPU, 1 if a
// result is not 2^16 plus all, none or a same-signed part of s: an indexing bug, not a finding)
#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../common/kernel_lib/ptx/fence.cuh"
#include "../common/kernel_lib/ptx/smem.cuh"
#include "../common/kernel_lib/ptx/wgmma.cuh"

namespace {

constexpr int BM = 64, BN = 128, BK = 128;  // one m64 slab, the n128 of the wrapper, K = 4 wgmmas of k32

/// Byte offset of element (r, k) of a K-major e4m3 tile with 128-byte rows under the 128-byte
/// swizzle (the layout TMA writes with CU_TENSOR_MAP_SWIZZLE_128B and make_desc_k_sw128 describes):
/// the 16-byte chunk k/16 of row r is stored at chunk (k/16) ^ (r % 8).
__host__ __device__ int swizzled(int r, int k) { return r * BK + (((k / 16) ^ (r % 8)) * 16) + k % 16; }

/// D (64 x 128 fp32, row-major) = A (64 x 128 e4m3, row-major) * B (128 x 128 e4m3, row-major)^T, by
/// one warpgroup: BK / 32 wgmmas of k32 (the first with scale-d = 0). 128 threads, one block.
__global__ void __launch_bounds__(128) probe(const uint8_t* a, const uint8_t* b, float* d_out) {
  __shared__ __align__(1024) uint8_t sa[BM * BK];
  __shared__ __align__(1024) uint8_t sb[BN * BK];
  for (int i = threadIdx.x; i < BM * BK; i += blockDim.x) sa[swizzled(i / BK, i % BK)] = a[i];
  for (int i = threadIdx.x; i < BN * BK; i += blockDim.x) sb[swizzled(i / BK, i % BK)] = b[i];
  ptx::fence_proxy_async_shared();  // these generic-proxy writes, before wgmma (async proxy) reads them
  __syncthreads();
  float d[BN / 2] = {};
  ptx::wgmma_fence_operands(d);
  ptx::wgmma_fence();
  const uint64_t desc_a = ptx::make_desc_k_sw128(sa), desc_b = ptx::make_desc_k_sw128(sb);
#pragma unroll
  for (int j = 0; j < BK / 32; ++j)  // the j-th k32 slice starts 32 bytes on (descriptor units: 16 bytes)
    ptx::wgmma_m64n128k32_e4m3(d, desc_a + uint64_t(32 * j / 16), desc_b + uint64_t(32 * j / 16), j > 0);
  ptx::wgmma_commit();
  ptx::wgmma_wait<0>();
  ptx::wgmma_fence_operands(d);
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;  // D fragment: see store_d_fragment_bf16
  for (int i = 0; i < BN / 2; ++i) {
    const int row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    d_out[row * BN + col] = d[i];
  }
}

uint8_t e4m3(float v) { return __nv_fp8_e4m3(v).__x; }  // exact for the powers of two used here

#define CHECK_CUDA(x)                                                                          \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "error: %s: %s (%s:%d)\n", #x, cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

struct Placement {
  const char* what;
  int k_small, k_big;  // where the small and the big product sit along K
};

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    std::fprintf(stderr, "usage: %s (no arguments)\n", argv[0]);
    return 2;
  }
  int dev = 0, count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "error: no CUDA device: the lab measures the H100/H200 tensor core\n");
    return 2;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
  if (prop.major != 9) {
    std::fprintf(stderr, "error: %s is compute capability %d.%d; wgmma needs sm_90a (Hopper)\n", prop.name, prop.major,
                 prop.minor);
    return 2;
  }
  const Placement places[] = {
      {"same wgmma, adjacent products (k = 0, 1)", 1, 0},
      {"same wgmma, other half of its k32 (k = 0, 16)", 16, 0},
      {"next wgmma: big in D, small added (k = 0, 32)", 32, 0},
      {"fourth wgmma: big in D, small added (k = 0, 96)", 96, 0},
      {"next wgmma: small in D, big added (k = 0, 32)", 0, 32},
  };
  uint8_t *a_d, *b_d;
  float* d_d;
  CHECK_CUDA(cudaMalloc(&a_d, BM * BK));
  CHECK_CUDA(cudaMalloc(&b_d, BN * BK));
  CHECK_CUDA(cudaMalloc(&d_d, BM * BN * sizeof(float)));
  std::printf("# %s: FP8 e4m3 wgmma m64n128k32, fp32 accumulators; a result is 2^16 + s, s = +-2^(16-e)\n", prop.name);
  std::printf("# kept: the small product arrived whole; lost: the result is 2^16; else: what arrived of s\n");
  int bad = 0;
  for (const Placement& pl : places) {
    std::vector<uint8_t> a(BM * BK, 0), b(BN * BK, 0);
    for (int r = 0; r < 36; ++r) {
      const int rp = r % 18;
      const float sign = r < 18 ? 1.f : -1.f;
      a[r * BK + pl.k_big] = e4m3(256.f);
      a[r * BK + pl.k_small] = e4m3(sign * std::ldexp(1.f, 8 - rp));
    }
    b[0 * BK + pl.k_big] = e4m3(256.f);
    b[0 * BK + pl.k_small] = e4m3(256.f);
    b[1 * BK + pl.k_big] = e4m3(256.f);
    b[1 * BK + pl.k_small] = e4m3(std::ldexp(1.f, -9));
    CHECK_CUDA(cudaMemcpy(a_d, a.data(), a.size(), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(b_d, b.data(), b.size(), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(d_d, 0xff, BM * BN * sizeof(float)));  // NaN: an element never written shows
    probe<<<1, 128>>>(a_d, b_d, d_d);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> d(BM * BN);
    CHECK_CUDA(cudaMemcpy(d.data(), d_d, d.size() * sizeof(float), cudaMemcpyDeviceToHost));
    // Every element: exactly the exact sum, or 2^16 + a rounding of s (nothing else), or 0 off the crafted part.
    int last_kept[2] = {-1, -1};  // per sign: the largest e such that every e' <= e was kept
    bool gap[2] = {false, false};
    std::printf("\n%s\n   e  +s kept?            -s kept?\n", pl.what);
    for (int e = 0; e <= 34; ++e) {
      std::printf("  %2d", e);
      for (int neg = 0; neg < 2; ++neg) {
        const int col = e <= 17 ? 0 : 1, rp = e <= 17 ? e : e - 17, row = rp + 18 * neg;
        const double s = (neg ? -1.0 : 1.0) * std::ldexp(1.0, 16 - e);
        const double got = d[row * BN + col], arrived = got - 65536.0;
        const char* verdict = arrived == s ? "kept" : arrived == 0 ? "lost" : "part";
        // Accepted: all of s, none of it, or a part of it of the same sign (a truncated addend); anything
        // else (a lost big product, a wrong sign, NaN: an element never written) is a bug of this program.
        const bool part = arrived != 0 && (arrived > 0) == (s > 0) && std::fabs(arrived) < std::fabs(s);
        if (!std::isfinite(got) || !(arrived == s || arrived == 0 || part)) ++bad;
        if (arrived == s && !gap[neg]) last_kept[neg] = e;
        if (arrived != s) gap[neg] = true;
        std::printf("  %-4s %12.6g  ", verdict, arrived / s);
      }
      std::printf("\n");
    }
    for (int r = 0; r < BM; ++r)
      for (int c = 0; c < BN; ++c)
        if ((r >= 36 || c >= 2) && d[r * BN + c] != 0.f) ++bad;
    std::printf("kept every e up to: +s %d, -s %d  (%s)\n", last_kept[0], last_kept[1], pl.what);
  }
  CHECK_CUDA(cudaFree(a_d));
  CHECK_CUDA(cudaFree(b_d));
  CHECK_CUDA(cudaFree(d_d));
  if (bad) {
    std::fprintf(stderr, "error: %d results are neither the crafted sum nor a rounding of it (an indexing bug)\n", bad);
    return 1;
  }
  return 0;
}
