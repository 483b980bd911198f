// Prints a stream-K split (gemm::stream_k::Split, common/kernel_lib/stream_k.hpp) as JSON, from the
// C++ the kernels run: scripts/figures/hopper2.py and shapes.py draw from this output instead of
// restating the arithmetic. It links the objects of steps 21 and 23 (their make_split: each step's
// rule, then the library's split), so it needs their build but no GPU.
//   build/bin/split_dump 21|23 M N K SMS                            the step's split of M x N x K on SMS SMs
//   build/bin/split_dump library TILES K_TILES SMS WORTH_IT MIN_PIECE  gemm::stream_k::make_split itself
// Output: {"tiles": T, "dp_tiles": D, "sk_tiles": S, "blocks": P, "iters": I, "starts": [start(0), ...,
// start(P)]}: block b takes K tiles [start(b), start(b + 1)) of the stream-K tiles' I.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../common/kernel_lib/stream_k.hpp"

// The steps' own rules, defined in kernels/21_stream_k.cu and kernels/23_pingpong_stream_k.cu.
namespace step21 {
gemm::stream_k::Split make_split(int m, int n, int k, int sms);
}
namespace step23 {
gemm::stream_k::Split make_split(int m, int n, int k, int sms);
}

namespace {

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s 21|23 M N K SMS\n"
               "       %s library TILES K_TILES SMS WORTH_IT(0|1) MIN_PIECE\n",
               argv0, argv0);
  return 2;
}

/// The argument as a positive integer below 2^31, or -1.
long positive(const char* s) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  return *s && !*end && v >= 1 && v < (1L << 31) ? v : -1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  gemm::stream_k::Split s{};
  if ((what == "21" || what == "23") && argc == 6) {
    const long m = positive(argv[2]), n = positive(argv[3]), k = positive(argv[4]), sms = positive(argv[5]);
    if (m < 0 || n < 0 || k < 0 || sms < 0) {
      std::fprintf(stderr, "error: M, N, K and SMS must be integers from 1 to 2^31 - 1\n");
      return 2;
    }
    s = (what == "21" ? step21::make_split : step23::make_split)(int(m), int(n), int(k), int(sms));
  } else if (what == "library" && argc == 7) {
    const long tiles = positive(argv[2]), k_tiles = positive(argv[3]), sms = positive(argv[4]),
               min_piece = positive(argv[6]);
    const std::string worth_it = argv[5];
    if (tiles < 0 || k_tiles < 0 || sms < 0 || min_piece < 0 || (worth_it != "0" && worth_it != "1")) {
      std::fprintf(stderr, "error: TILES, K_TILES, SMS and MIN_PIECE must be integers from 1 to 2^31 - 1, WORTH_IT 0 or 1\n");
      return 2;
    }
    s = gemm::stream_k::make_split(tiles, k_tiles, int(sms), worth_it == "1", int(min_piece));
  } else {
    return usage(argv[0]);
  }
  std::printf("{\"tiles\": %d, \"dp_tiles\": %d, \"sk_tiles\": %d, \"blocks\": %d, \"iters\": %lld, \"starts\": [",
              s.tiles, s.dp_tiles, s.sk_tiles, s.blocks, static_cast<long long>(s.iters));
  for (int b = 0; b <= s.blocks; ++b)
    std::printf("%s%lld", b ? ", " : "", static_cast<long long>(s.start(b)));
  std::printf("]}\n");
  return 0;
}
