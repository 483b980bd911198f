// A minimal probe of what compute-sanitizer's initcheck sees: a 16x16 bf16 buffer that nothing but one
// kernel writes, then copied to the host. `st` writes it with ordinary stores, `tma` with one TMA store
// (cp.async.bulk.tensor, the async proxy) from shared memory. initcheck tracks the first and, as
// scripts/sanitize.sh shows on the H200, reports the copy of the second as uninitialized: it does not
// see writes by the TMA unit. That is why the harness fills every buffer a TMA store may write (C, and
// cuBLAS's reference) with NaN first: the bytes are then initialized as far as initcheck can tell, and an
// element the kernel failed to write still fails the check as NaN. Built for sm_90a (make fixtures).
//   build/bin/probe_initcheck_tma st|tma     exit 0 when the copied values are right
#include <cuda_bf16.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "../../common/kernel_lib/check.hpp"
#include "../../common/kernel_lib/ptx/fence.cuh"
#include "../../common/kernel_lib/ptx/tma.cuh"
#include "../../common/kernel_lib/tma.hpp"

constexpr int ROWS = 16, COLS = 16;

__global__ void __launch_bounds__(32) store_plain(__nv_bfloat16* dst) {
  for (int i = threadIdx.x; i < ROWS * COLS; i += 32) dst[i] = __float2bfloat16_rn(float(i));
}

__global__ void __launch_bounds__(32) store_tma(const __grid_constant__ CUtensorMap map) {
  __shared__ __align__(128) __nv_bfloat16 tile[ROWS * COLS];
  for (int i = threadIdx.x; i < ROWS * COLS; i += 32) tile[i] = __float2bfloat16_rn(float(i));
  ptx::fence_proxy_async_shared();  // the generic-proxy stores, before the TMA unit reads them
  __syncwarp();
  if (threadIdx.x == 0) {
    ptx::tma_store_2d(&map, tile, 0, 0);
    ptx::tma_store_commit();
    ptx::tma_store_wait_all<0>();
  }
}

int main(int argc, char** argv) {
  const bool tma = argc == 2 && std::strcmp(argv[1], "tma") == 0;
  if (argc != 2 || (!tma && std::strcmp(argv[1], "st") != 0)) {
    std::fprintf(stderr, "usage: %s st|tma\n", argv[0]);
    return 2;
  }
  try {
    __nv_bfloat16* dst = nullptr;
    CUDA_CHECK(cudaMalloc(&dst, ROWS * COLS * sizeof(__nv_bfloat16)));  // never memset: only the kernel writes
    if (tma) {
      const CUtensorMap map = gemm::make_tma_2d({dst, ROWS, COLS, ROWS, COLS, CU_TENSOR_MAP_SWIZZLE_NONE});
      store_tma<<<1, 32>>>(map);
    } else {
      store_plain<<<1, 32>>>(dst);
    }
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<__nv_bfloat16> host(ROWS * COLS);
    CUDA_CHECK(cudaMemcpy(host.data(), dst, host.size() * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
    for (int i = 0; i < ROWS * COLS; ++i)
      if (__bfloat162float(host[i]) != float(i)) {
        std::fprintf(stderr, "error: element %d is %g, want %d\n", i, __bfloat162float(host[i]), i);
        return 1;
      }
    CUDA_CHECK(cudaFree(dst));
    std::printf("%s store: %d values right\n", tma ? "TMA" : "plain", ROWS * COLS);
    return 0;
  } catch (const gemm::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
