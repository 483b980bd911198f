// The measured dispatch (issue 46): which menu entry (family/menu.hpp) runs a shape, read off a table
// of the tuner's measurements (build/bin/tune, results/tuning/): for each shape it timed, every entry's
// paired ratio over cuBLAS there, and the hand rule's (step 28). A query takes the four measured shapes
// nearest to it in (ln M, ln N, ln K) among those of its own alignment class (K % 16 == 8, or rows on a
// sector but off a 128-byte line, or neither; N % 8 == 0 or not: the classes where the best entry
// changes for reasons a distance in size cannot see),
// and from them the entry whose ratio, carried to the query and averaged (kNeighbours), is highest. Carried how: a ratio
// measured at one shape is scaled by how close the entry's plan comes to the shape's floor at the query
// against at the measured shape (efficiency(): a roofline of the plan, its tiles padded at the edges,
// its waves and splits rounded, its idle SMs idle). Why: the winner changes in steps (a tile that fills
// the last wave, a 64-row tile that needs a second row of tiles at M = 67 where it needed one at
// M = 64), which a distance in size cannot see and the plan's arithmetic can; the measurement supplies
// what the arithmetic cannot (which tile streams faster, what a cluster saves).
// Where the hand rule's carried ratio is within kMargin of the best, the hand rule runs. A shape more
// than kReachBelow times under, or kReachAbove times over, the measured range of M, N or K takes the
// hand rule: the table speaks only near where it measured. Above the grid the reach is half a grid step
// (K is measured every 4x): past the longest measured K the split a tile needs grows without bound
// (1024 x 1024 x 65536: the winner measured at K = 16384 ran 0.69x cuBLAS where step 28's rule ran 0.83x,
// results/nvidia_h200_shapes.csv).
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
inline constexpr int kHandRule = -1;  ///< pick's answer where the step's hand rule runs
/// An entry overrules the hand rule only where its carried ratio is this much higher: a paired ratio
/// moves by about 1 % between runs of the same kernel (docs/benchmarking.md).
inline constexpr double kMargin = 0.01;
inline constexpr size_t kMaxEntries = 56;  ///< the most entries a generated table's rows hold
/// How many measured shapes speak for a query: the nearest kNeighbours of its class, each entry's ratios
/// carried from each and averaged (geometric) with weights 1 / (squared log distance + kNearWeight), so
/// a shape near a measured one takes mostly its ratios (kNearWeight is small against a grid step's
/// (ln 2)^2 = 0.48), and a measured shape speaks alone for itself. Rows equally near (a query halfway
/// between grid points) are taken in (M, N, K) order, so the answer never depends on the table's order.
/// Four, chosen by leave-one-out over the H100's table (dispatch_dump --loo: each row picked from the
/// others, pick / best per class: 0.958, 0.945, 0.946 with the nearest row alone, 0.968, 0.968, 0.955
/// with four; two, six, eight and twelve none better by more than 0.002, the noise; the H200's table: 0.963, 0.952 -> 0.972, 0.975), not
/// on the random set, where it was checked (scripts/dispatch_check.py --regret: the pick 0.901 -> 0.910
/// where K % 16 == 0, 0.911 both ways where K % 16 == 8); docs/notebook/hopper.md, "The pick from four
/// neighbours".
inline constexpr int kNeighbours = 4;
inline constexpr double kNearWeight = 1e-3;

/// One entry at one tuned shape: its paired ratio over cuBLAS (0: not timed there, it refused the shape,
/// or it failed its check) and the split it was timed with (stream_k::Split's sk_tiles and blocks, as the
/// tuner recorded them; blocks 0: not recorded, take today's plan), so that a change to the menu's split
/// policy after the tuning run cannot make the model credit a row with a plan it did not time.
struct TunedCell {
  float ratio;
  int sk_tiles, blocks;
};

/// One row of a generated table (scripts/gen_tuned_table.py): a shape, the hand rule's paired ratio
/// over cuBLAS there, and each entry's cell, in the order of the table's names (kTunedEntries).
struct TunedShape {
  int m, n, k;
  float hand;
  std::array<TunedCell, kMaxEntries> cell;
};

