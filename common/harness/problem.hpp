// The buffers of one problem shape: inputs (generated once), C with its guard band, the reference
// result and the step workspace; what every check and timing shares. The references themselves are
// in reference.hpp.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>
#include <vector>

#include "buffer.hpp"
#include "compare.hpp"
#include "fp8.hpp"
#include "../kernel_lib/registry.hpp"

namespace gemm {

struct Problem {
  Dtype dtype = Dtype::fp32;
  int m = 1, n = 1, k = 1;
  float alpha = 1, beta = 0;  ///< fp32 only; bf16 computes C = A * B^T (alpha 1, beta 0)
  uint64_t seed = 2026;
  bool exact = false;  ///< inputs are integers in [-2, 2] (exact in fp32, bf16 and e4m3), compared with ==
  Scaling scaling = Scaling::per_tensor;  ///< fp8 only: how the scales are generated (Fp8Gemm)
  Dist dist = Dist::normal;  ///< fp8 only, not with exact: what the inputs are drawn from before quantization (fp8.hpp)
  LlmShape llm{};            ///< the numbers of Dist::llm
  /// fp8 only, not with exact: keep A and B as drawn, before quantization, for unquantized_product()
  /// (Dist::llm keeps them always); 4 (m + n) k bytes of device memory more.
  bool keep_unquantized = false;
};

/// An fp8 problem's inputs as drawn, before quantization: A (m x k) and B (n x k), row-major fp32 on the
/// device. ProblemBuffers quantizes these values (the same cuRAND Philox draws from the seed, A's
/// first, then the shaping of p.dist).
struct Fp8Inputs {
  DeviceBuffer<float> a, b;
};
/// The inputs of `p` before quantization, as ProblemBuffers(p) draws them: N(0, 1), then for Dist::llm
/// A's channels times llm_channel_factors and B's 128 x 128 blocks times llm_block_sigmas (fp8.hpp).
/// Throws gemm::Error for a problem that is not fp8 or is exact (exact mode draws integers instead).
Fp8Inputs fp8_inputs(const Problem& p);

/// Buffers of one problem. Inputs are generated once (cuRAND Philox, seeded) at construction;
/// C has a guard band of kGuard elements after it.
/// fp8: A and B are drawn from N(0, 1) like the bf16 inputs (or shaped like a language model's inputs,
/// Dist::llm) and quantized to e4m3 (fp8.hpp: amax per tensor or per block, scale = amax / 448,
/// saturating round-to-nearest-even); in exact mode they are
/// the integers -2..2 (exact in e4m3) with power-of-two scales: 2^-1, 2^-2, 2^-3 repeating over A's
/// scale blocks and 2^-2, 2^-3, 2^-4 over B's, so a kernel that drops, doubles or misplaces a scale
/// is off by a power of two (per tensor: scale_a = 1/2, scale_b = 1/4). Exact mode needs
/// K <= kMaxExactKFp8 (fp8.hpp says why); a larger K throws gemm::Error, and so does a Dist other than
/// normal, or keep_unquantized, with exact mode or on a problem that is not fp8.
class ProblemBuffers {
 public:
  static constexpr int64_t kGuard = 4096;
  explicit ProblemBuffers(const Problem& p);

