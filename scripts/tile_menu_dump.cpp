// Prints the tile menu's pick (common/kernel_lib/tile_menu.hpp, step 25) over a grid of M and N as CSV,
// from the same function the launcher calls: scripts/plot_tile_menu.py draws docs/img/tile_menu.png.
//   build/bin/tile_menu_dump SMS M_MAX N_MAX
// One line per (m, n) on a geometric grid of about 48 points per axis from 1 to M_MAX and N_MAX:
// m,n,swap,bn,rounds_wide,rounds_narrow (rounds: tiles over SMs, rounded up, of the unswapped tiles).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "../common/kernel_lib/tile_menu.hpp"

int main(int argc, char** argv) {
  using namespace gemm::tile_menu;
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s SMS M_MAX N_MAX\n", argv[0]);
    return 2;
  }
  auto number = [](const char* s, long& v) {  // a whole decimal argument, nothing trailing
    char* end = nullptr;
    v = std::strtol(s, &end, 10);
    return *s != '\0' && *end == '\0';
  };
  long sms = 0, m_max = 0, n_max = 0;
  if (!number(argv[1], sms) || !number(argv[2], m_max) || !number(argv[3], n_max)) {
    std::fprintf(stderr, "error: SMS, M_MAX and N_MAX must be decimal integers\n");
    return 2;
  }
  if (sms < 1 || sms > 4096 || m_max < 1 || n_max < 1 || m_max > (1L << 20) || n_max > (1L << 20)) {
    std::fprintf(stderr, "error: need 1 <= SMS <= 4096 and 1 <= M_MAX, N_MAX <= 2^20\n");
    return 2;
  }
  auto axis = [](long max) {
    std::set<long> v;
    for (int i = 0; i <= 48; ++i) v.insert(std::lround(std::pow(double(max), i / 48.0)));
    return v;
  };
  std::printf("m,n,swap,bn,rounds_wide,rounds_narrow\n");
  for (long m : axis(m_max))
    for (long n : axis(n_max)) {
      const Tile t = choose(m, n, 4096, int(sms));
      std::printf("%ld,%ld,%d,%d,%lld,%lld\n", m, n, t.swap ? 1 : 0, t.bn, (long long)rounds(tile_count(m, n, 128), int(sms)),
                  (long long)rounds(tile_count(m, n, 64), int(sms)));
    }
  return 0;
}
