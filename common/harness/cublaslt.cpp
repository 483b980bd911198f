#include "cublaslt.hpp"

#include <fmt/format.h>

#include "../kernel_lib/check.hpp"

namespace gemm {

namespace {
constexpr size_t kLtWorkspace = size_t(32) << 20;

template <typename T>
T algo_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T v{};
  size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof v, &written) != CUBLAS_STATUS_SUCCESS) return T{};
  return v;
}
}  // namespace

LtGemm::LtGemm(Dtype dtype, int m, int n, int k, float alpha, float beta, int max_algos)
    : dtype_(dtype), alpha_(alpha), beta_(beta), workspace_(kLtWorkspace) {
  CUBLAS_CHECK(cublasLtCreate(&handle_));
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cudaDataType_t t = dtype == Dtype::fp32 ? CUDA_R_32F : CUDA_R_16BF;
  // Column-major view of the row-major problem: C^T (n x m) = op(B') * A^T, with
  //  fp32: B' = B^T stored as column-major n x k (ld n), no transpose; A^T column-major k x m (ld k).
  //  bf16: B (n x k row-major) is column-major k x n (ld k), transposed; A^T column-major k x m.
  const cublasOperation_t ta = dtype == Dtype::fp32 ? CUBLAS_OP_N : CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  if (dtype == Dtype::fp32)
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la_, t, n, k, n));
  else
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la_, t, k, n, k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lb_, t, k, m, k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lc_, t, n, m, n));

  find_algos(max_algos, fmt::format("{} M={} N={} K={}", dtype_name(dtype), m, n, k));
}

namespace {
std::string fp8_what(const Fp8Gemm& p, bool fast_accum, LtScales scales) {
  return fmt::format("fp8 {}{} M={} N={} K={}", scales == LtScales::outer_vector ? "per-row (outer vector)" : scaling_name(p.scaling),
                     fast_accum ? " fast-accumulation" : "", p.m, p.n, p.k);
}
// The FP8 constructor's refusals, before any member allocates (dtype_ is initialised first).
Dtype checked_fp8(const Fp8Gemm& p, bool fast_accum, LtScales scales) {
  if (scales == LtScales::outer_vector && p.scaling != Scaling::per_tensor)
    throw Error(fmt::format("cuBLASLt {}: per-row scales come in the per-tensor pointers (scale_a, scale_b), not in "
                            "block scales", fp8_what(p, fast_accum, scales)));
  if (p.scaling == Scaling::block && fast_accum)
    throw Error(fmt::format("cuBLASLt {}: block scaling has no fast-accumulation mode (cuBLASLt 13 offers no "
                            "algorithm for it on Hopper: tried on the H200, 2026-12)", fp8_what(p, fast_accum, scales)));
  if (p.k % 16 != 0)
    throw Error(fmt::format("cuBLASLt {}: FP8 needs K % 16 == 0 (16-byte aligned rows of 8-bit A and B)",
                            fp8_what(p, fast_accum, scales)));
  return Dtype::fp8;
}
}  // namespace

