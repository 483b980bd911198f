// Prints step 29's measured pick (family/dispatch.hpp over the generated table family/tuned_bf16.hpp)
// beside step 28's hand rule (tile_menu.hpp) over a grid of M and N at one K, as CSV, from the same
// functions the step calls: scripts/plot_dispatch.py draws docs/img/dispatch_map.png.
//   build/bin/dispatch_dump [--h100] SMS K M_MAX N_MAX      (--h100: the H100's table, else the H200's)
// One line per (m, n) on a geometric grid of about 48 points per axis from 1 to M_MAX and N_MAX:
// m,n,k,pick,hand: pick is the menu entry the table picks (menu::name) or "hand" where the hand rule
// runs; hand is the hand rule's tile (swap<W>, 128x64 or 128x128) and whether it copies (+pad).
//   build/bin/dispatch_dump [--h100] --explain SMS M:N:K ...
// One line per shape: m,n,k, the measured shape the ratios were carried from, the hand rule's carried
// ratio, the pick and its carried ratio, and every entry's carried ratio, highest first (family/dispatch.hpp's
// carry(): what the pick saw).
//   build/bin/dispatch_dump [--h100] --loo SMS [K_MIN]
// Leave-one-out over the table (leave_one_out()): the pick's regret per alignment class, and the pick's,
// the best's and the hand rule's measured ratios (geometric means); K_MIN: only the rows with K >= K_MIN
// (e.g. 65536: the long-K grid's) are scored, every row still speaking for the others.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../common/kernel_lib/family/dispatch.hpp"
#include "../common/kernel_lib/family/tuned_bf16.hpp"
#include "../common/kernel_lib/tile_menu.hpp"

namespace fam = gemm::family;

/// The table the dump reads: the H200's (the default), or with --h100 first the H100's (family/tuned_bf16.hpp).
static bool g_h100 = false;
static fam::dispatch::TunedTable tuned() {
  return fam::dispatch::tuned_for(g_h100 ? fam::dispatch::h100::kTunedGpu : fam::dispatch::kTunedGpu);
}

static int explain(int sms, int argc, char** argv) {
  const auto table = tuned();
  const auto esms = fam::dispatch::table_sms(table.rows, table.size, fam::menu::kBf16, sms);  // a cluster's SMs, as tuned
  std::printf("m,n,k,from,hand,pick,pick_ratio,carried\n");
  for (int i = 0; i < argc; ++i) {
    int m = 0, n = 0, k = 0;
    char tail = 0;
    if (std::sscanf(argv[i], "%d:%d:%d%c", &m, &n, &k, &tail) != 3 || m < 1 || n < 1 || k < 8 || k % 8 != 0) {
      std::fprintf(stderr, "error: %s: a shape is M:N:K with M, N >= 1, K >= 8 and K %% 8 == 0\n", argv[i]);
      return 2;
    }
    const auto c = fam::dispatch::carry(table.rows, table.size, fam::menu::kBf16, m, n, k, sms, &esms);
    const int e = fam::dispatch::pick(table.rows, table.size, fam::menu::kBf16, m, n, k, sms, &esms);
    std::vector<std::pair<double, std::string>> top;
    for (size_t j = 0; j < c.entry.size(); ++j)
      if (c.entry[j] > 0) top.push_back({c.entry[j], fam::menu::name(fam::menu::kBf16[j].spec)});
    std::sort(top.rbegin(), top.rend());
    std::string best;
    for (size_t j = 0; j < top.size(); ++j) best += (j ? " " : "") + top[j].second + "=" + std::to_string(top[j].first).substr(0, 5);
    const std::string from = c.inside ? std::to_string(c.from_m) + "x" + std::to_string(c.from_n) + "x" + std::to_string(c.from_k) : "outside";
    const std::string pick = e == fam::dispatch::kHandRule ? "hand" : fam::menu::name(fam::menu::kBf16[size_t(e)].spec);
    std::printf("%d,%d,%d,%s,%.3f,%s,%.3f,%s\n", m, n, k, from.c_str(), c.hand, pick.c_str(),
                e == fam::dispatch::kHandRule ? c.hand : c.entry[size_t(e)], best.c_str());
  }
  return 0;
}

