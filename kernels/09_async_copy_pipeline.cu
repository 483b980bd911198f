// Step 09 — multistage cp.async pipeline. In step 08 every K tile goes global -> registers ->
// shared, then BAR.SYNC, then math: a warp's FFMAs wait for its own loads, and only other resident
// blocks hide that latency. Here cp.async (PTX ISA, "Data Movement and Conversion Instructions:
// cp.async") copies global -> shared without registers, into a ring of STAGES buffers: tiles
// kt+1 .. kt+STAGES-1 are in flight while tile kt is multiplied, with one BAR.SYNC per tile. B comes
// as 16-byte copies; A must land transposed (sAT[k][m], 08's inner loop unchanged), so it comes as
// 4-byte copies, each float to its transposed place. No registers hold tiles in flight, so the
// thread tile grows to cuBLAS's shape (ncu: its kernel is 256x128x8, 256 threads, 3 stages).
// Expected: 1.05-1.2x step 08, ~1.0x cuBLAS. SASS: LDGSTS.E.BYPASS.128 (B) and LDGSTS.E (A)
// replace LDG + STS; LDGDEPBAR / DEPBAR (commit / wait). Measured (H200, same-run cuBLAS 51.1-51.3):
// 46.6 TFLOP/s at 4096 (0.91x), 46.9 at 8192 (0.92x): 1.08x step 08, short of 1.00x cuBLAS.
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