  const Problem& problem() const { return p_; }
  Fp32Gemm fp32_args() const;  ///< pointing at the step's C and the step workspace (if reserved)
  Bf16Gemm bf16_args() const;
  Fp8Gemm fp8_args() const;

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
  /// fp64 CPU reference rounded to the output type (for small shapes); for fp8 the dequantized
  /// product, sum over k of double(qa * sa) * double(qb * sb), rounded to bf16.
  std::vector<float> cpu_reference();
  /// fp8 only: the same fp64 oracle on the GPU (fp8.hpp, oracle_fp8_device), for any shape.
  std::vector<float> fp8_oracle();
  /// The reference a step of this dtype is checked against: cublas_reference() for fp32 and bf16,
  /// fp8_oracle() for fp8 (cuBLASLt's FP8 GEMM is a reference that is itself checked against it).
  std::vector<float> reference() { return p_.dtype == Dtype::fp8 ? fp8_oracle() : cublas_reference(); }
  /// bf16 only: the fp64 oracle of the bf16 product on the GPU, sum over k of double(a[i][k]) *
  /// double(b[j][k]), rounded once to bf16 (fp8.hpp, oracle_bf16_device). Throws gemm::Error for
  /// another dtype or on a CUDA error.
  std::vector<float> bf16_oracle();
  /// check_against(want), `want` being reference(); for bf16, where that fails, judge_reference()
  /// (compare.hpp) with the fp64 oracle (bf16_oracle(), computed on the first such failure and kept
  /// for the buffers' lifetime: the inputs do not change) decides whether the step or cuBLAS is wrong.
  CheckReport check_against_reference(const std::vector<float>& want);
  /// fp8, when the inputs before quantization were kept (Dist::llm or keep_unquantized): their fp64
  /// product, sum over k of double(a[i][k]) * double(b[j][k]), rounded to fp32, not to bf16
  /// (oracle_fp32_device). Against it a step's error holds the quantization's too, which the oracle of
  /// the dequantized product leaves out. Throws gemm::Error when the inputs were not kept.
  std::vector<float> unquantized_product();
  bool has_unquantized() const { return kept_; }
  /// Compares the current C (and guard band) with `want`. For fp8 inputs other than N(0, 1)
  /// (Dist::llm) the tolerance's running sum is the size of `want` itself (its RMS, Tolerance::sum_rms)
  /// instead of N(0, 1)'s sqrt(K).
  CheckReport check_against(const std::vector<float>& want) const;

  /// A and B as stored (bf16 widened to fp32 exactly; fp8: the e4m3 values q, before scaling).
  std::vector<float> download_a() const { return input_to_host(a_, elems_a()); }
  std::vector<float> download_b() const { return input_to_host(b_, elems_b()); }
  /// fp8: the scales of A and B (per tensor: one float each; block: scale_grid's layout).
  std::vector<float> download_scales_a() const;
  std::vector<float> download_scales_b() const;
  /// fp8: replaces the scales of A and B (the layouts and sizes download_scales_a/b return), e.g. a
  /// test's scales that differ from block to block by more than the generator's. Later references
  /// (fp8_oracle, cpu_reference) and launches use them. Throws gemm::Error on a size mismatch or a
  /// problem that is not fp8.
  void upload_scales(const std::vector<float>& a, const std::vector<float>& b);
  ScaleGrid grid_a() const { return scale_grid(p_.scaling, false, p_.m, p_.k); }
  ScaleGrid grid_b() const { return scale_grid(p_.scaling, true, p_.n, p_.k); }
  /// C as it is now (bf16 widened to fp32 exactly): for bitwise repeatability checks.
  std::vector<float> download_c() const { return to_host(c_, elems_c()); }

 private:
  int64_t elems_a() const { return int64_t(p_.m) * p_.k; }
  int64_t elems_b() const { return int64_t(p_.n) * p_.k; }
  int64_t elems_c() const { return int64_t(p_.m) * p_.n; }
  size_t elem_size() const { return p_.dtype == Dtype::fp32 ? 4 : 2; }  ///< of C (fp8 steps write bf16)
  size_t input_elem_size() const { return p_.dtype == Dtype::fp8 ? 1 : elem_size(); }  ///< of A and B
  std::vector<float> to_host(const DeviceBuffer<char>& buf, int64_t count, int64_t offset = 0) const;
  std::vector<float> input_to_host(const DeviceBuffer<char>& buf, int64_t count) const;

  Problem p_;
  DeviceBuffer<char> a_, b_, c_, c0_, ref_;
  DeviceBuffer<char> workspace_;  ///< the step workspace (registry.hpp, "The step workspace")
  DeviceBuffer<float> scales_a_, scales_b_;  ///< fp8 only: grid_a().count() and grid_b().count() floats
  Fp8Inputs unquantized_;  ///< fp8 only: A and B before quantization, when kept_
  bool kept_ = false;
  std::vector<float> c0_host_;  ///< only when fp32 and beta != 0
  std::vector<float> bf16_oracle_;  ///< check_against_reference's oracle, once it was needed
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
