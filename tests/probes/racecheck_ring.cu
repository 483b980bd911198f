// A minimal probe of what compute-sanitizer's racecheck sees of a two-stage ring of shared memory that one
// warp fills and another reads, ordered by mbarriers as the family's producer and consumers are (full:
// filled, empty: read). Each round the producer warp waits for the stage to be empty and fills its 32
// floats from global memory, then the consumer warp waits for it to be full, copies it out and frees it.
// How the stage is filled and freed is the probe's argument (the consumer frees it with __syncwarp and
// lane 0's arrive, except in st32, cpasync32 and noinc32):
//   st        each lane loads its float and stores it (ld.global, st.shared), then arrives on the full
//             barrier (32 arrivals): ordinary stores released by mbarrier.arrive
//   st32      the same, and every consumer lane arrives on the empty barrier itself (32 arrivals): how
//             step 40's registers build filled and freed its stages' scales
//   cpasync   each lane copies its float with a 4-byte cp.async, waits for it (cp.async.wait_group 0),
//             then arrives: step 40's second build
//   noinc     each lane copies with cp.async and lets the copy arrive when it lands
//             (cp.async.mbarrier.arrive.noinc): step 40's first build
//   cpasync32, noinc32   cpasync and noinc with every consumer lane arriving on the empty barrier (as st32);
//             noinc32 is how step 40 fills and frees its stages' scales
//   tma OFF   lane 0 arms the barrier and loads a 32-float box of a one-row f32 tensor map that starts
//             OFF floats past the round's 32 (step 40's withdrawn TMA build loaded boxes that start
//             anywhere; on an H100 a start that is not 16 bytes into global memory faults)
// scripts/sanitize.sh runs st32 and noinc32 (which racecheck must find clean) and st under racecheck; every mode
// must copy the right values (docs/notebook/fp8.md, step 40). Built for sm_90a (make fixtures).
//   build/bin/probe_racecheck_ring st|st32|cpasync|cpasync32|noinc|noinc32|tma [OFF]   exit 0 when the copied values are right
#include <cuda.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../../common/kernel_lib/check.hpp"
#include "../../common/kernel_lib/ptx/cp_async.cuh"
#include "../../common/kernel_lib/ptx/mbarrier.cuh"
#include "../../common/kernel_lib/ptx/tma.cuh"

constexpr int STAGES = 2, ROUNDS = 8, W = 32, PAD = 64;  // PAD: room past the last round for OFF
enum class Mode { st, st32, cpasync, noinc, tma, cpasync32, noinc32 };

__global__ void __launch_bounds__(64) ring(const float* src, float* out, int off, Mode mode,
                                           const __grid_constant__ CUtensorMap map) {
  const bool each = mode == Mode::st32 || mode == Mode::cpasync32 || mode == Mode::noinc32;  // every reader arrives
  if (mode == Mode::cpasync32) mode = Mode::cpasync;
  if (mode == Mode::noinc32) mode = Mode::noinc;
  __shared__ __align__(128) float buf[STAGES][W];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  const int lane = int(threadIdx.x % 32);
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], mode == Mode::tma ? 1 : 32);
      ptx::mbarrier_init(&empty[s], each ? 32 : 1);
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();
  for (int r = 0; r < ROUNDS; ++r) {
    const int st = r % STAGES;
    const uint32_t phase = (r / STAGES) & 1;
    const int i = r * W + off + lane;
    if (threadIdx.x < 32) {  // the producer warp
      ptx::mbarrier_wait_parity(&empty[st], phase ^ 1);
      if (mode == Mode::st || mode == Mode::st32) {
        buf[st][lane] = src[i];
        ptx::mbarrier_arrive(&full[st]);
      } else if (mode == Mode::cpasync) {
        ptx::cp_async_4(ptx::smem_addr(&buf[st][lane]), src + i);
        ptx::cp_async_commit();
        ptx::cp_async_wait<0>();
        ptx::mbarrier_arrive(&full[st]);
      } else if (mode == Mode::noinc) {
        ptx::cp_async_4(ptx::smem_addr(&buf[st][lane]), src + i);
        ptx::cp_async_mbarrier_arrive_noinc(&full[st]);  // step 40's wrapper
      } else if (lane == 0) {
        ptx::mbarrier_arrive_expect_tx(&full[st], W * sizeof(float));
        ptx::tma_load_2d(&buf[st][0], &map, r * W + off, 0, &full[st]);
      }
    } else {  // the consumer warp
      ptx::mbarrier_wait_parity(&full[st], phase);
      out[r * W + lane] = buf[st][lane];
      if (each) {
        ptx::mbarrier_arrive(&empty[st]);  // every lane releases its own read
      } else {
        __syncwarp();
        if (lane == 0) ptx::mbarrier_arrive(&empty[st]);
      }
    }
  }
}

