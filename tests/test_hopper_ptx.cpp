// The epilogue wrappers of common/kernel_lib/ptx/ (stmatrix, fence.proxy.async, TMA store) before a step
// uses them: a 16 x 16 tile written by stmatrix and stored by TMA must land exactly, element for
// element, and be clipped at the matrix's edges without touching anything else.
#include <catch2/catch.hpp>
#include <cuda_bf16.h>

#include <cmath>
#include <vector>

#include "../common/harness/buffer.hpp"
#include "fixtures/hopper_epilogue_probe.hpp"
#include "support.hpp"

namespace {

// Runs the probe at (row0, col0) of a rows x cols matrix followed by a guard band, all NaN before,
// and checks every element: 16 r + c inside the stored box, NaN everywhere else.
void check_probe(int rows, int cols, int row0, int col0) {
  const int guard = 256;
  gemm::DeviceBuffer<__nv_bfloat16> buf(size_t(rows) * cols + guard);
  CUDA_CHECK(cudaMemset(buf.get(), 0xFF, buf.bytes()));
  fixtures::epilogue_probe(buf.get(), rows, cols, row0, col0);
  std::vector<__nv_bfloat16> host(buf.size());
  CUDA_CHECK(cudaMemcpy(host.data(), buf.get(), buf.bytes(), cudaMemcpyDeviceToHost));
  int wrong = 0, written = 0;
  for (size_t idx = 0; idx < host.size(); ++idx) {
    const float got = __bfloat162float(host[idx]);
    const long r = long(idx) / cols - row0, c = long(idx) % cols - col0;
    const bool inside = idx < size_t(rows) * cols && r >= 0 && r < 16 && c >= 0 && c < 16;
    if (inside) ++written;
    const bool ok = inside ? got == float(16 * r + c) : std::isnan(got);
    if (!ok && wrong++ < 5) UNSCOPED_INFO("element " << idx << " (row " << idx / cols << ", col " << idx % cols << ") = " << got);
  }
  INFO(rows << " x " << cols << " matrix, tile at (" << row0 << ", " << col0 << "), " << written << " elements inside");
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("stmatrix + proxy fence + TMA store place a 16x16 tile exactly", "[gpu][hopper][ptx]") {
  REQUIRE_HOPPER_OR_SKIP();
  check_probe(40, 24, 8, 8);  // fully inside
  check_probe(40, 24, 0, 0);  // at the origin
}

TEST_CASE("the TMA store clips at the bottom and right edges and writes nothing past the matrix", "[gpu][hopper][ptx]") {
  REQUIRE_HOPPER_OR_SKIP();
  check_probe(40, 24, 32, 16);  // 8 of 16 rows and 8 of 16 columns inside
  check_probe(17, 8, 16, 0);    // one row and 8 columns inside
}