/// One measured shape, its ratios by menu index. Its log coordinates are taken once, when the row is
/// made: a pick reads every row, and 3 logs a row cost about 15 us a pick over a 360-row table.
template <size_t N>
struct Measured {
  int m = 0, n = 0, k = 0;
  float hand = 0;              ///< the hand rule's paired ratio over cuBLAS (0: not timed)
  std::array<float, N> ratio{};  ///< menu entry i's (0: not timed, or not on the table)
  std::array<int, N> sk_tiles{}, blocks{};  ///< the split entry i was timed with (blocks 0: not recorded)
  double lm = 0, ln = 0, lk = 0;  ///< ln M, ln N, ln K
};

/// The rows of `table` by menu index: each of the table's names (`names`, menu::name of an entry) is
/// matched against `entries`; a name the menu does not have is dropped, so that a table written for
/// another menu cannot speak for the wrong entry (step 29's has one: co256x160-s4, timed before ptxas's
/// C7515 took it off the menu; tests/test_family.cpp requires a column for every entry of the menu).
template <size_t R, size_t E, size_t N>
std::array<Measured<N>, R> resolve(const std::array<TunedShape, R>& table, const std::array<const char*, E>& names,
                                   const std::array<menu::Entry, N>& entries) {
  static_assert(E <= kMaxEntries, "a table row holds kMaxEntries ratios");
  std::array<int, E> index{};
  for (size_t c = 0; c < E; ++c) {
    index[c] = -1;
    for (size_t j = 0; j < N; ++j)
      if (menu::name(entries[j].spec) == names[c]) index[c] = int(j);
  }
  std::array<Measured<N>, R> out{};
  for (size_t i = 0; i < R; ++i) {
    const TunedShape& t = table[i];
    Measured<N>& r = out[i];
    r.m = t.m, r.n = t.n, r.k = t.k, r.hand = t.hand;
    for (size_t c = 0; c < E; ++c)
      if (index[c] >= 0) {
        const size_t e = size_t(index[c]);
        r.ratio[e] = t.cell[c].ratio, r.sk_tiles[e] = t.cell[c].sk_tiles, r.blocks[e] = t.cell[c].blocks;
      }
    r.lm = std::log(double(t.m)), r.ln = std::log(double(t.n)), r.lk = std::log(double(t.k));
  }
  return out;
}

/// The alignment class of a shape: bit 0 set when K % 16 == 8 (rows start inside a 32-byte sector),
/// bit 1 when N % 8 != 0 (C's rows are not 16-byte aligned: no TMA store), bit 2 when K % 16 == 0 but
/// K % 64 != 0 (rows start on a sector but off a 128-byte line, so most of a K tile's 128-byte rows
/// span two lines: ncu counted about twice the L2 requests there, docs/notebook/hopper.md, "A first
/// profile at a pitch off the line").
constexpr int alignment_class(int n, int k) {
  return (k % 16 == 8 ? 1 : 0) | (n % 8 != 0 ? 2 : 0) | (k % 16 == 0 && k % 64 != 0 ? 4 : 0);
}

/// The H200's roofs in efficiency()'s model (docs/machine.md): the dense bf16 peak, FLOP/s (989
/// TFLOP/s at 1.83 GHz, datasheet); HBM's bandwidth, bytes/s (4.3 TB/s, a device-to-device copy on it);
/// L2's, bytes/s (15.3 TB/s, ncu's model: 116 GB/s an SM, the most an SM's tiles can stream in at).
inline constexpr double kPeakFlops = 989e12, kHbmBytesPerS = 4.3e12, kL2BytesPerS = 15.3e12;
/// What a launch costs whatever its size, seconds: the fastest GEMM the tuner timed took 7.3 us (cuBLAS,
/// 8 x 1024 x 1024, results/tuning/nvidia_h200_bf16.csv), its bytes 0.5 us of it at kHbmBytesPerS.
inline constexpr double kLaunchS = 6e-6;
/// What a parallel reduction's second kernel costs beside its bytes, seconds: a launch that may overlap
/// the GEMM's run (programmatic dependent launch, family/reduce.cuh) and its wait for the GEMM's last
/// block. An estimate, not a measurement: the tuner's ratios supply the rest.
inline constexpr double kReduceLaunchS = 2e-6;

