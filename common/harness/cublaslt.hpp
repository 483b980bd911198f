// cuBLASLt best-of-N: the strongest cuBLAS a user could pick for one shape. cuBLAS's default
// heuristic picks one kernel; cublasLtMatmulAlgoGetHeuristic ranks several, and at some shapes a
// lower-ranked one is faster (on the H200 at 8192^3 bf16 the 2nd-4th were 1.025-1.028x the first).
// The harness times the top N and keeps the fastest as the "cublaslt_best" reference.
// cuBLASLt reference: "cublasLtMatmul", "cublasLtMatmulAlgoGetHeuristic".
#pragma once
#include <cublasLt.h>

#include <string>
#include <vector>

#include "buffer.hpp"
#include "../kernel_lib/registry.hpp"

namespace gemm {

/// Which scales an FP8 LtGemm reads: those of the problem's Scaling (Fp8Gemm's pointers as registry.hpp
/// lays them out), or one per row (outer_vector, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, cuBLASLt
/// 12.9 on, for Hopper: Fp8Gemm::scale_a then holds m floats, one per row of A, and scale_b n floats,
/// one per row of B, and C[i][j] = scale_a[i] * scale_b[j] * sum_k qa[i][k] * qb[j][k]; fp8.hpp's
/// row_grid is their quantization).
enum class LtScales { as_problem, outer_vector };

/// The problem of one step's dtype, laid out as the harness does (see registry.hpp), prepared for
/// cuBLASLt: fp32 C = alpha * A * B + beta * C (strict FP32, CUBLAS_COMPUTE_32F: no TF32), bf16
/// C = A * B^T (bf16 in and out, CUBLAS_COMPUTE_32F). Both use the row-major trick of
/// cublas_sgemm (common/kernel_lib/cublas.hpp): column-major C^T is computed from B and A swapped.
/// Owns the Lt handle, the descriptors and a 32 MiB workspace (what cuBLAS itself uses on Hopper).
class LtGemm {
 public:
  /// Queries up to `max_algos` algorithms for the shape. Throws gemm::Error when cuBLASLt fails or
  /// returns no algorithm.
  LtGemm(Dtype dtype, int m, int n, int k, float alpha, float beta, int max_algos);
  /// FP8 (cuBLASLt, "cublasLtMatmul", FP8 data types): e4m3 A and B, bf16 C, CUBLAS_COMPUTE_32F,
  /// the TN layout the FP8 kernels require (cuBLASLt's A transposed, its B not: our B, n x k row-major,
  /// is its A; our A its B, as for bf16). Per tensor: CUBLASLT_MATMUL_DESC_A_SCALE_POINTER /
  /// B_SCALE_POINTER set to p.scale_b / p.scale_a (the operands are swapped), so D = scale_a scale_b
  /// (A B^T). `fast_accum` sets CUBLASLT_MATMUL_DESC_FAST_ACCUM: the accumulators stay in the tensor
  /// core for the whole of K instead of being promoted to fp32 periodically. Block scaling
  /// (Scaling::block): CUBLASLT_MATMUL_DESC_B_SCALE_MODE = VEC128_32F with p.sfa (our A is its B) and
  /// A_SCALE_MODE = BLK128x128_32F with a copy of p.sfb whose rows are padded to 4 floats (the
  /// constructor says where that layout comes from); with `fast_accum` it throws gemm::Error (no such
  /// mode). The scale pointers are fixed here, so run() must be given p's A, B and C, and p.sfb must
  /// not change after construction (it is copied). `scales` = outer_vector: per-row scales (LtScales;
  /// p.scaling must be per_tensor, whose two pointers then point at the m and n floats), with or
  /// without fast accumulation as cuBLASLt has algorithms for. cuBLASLt needs K % 16 == 0 (16-byte aligned
  /// leading dimensions for 8-bit types); other shapes, like cuBLASLt failures, throw gemm::Error.
  LtGemm(const Fp8Gemm& p, bool fast_accum, int max_algos, LtScales scales = LtScales::as_problem);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  int count() const { return int(algos_.size()); }
  /// "lt#2 (algo 66, tile 128x256, stages 4, split-k 1)": the rank in the heuristic's list and
  /// the algorithm's configuration.
  std::string describe(int i) const;
  /// Enqueues algorithm i on `stream` with the given buffers (same shape as construction).
  void run(int i, const void* a, const void* b, void* c, cudaStream_t stream) const;

 private:
  void find_algos(int max_algos, const std::string& what);
  Dtype dtype_;
  float alpha_, beta_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos_;
  DeviceBuffer<char> workspace_;
  DeviceBuffer<float> sfb_padded_;  ///< fp8 block scaling: sfb with a 16-byte row pitch (cuBLASLt's A scales)
};

/// The per-tensor problem on p's data, for the timing stand-in where cuBLASLt has no block-scaled
/// algorithm for a shape (measure.cpp, kLtStandIn): the same e4m3 A and B (m x k and n x k) and the
/// same C, Scaling::per_tensor, with p's per-tensor scale pointers (nullptr for a block-scaled p,
/// which cuBLASLt reads as scales of 1: cublasLt.h, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, "If not
/// specified, or set to NULL, the scaling factor is assumed to be 1") and no block scales. For a
/// block-scaled p it computes another product than p's (no block scale is applied), so its C is never
/// compared with p's oracle: it is timed, not checked.
Fp8Gemm per_tensor_stand_in(const Fp8Gemm& p);

}  // namespace gemm
