// Step 09 — multistage cp.async pipeline, on step 08. Step 08 stages every K tile through registers
// (16 of them hold a tile in flight; each float costs an LDG and an STS). cp.async (PTX ISA, "Data
// Movement and Conversion Instructions: cp.async"; common/kernel_lib/ptx/cp_async.cuh) copies global
// -> shared with no register in between, into a ring of STAGES buffers: tiles kt+1 .. kt+STAGES-1 are
// in flight while tile kt is multiplied, one BAR.SYNC per tile. B comes as 16-byte copies; A lands
// transposed (sAT[k][m]) as 4-byte copies; the inner loop is 08's. Interior blocks copy with no
// predicate; edge blocks and the K tail zero-fill through cp.async's src-size. With the registers the
// staging freed, the tuner's best tile changes too (named here): 128x256x16, one block per SM, and
// 2 stages (one tile of math hides a copy on the H200; 3 measure the same).
// Prediction: +5-10 % over step 08 (no staging instructions or registers), ~1.0x cuBLAS.
// SASS: LDGSTS.E.BYPASS.128 (B) and LDGSTS.E (A) replace LDG + STS; LDGDEPBAR / DEPBAR.LE SB0.
// Supports: K % 4 == 0 and N % 4 == 0 (16-byte aligned rows), any M >= 1; ragged M and N and K
// tails are zero-filled by cp.async's src-size operand / masked; ceil(M / BM) <= 65535 (grid y).
// Run: make run STEP=09 M=4096 N=4096 K=4096
#include <string>

#include "../common/kernel_lib/check.hpp"
#include "../common/kernel_lib/ptx/cp_async.cuh"
#include "../common/kernel_lib/refusals.hpp"
#include "../common/kernel_lib/registry.hpp"

namespace step09 {

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
  static_assert(THREADS % (BN / 4) == 0, "the threads cover whole rows of the B tile (row stride RB = THREADS / (BN / 4))");
};

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int MINB>
__global__ void __launch_bounds__(Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>::THREADS, MINB)
sgemm_async_copy_pipeline(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
  using T = Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>;
  constexpr int THREADS = T::THREADS, SM = T::SM, SN = T::SN, LDA = T::LDA;
  constexpr unsigned STAGE_BYTES = T::STAGE_FLOATS * 4;
  extern __shared__ float4 smem4[];  // STAGES x { sAT[BK][LDA], sB[BK][BN] }
  const float* smem = reinterpret_cast<const float*>(smem4);
  const unsigned smem_base = static_cast<unsigned>(__cvta_generic_to_shared(smem4));
  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  // This thread's first row and column inside the block tile (step 08's warp tiling).
  const int row0 = warp / (BN / WN) * WM + lane / T::WTC * 4;
  const int col0 = warp % (BN / WN) * WN + lane % T::WTC * 4;
  const int64_t m0 = blockIdx.y * int64_t(BM), n0 = blockIdx.x * int64_t(BN);
  const int KT = (K + BK - 1) / BK;

  // Each thread copies the floats (ra + it * RA, ca) of A and the float4s (rb + it * RB, cb) of B of
  // every K tile, to fixed offsets of a stage; the global addresses advance by BK columns / rows.
  constexpr int RA = THREADS / BK, RB = THREADS / (BN / 4);
  const int ra = t / BK, ca = t % BK, rb = t / (BN / 4), cb = t % (BN / 4) * 4;
  const float* gA = A + (m0 + ra) * K + ca;         // this thread's first float of A, K tile 0
  const float* gB = B + int64_t(rb) * N + n0 + cb;  // this thread's first float4 of B, K tile 0
  const int64_t strideA = int64_t(RA) * K, strideB = int64_t(RB) * N;
  const unsigned sA_dst = smem_base + (ca * LDA + ra) * 4, sB_dst = smem_base + (BK * LDA + rb * BN + cb) * 4;
  const bool interior = m0 + BM <= M && n0 + BN <= N;  // no row or column of the block tile is outside C
  // Issue (not wait for) the copies of the K tile that starts at column k0 of A (a) / row k0 of B (b).
  auto load_tile = [&](unsigned stage, int k0, const float* a, const float* b) {
    if (interior && k0 + BK <= K) {  // every block but the edges, every tile but a K tail: no predicate
#pragma unroll
      for (int it = 0; it < BM * BK / THREADS; ++it) ptx::cp_async_4(sA_dst + stage + it * RA * 4, a + it * strideA);
#pragma unroll
      for (int it = 0; it < BK * BN / 4 / THREADS; ++it) ptx::cp_async_16(sB_dst + stage + it * RB * BN * 4, b + it * strideB);
    } else {  // zero-fill what lies outside A or B; out-of-range copies read nothing (src-size 0)
#pragma unroll
      for (int it = 0; it < BM * BK / THREADS; ++it) {
        const bool in = m0 + ra + it * RA < M && k0 + ca < K;
        ptx::cp_async_4(sA_dst + stage + it * RA * 4, in ? a + it * strideA : A, in ? 4 : 0);
      }
#pragma unroll
      for (int it = 0; it < BK * BN / 4 / THREADS; ++it) {
        const bool in = k0 + rb + it * RB < K && n0 + cb < N;
        ptx::cp_async_16(sB_dst + stage + it * RB * BN * 4, in ? b + it * strideB : B, in ? 16 : 0);
      }
    }
  };

  // Prologue: STAGES - 1 tiles in flight. Every iteration below commits one group (empty past the
  // last tile) so that "wait until STAGES - 2 groups are pending" always means "the next tile landed".
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KT) load_tile(s * STAGE_BYTES, s * BK, gA + s * BK, gB + int64_t(s) * BK * N);
    ptx::cp_async_commit();
  }
  ptx::cp_async_wait<STAGES - 2>();  // tile 0 has landed for this thread ...
  __syncthreads();                   // ... and for everyone

  float acc[TM][TN] = {};
  float rA[2][TM], rB[2][TN];  // fragments, double-buffered: k + 1 is read while k is multiplied
  static_assert(BK % 2 == 0, "tile kt's last k step and tile kt + 1's first use different buffers");
  auto load_frag = [&](int buf, unsigned stage, int kk) {
    const float* sAT = smem + stage / 4;
    const float* sB = sAT + BK * LDA;
#pragma unroll
    for (int i = 0; i < TM; i += 4)  // WTR distinct adjacent float4s per warp: no conflict
      *reinterpret_cast<float4*>(&rA[buf][i]) = *reinterpret_cast<const float4*>(&sAT[kk * LDA + row0 + i / 4 * SM]);
#pragma unroll
    for (int j = 0; j < TN; j += 4)  // WTC distinct adjacent float4s per warp
      *reinterpret_cast<float4*>(&rB[buf][j]) = *reinterpret_cast<const float4*>(&sB[kk * BN + col0 + j / 4 * SN]);
  };
  load_frag(0, 0, 0);
  unsigned rs = 0, ws = (STAGES - 1) * STAGE_BYTES;  // byte offsets of the stage read and the stage refilled
  const float* a_next = gA + (STAGES - 1) * BK;      // tile kt + STAGES - 1
  const float* b_next = gB + int64_t(STAGES - 1) * BK * N;
  for (int kt = 0; kt < KT; ++kt) {
    // Refill the stage that tile kt - 1 used: everyone finished reading it before the last barrier.
    if (kt + STAGES - 1 < KT) load_tile(ws, (kt + STAGES - 1) * BK, a_next, b_next);
    ptx::cp_async_commit();
    ws = ws == (STAGES - 1) * STAGE_BYTES ? 0 : ws + STAGE_BYTES;
    a_next += BK, b_next += int64_t(BK) * N;
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      if (kk == BK - 1) {  // the next read is tile kt + 1's first k: wait for it, then switch stages
        ptx::cp_async_wait<STAGES - 2>();
        __syncthreads();
        rs = rs == (STAGES - 1) * STAGE_BYTES ? 0 : rs + STAGE_BYTES;
      }
      load_frag((kk + 1) % 2, rs, (kk + 1) % BK);  // past the last tile: a harmless read of a stale stage
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += rA[kk % 2][i] * rB[kk % 2][j];
    }
  }
  ptx::cp_async_wait<0>();  // no copy may still target shared memory when the block exits
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
  auto kernel = sgemm_async_copy_pipeline<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>;
  // Over 48 KB of dynamic shared memory must be opted into (CUDA C Programming Guide, "Shared Memory").
  static const cudaError_t attr = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::SMEM_BYTES);
  CUDA_CHECK(attr);
  const dim3 grid((p.n + BN - 1) / BN, (p.m + BM - 1) / BM);
  kernel<<<grid, T::THREADS, T::SMEM_BYTES, stream>>>(p.m, p.n, p.k, p.alpha, p.a, p.b, p.beta, p.c);
  CUDA_CHECK_LAUNCH();
}