// 4-byte variant for A (cp.async.cg only takes 16 bytes, .ca goes through L1): one float, written
// to its transposed place in sAT; src_bytes = 0 writes a zero.
__device__ __forceinline__ void cp_async_4(void* smem, const void* gmem, int src_bytes) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes) : "memory");
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int MINB>
struct Tiles {
  static constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
  static constexpr int WTR = WM / TM, WTC = WN / TN;  // the lanes of a warp: WTR rows x WTC columns
  static constexpr int SM = 4 * WTR, SN = 4 * WTC;     // stride between a thread's float4 groups
  static constexpr int LDA = BM + 4;                   // padded row of sAT (= one k of A), in floats
  static constexpr int STAGE_FLOATS = BK * LDA + BK * BN;
  static constexpr int SMEM_BYTES = STAGES * STAGE_FLOATS * 4;
  static_assert(BM % WM == 0 && BN % WN == 0, "the warp tiles must cover the block tile exactly");
  static_assert(WM % TM == 0 && WN % TN == 0 && WTR * WTC == 32, "32 thread tiles cover a warp tile");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "TM, TN and BK are read as float4");
  // A warp's 4-byte copies of A cover 32 / BK rows x BK k: coalesced (BK consecutive floats of a
  // row) and, with rows of sAT 4 banks apart, conflict-free for BK = 8 (2-way for BK = 16).
  static_assert(BM % 32 == 0 && 32 % BK == 0, "a warp's 4-byte copies of A cover 32 / BK rows x BK k");
  static_assert(THREADS <= 1024, "at most 1024 threads per block");
  static_assert(MINB >= 1 && MINB * THREADS <= 2048, "an SM holds at most 2048 threads (sm_90)");
  static_assert(STAGES >= 2, "a pipeline needs at least two buffers");
  static_assert(MINB * SMEM_BYTES <= 227 * 1024, "MINB blocks' stages must fit in 227 KB of shared memory (sm_90)");
  static_assert((BM * BK) % THREADS == 0, "each thread copies the same number of floats of A");
  static_assert((BK * BN / 4) % THREADS == 0, "each thread copies the same number of float4 of B");
};

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int MINB>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>::THREADS, MINB)
sgemm_async_pipeline(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  using T = Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>;
  constexpr int THREADS = T::THREADS, SM = T::SM, SN = T::SN, LDA = T::LDA;
  extern __shared__ float4 smem4[];  // STAGES x { sAT[BK][LDA], sB[BK][BN] }
  float* smem = reinterpret_cast<float*>(smem4);
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  // This thread's first row and column inside the block tile (step 08's warp tiling).
  const int row0 = warp / (BN / WN) * WM + lane / T::WTC * 4;
  const int col0 = warp % (BN / WN) * WN + lane % T::WTC * 4;
  const int64_t m0 = blockIdx.y * int64_t(BM), n0 = blockIdx.x * int64_t(BN);
  const int KT = (K + BK - 1) / BK;

  // Each thread copies the floats (ra + it * THREADS / BK, ca) of A and the float4s (rb + it * THREADS
  // / (BN / 4), cb) of B of every K tile; their global addresses advance by BK columns / rows per tile.
  const int ra = t / BK, ca = t % BK, rb = t / (BN / 4), cb = t % (BN / 4) * 4;
  const float* gA = A + (m0 + ra) * K + ca;
  const float* gB = B + int64_t(rb) * N + n0 + cb;
  auto load_tile = [&](int stage, int kt) {  // issue (not wait for) the copies of K tile kt
    float* sAT = smem + stage * T::STAGE_FLOATS;
    float* sB = sAT + BK * LDA;
    const int k0 = kt * BK;
#pragma unroll
    for (int it = 0; it < BM * BK / THREADS; ++it) {  // a warp: 32 / BK rows x BK consecutive k
      constexpr int R = THREADS / BK;
      const bool in = m0 + ra + it * R < M && k0 + ca < K;
      cp_async_4(&sAT[ca * LDA + ra + it * R], in ? gA + int64_t(it * R) * K + k0 : A, in ? 4 : 0);
    }
#pragma unroll
    for (int it = 0; it < BK * BN / 4 / THREADS; ++it) {
      constexpr int R = THREADS / (BN / 4);
      const bool in = k0 + rb + it * R < K && n0 + cb < N;
      cp_async_16(&sB[(rb + it * R) * BN + cb], in ? gB + int64_t(k0 + it * R) * N : B, in ? 16 : 0);
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
  float rA[TM], rB[TN];
  for (int kt = 0; kt < KT; ++kt) {
    cp_async_wait<STAGES - 2>();  // this thread's copies of tile kt are done ...
    __syncthreads();  // ... and everyone's; everyone has also finished the math of tile kt - 1
    const int next = kt + STAGES - 1;  // refill the buffer that tile kt - 1 used
    if (next < KT) load_tile(next % STAGES, next);
    cp_async_commit();

    const float* sAT = smem + (kt % STAGES) * T::STAGE_FLOATS;
    const float* sB = sAT + BK * LDA;
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {  // step 08's inner loop
#pragma unroll
      for (int i = 0; i < TM; i += 4)  // WTR distinct adjacent float4s per warp: no conflict
        *reinterpret_cast<float4*>(&rA[i]) = *reinterpret_cast<const float4*>(&sAT[kk * LDA + row0 + i / 4 * SM]);
#pragma unroll
      for (int j = 0; j < TN; j += 4)  // WTC distinct adjacent float4s per warp
        *reinterpret_cast<float4*>(&rB[j]) = *reinterpret_cast<const float4*>(&sB[kk * BN + col0 + j / 4 * SN]);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += rA[i] * rB[j];
    }
  }
  cp_async_wait<0>();  // no copy may still target shared memory when the block exits
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t row = m0 + row0 + i / 4 * SM + i % 4;
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

// cuBLAS's tile shape (256x128, 8 warps of 64x64, 16x8 per thread), BK = 16, 3 stages: 223
// registers, 1 block/SM; 46.6 / 46.9 TFLOP/s at 4096 / 8192 (results/tuning/fp32_h200_09_sat.csv).
// BK = 8 (conflict-free A copies): 43.0 / 43.4; 128x128x8, 127 registers, 2 blocks/SM: 41.2.
constexpr int BM = 256, BN = 128, BK = 16, WM = 64, WN = 64, TM = 16, TN = 8, STAGES = 3, MINB = 1;
void launch(const gemm::Fp32Gemm& p, cudaStream_t stream) {
  launch_tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>(p, stream);
}

// cp.async of 16 bytes needs 16-byte aligned source and destination (PTX ISA, cp.async): rows of B
// and C start r * N floats in, so N % 4 == 0. A comes in 4-byte copies and would take any K; the
// K % 4 == 0 refusal is kept so that steps 06-09 accept the same shapes (step 08 loads A as float4).
std::optional<std::string> unsupported(int m, int n, int k) { return gemm::float4_rows_refusal(m, n, k, BM); }

const bool registered = gemm::register_step({
    .id = "09",
    .name = "async_copy_pipeline",
    .technique = "multistage cp.async global->shared pipeline (STAGES buffers)",
    .dtype = gemm::Dtype::fp32,
    .fp32 = &launch,
    .unsupported = &unsupported,
});

}  // namespace step09
