// Prints where TMA's swizzle puts each 16-byte chunk of a box, as CSV (span,row,chunk,offset), from
// the function the kernels use (common/swizzle.hpp); scripts/plot_swizzle.py draws docs/img/swizzle.png
// from it. Span 0 is the unswizzled layout. Rows are `span` bytes wide (the inner box extent TMA
// allows under that swizzle; 128 bytes for span 0), ROWS of them.
//   build/bin/swizzle_dump [ROWS]
#include <cstdio>
#include <cstdlib>
#include <initializer_list>

#include "../common/swizzle.hpp"

int main(int argc, char** argv) {
  const long rows = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 16;
  if (argc > 2 || rows < 1 || rows > 1024) {
    std::fprintf(stderr, "usage: %s [ROWS]   (1 <= ROWS <= 1024, default 16)\n", argv[0]);
    return 2;
  }
  std::printf("span,row,chunk,offset\n");
  for (unsigned span : {0u, 32u, 64u, 128u}) {
    const unsigned width = span ? span : 128;
    for (unsigned r = 0; r < unsigned(rows); ++r)
      for (unsigned c = 0; c < width / 16; ++c) {
        const unsigned linear = r * width + 16 * c;
        const unsigned off = span == 32    ? gemm::swizzle::byte_offset<32>(linear)
                             : span == 64  ? gemm::swizzle::byte_offset<64>(linear)
                             : span == 128 ? gemm::swizzle::byte_offset<128>(linear)
                                           : linear;
        std::printf("%u,%u,%u,%u\n", span, r, c, off);
      }
  }
  return 0;
}