// A one-row FLOAT32 map of n floats, boxes of W (cuTensorMapEncodeTiled; tma.hpp's maps are bf16 or e4m3).
static CUtensorMap one_row_f32_map(const float* base, uint64_t n) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || p == nullptr) throw gemm::Error("no cuTensorMapEncodeTiled in this driver");
  CUtensorMap map;
  const cuuint64_t dims[2] = {n, 1}, strides[1] = {(n * 4 + 15) / 16 * 16};
  const cuuint32_t box[2] = {W, 1}, elem_strides[2] = {1, 1};
  const CUresult rc = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p)(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base), dims, strides, box, elem_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS) throw gemm::Error("cuTensorMapEncodeTiled failed: " + std::to_string(int(rc)));
  return map;
}

int main(int argc, char** argv) {
  Mode mode = Mode::st;
  const char* name = argc >= 2 ? argv[1] : "";
  if (std::strcmp(name, "st") == 0) mode = Mode::st;
  else if (std::strcmp(name, "st32") == 0) mode = Mode::st32;
  else if (std::strcmp(name, "cpasync") == 0) mode = Mode::cpasync;
  else if (std::strcmp(name, "noinc") == 0) mode = Mode::noinc;
  else if (std::strcmp(name, "cpasync32") == 0) mode = Mode::cpasync32;
  else if (std::strcmp(name, "noinc32") == 0) mode = Mode::noinc32;
  else if (std::strcmp(name, "tma") == 0) mode = Mode::tma;
  else argc = 0;
  char* end = nullptr;
  const long off = argc == 3 ? std::strtol(argv[2], &end, 10) : 0;
  const bool off_ok = argc != 3 || (end != argv[2] && *end == '\0');
  if (argc < 2 || argc > 3 || !off_ok || off < 0 || off > PAD - W || (argc == 3 && mode != Mode::tma)) {
    std::fprintf(stderr, "usage: %s st|st32|cpasync|cpasync32|noinc|noinc32|tma [OFF: 0..%d floats, tma only]\n", argv[0], PAD - W);
    return 2;
  }
  try {
    const int n = ROUNDS * W + PAD;
    std::vector<float> host_src(n), host_out(ROUNDS * W);
    for (int i = 0; i < n; ++i) host_src[i] = float(i + 1);
    float *src = nullptr, *out = nullptr;
    CUDA_CHECK(cudaMalloc(&src, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&out, ROUNDS * W * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(src, host_src.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUtensorMap map{};
    if (mode == Mode::tma) map = one_row_f32_map(src, n);
    ring<<<1, 64>>>(src, out, int(off), mode, map);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(host_out.data(), out, host_out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < ROUNDS * W; ++i) {
      const float want = host_src[i / W * W + off + i % W];
      if (host_out[i] != want) {
        std::fprintf(stderr, "error: %s: element %d is %g, want %g\n", name, i, host_out[i], want);
        return 1;
      }
    }
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(out));
    std::printf("%s (offset %ld): %d values right\n", name, off, ROUNDS * W);
    return 0;
  } catch (const gemm::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
