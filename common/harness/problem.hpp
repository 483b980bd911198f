// The buffers of one problem shape: inputs (generated once), C with its guard band, the reference
// result and the step workspace; what every check and timing shares. The references themselves are
// in reference.hpp.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>
#include <vector>

#include "buffer.hpp"
#include "compare.hpp"
#include "../kernel_lib/registry.hpp"

namespace gemm {

struct Problem {
  Dtype dtype = Dtype::fp32;
  int m = 1, n = 1, k = 1;
  float alpha = 1, beta = 0;  ///< fp32 only; bf16 computes C = A * B^T (alpha 1, beta 0)
  uint64_t seed = 2026;
  bool exact = false;  ///< inputs are integers in [-2, 2] (exact in fp32 and bf16), compared with ==
};

/// Buffers of one problem. Inputs are generated once (cuRAND Philox, seeded) at construction;
/// C has a guard band of kGuard elements after it.
class ProblemBuffers {
 public:
  static constexpr int64_t kGuard = 4096;
  explicit ProblemBuffers(const Problem& p);

  const Problem& problem() const { return p_; }
  Fp32Gemm fp32_args() const;  ///< pointing at the step's C and the step workspace (if reserved)
  Bf16Gemm bf16_args() const;

  /// Makes the step workspace at least `bytes` long: when it is smaller, frees it and allocates a new
  /// one of `bytes` (cudaMalloc, which synchronizes the device) and zeroes it; otherwise keeps it and
  /// its contents. Call outside timed regions. Throws gemm::Error when the allocation fails.
  void reserve_workspace(size_t bytes);
  /// Bytes of step workspace reserved so far (0 before the first reserve_workspace).
  size_t workspace_bytes() const { return workspace_.bytes(); }

  /// Fills C with C0 (fp32 with beta != 0) or NaN (otherwise), and the guard band with NaN.
  void reset_output(cudaStream_t stream);
  /// Runs the cuBLAS reference once (into its own buffer) and returns it; for bf16, cuBLAS with an
  /// fp32 C, rounded to bf16 once (reference.hpp, cublas_bf16_gemm_fp32_out, says why).
  std::vector<float> cublas_reference();
  /// fp64 CPU reference rounded to the output type (for small shapes).
  std::vector<float> cpu_reference();
  /// Compares the current C (and guard band) with `want`.
  CheckReport check_against(const std::vector<float>& want) const;

  std::vector<float> download_a() const { return to_host(a_, elems_a()); }
  std::vector<float> download_b() const { return to_host(b_, elems_b()); }
  /// C as it is now (bf16 widened to fp32 exactly): for bitwise repeatability checks.
  std::vector<float> download_c() const { return to_host(c_, elems_c()); }

 private:
  int64_t elems_a() const { return int64_t(p_.m) * p_.k; }
  int64_t elems_b() const { return int64_t(p_.n) * p_.k; }
  int64_t elems_c() const { return int64_t(p_.m) * p_.n; }
  size_t elem_size() const { return p_.dtype == Dtype::fp32 ? 4 : 2; }
  std::vector<float> to_host(const DeviceBuffer<char>& buf, int64_t count, int64_t offset = 0) const;

  Problem p_;
  DeviceBuffer<char> a_, b_, c_, c0_, ref_;
  DeviceBuffer<char> workspace_;  ///< the step workspace (registry.hpp, "The step workspace")
  std::vector<float> c0_host_;  ///< only when fp32 and beta != 0
};

/// Bytes of workspace `step` needs for (m, n, k): step.workspace_bytes(m, n, k), or 0 when it declares
/// none. May query the current device.
size_t step_workspace_bytes(const Step& step, int m, int n, int k);
/// Reserves the step's workspace on `buffers` for their problem's shape (ProblemBuffers::reserve_workspace):
/// allocates and zeroes it when it is missing or too small. Synchronizes then; call outside timing.
void reserve_workspace(const Step& step, ProblemBuffers& buffers);

/// Enqueues the step's kernel(s) on the buffers (and the step workspace reserved on them). The caller
/// has asked refusal() first.
void launch_step(const Step& step, const ProblemBuffers& buffers, cudaStream_t stream);
/// Enqueues cuBLAS on the buffers (same shape, same C).
void launch_cublas(const ProblemBuffers& buffers, cudaStream_t stream);

}  // namespace gemm
