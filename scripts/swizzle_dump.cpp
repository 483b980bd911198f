// Prints where TMA's swizzle puts each 16-byte chunk of a box, as CSV (span,row,chunk,offset), from
// the function the kernels use (common/kernel_lib/swizzle.hpp); scripts/plot_swizzle.py draws docs/img/swizzle.png
// from it. Span 0 is the unswizzled layout. Rows are `span` bytes wide (the inner box extent TMA
// allows under that swizzle; 128 bytes for span 0), ROWS of them. With ELEM_BYTES (2 for bf16, 4 for
// fp32) it prints one line per element instead, as span,row,elem,offset: the byte offset at which
// element `elem` of the row (its first byte) lands.
//   build/bin/swizzle_dump [ROWS [ELEM_BYTES]]
#include <cstdio>
#include <cstdlib>
#include <initializer_list>

#include "../common/kernel_lib/swizzle.hpp"

int main(int argc, char** argv) {
  const long rows = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 16;
  const long elem = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 16;  // 16: one line per chunk
  if (argc > 3 || rows < 1 || rows > 1024 || (argc > 2 && elem != 1 && elem != 2 && elem != 4 && elem != 8)) {
    std::fprintf(stderr, "usage: %s [ROWS [ELEM_BYTES]]   (1 <= ROWS <= 1024, default 16; ELEM_BYTES 1, 2, 4 or 8)\n",
                 argv[0]);
    return 2;
  }
  std::printf(argc > 2 ? "span,row,elem,offset\n" : "span,row,chunk,offset\n");
  for (unsigned span : {0u, 32u, 64u, 128u}) {
    const unsigned width = span ? span : 128;
    for (unsigned r = 0; r < unsigned(rows); ++r)
      for (unsigned c = 0; c < width / unsigned(elem); ++c) {
        const unsigned linear = r * width + unsigned(elem) * c;
        const unsigned off = span == 32    ? gemm::swizzle::byte_offset<32>(linear)
                             : span == 64  ? gemm::swizzle::byte_offset<64>(linear)
                             : span == 128 ? gemm::swizzle::byte_offset<128>(linear)
                                           : linear;
        std::printf("%u,%u,%u,%u\n", span, r, c, off);
      }
  }
  return 0;
}