LtGemm::LtGemm(const Fp8Gemm& p, bool fast_accum, int max_algos, LtScales scales)
    : dtype_(checked_fp8(p, fast_accum, scales)), alpha_(1.0f), beta_(0.0f), workspace_(kLtWorkspace) {
  const std::string what = fp8_what(p, fast_accum, scales);
  CUBLAS_CHECK(cublasLtCreate(&handle_));
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;  // TN: the only FP8 layout on Hopper
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  // Swapped operands: cuBLASLt's A is our B, so its A scale is scale_b (per tensor) or sfb (block).
  const float* sa = p.scale_b;
  const float* sb = p.scale_a;
  if (p.scaling == Scaling::block) {
    // Block scaling (cuBLAS docs, cublasLtMatmulMatrixScale_t: CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F,
    // "a dedicated CUDA_R_32F scaling factor for each 128-element block in the innermost dimension",
    // and BLK128x128_32F, one per 128 x 128 block; cublasLt.h, CUDA 13.0). cuBLASLt's B is our A
    // (column-major K x M): its VEC128 scales, one per row of A and K block, are our sfa as it is,
    // ceil(K/128) x M with M contiguous. cuBLASLt's A is our B (column-major K x N): its BLK128x128
    // scales are ceil(N/128) rows of ceil(K/128) K blocks, the rows 16-byte aligned (a leading
    // dimension rounded up to 4 floats), so sfb is copied into a harness-owned buffer with that
    // pitch. Not from the cuBLAS layout section itself (not reachable from here) but from PyTorch's
    // _scaled_mm checks (aten/src/ATen/native/cuda/ScaledBlas.cpp, is_blockwise_1x128_scaling: stride
    // (1, M); is_blockwise_128x128_scaling: stride (round_up(ceil(K/128), 4), 1)), which pass these
    // tensors to cuBLASLt unchanged with the same operand swap. Where M % 4 == 0 and K % 512 == 0
    // (every benchmark shape) the copy equals sfa / sfb byte for byte; a wrong guess elsewhere shows
    // as a reference dropped by its check against the fp64 oracle, never as a wrong number.
    const int32_t mode_a = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, mode_b = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode_a, sizeof mode_a));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode_b, sizeof mode_b));
    const size_t kb = size_t(p.k + 127) / 128, nb = size_t(p.n + 127) / 128, pitch = (kb + 3) / 4 * 4;
    sfb_padded_ = DeviceBuffer<float>(nb * pitch);
    CUDA_CHECK(cudaMemset(sfb_padded_.get(), 0, sfb_padded_.bytes()));
    CUDA_CHECK(cudaMemcpy2D(sfb_padded_.get(), pitch * sizeof(float), p.sfb, kb * sizeof(float), kb * sizeof(float), nb,
                            cudaMemcpyDeviceToDevice));
    sa = sfb_padded_.get();
    sb = p.sfa;
  }
  if (scales == LtScales::outer_vector) {
    // cublasLtMatmulMatrixScale_t, OUTER_VEC_32F (cublasLt.h, CUDA 13): "the vectors are expected to
    // have M and N elements respectively, and each (i, j)-th element of product of A and B is multiplied
    // by i-th element of A scale and j-th element of B scale", M and N being cuBLASLt's: its A is our B
    // (its M is our n), so sa = p.scale_b (n floats) and sb = p.scale_a (m floats), as set above.
    const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof mode));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof mode));
  }
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
  const int8_t fast = fast_accum ? 1 : 0;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la_, CUDA_R_8F_E4M3, p.k, p.n, p.k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lb_, CUDA_R_8F_E4M3, p.k, p.m, p.k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lc_, CUDA_R_16BF, p.n, p.m, p.n));
  find_algos(max_algos, what);
}

Fp8Gemm per_tensor_stand_in(const Fp8Gemm& p) {
  Fp8Gemm q = p;
  q.scaling = Scaling::per_tensor;
  q.sfa = q.sfb = nullptr;
  return q;
}

void LtGemm::find_algos(int max_algos, const std::string& what) {
  cublasLtMatmulPreference_t pref = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const size_t ws = kLtWorkspace;
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  std::vector<cublasLtMatmulHeuristicResult_t> found(std::max(max_algos, 1));
  int returned = 0;
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(handle_, op_, la_, lb_, lc_, lc_, pref,
                                                          int(found.size()), found.data(), &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS || returned == 0)
    throw Error(fmt::format("cuBLASLt found no algorithm for {} ({})", what, cublasGetStatusName(s)));
  for (int i = 0; i < returned; ++i)
    if (found[i].state == CUBLAS_STATUS_SUCCESS) algos_.push_back(found[i]);
}

LtGemm::~LtGemm() {
  if (lc_) cublasLtMatrixLayoutDestroy(lc_);
  if (lb_) cublasLtMatrixLayoutDestroy(lb_);
  if (la_) cublasLtMatrixLayoutDestroy(la_);
  if (op_) cublasLtMatmulDescDestroy(op_);
  if (handle_) cublasLtDestroy(handle_);
}

std::string LtGemm::describe(int i) const {
  const cublasLtMatmulAlgo_t& a = algos_.at(i).algo;
  return fmt::format("lt#{} (algo {}, tile id {}, stages id {}, split-k {})", i + 1,
                     algo_attr<int>(a, CUBLASLT_ALGO_CONFIG_ID), algo_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_TILE_ID),
                     algo_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_STAGES_ID),
                     algo_attr<int>(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM));
}

void LtGemm::run(int i, const void* a, const void* b, void* c, cudaStream_t stream) const {
  const cublasLtMatmulHeuristicResult_t& h = algos_.at(i);
  // Swapped operands (the row-major trick): B is cuBLASLt's A, A is its B.
  CUBLAS_CHECK(cublasLtMatmul(handle_, op_, &alpha_, b, la_, a, lb_, &beta_, c, lc_, c, lc_, &h.algo,
                              workspace_.get(), workspace_.bytes(), stream));
}

}  // namespace gemm
