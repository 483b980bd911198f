#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

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

// One thread counts SM cycles (%clock64) over at least `span_ns` of %globaltimer nanoseconds and
// writes both: their ratio is the SM clock of the moment. %globaltimer ticks in steps of up to a
// microsecond on some GPUs, so the span is long enough (30 us) to keep that error near 3 %.
__global__ void __launch_bounds__(32) clock_probe(unsigned long long* out, unsigned long long span_ns) {
  if (threadIdx.x != 0) return;
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long c0 = clock64();
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  } while (t1 - t0 < span_ns);
  const long long c1 = clock64();
  out[0] = static_cast<unsigned long long>(c1 - c0);
  out[1] = t1 - t0;
}

namespace {

// The flush buffer of this process (allocated once: 2x the L2 size, zeroed).
struct Flusher {
  DeviceBuffer<int4> buf;
  DeviceBuffer<int> sink{1};
  int sms = 0;
  Flusher() {
    int l2_bytes = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    buf = DeviceBuffer<int4>(size_t(2) * std::max(l2_bytes, 1 << 20) / sizeof(int4));
    CUDA_CHECK(cudaMemset(buf.get(), 0, buf.bytes()));
  }
  void operator()(cudaStream_t stream) const {
    flush_l2<<<4 * sms, 256, 0, stream>>>(buf.get(), buf.size(), 1, sink.get());
    CUDA_CHECK_LAUNCH();
  }
};

const Flusher& flusher() {
  static Flusher f;
  return f;
}

struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  double ms() const {
    float v = 0;
    CUDA_CHECK(cudaEventElapsedTime(&v, start, stop));
    return v;
  }
};

}  // namespace

Timing make_timing(std::vector<double> samples_ms) {
  Timing t;
  t.samples_ms = samples_ms;
  if (samples_ms.empty()) return t;
  t.median_ms = quantile(samples_ms, 0.5);
  t.min_ms = *std::min_element(samples_ms.begin(), samples_ms.end());
  t.max_ms = *std::max_element(samples_ms.begin(), samples_ms.end());
  return t;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t lo = size_t(std::floor(pos)), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - double(lo)) * (v[hi] - v[lo]);
}

