#include "compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gemm {

double Tolerance::at(double want, double c0) const {
  if (exact) return 0.0;
  if (dtype == Dtype::fp8) {
    const double groups = std::ceil(double(k) / 32.0);
    const double sum = sum_rms > 0 ? sum_rms : std::sqrt(double(k));
    return 2.0 * kUnitRoundoffBf16 * std::fabs(want) + 16.0 * kUnitRoundoffFp8Accum * sum * std::sqrt(groups);
  }
  const double accum = 16.0 * kUnitRoundoffFp32 * std::sqrt(double(k)) * std::sqrt(double(k));
  if (dtype == Dtype::bf16) return 2.0 * kUnitRoundoffBf16 * std::fabs(want) + accum;
  return accum * std::fabs(alpha) + 4.0 * kUnitRoundoffFp32 * std::fabs(beta * c0);
}

double Tolerance::rel_rms_bound(int64_t elements) const {
  if (dtype != Dtype::fp8 || exact || sum_rms > 0 || elements < kRmsBoundMinElements) return 0.0;
  const double dropped_tile = std::sqrt(double(kFp8KTile) / double(k));  // one K tile's share, relative RMS
  const double accumulation = kUnitRoundoffFp8Accum * std::sqrt(std::ceil(double(k) / 32.0));  // the model's
  return std::max(0.5 * dropped_tile, 4.0 * accumulation);
}

double rms(const std::vector<float>& v) {
  double sum2 = 0;
  int64_t count = 0;
  for (float x : v)
    if (std::isfinite(x)) sum2 += double(x) * x, ++count;
  return count ? std::sqrt(sum2 / double(count)) : 0.0;
}

CheckReport compare(const std::vector<float>& got, const std::vector<float>& want,
                    const std::vector<float>& c0, const std::vector<float>& guard, int64_t m,
                    int64_t n, const Tolerance& tol, int max_listed) {
  CheckReport r;
  double err2 = 0, want2 = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t idx = i * n + j;
      const double g = got[idx], w = want[idx];
      const double t = tol.at(w, c0.empty() ? 0.0 : c0[idx]);
      const double d = std::fabs(g - w);
      if (std::isfinite(d)) {
        r.max_abs_err = std::max(r.max_abs_err, d);
        err2 += d * d;
        want2 += w * w;
      }
      if (!(d <= t)) {  // NaN-aware: a NaN in got or want fails
        ++r.mismatches;
        if (static_cast<int>(r.first.size()) < max_listed) r.first.push_back({i, j, g, w, t});
      }
    }
  }
  for (float v : guard)
    if (!std::isnan(v)) ++r.guard_writes;
  r.rel_rms_err = want2 > 0 ? std::sqrt(err2 / want2) : 0.0;
  r.rel_rms_bound = tol.rel_rms_bound(m * n);
  const bool rms_ok = !(r.rel_rms_bound > 0 && r.rel_rms_err > r.rel_rms_bound);
  r.passed = r.mismatches == 0 && r.guard_writes == 0 && rms_ok;
  return r;
}

CheckReport judge_reference(const CheckReport& vs_reference, CheckReport vs_oracle,
                            const CheckReport& reference_vs_oracle) {
  if (vs_reference.passed || !vs_oracle.passed) return vs_reference;
  vs_oracle.against_oracle = true;
  vs_oracle.reference_mismatches = reference_vs_oracle.passed ? 0 : reference_vs_oracle.mismatches;
  return vs_oracle;
}

std::string CheckReport::check_column() const {
  if (!passed) return "FAIL";
  if (!against_oracle) return "pass";
  return reference_mismatches > 0 ? "pass (the fp64 oracle's: cuBLAS's C outside its tolerance)"
                                  : "pass (the fp64 oracle's: cuBLAS's C inside it but further than the tolerance from this one)";
}

std::string CheckReport::summary() const {
  if (passed && against_oracle && reference_mismatches > 0)
    return fmt::format("PASS against the fp64 oracle (max |err| {:.3g}, relative RMS error {:.3g}); cuBLAS's own C "
                       "has {} elements outside the tolerance here", max_abs_err, rel_rms_err, reference_mismatches);
  if (passed && against_oracle)
    return fmt::format("PASS against the fp64 oracle (max |err| {:.3g}, relative RMS error {:.3g}); cuBLAS's C is "
                       "inside its tolerance too, but further than the tolerance from this one", max_abs_err, rel_rms_err);
  if (passed) return fmt::format("PASS (max |err| {:.3g}, relative RMS error {:.3g})", max_abs_err, rel_rms_err);
  std::string s = "FAIL:";
  if (mismatches) s += fmt::format(" {} elements outside tolerance;", mismatches);
  if (guard_writes) s += fmt::format(" {} writes past the end of C (guard band);", guard_writes);
  if (rel_rms_bound > 0 && rel_rms_err > rel_rms_bound)
    s += fmt::format(" relative RMS error {:.3g} above its bound {:.3g} (compare.hpp, Tolerance::rel_rms_bound: "
                     "a lost K tile of 128 makes sqrt(128 / K));", rel_rms_err, rel_rms_bound);
  for (const Mismatch& x : first)
    s += fmt::format("\n  (row {}, col {}): got {:.9g}, want {:.9g}, tol {:.3g}", x.row, x.col, x.got,
                     x.want, x.tol);
  return s;
}

}  // namespace gemm
