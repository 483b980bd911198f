// Step 10 — bf16 warptiling on CUDA cores, on step 08: the baseline of the Hopper table. Step 08's
// warptiling structure (block tile -> warp tile -> thread sub-tiles) on the bf16 problem C = A * B^T:
// A and B are both K-major, so each thread loads one 16-byte vector (8 bf16) of a row of A and of B
// per K tile, widens it to fp32 and stores it transposed (sA[k][m], sB[k][n]); the inner loop then
// reads float4s along M and N and runs TM*TN FFMAs per pair, exactly as in fp32. The tile is retuned
// for the new loads (128x128x16, 64x32 warp tiles, 4x4 per thread). No tensor cores: this is what
// steps 11 and on are measured against (CUDA-core fp32 peak ~67 TFLOP/s).
// Prediction: ~30 TFLOP/s at 4096, about what strict-fp32 warptiling reaches (a public bf16
// ladder's CUDA-core step: 32 TFLOP/s at 8192 on this H200); ~4 % of cuBLAS bf16.
// SASS: FFMA-dominated inner loop, LDS.128 of sA/sB, one LDG.E.128 per operand per K tile.
// Supports: K % 8 == 0 (16-byte vector loads of rows of A and B), any M, N >= 1 (partial tiles are
// zero-filled and stores clipped), ceil(M / 128) <= 65535 (grid y). Built for sm_90a only.
// Run: make run STEP=10 M=4096 N=4096 K=4096
#include <cuda_bf16.h>

#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step10 {

constexpr int BM = 128, BN = 128, BK = 16;  // block tile
constexpr int WM = 64, WN = 32;             // warp tile
constexpr int TM = 4, TN = 4;               // thread sub-tile (one float4 of sA and of sB)
constexpr int WMITER = 2, WNITER = 2;       // sub-tiles per thread along M and N
constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
constexpr int VEC = 8;  // bf16 per 16-byte load
static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");
static_assert(WM == WMITER * 8 * TM && WN == WNITER * 4 * TN,
              "a warp's 8 x 4 lanes, each TM x TN, repeated WMITER x WNITER times, cover the warp tile");
static_assert(BM * BK == THREADS * VEC && BN * BK == THREADS * VEC,
              "each thread loads exactly one 16-byte vector of A and one of B per K tile");
static_assert(BM == BN, "A and B tiles share the load mapping (row = tid / (BK / VEC))");

__global__ void __launch_bounds__(THREADS)
gemm_bf16_warptiling(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C) {
  __shared__ __align__(16) float sA[BK][BM];  // A tile transposed, widened to fp32
  __shared__ __align__(16) float sB[BK][BN];  // B tile transposed (B is N x K), widened to fp32
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / (BN / WN), wn = warp % (BN / WN);  // this warp's tile in the block tile
  const int lm = lane / 4, ln = lane % 4;                   // this lane's place in the 8 x 4 grid
  const int64_t m0 = int64_t(blockIdx.y) * BM, n0 = int64_t(blockIdx.x) * BN;
  // Load mapping: two threads per row of 16 K values; neighbours share one 32-byte sector.
  const int lrow = tid / (BK / VEC), lk = tid % (BK / VEC) * VEC;

  float acc[WMITER * TM][WNITER * TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    // K % 8 == 0, so a vector of 8 is either wholly inside K or wholly outside: zero-fill it.
    uint4 va = make_uint4(0, 0, 0, 0), vb = make_uint4(0, 0, 0, 0);
    if (m0 + lrow < M && k0 + lk < K) va = *reinterpret_cast<const uint4*>(A + (m0 + lrow) * K + k0 + lk);
    if (n0 + lrow < N && k0 + lk < K) vb = *reinterpret_cast<const uint4*>(B + (n0 + lrow) * K + k0 + lk);
    __syncthreads();  // the previous tile's FFMAs are done with sA / sB
    const __nv_bfloat16* ha = reinterpret_cast<const __nv_bfloat16*>(&va);
    const __nv_bfloat16* hb = reinterpret_cast<const __nv_bfloat16*>(&vb);
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      sA[lk + j][lrow] = __bfloat162float(ha[j]);
      sB[lk + j][lrow] = __bfloat162float(hb[j]);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float rA[WMITER * TM], rB[WNITER * TN];
#pragma unroll
      for (int i = 0; i < WMITER; ++i)
        *reinterpret_cast<float4*>(&rA[i * TM]) = *reinterpret_cast<const float4*>(&sA[k][wm * WM + i * 8 * TM + lm * TM]);
#pragma unroll
      for (int j = 0; j < WNITER; ++j)
        *reinterpret_cast<float4*>(&rB[j * TN]) = *reinterpret_cast<const float4*>(&sB[k][wn * WN + j * 4 * TN + ln * TN]);
#pragma unroll
      for (int a = 0; a < WMITER * TM; ++a)
#pragma unroll
        for (int b = 0; b < WNITER * TN; ++b) acc[a][b] += rA[a] * rB[b];
    }
  }

  // Epilogue: each thread owns WMITER x WNITER sub-tiles of TM rows x TN adjacent columns.
  const bool vec4 = N % TN == 0;  // then a row's TN outputs are 8-byte aligned
#pragma unroll
  for (int i = 0; i < WMITER; ++i)
#pragma unroll
    for (int r = 0; r < TM; ++r) {
      const int64_t row = m0 + wm * WM + i * 8 * TM + lm * TM + r;
      if (row >= M) continue;
#pragma unroll
      for (int j = 0; j < WNITER; ++j) {
        const int64_t col = n0 + wn * WN + j * 4 * TN + ln * TN;
        const float* v = &acc[i * TM + r][j * TN];
        __nv_bfloat16* c = C + row * N + col;
        if (vec4 && col + TN <= N) {
          __nv_bfloat162 lo = __floats2bfloat162_rn(v[0], v[1]), hi = __floats2bfloat162_rn(v[2], v[3]);
          uint2 packed = make_uint2(*reinterpret_cast<uint32_t*>(&lo), *reinterpret_cast<uint32_t*>(&hi));
          *reinterpret_cast<uint2*>(c) = packed;
        } else {
#pragma unroll
          for (int q = 0; q < TN; ++q)
            if (col + q < N) c[q] = __float2bfloat16_rn(v[q]);
        }
      }
    }
}

void launch(const gemm::Bf16Gemm& p, cudaStream_t stream) {
  const dim3 grid((p.n + BN - 1) / BN, (p.m + BM - 1) / BM);
  gemm_bf16_warptiling<<<grid, THREADS, 0, stream>>>(p.m, p.n, p.k, p.a, p.b, p.c);
  CUDA_CHECK_LAUNCH();
}

std::optional<std::string> unsupported(int m, int n, int k) {
  if (k % VEC != 0) return std::string("K % 8 == 0 is required (16-byte vector loads of the rows of A and B); K=") + std::to_string(k);
  if (auto why = gemm::grid_refusal("M", m, BM, 1)) return why;
  return gemm::grid_refusal("N", n, BN, 0);
}

const bool registered = gemm::register_step({
    .id = "10",
    .name = "bf16_warptiling",
    .parent = "08",
    .technique = "bf16 in, fp32 FFMA warptiling on CUDA cores (Hopper baseline)",
    .dtype = gemm::Dtype::bf16,
    .bf16 = &launch,
    .unsupported = &unsupported,
    .required_cc = 90,
    .tile = {BM, BN, BK, 1},
    .threads = THREADS,
});

}  // namespace step10
