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
/// Exact mode (small-integer inputs) uses tol = 0 and compares with ==.
struct Tolerance {
  Dtype dtype = Dtype::fp32;
  bool exact = false;
  int k = 1;
  double alpha = 1, beta = 0;

  /// Tolerance for one element, given the reference value and the C read in (c0 = 0 when beta == 0).
  double at(double want, double c0) const;
};

struct Mismatch {
  int64_t row, col;
  double got, want, tol;
};

struct CheckReport {
  bool passed = false;
  int64_t mismatches = 0;      ///< elements with !(|got - want| <= tol), NaN included
  int64_t guard_writes = 0;    ///< guard-band elements no longer NaN: writes past the end of C
  double max_abs_err = 0;      ///< over finite elements
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
