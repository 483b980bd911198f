// The measured dispatch (issue 46): which menu entry (family/menu.hpp) runs a shape, read off a table
// of the tuner's measurements (build/bin/tune, results/tuning/). The rule is the nearest measured
// neighbour in log space: the table holds, for each shape the tuner timed, the entry that was fastest
// there (paired with cuBLAS); a query takes the winner of the measured shape closest to it in
// (ln M, ln N, ln K), among the measured shapes of its own alignment class (K % 16 == 8 or not, N % 8
// == 0 or not: the classes where the best entry changes for reasons a distance in size cannot see),
// skipping winners that refuse the query (a swapped tile past M = its width). Why a neighbour and not a
// fitted model: the winner changes in steps (a tile that fills the last wave, a swap that reads B
// once), which a smooth model blurs and a neighbour keeps; and every pick can be traced to one row
// of measurements. A shape more than kReachBelow times under, or kReachAbove times over, the measured
// range of M, N or K takes the hand rule: the table speaks only near where it measured (the grid spans
// the sizes a transformer runs, M 1-16384, N and K 1024-16384, so N = 300 still takes N = 1024's
// winner). Above the grid the reach is half a grid step (K is measured every 4x): past the longest
// measured K a tile's K loop grows without bound and the split it needs with it, which the hand rule
// computes from K and a winner measured at K = 16384 cannot know (1024 x 1024 x 65536: the table's
// pick ran 0.69x cuBLAS where step 28's rule ran 0.83x, results/nvidia_h200_shapes.csv).
// Host code: pure, checked on the CPU (tests/test_family.cpp).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "menu.hpp"

namespace gemm::family::dispatch {

inline constexpr int kReachBelow = 4;  ///< how far under the measured range (a factor) the table still picks
inline constexpr int kReachAbove = 2;  ///< how far over it (half of the grid's 4x step in K)
inline constexpr int kHandRule = -1;  ///< a row's winner, or pick's answer: the step's hand rule (no table: also)

/// One measured shape and what was fastest there: a menu entry, or the hand rule (kHandRule). Its
/// log coordinates are taken once, when the row is made: a pick reads every row, and 3 logs a row cost
/// about 15 us a pick over a 360-row table (a launch plans twice), as long as a decode-shape GEMM runs.
struct Measured {
  int m = 0, n = 0, k = 0;
  int entry = kHandRule;  ///< index into the menu, or kHandRule
  float ratio = 0;        ///< its paired speed over cuBLAS's there (> 1: faster), for the record
  double lm = 0, ln = 0, lk = 0;  ///< ln M, ln N, ln K
  Measured() = default;
  Measured(int m_, int n_, int k_, int entry_, float ratio_)
      : m(m_), n(n_), k(k_), entry(entry_), ratio(ratio_), lm(std::log(double(m_))), ln(std::log(double(n_))), lk(std::log(double(k_))) {}
};

/// One row of a generated table (scripts/gen_tuned_table.py): the winner by name, menu::name of an
/// entry or "" for the hand rule, so that a table written for another menu cannot pick the wrong entry.
struct TunedRow {
  int m, n, k;
  const char* winner;
  float ratio;
};

/// The rows of `table` as Measured, names resolved against `entries`; a name the menu does not have
/// resolves to N (past the menu: pick skips it; tests/test_family.cpp requires none).
template <size_t R, size_t N>
std::array<Measured, R> resolve(const std::array<TunedRow, R>& table, const std::array<menu::Entry, N>& entries) {
  std::array<Measured, R> out{};
  for (size_t i = 0; i < R; ++i) {
    const TunedRow& t = table[i];
    int e = t.winner[0] == '\0' ? kHandRule : int(N);
    for (size_t j = 0; j < N && e == int(N); ++j)
      if (menu::name(entries[j].spec) == t.winner) e = int(j);
    out[i] = {t.m, t.n, t.k, e, t.ratio};
  }
  return out;
}

/// The alignment class of a shape: bit 0 set when K % 16 == 8 (rows start inside a 32-byte sector),
/// bit 1 when N % 8 != 0 (C's rows are not 16-byte aligned: no TMA store).
constexpr int alignment_class(int n, int k) { return (k % 16 == 8 ? 1 : 0) | (n % 8 != 0 ? 2 : 0); }

/// Squared distance in (ln M, ln N, ln K) from a query's logs to a row.
inline double log_distance(const double (&q)[3], const Measured& r) {
  const double dm = q[0] - r.lm, dn = q[1] - r.ln, dk = q[2] - r.lk;
  return dm * dm + dn * dn + dk * dk;
}

/// The menu entry for C = A * B^T (m x n x k): the winner of the nearest measured shape of the same
/// alignment class that takes the shape (menu::refusal), else of the nearest of any class that takes
/// it; kHandRule (-1) when that winner is the hand rule, the table has no row, or the shape lies more
/// than kReachBelow times under or kReachAbove times over the table's range of M, N or K (the caller's
/// hand rule then decides).
/// A tie between two nearest rows with different winners (a query halfway between grid points in log,
/// K = 8192 between 4096 and 16384) is no measurement of the query: kHandRule.
template <size_t N>
int pick(const Measured* table, size_t rows, const std::array<menu::Entry, N>& entries, int m, int n, int k) {
  if (rows == 0) return kHandRule;
  int lo_m = table[0].m, hi_m = lo_m, lo_n = table[0].n, hi_n = lo_n, lo_k = table[0].k, hi_k = lo_k;
  for (size_t i = 1; i < rows; ++i) {
    lo_m = std::min(lo_m, table[i].m), hi_m = std::max(hi_m, table[i].m);
    lo_n = std::min(lo_n, table[i].n), hi_n = std::max(hi_n, table[i].n);
    lo_k = std::min(lo_k, table[i].k), hi_k = std::max(hi_k, table[i].k);
  }
  const auto outside = [](int q, int lo, int hi) { return int64_t(q) * kReachBelow < lo || q > int64_t(hi) * kReachAbove; };
  if (outside(m, lo_m, hi_m) || outside(n, lo_n, hi_n) || outside(k, lo_k, hi_k)) return kHandRule;
  const int cls = alignment_class(n, k);
  const double lq[3] = {std::log(double(m)), std::log(double(n)), std::log(double(k))};
  int best[2] = {-1, -1};  // [0]: same class, [1]: any class
  double dist[2] = {0, 0};
  bool tie[2] = {false, false};  // the nearest distance is shared by a row with another winner
  for (size_t i = 0; i < rows; ++i) {
    const Measured& r = table[i];
    if (r.entry < kHandRule || r.entry >= int(N)) continue;  // not a winner of this menu
    const double d = log_distance(lq, r);
    const bool same = alignment_class(r.n, r.k) == cls;
    const auto farther = [&](int w) { return best[w] >= 0 && d > dist[w] + 1e-12; };
    if (farther(1) && (!same || farther(0))) continue;  // nearer rows are known (most rows: no refusal check)
    if (r.entry != kHandRule && menu::refusal(entries[size_t(r.entry)], m, n, k)) continue;
    for (int w = 0; w < 2; ++w) {
      if (w == 0 && !same) continue;
      if (best[w] < 0 || d < dist[w] - 1e-12) best[w] = int(i), dist[w] = d, tie[w] = false;
      else if (d <= dist[w] + 1e-12 && r.entry != table[best[w]].entry) tie[w] = true;
    }
  }
  const int w = best[0] >= 0 ? 0 : 1;
  return best[w] < 0 || tie[w] ? kHandRule : table[best[w]].entry;
}

}  // namespace gemm::family::dispatch