Timing time_launch(const Launch& launch, int warmup, int reps, cudaStream_t stream) {
  const Flusher& flush = flusher();
  for (int i = 0; i < warmup; ++i) launch(stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<EventPair> ev(reps);
  for (int i = 0; i < reps; ++i) {
    flush(stream);
    CUDA_CHECK(cudaEventRecord(ev[i].start, stream));
    launch(stream);
    CUDA_CHECK(cudaEventRecord(ev[i].stop, stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> ms;
  for (const EventPair& e : ev) ms.push_back(e.ms());
  return make_timing(ms);
}

PairedTiming time_paired(const std::vector<Contender>& contenders, int warmup, double settle_s, int rounds,
                         Sampler* sampler, cudaStream_t stream) {
  const Flusher& flush = flusher();
  const size_t n = contenders.size();
  for (const Contender& c : contenders)
    for (int i = 0; i < warmup; ++i) c.launch(stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  // Settle: untimed rounds, the same flush-and-launch sequence as below, until settle_s has passed.
  const auto settle_start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - settle_start).count() < settle_s) {
    for (const Contender& c : contenders) {
      flush(stream);
      c.launch(stream);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  constexpr unsigned long long kProbeNs = 30000;
  DeviceBuffer<unsigned long long> probe(2 * n * size_t(rounds));
  std::vector<EventPair> ev(n * size_t(rounds));
  const double t0 = sampler ? sampler->now() : 0;
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < n; ++i) {
      const size_t slot = size_t(r) * n + i;
      flush(stream);
      CUDA_CHECK(cudaEventRecord(ev[slot].start, stream));
      contenders[i].launch(stream);
      CUDA_CHECK(cudaEventRecord(ev[slot].stop, stream));
      clock_probe<<<1, 32, 0, stream>>>(probe.get() + 2 * slot, kProbeNs);
      CUDA_CHECK_LAUNCH();
    }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const double t1 = sampler ? sampler->now() : 0;

  std::vector<unsigned long long> host(probe.size());
  CUDA_CHECK(cudaMemcpy(host.data(), probe.get(), probe.bytes(), cudaMemcpyDeviceToHost));
  PairedTiming out;
  out.clock_mhz.assign(n, {});
  std::vector<std::vector<double>> ms(n);
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < n; ++i) {
      const size_t slot = size_t(r) * n + i;
      ms[i].push_back(ev[slot].ms());
      const double cycles = double(host[2 * slot]), ns = double(host[2 * slot + 1]);
      out.clock_mhz[i].push_back(ns > 0 ? 1e3 * cycles / ns : 0);
    }
  for (size_t i = 0; i < n; ++i) out.timing.push_back(make_timing(ms[i]));
  if (sampler) out.nvml = sampler->summary(t0, t1);
  return out;
}

RatioStats paired_ratio(const Timing& step, const Timing& ref) {
  std::vector<double> r;
  for (size_t i = 0; i < std::min(step.samples_ms.size(), ref.samples_ms.size()); ++i)
    if (step.samples_ms[i] > 0) r.push_back(ref.samples_ms[i] / step.samples_ms[i]);
  RatioStats s;
  if (r.empty()) return s;
  s.median = quantile(r, 0.5);
  s.q25 = quantile(r, 0.25);
  s.q75 = quantile(r, 0.75);
  s.min = quantile(r, 0);
  s.max = quantile(r, 1);
  return s;
}

Sustained time_sustained(const Launch& launch, double seconds, double settle_s, Sampler& sampler,
                         cudaStream_t stream) {
  // Batches of about 10 ms, at most three in flight, so the host knows (to about one batch) when
  // each finished and can line the batches up with the NVML samples.
  for (int i = 0; i < 3; ++i) launch(stream);
  EventPair probe;
  CUDA_CHECK(cudaEventRecord(probe.start, stream));
  for (int i = 0; i < 5; ++i) launch(stream);
  CUDA_CHECK(cudaEventRecord(probe.stop, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const double est_ms = std::max(probe.ms() / 5, 1e-3);
  const int per_batch = int(std::clamp(std::ceil(10.0 / est_ms), 1.0, 10000.0));

  struct Batch {
    std::unique_ptr<EventPair> ev;
    double done_s = 0;  // host time at which the batch was seen complete
  };
  std::vector<Batch> batches;
  const double t_start = sampler.now();
  auto complete = [&](Batch& b) {
    CUDA_CHECK(cudaEventSynchronize(b.ev->stop));
    b.done_s = sampler.now();
  };
  while (sampler.now() - t_start < seconds) {
    Batch b{std::make_unique<EventPair>()};
    CUDA_CHECK(cudaEventRecord(b.ev->start, stream));
    for (int i = 0; i < per_batch; ++i) launch(stream);
    CUDA_CHECK(cudaEventRecord(b.ev->stop, stream));
    batches.push_back(std::move(b));
    if (batches.size() >= 3) complete(batches[batches.size() - 3]);
  }
  for (size_t i = batches.size() >= 2 ? batches.size() - 2 : 0; i < batches.size(); ++i) complete(batches[i]);

  Sustained out;
  double gpu_ms = 0, w0 = -1, w1 = -1;
  for (size_t i = 1; i < batches.size(); ++i) {
    if (batches[i - 1].done_s - t_start < settle_s) continue;  // started before the settle time
    if (w0 < 0) w0 = batches[i - 1].done_s;
    w1 = batches[i].done_s;
    gpu_ms += batches[i].ev->ms();
    out.launches += per_batch;
  }
  if (out.launches == 0) {  // too short to settle: use everything after the first batch
    for (size_t i = 1; i < batches.size(); ++i) {
      gpu_ms += batches[i].ev->ms();
      out.launches += per_batch;
    }
    w0 = batches.front().done_s;
    w1 = batches.back().done_s;
  }
  out.ms_per_gemm = out.launches ? gpu_ms / out.launches : 0;
  out.nvml = sampler.summary(w0, w1);
  // Mean power from the energy counter over the window, times the GPU time of one launch (the gaps
  // between back-to-back launches are microseconds).
  out.joules_per_gemm = out.nvml.counter_watts() * out.ms_per_gemm * 1e-3;
  for (TelemetrySample s : sampler.samples())
    if (s.t_s >= t_start && s.t_s <= batches.back().done_s) {
      s.t_s -= t_start;
      out.series.push_back(s);
    }
  return out;
}

double tflops(int m, int n, int k, double ms) {
  return 2.0 * double(m) * double(n) * double(k) / (ms * 1e-3) / 1e12;
}

}  // namespace gemm