// Chosen by scripts/tune_fp32.py on the H200 (results/tuning/fp32_h200_08_09.csv, 84 points): a
// 128x256 block tile of 8 warps, warp tiles 32x128, 8x16 per thread, BK = 16, 2 stages, 223
// registers, 1 block/SM. Tuner: 51.25 / 51.98 TFLOP/s at 4096 / 8192 (1.00x / 1.02x cuBLAS); 3
// stages 51.17 / 51.98, the 16x8 thread tile 51.04 / 51.66 (3 stages). Hand-measured variants of
// the loop (FFMA order, BK, load placement, rasterization): results/tuning/fp32_h200_08_09_pipeline.csv.
constexpr int BM = 128, BN = 256, BK = 16, WM = 32, WN = 128, TM = 8, TN = 16, STAGES = 2, MINB = 1;
void launch(const gemm::Fp32Gemm& p, cudaStream_t stream) {
  launch_tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>(p, stream);
}

// cp.async of 16 bytes needs 16-byte aligned source and destination (PTX ISA, cp.async): rows of B
// and C start r * N floats in, so N % 4 == 0. A comes in 4-byte copies and would take any K; the
// K % 4 == 0 refusal is kept so that steps 06-09b accept the same shapes (step 08 loads A as float4).
std::optional<std::string> unsupported(int m, int n, int k) { return gemm::float4_rows_refusal(m, n, k, BM); }

const bool registered = gemm::register_step({
    .id = "09",
    .name = "async_copy_pipeline",
    .parent = "08",
    .technique = "multistage cp.async global->shared pipeline (STAGES buffers)",
    .dtype = gemm::Dtype::fp32,
    .fp32 = &launch,
    .unsupported = &unsupported,
    .tile = {BM, BN, BK, STAGES},
    .threads = Tiles<BM, BN, BK, WM, WN, TM, TN, STAGES, MINB>::THREADS,
});

}  // namespace step09
