#include <algorithm>

#include "buffer.hpp"
#include "timing.hpp"

namespace gemm {

// Reads every 16 bytes of `buf` once: afterwards L2 holds (clean) lines of the flush buffer and
// none of the GEMM's inputs. A read, not a memset: a memset would leave ~2x L2 of dirty lines whose
// write-back to HBM would land inside the next timed kernel. The store never happens (the buffer
// holds zeros and `never` is not zero); it only keeps the loads from being removed.
__global__ void __launch_bounds__(256) flush_l2(const int4* buf, size_t count, int never, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    const int4 v = __ldcg(&buf[i]);  // cache in L2 only, the level being flushed
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == never) *sink = acc;
}

Timing time_launch(const std::function<void(cudaStream_t)>& launch, int warmup, int reps,
                   cudaStream_t stream) {
  int l2_bytes = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0));
  DeviceBuffer<int4> flush(size_t(2) * std::max(l2_bytes, 1 << 20) / sizeof(int4));
  DeviceBuffer<int> sink(1);
  CUDA_CHECK(cudaMemsetAsync(flush.get(), 0, flush.bytes(), stream));
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));

  for (int i = 0; i < warmup; ++i) launch(stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  std::vector<cudaEvent_t> start(reps), stop(reps);
  for (int i = 0; i < reps; ++i) {
    CUDA_CHECK(cudaEventCreate(&start[i]));
    CUDA_CHECK(cudaEventCreate(&stop[i]));
  }
  for (int i = 0; i < reps; ++i) {
    flush_l2<<<4 * sms, 256, 0, stream>>>(flush.get(), flush.size(), 1, sink.get());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(start[i], stream));
    launch(stream);
    CUDA_CHECK(cudaEventRecord(stop[i], stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));

  Timing t;
  for (int i = 0; i < reps; ++i) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start[i], stop[i]));
    t.samples_ms.push_back(ms);
    cudaEventDestroy(start[i]);
    cudaEventDestroy(stop[i]);
  }
  std::vector<double> sorted = t.samples_ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  t.median_ms = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  t.min_ms = sorted.front();
  t.max_ms = sorted.back();
  return t;
}

double tflops(int m, int n, int k, double ms) {
  return 2.0 * double(m) * double(n) * double(k) / (ms * 1e-3) / 1e12;
}

}  // namespace gemm