/// How close plan `p` on `sms` SMs comes to the shape's floor, in (0, 1]: the floor (kLaunchS and the
/// longer of 2 M N K FLOP at kPeakFlops and reading A and B and writing C once at kHbmBytesPerS) over
/// the plan's modelled time (kLaunchS and the longer of the same bytes and its longest unit's K tiles,
/// each the longer of 2 BM BN BK FLOP at an SM's share of the peak and (BM + BN) BK elements of A and B
/// at an SM's share of kL2BytesPerS). The longest unit runs ceil(whole tiles / units) tiles of K tiles
/// and its even share of the split's iterations, plus, where tiles are split, kFixupKTiles K tiles for
/// the fixup (a charge fitted against measured shapes, not a measured cost: scripts/dispatch_check.py's
/// miss is about the same at 16 or 32 and worse at step 21's measured 44 or step 26's 64; docs/notebook/
/// hopper.md), or where a parallel reduction sums them (Plan::reduce_segments), kReduceLaunchS and its
/// slices' bytes, written and read once at kL2BytesPerS, after the grid; tiles past the matrix's edge
/// count as run. So a plan that leaves SMs idle pays twice,
/// in arithmetic and in the bytes the idle SMs do not stream: 46 unsplit 64 x 64 tiles of 67 x 1472 x
/// 26192 (410 K tiles each, 116 GB/s an SM) model 64 us against a 25 us floor, 0.39; measured, 0.38x
/// the best reference (results/nvidia_h200_shapes.csv). A model of what differs between entries at one
/// shape (padding, waves, splits, idle SMs), not of their speed: the measurement supplies that.
inline double efficiency(const Plan& p, int sms) {
  const int n_sms = sms < 1 ? 1 : sms;
  const double m = p.shape.m, n = p.shape.n, k = p.shape.k;
  // A split tile's pieces are summed: in the fixup (plan.hpp), or by the reduction after the grid.
  const int64_t fixup = p.split.sk_tiles > 0 && p.reduce_segments == 0 ? kFixupKTiles : 0;
  const int64_t longest = busiest_k_tiles(p) + fixup;
  const double k_tile = std::max(2.0 * p.spec.bm * p.spec.bn * bk(p.spec) / (kPeakFlops / n_sms),
                                 double(p.spec.bm + p.spec.bn) * bk(p.spec) * elem_bytes(p.spec) / (kL2BytesPerS / n_sms));
  const double bytes = 2.0 * (m * k + n * k + m * n) / kHbmBytesPerS;
  const double floor = kLaunchS + std::max(2.0 * m * n * k / kPeakFlops, bytes);
  // The reduction writes and reads each slice's fp32 M x N once, at L2's bandwidth (the slices stay in L2).
  const double reduce = p.reduce_segments > 0 ? kReduceLaunchS + 8.0 * p.reduce_segments * m * n / kL2BytesPerS : 0.0;
  const double run = kLaunchS + std::max(double(longest) * k_tile, bytes) + reduce;
  return floor / run;
}

/// Squared distance in (ln M, ln N, ln K) from a query's logs to a row.
template <size_t N>
double log_distance(const double (&q)[3], const Measured<N>& r) {
  const double dm = q[0] - r.lm, dn = q[1] - r.ln, dk = q[2] - r.lk;
  return dm * dm + dn * dn + dk * dk;
}

/// Entry e's plan at row r as the tuner timed it: today's menu::plan with the split the row recorded
/// (sk_tiles split tiles of whole K over `blocks` units: make_split's and make_split_k's layouts both;
/// a parallel reduction's segments where that split is split-K), or today's plan where the row recorded none.
template <size_t N>
Plan timed_plan(const menu::Entry& entry, const Measured<N>& r, size_t e, int sms) {
  Plan p = menu::plan(entry, r.m, r.n, r.k, sms);
  if (r.blocks[e] > 0 && r.sk_tiles[e] >= 0 && r.sk_tiles[e] <= p.items) {
    p.split.sk_tiles = r.sk_tiles[e];
    p.split.dp_tiles = p.items - r.sk_tiles[e];
    p.split.blocks = r.blocks[e];
    p.split.iters = int64_t(r.sk_tiles[e]) * p.k_tiles;
    // A parallel reduction's split is split-K of every item (make_split_k: blocks = items x segments).
    const bool split_k = r.sk_tiles[e] == p.items && p.items > 0 && r.blocks[e] % p.items == 0 && r.blocks[e] / p.items >= 2;
    p.reduce_segments = entry.spec.parallel_reduce && split_k ? r.blocks[e] / p.items : 0;
  }
  return p;
}

