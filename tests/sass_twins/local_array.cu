// SASS twin with a register array indexed at run time: acc[threadIdx.x % TN] cannot be renamed to a
// register (registers are not addressable), so ptxas places acc in local memory: a stack frame
// with STL/LDL (per-thread memory in DRAM, cached in L1) around every FFMA.
// Never linked or registered: tests/test_sass.cpp checks that the all-steps rules flag it.
// twin-of: all
// must-fail: kernel lacks LDL.*|STL.*
// must-fail: ptxas stack == 0
// must-pass: kernel has LDG\.E
#include <cstdint>

namespace sass_twin {

constexpr int TN = 8;

__global__ void __launch_bounds__(256)
local_array(int N, int K, const float* A, const float* B, float* C) {
  const int64_t row = blockIdx.x;
  float acc[TN] = {};
  for (int k = 0; k < K; ++k) acc[(threadIdx.x + k) % TN] += A[row * K + k] * B[k * int64_t(N) + threadIdx.x];
#pragma unroll
  for (int j = 0; j < TN; ++j) C[row * N + threadIdx.x * TN + j] = acc[j];
}

}  // namespace sass_twin
