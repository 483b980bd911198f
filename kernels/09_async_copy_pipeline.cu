// Step 09 — multistage cp.async pipeline. In step 08 every K tile goes global -> registers ->
// shared, then BAR.SYNC, then math: a warp's FFMAs wait for its own loads, and only other resident
// blocks hide that latency. Here cp.async (PTX ISA, "Data Movement and Conversion Instructions:
// cp.async") copies global -> shared without registers, into a ring of STAGES buffers: tiles
// kt+1 .. kt+STAGES-1 are in flight while tile kt is multiplied, with one BAR.SYNC per tile.
// cp.async copies bytes verbatim and cannot transpose, so sA is now K-contiguous (sA[m][k], rows
// padded to BK + 4 floats); a thread reads 4 k at once per row with LDS.128 and its TM rows are
// interleaved WTR apart, so a warp's float4s land in distinct banks ((BK + 4) / 4 odd).
// Expected: 1.05-1.2x step 08, reaching ~1.0x cuBLAS at 4096 and 8192 once tuned (issue 3).
// SASS: LDGSTS.E.BYPASS.128 (cp.async.cg) replaces LDG + STS; LDGDEPBAR / DEPBAR (commit / wait).
// Measured (H200, same-run cuBLAS): 43.9 TFLOP/s at 4096 (0.86x), 45.0 at 8192 (0.89x): +1.5-3% over
// step 08, the best fp32 step, and short of the 1.00x target (see docs/fp32_ladder.md for why).
// Supports: K % 4 == 0 and N % 4 == 0 (16-byte aligned rows), any M >= 1; ragged M and N and K
// tails are zero-filled by cp.async's src-size operand / masked; ceil(M / BM) <= 65535 (grid y).
// Run: make run STEP=09 M=4096 N=4096 K=4096
#include <string>

#include "../common/check.hpp"
#include "../common/registry.hpp"