/// The SMs each entry's plans run on, where the caller cannot ask the device (a host tool): `sms`, and
/// for a cluster entry the most SMs its clusters covered in any of the table's rows (the units the tuner
/// recorded times the cluster's blocks), capped at `sms`. On the device the launch's own count is
/// menu::plan_sms_of (cudaOccupancyMaxActiveClusters): an H100 holds 66 pairs (132 SMs) but only 30
/// clusters of four (120), results/tuning/nvidia_h100_80gb_hbm3_bf16.csv's units column.
template <size_t N>
std::array<int, N> table_sms(const Measured<N>* table, size_t rows, const std::array<menu::Entry, N>& entries, int sms) {
  std::array<int, N> out{};
  for (size_t e = 0; e < N; ++e) {
    const int cs = cluster_size(entries[e].spec);
    int most = 0;
    for (size_t i = 0; cs > 1 && i < rows; ++i) most = std::max(most, table[i].blocks[e] * cs);
    out[e] = cs > 1 && most > 0 ? std::min(most, sms) : sms;
  }
  return out;
}

/// What the table says of one query: the hand rule's ratio and each menu entry's, carried to the query
/// (-1: no measurement speaks for it there, or it refuses the query), and the measured shape they came
/// from. inside: false when the query lies outside the table's reach (then nothing was carried).
template <size_t N>
struct Carried {
  bool inside = false;
  int from_m = 0, from_n = 0, from_k = 0;
  double hand = -1;
  std::array<double, N> entry{};
};

