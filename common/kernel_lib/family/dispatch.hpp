// The measured dispatch (issue 46): which menu entry (family/menu.hpp) runs a shape, read off a table
// of the tuner's measurements (build/bin/tune, results/tuning/). The rule is the nearest measured
// neighbour in log space: the table holds, for each shape the tuner timed, the entry that was fastest
// there (paired with cuBLAS); a query takes the winner of the measured shape closest to it in
// (ln M, ln N, ln K), among the measured shapes of its own alignment class (K % 16 == 8 or not, N % 8
// == 0 or not: the classes where the best entry changes for reasons a distance in size cannot see),
// skipping winners that refuse the query (a swapped tile past M = 64). Why a neighbour and not a
// fitted model: the winner changes in steps (a tile that fills the last wave, a swap that reads B
// once), which a smooth model blurs and a neighbour keeps; and every pick can be traced to one row
// of measurements. A shape outside the grid takes its nearest edge's winner, a sound pick as long as
// the grid spans the sizes a transformer runs (M 1-16384, N and K 1024-16384).
// Host code: pure, checked on the CPU (tests/test_family.cpp).
#pragma once
#include <cmath>
#include <cstddef>

#include "menu.hpp"

namespace gemm::family::dispatch {

/// One measured shape and the menu entry that was fastest there.
struct Measured {
  int m, n, k;
  int entry;     ///< index into the menu
  float ratio;   ///< its paired speed over cuBLAS's there (> 1: faster), for the record
};

/// The alignment class of a shape: bit 0 set when K % 16 == 8 (rows start inside a 32-byte sector),
/// bit 1 when N % 8 != 0 (C's rows are not 16-byte aligned: no TMA store).
constexpr int alignment_class(int n, int k) { return (k % 16 == 8 ? 1 : 0) | (n % 8 != 0 ? 2 : 0); }

/// Squared distance in (ln M, ln N, ln K).
inline double log_distance(int m, int n, int k, const Measured& r) {
  const double dm = std::log(double(m) / r.m), dn = std::log(double(n) / r.n), dk = std::log(double(k) / r.k);
  return dm * dm + dn * dn + dk * dk;
}

/// The menu entry for C = A * B^T (m x n x k): the winner of the nearest measured shape of the same
/// alignment class that takes the shape (menu::refusal), else of the nearest of any class that takes
/// it; -1 when the table has none (the caller's hand rule then decides). Ties: the earlier row.
template <size_t N>
int pick(const Measured* table, size_t rows, const std::array<menu::Entry, N>& entries, int m, int n, int k) {
  const int cls = alignment_class(n, k);
  int best[2] = {-1, -1};  // [0]: same class, [1]: any class
  double dist[2] = {0, 0};
  for (size_t i = 0; i < rows; ++i) {
    const Measured& r = table[i];
    if (r.entry < 0 || size_t(r.entry) >= N || menu::refusal(entries[size_t(r.entry)], m, n, k)) continue;
    const double d = log_distance(m, n, k, r);
    for (int w = 0; w < 2; ++w) {
      if (w == 0 && alignment_class(r.n, r.k) != cls) continue;
      if (best[w] < 0 || d < dist[w]) best[w] = int(i), dist[w] = d;
    }
  }
  const int row = best[0] >= 0 ? best[0] : best[1];
  return row < 0 ? -1 : table[row].entry;
}

}  // namespace gemm::family::dispatch
