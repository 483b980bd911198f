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
/// technical report, "Increasing Accumulation Precision": "around 14 bits"), not fp32's 24. The accuracy
/// lab measured it on the H200 (lab/fp8_accumulator.cu, results/nvidia_h200_fp8_accumulator.md): the
/// accumulator and the products are aligned to the largest one's exponent and the bits of each addend
/// below 2^-13 of it are dropped (truncation toward zero, not rounding).
inline constexpr double kUnitRoundoffFp8Accum = 1.0 / 8192.0;
/// The K tile of the FP8 steps (BK = 128 one-byte elements: one 128-byte swizzle row), which is also
/// the K extent of a scale block (1 x 128 of A, 128 x 128 of B): what a K loop that skips one
/// iteration leaves out of every output.
inline constexpr int kFp8KTile = 128;
/// The fewest output elements over which the fp8 check bounds the relative RMS error
/// (Tolerance::rel_rms_bound): below that the RMS of the errors is too noisy a statistic to bound.
inline constexpr int64_t kRmsBoundMinElements = 64;

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
/// The per-element fp8 term cannot also catch a lost K tile at long K: it grows like K, as the
/// tensor-core accumulation's own error does (step 30 and cuBLASLt's fast mode: ~0.2 u_fp8acc K RMS
/// under the lab's truncation, up to ~9x that on the largest of thousands of elements, scaled with
/// |want|), while one missing K tile stays ~sqrt(128) = 11 at every K. At K = 65536 the term is 22.6,
/// two standard deviations of a dropped tile: only a few percent of its elements fall outside, so a
/// small output (a decode shape) can pass. So fp8 on N(0, 1) inputs also bounds the relative RMS error
/// over the output (rel_rms_bound), where the two are far apart: a dropped K tile takes ~1/(K/128) of
/// every sum of K products, a relative RMS error of sqrt(128 / K) (0.044 at K = 65536), while honest
/// FP8 arithmetic stays near 7e-4 promoted and grows to ~7e-3 at K = 65536 unpromoted (the lab's
/// truncation; measured 2.4e-3 at K = 4096, results/nvidia_h200_fp8_lab.csv). The bound is
///   max(sqrt(128 / K) / 2, 4 * u_fp8acc * sqrt(ceil(K / 32))):
/// half a dropped K tile's share up to K = 65536 = 2^16, where the two terms meet (so a dropped K tile
/// fails at every K the tests and the lab run, by a factor 2, and honest results pass by 3x or more),
/// then 4x the accumulation model's relative RMS (the measured honest errors are at most 1.7x it), so
/// that an unpromoted kernel still passes past 2^16, where its own error is too close to one K tile's
/// share for any check of the result to tell them apart. Over at least kRmsBoundMinElements elements.
/// Exact mode (small-integer inputs) uses tol = 0 and compares with ==.
/// fp8 inputs not drawn from N(0, 1) (--dist llm: outlier channels, weights of different sizes) make
/// sums of another size than sqrt(K): there `sum_rms`, the RMS of the reference itself, takes sqrt(K)'s
/// place in the accumulation term (16 * u_fp8acc * sum_rms * sqrt(ceil(K / 32))), which is the same
/// where the inputs are N(0, 1) (the RMS of such a product is sqrt(K)); they get no RMS bound (a dropped
/// K tile's share of their sums depends on where their outliers are).
struct Tolerance {
  Dtype dtype = Dtype::fp32;
  bool exact = false;
  int k = 1;
  double alpha = 1, beta = 0;
  double sum_rms = 0;  ///< fp8 only: the size of a running sum; 0: sqrt(K), that of N(0, 1) inputs

  /// Tolerance for one element, given the reference value and the C read in (c0 = 0 when beta == 0).
  double at(double want, double c0) const;
  /// The most the relative RMS error over an output of `elements` elements may be (see above): fp8 on
  /// N(0, 1) inputs (sum_rms == 0), not exact, at least kRmsBoundMinElements elements; 0 (no bound)
  /// otherwise.
  double rel_rms_bound(int64_t elements) const;
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
  double rel_rms_bound = 0;    ///< the most rel_rms_err may be (Tolerance::rel_rms_bound); 0: no bound
  std::vector<Mismatch> first; ///< the first few mismatches in row-major order
  /// True when this is the check against the fp64 oracle that decided in place of a failed check
  /// against cuBLAS (judge_reference()).
  bool against_oracle = false;
  /// With against_oracle: cuBLAS's elements outside the oracle's tolerance (0: cuBLAS's C is inside it
  /// too, and the two C differ by more than one tolerance, each on its side of the oracle).
  int64_t reference_mismatches = 0;
  /// "PASS" or "FAIL: 12 of 1048576 elements differ; first: (row, col, got, want, tol) ..."; a relative
  /// RMS error over its bound is named too, and a pass against the oracle in place of cuBLAS says so.
  std::string summary() const;
  /// A passed check's word for a CSV's check column: "pass", or with against_oracle "pass (the fp64
  /// oracle's: cuBLAS's C outside its tolerance)" or "pass (the fp64 oracle's: cuBLAS's C inside it but
  /// further than the tolerance from this one)"; no commas (the harness's CSV does not quote it). "FAIL"
  /// for a failed check.
  std::string check_column() const;
};

/// Who is right where a bf16 step's C fails its check against cuBLAS's C, which is a reference, not
/// the truth: `vs_reference` (the step against cuBLAS), `vs_oracle` (the step against the fp64 oracle of
/// the same inputs, guard band included) and `reference_vs_oracle` (cuBLAS's C against that oracle, the
/// same tolerance). Returns vs_reference where it passed or where the step fails against the oracle
/// too; else vs_oracle, with against_oracle set and cuBLAS's mismatches counted. A step passes only
/// inside the oracle's tolerance, so a wrong step never passes. Such a shape exists: at 128 x 256 x
/// 65544 on an H100 (cuBLAS 13.1) cuBLAS's C has more than half its elements outside the tolerance,
/// where every Hopper step and menu entry is inside it (docs/notebook/measuring.md). Pure: CPU-tested.
CheckReport judge_reference(const CheckReport& vs_reference, CheckReport vs_oracle,
                            const CheckReport& reference_vs_oracle);

/// Compares m x n row-major `got` with `want`; `c0` is the C read in (may be empty when beta == 0);
/// `guard` is the band after C that must still be all NaN. Passes when every element is within
/// tol.at(), the guard band is untouched and the relative RMS error is within tol.rel_rms_bound(m * n)
/// where there is one. Never throws on bad data.
CheckReport compare(const std::vector<float>& got, const std::vector<float>& want,
                    const std::vector<float>& c0, const std::vector<float>& guard, int64_t m,
                    int64_t n, const Tolerance& tol, int max_listed = 8);

}  // namespace gemm