/// The ratios for C = A * B^T (m x n x k) on `sms` SMs, carried from the kNeighbours nearest measured
/// shapes of the same alignment class (else of that class without bit 2, as before the tuner measured
/// pitches off the line; else of any class): each entry that takes the query (menu::refusal), its ratio
/// at each row times efficiency at the query (menu::plan) over efficiency there (the plan it was timed
/// with: timed_plan), averaged over the rows (kNeighbours' weights) that measured it, and only where the
/// nearest row did; the hand rule's the same way with its plans (menu::hand_plan). from_m, from_n,
/// from_k: the nearest row. Nothing is carried when the table has no row or the shape lies
/// more than kReachBelow times under or kReachAbove times over the table's range of M, N or K.
/// entry_sms[e]: the SMs entry e's plans run on, at the query and at the row alike (a cluster entry's:
/// those its clusters cover, menu::plan_sms_of; nullptr: `sms` for every entry); efficiency() still
/// shares the peak over all `sms`, so an SM a cluster cannot use counts as idle.
template <size_t N>
Carried<N> carry(const Measured<N>* table, size_t rows, const std::array<menu::Entry, N>& entries, int m, int n, int k,
                 int sms, const std::array<int, N>* entry_sms = nullptr) {
  Carried<N> out;
  out.entry.fill(-1);
  if (rows == 0) return out;
  int lo_m = table[0].m, hi_m = lo_m, lo_n = table[0].n, hi_n = lo_n, lo_k = table[0].k, hi_k = lo_k;
  for (size_t i = 1; i < rows; ++i) {
    lo_m = std::min(lo_m, table[i].m), hi_m = std::max(hi_m, table[i].m);
    lo_n = std::min(lo_n, table[i].n), hi_n = std::max(hi_n, table[i].n);
    lo_k = std::min(lo_k, table[i].k), hi_k = std::max(hi_k, table[i].k);
  }
  const auto outside = [](int q, int lo, int hi) { return int64_t(q) * kReachBelow < lo || q > int64_t(hi) * kReachAbove; };
  if (outside(m, lo_m, hi_m) || outside(n, lo_n, hi_n) || outside(k, lo_k, hi_k)) return out;
  out.inside = true;
  const int cls = alignment_class(n, k);
  const double lq[3] = {std::log(double(m)), std::log(double(n)), std::log(double(k))};
  // The classes a row may speak for, nearest first: [0] the query's, [1] the query's without bit 2
  // (an off-line pitch as an aligned one), [2] any.
  const int want[2] = {cls, cls & ~4};
  const auto fits = [&](const Measured<N>& r, int w) { return w == 2 || alignment_class(r.n, r.k) == want[w]; };
  bool has[3] = {false, false, true};  // whether the table holds rows of each (any class: rows > 0)
  for (size_t i = 0; i < rows; ++i)
    for (int w = 0; w < 2; ++w) has[w] = has[w] || fits(table[i], w);
  const int w = has[0] ? 0 : has[1] ? 1 : 2;
  // The kNeighbours rows of that class nearest the query, nearest first, rows equally near (within
  // rounding) in (M, N, K) order: an insertion into a short list.
  const auto before = [&](double da, size_t a, double db, size_t b) {
    if (da < db - 1e-12 || db < da - 1e-12) return da < db;
    const Measured<N>&ra = table[a], &rb = table[b];
    return ra.m != rb.m ? ra.m < rb.m : ra.n != rb.n ? ra.n < rb.n : ra.k < rb.k;
  };
  int near_i[kNeighbours] = {};
  double near_d[kNeighbours] = {};
  int found = 0;
  for (size_t i = 0; i < rows; ++i) {
    if (!fits(table[i], w)) continue;
    const double d = log_distance(lq, table[i]);
    if (found == kNeighbours && !before(d, i, near_d[kNeighbours - 1], size_t(near_i[kNeighbours - 1]))) continue;
    int j = found < kNeighbours ? found++ : kNeighbours - 1;
    for (; j > 0 && before(d, i, near_d[j - 1], size_t(near_i[j - 1])); --j) near_i[j] = near_i[j - 1], near_d[j] = near_d[j - 1];
    near_i[j] = int(i), near_d[j] = d;
  }
  const Measured<N>& first = table[size_t(near_i[0])];
  out.from_m = first.m, out.from_n = first.n, out.from_k = first.k;
  // Each neighbour's carried ratio, weighted by 1 / (squared log distance + kNearWeight) in a geometric
  // mean; an entry (or the hand rule) speaks only where a nearest row (any of those equally near)
  // measured it. A measured shape speaks alone for itself (a neighbour's 1 % would flip its close calls).
  if (near_d[0] <= 0) found = 1;
  const auto blend = [&](auto&& carried_at) {
    double sw = 0, swl = 0;
    bool nearest_speaks = false;
    for (int j = 0; j < found; ++j) {
      const double x = carried_at(table[size_t(near_i[j])]);
      if (!(x > 0)) continue;
      nearest_speaks = nearest_speaks || near_d[j] <= near_d[0] + 1e-12;
      const double wt = 1.0 / (near_d[j] + kNearWeight);
      sw += wt, swl += wt * std::log(x);
    }
    return nearest_speaks && sw > 0 ? std::exp(swl / sw) : -1.0;
  };
  const double q_hand = efficiency(menu::hand_plan(m, n, k, sms), sms);
  out.hand = blend([&](const Measured<N>& r) {
    const double there = r.hand > 0 ? efficiency(menu::hand_plan(r.m, r.n, r.k, sms), sms) : 0;
    return there > 0 ? r.hand * q_hand / there : -1.0;
  });
  for (size_t e = 0; e < N; ++e) {
    if (menu::refusal(entries[e], m, n, k)) continue;
    const int esms = entry_sms ? (*entry_sms)[e] : sms;
    const double here = efficiency(menu::plan(entries[e], m, n, k, esms), sms);
    out.entry[e] = blend([&](const Measured<N>& r) {
      if (!(r.ratio[e] > 0)) return -1.0;
      const double there = efficiency(timed_plan(entries[e], r, e, esms), sms);
      return there > 0 ? r.ratio[e] * here / there : -1.0;
    });
  }
  return out;
}

/// pick()'s rule on what carry() said: the entry whose carried ratio is highest (the first of equals),
/// or kHandRule (-1) where the hand rule's is within kMargin of it or no entry's was carried.
template <size_t N>
int choose(const Carried<N>& c) {
  int best = kHandRule;
  for (size_t e = 0; e < N; ++e)
    if (c.entry[e] > 0 && (best < 0 || c.entry[e] > c.entry[size_t(best)])) best = int(e);
  if (best < 0 || (c.hand > 0 && c.entry[size_t(best)] <= c.hand * (1 + kMargin))) return kHandRule;
  return best;
}

/// The menu entry for C = A * B^T (m x n x k) on `sms` SMs (entry_sms: carry()'s): choose() over
/// carry(), so kHandRule (-1) also where the query lies outside the table's reach (nothing carried).
template <size_t N>
int pick(const Measured<N>* table, size_t rows, const std::array<menu::Entry, N>& entries, int m, int n, int k,
         int sms, const std::array<int, N>* entry_sms = nullptr) {
  return choose(carry(table, rows, entries, m, n, k, sms, entry_sms));
}

}  // namespace gemm::family::dispatch