/// Leave-one-out over the table: each measured shape's pick from the other rows alone (carry() and
/// choose(), among the entries measured there), against the best measured there; per alignment class
/// the geometric mean of pick / best, the count below 0.95, and the geometric means of the pick's, the
/// best's and the hand rule's measured ratios (the hand rule's over the rows where it was timed; 0 where
/// none was). Only the rows with K >= k_min are scored (all speak).
static int leave_one_out(int sms, long k_min) {
  const auto table = tuned();
  const auto esms = fam::dispatch::table_sms(table.rows, table.size, fam::menu::kBf16, sms);
  std::vector<std::decay_t<decltype(table.rows[0])>> rest(table.rows, table.rows + table.size);
  double below[8] = {}, count[8] = {}, got_sum[8] = {}, best_sum[8] = {};  // sums of logs, per class
  double hand_count[8] = {}, hand_sum[8] = {};  // the rows where the hand rule was timed
  for (size_t i = 0; i < table.size; ++i) {
    const auto row = table.rows[i];
    if (row.k < k_min) continue;
    rest.erase(rest.begin() + long(i));
    auto c = fam::dispatch::carry(rest.data(), rest.size(), fam::menu::kBf16, row.m, row.n, row.k, sms, &esms);
    rest.insert(rest.begin() + long(i), row);
    double best = row.hand;
    for (size_t e = 0; e < c.entry.size(); ++e) {
      if (row.ratio[e] > 0) best = std::max(best, double(row.ratio[e]));
      else c.entry[e] = -1;  // the pick among the entries measured there
    }
    const int e = fam::dispatch::choose(c);
    const double got = e == fam::dispatch::kHandRule ? row.hand : row.ratio[size_t(e)];
    if (!(got > 0) || !(best > 0)) continue;
    const int cls = fam::dispatch::alignment_class(row.n, row.k);
    count[cls] += 1, below[cls] += got / best < 0.95;
    got_sum[cls] += std::log(got), best_sum[cls] += std::log(best);
    if (row.hand > 0) hand_count[cls] += 1, hand_sum[cls] += std::log(row.hand);
  }
  // regret: the geometric mean of pick / best, the quotient of the two geometric means printed after it
  // (the pick's and the best's measured ratio over cuBLAS), then the hand rule's there.
  if (std::all_of(std::begin(count), std::end(count), [](double c) { return c == 0; })) {
    long longest = 0;
    for (size_t i = 0; i < table.size; ++i) longest = std::max(longest, long(table.rows[i].k));
    std::fprintf(stderr, "error: --loo: no row of this table has K >= %ld (its longest K is %ld)\n", k_min, longest);
    return 1;
  }
  std::printf("class,shapes,regret,below_0.95,pick,best,hand\n");
  for (int cls = 0; cls < 8; ++cls)
    if (count[cls] > 0)
      std::printf("%d,%.0f,%.4f,%.0f,%.4f,%.4f,%.4f\n", cls, count[cls], std::exp((got_sum[cls] - best_sum[cls]) / count[cls]),
                  below[cls], std::exp(got_sum[cls] / count[cls]), std::exp(best_sum[cls] / count[cls]),
                  hand_count[cls] > 0 ? std::exp(hand_sum[cls] / hand_count[cls]) : 0.0);
  return 0;
}

int main(int argc, char** argv) {
  namespace tm = gemm::tile_menu;
  if (argc >= 2 && std::string(argv[1]) == "--h100") g_h100 = true, --argc, ++argv;
  if (argc >= 3 && std::string(argv[1]) == "--explain") {
    char* end = nullptr;
    const long sms = std::strtol(argv[2], &end, 10);
    if (*end != '\0' || sms < 1 || sms > 4096) {
      std::fprintf(stderr, "error: SMS must be a decimal integer from 1 to 4096\n");
      return 2;
    }
    return explain(int(sms), argc - 3, argv + 3);
  }
  if (argc >= 2 && std::string(argv[1]) == "--loo") {
    auto whole = [](const char* s, long lo, long hi, long& v) {  // a decimal argument in [lo, hi], nothing trailing
      char* end = nullptr;
      v = std::strtol(s, &end, 10);
      return *s != '\0' && *end == '\0' && v >= lo && v <= hi;
    };
    long sms = 0, k_min = 0;
    if ((argc != 3 && argc != 4) || !whole(argv[2], 1, 4096, sms) || (argc == 4 && !whole(argv[3], 0, 1L << 30, k_min))) {
      std::fprintf(stderr, "error: dispatch_dump [--h100] --loo SMS [K_MIN]: SMS from 1 to 4096, K_MIN from 0 to 2^30\n");
      return 2;
    }
    return leave_one_out(int(sms), k_min);
  }
  if (argc != 5) {
    std::fprintf(stderr, "usage: dispatch_dump [--h100] SMS K M_MAX N_MAX\n       dispatch_dump [--h100] --explain SMS M:N:K ...\n"
                         "       dispatch_dump [--h100] --loo SMS [K_MIN]\n");
    return 2;
  }
  auto number = [](const char* s, long& v) {  // a whole decimal argument, nothing trailing
    char* end = nullptr;
    v = std::strtol(s, &end, 10);
    return *s != '\0' && *end == '\0';
  };
  long sms = 0, k = 0, m_max = 0, n_max = 0;
  if (!number(argv[1], sms) || !number(argv[2], k) || !number(argv[3], m_max) || !number(argv[4], n_max)) {
    std::fprintf(stderr, "error: SMS, K, M_MAX and N_MAX must be decimal integers\n");
    return 2;
  }
  if (sms < 1 || sms > 4096 || k < 8 || k % 8 != 0 || k > (1L << 20) || m_max < 1 || n_max < 1 || m_max > (1L << 20) ||
      n_max > (1L << 20)) {
    std::fprintf(stderr, "error: need 1 <= SMS <= 4096, 8 <= K <= 2^20 with K %% 8 == 0, 1 <= M_MAX, N_MAX <= 2^20\n");
    return 2;
  }
  auto axis = [](long max) {
    std::set<long> v;
    for (int i = 0; i <= 48; ++i) v.insert(std::lround(std::pow(double(max), i / 48.0)));
    return v;
  };
  const auto table = tuned();
  const auto esms = fam::dispatch::table_sms(table.rows, table.size, fam::menu::kBf16, int(sms));  // a cluster's SMs, as tuned
  std::printf("m,n,k,pick,hand\n");
  for (long m : axis(m_max))
    for (long n : axis(n_max)) {
      const int e = fam::dispatch::pick(table.rows, table.size, fam::menu::kBf16, int(m), int(n), int(k), int(sms), &esms);
      const tm::Plan hp = tm::plan(m, n, k, int(sms));
      const std::string hand = (hp.tile.swap ? "swap" + std::to_string(tm::swap_bn(m)) : "128x" + std::to_string(hp.tile.bn)) +
                               (tm::repack_pitch(m, n, k) ? "+pad" : "");
      const std::string pick = e == fam::dispatch::kHandRule ? "hand" : fam::menu::name(fam::menu::kBf16[size_t(e)].spec);
      std::printf("%ld,%ld,%ld,%s,%s\n", m, n, k, pick.c_str(), hand.c_str());
    }
  return 0;
}
