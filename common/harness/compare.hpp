// Comparison of a step's output with a reference: NaN-aware, with a documented tolerance.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../kernel_lib/registry.hpp"

namespace gemm {

/// Unit roundoff of fp32 (2^-24) and of bf16 (2^-8): half the gap between 1 and the next number.
inline constexpr double kUnitRoundoffFp32 = 1.0 / 16777216.0;
inline constexpr double kUnitRoundoffBf16 = 1.0 / 256.0;
/// The relative step of the FP8 tensor cores' accumulation on Hopper, 2^-13: they keep about 14
/// significant bits when they add a k32 group of products into the accumulator (the DeepSeek-V3
/// technical report, "Increasing Accumulation Precision": "around 14 bits"), not fp32's 24.
inline constexpr double kUnitRoundoffFp8Accum = 1.0 / 8192.0;

/// The tolerance model for random-normal inputs (A, B and C0 drawn from N(0, 1)).
/// An fp32 dot product of length K has partial sums of size ~sqrt(k); each addition rounds with a
/// relative error up to u, and the errors of two summation orders (ours and cuBLAS's) behave like
/// a random walk, so |got - want| grows like u * sqrt(K) * sqrt(K) (Higham, "Accuracy and Stability
/// of Numerical Algorithms", 2nd ed., sec. 3.1 and the probabilistic bound of Higham & Mary 2019).
/// With a safety factor of 16 (about 4x the largest error seen over 67M outputs at K = 8192):
///   fp32: tol = 16 * u32 * sqrt(K) * (|alpha| * sqrt(K)) + 4 * u32 * |beta * c0|
///   bf16: tol = 2 * u_bf16 * |want| + 16 * u32 * sqrt(K) * sqrt(K)
/// (bf16 outputs are rounded once to bf16, so two correct results may differ by one bf16 ulp,
/// which is at most 2 * u_bf16 * |want|).
///   fp8:  tol = 2 * u_bf16 * |want| + 16 * u_fp8acc * sqrt(K) * sqrt(ceil(K / 32)), against the fp64
///         oracle of the dequantized product (so quantization error is not counted, only the
///         arithmetic). A kernel that accumulates in the tensor core for the whole of K adds ceil(K/32)
///         k32 groups, each rounded to ~14 bits (u_fp8acc = 2^-13) relative to a running sum of size
///         ~sqrt(K) (the dequantized inputs are ~N(0, 1)); as a random walk that is
///         u_fp8acc * sqrt(K) * sqrt(K / 32). cuBLASLt's fast accumulation showed a relative RMS error
///         of 2.4e-3-3.0e-3 at 4096-8192 (docs/fp8.md, Measured), about 1.7x this model; the factor 16 leaves
///         ~9 standard deviations, while a dropped K tile of 128 products (error ~sqrt(128) = 11)
///         still fails: 16 * 2^-13 * sqrt(8192) * 16 = 2.8 at K = 8192.
/// Exact mode (small-integer inputs) uses tol = 0 and compares with ==.
/// fp8 inputs not drawn from N(0, 1) (--dist llm: outlier channels, weights of different sizes) make
/// sums of another size than sqrt(K): there `sum_rms`, the RMS of the reference itself, takes sqrt(K)'s
/// place in the accumulation term (16 * u_fp8acc * sum_rms * sqrt(ceil(K / 32))), which is the same
/// where the inputs are N(0, 1) (the RMS of such a product is sqrt(K)).
struct Tolerance {
  Dtype dtype = Dtype::fp32;
  bool exact = false;
  int k = 1;
  double alpha = 1, beta = 0;
  double sum_rms = 0;  ///< fp8 only: the size of a running sum; 0: sqrt(K), that of N(0, 1) inputs

  /// Tolerance for one element, given the reference value and the C read in (c0 = 0 when beta == 0).
  double at(double want, double c0) const;
};

/// sqrt(mean(v^2)) over the finite elements of v; 0 when there are none.
double rms(const std::vector<float>& v);

struct Mismatch {
  int64_t row, col;
  double got, want, tol;
};

struct CheckReport {
  bool passed = false;
  int64_t mismatches = 0;      ///< elements with !(|got - want| <= tol), NaN included
  int64_t guard_writes = 0;    ///< guard-band elements no longer NaN: writes past the end of C
  double max_abs_err = 0;      ///< over finite elements
  /// sqrt(sum (got - want)^2 / sum want^2) over the elements where both are finite; 0 when want is
  /// all zero. For fp8 the error of a kernel against the fp64 oracle rounded to bf16.
  double rel_rms_err = 0;
  std::vector<Mismatch> first; ///< the first few mismatches in row-major order
  /// "PASS" or "FAIL: 12 of 1048576 elements differ; first: (row, col, got, want, tol) ..."
  std::string summary() const;
};

/// Compares m x n row-major `got` with `want`; `c0` is the C read in (may be empty when beta == 0);
/// `guard` is the band after C that must still be all NaN. Never throws on bad data.
CheckReport compare(const std::vector<float>& got, const std::vector<float>& want,
                    const std::vector<float>& c0, const std::vector<float>& guard, int64_t m,
                    int64_t n, const Tolerance& tol, int max_listed = 8);

}  // namespace gemm