namespace step09 {

// 16-byte global -> shared copy that bypasses L1 (.cg); src_bytes = 0 writes 16 zero bytes and
// reads nothing (the "src-size" operand of cp.async), which is how tiles past M, N or K are zeroed.
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, int src_bytes) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's committed groups are still pending.
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int MINB>
struct Tiles {
  static constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
  static constexpr int WTR = WM / TM, WTC = WN / TN;  // the lanes of a warp: WTR rows x WTC columns
  static constexpr int SN = 4 * WTC;                   // stride between a thread's float4 column groups
  static constexpr int LDA = BK + 4;                   // padded row of sA, in floats
  static constexpr int STAGE_FLOATS = BM * LDA + BK * BN;
  static constexpr int SMEM_BYTES = STAGES * STAGE_FLOATS * 4;
  static_assert(BM % WM == 0 && BN % WN == 0, "the warp tiles must cover the block tile exactly");
  static_assert(WM % TM == 0 && WN % TN == 0 && WTR * WTC == 32, "32 thread tiles cover a warp tile");
  static_assert(TN % 4 == 0 && BK % 4 == 0, "TN and BK are read as float4");
  static_assert((LDA / 4) % 2 == 1, "(BK + 4) / 4 must be odd: a warp's WTR adjacent rows of sA hit distinct banks");
  static_assert(THREADS <= 1024, "at most 1024 threads per block");
  static_assert(MINB >= 1 && MINB * THREADS <= 2048, "an SM holds at most 2048 threads (sm_90)");
  static_assert(STAGES >= 2, "a pipeline needs at least two buffers");
  static_assert(MINB * SMEM_BYTES <= 227 * 1024, "MINB blocks' stages must fit in 227 KB of shared memory (sm_90)");
  static_assert((BM * BK / 4) % THREADS == 0, "each thread copies the same number of float4 of A");
  static_assert((BK * BN / 4) % THREADS == 0, "each thread copies the same number of float4 of B");
};

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int MINB>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>::THREADS, MINB)
sgemm_async_pipeline(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  using T = Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>;
  constexpr int THREADS = T::THREADS, SN = T::SN, LDA = T::LDA, WTR = T::WTR;
  extern __shared__ float4 smem4[];  // STAGES x { sA[BM][LDA], sB[BK][BN] }
  float* smem = reinterpret_cast<float*>(smem4);
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  // This thread's rows: row0 + i * WTR (interleaved); columns: col0 + j / 4 * SN, 4 at a time.
  const int row0 = warp / (BN / WN) * WM + lane / T::WTC;
  const int col0 = warp % (BN / WN) * WN + lane % T::WTC * 4;
  const int64_t m0 = blockIdx.y * int64_t(BM), n0 = blockIdx.x * int64_t(BN);
  const int KT = (K + BK - 1) / BK;

  auto load_tile = [&](int stage, int kt) {  // issue (not wait for) the copies of K tile kt
    float* sA = smem + stage * T::STAGE_FLOATS;
    float* sB = sA + BM * LDA;
    const int k0 = kt * BK;
#pragma unroll
    for (int it = 0; it < BM * BK / 4 / THREADS; ++it) {  // a compile-time trip count: fully unrolled
      const int i = t + it * THREADS, r = i / (BK / 4), c = i % (BK / 4) * 4;
      const bool in = m0 + r < M && k0 + c < K;  // K % 4 == 0: a float4 is wholly in or out
      cp_async_16(&sA[r * LDA + c], in ? &A[(m0 + r) * K + k0 + c] : A, in ? 16 : 0);
    }
#pragma unroll
    for (int it = 0; it < BK * BN / 4 / THREADS; ++it) {
      const int i = t + it * THREADS, r = i / (BN / 4), c = i % (BN / 4) * 4;
      const bool in = k0 + r < K && n0 + c < N;
      cp_async_16(&sB[r * BN + c], in ? &B[(k0 + r) * int64_t(N) + n0 + c] : B, in ? 16 : 0);
    }
  };

  // Prologue: STAGES - 1 tiles in flight. Every iteration commits one group (empty past the last
  // tile) so that "wait until STAGES - 2 groups are pending" always means "tile kt has landed".
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KT) load_tile(s, s);
    cp_async_commit();
  }

  float acc[TM][TN] = {};
  float4 rA[TM];  // rA[i]: k .. k+3 of row i
  float rB[TN];
  for (int kt = 0; kt < KT; ++kt) {
    cp_async_wait<STAGES - 2>();  // this thread's copies of tile kt are done ...
    __syncthreads();  // ... and everyone's; everyone has also finished the math of tile kt - 1
    const int next = kt + STAGES - 1;  // refill the buffer that tile kt - 1 used
    if (next < KT) load_tile(next % STAGES, next);
    cp_async_commit();

    const float* sA = smem + (kt % STAGES) * T::STAGE_FLOATS;
    const float* sB = sA + BM * LDA;
#pragma unroll
    for (int k4 = 0; k4 < BK; k4 += 4) {
#pragma unroll
      for (int i = 0; i < TM; ++i) rA[i] = *reinterpret_cast<const float4*>(&sA[(row0 + i * WTR) * LDA + k4]);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
        for (int j = 0; j < TN; j += 4)
          *reinterpret_cast<float4*>(&rB[j]) = *reinterpret_cast<const float4*>(&sB[(k4 + kk) * BN + col0 + j / 4 * SN]);
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          const float a = kk == 0 ? rA[i].x : kk == 1 ? rA[i].y : kk == 2 ? rA[i].z : rA[i].w;
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] += a * rB[j];
        }
      }
    }
  }
  cp_async_wait<0>();  // no copy may still target shared memory when the block exits
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t row = m0 + row0 + i * WTR;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int64_t col = n0 + col0 + j / 4 * SN;
      if (row >= M || col >= N) continue;  // ragged edge; N % 4 == 0: the float4 is wholly in or out
      float4* c = reinterpret_cast<float4*>(&C[row * N + col]);
      float4 v = make_float4(alpha * acc[i][j], alpha * acc[i][j + 1], alpha * acc[i][j + 2], alpha * acc[i][j + 3]);
      if (beta != 0.0f) {  // beta == 0: C is never read
        const float4 c0 = *c;
        v.x += beta * c0.x, v.y += beta * c0.y, v.z += beta * c0.z, v.w += beta * c0.w;
      }
      *c = v;
    }
  }
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int MINB>
void launch_tiles(const gemm::Fp32Gemm& p, cudaStream_t stream) {
  using T = Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>;
  auto kernel = sgemm_async_pipeline<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>;
  // Over 48 KB of dynamic shared memory must be opted into (CUDA C Programming Guide, "Shared Memory").
  static const cudaError_t attr = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::SMEM_BYTES);
  CUDA_CHECK(attr);
  const dim3 grid((p.n + BN - 1) / BN, (p.m + BM - 1) / BM);
  kernel<<<grid, T::THREADS, T::SMEM_BYTES, stream>>>(p.m, p.n, p.k, p.alpha, p.a, p.b, p.beta, p.c);
  CUDA_CHECK_LAUNCH();
}

// Chosen by scripts/tune_fp32.py on the H200 (results/tuning/fp32_h200.csv, 60 points): 43.9 TFLOP/s
// at 4096 (0.85x cuBLAS), 45.1 at 8192 (0.88x); 128 threads, 223 registers, 2 blocks/SM. Step 08's
// 128x128x16 tile here needs 167 registers (rA holds 4 k of 8 rows), so 1 block/SM: 41.3.
constexpr int BM = 128, BN = 64, BK = 32, WM = 32, WN = 64, TM = 8, TN = 8, STAGES = 3, MINB = 1;
void launch(const gemm::Fp32Gemm& p, cudaStream_t stream) {
  launch_tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>(p, stream);
}

// cp.async of 16 bytes needs 16-byte aligned source and destination (PTX ISA, cp.async): rows of A
// start r * K floats in, so K % 4 == 0; rows of B and C, N % 4 == 0.
std::optional<std::string> unsupported(int m, int n, int k) {
  if (k % 4 != 0)
    return "K=" + std::to_string(k) + " is not a multiple of 4: rows of A must be 16-byte aligned for 16-byte cp.async";
  if (n % 4 != 0)
    return "N=" + std::to_string(n) + " is not a multiple of 4: rows of B and C must be 16-byte aligned for 16-byte cp.async / float4 stores";
  return gemm::grid_refusal("M", m, BM, 1);
}

const bool registered = gemm::register_step({
    .id = "09",
    .name = "async_copy_pipeline",
    .technique = "multistage cp.async global->shared pipeline (STAGES buffers)",
    .dtype = gemm::Dtype::fp32,
    .fp32 = &launch,
    .unsupported = &unsupported,
});

}  // namespace step09
