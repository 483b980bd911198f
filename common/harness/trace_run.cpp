// Host side of the opt-in pipeline traces: one traced launch, written as Chrome-trace JSON.
#include "trace_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "../kernel_lib/check.hpp"
#include "buffer.hpp"

namespace gemm::trace {

Summary run_traced(const std::function<void(cudaStream_t)>& launch, const std::string& path, unsigned blocks,
                   unsigned k_tiles) {
  if (!available())
    throw Error("this binary was built without tracing: build the traced one with `make trace STEP=NN`");
  const unsigned per_slot = kKinds * (k_tiles + 1), slots = kSlotsPerBlock * blocks;
  DeviceBuffer<Record> records(size_t(per_slot) * slots);
  CUDA_CHECK(cudaMemset(records.get(), 0, records.bytes()));
  arm(records.get(), per_slot, slots);
  launch(nullptr);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  arm(nullptr, 0, 0);  // disarmed: later launches record nothing (the buffer is freed below)
  std::vector<Record> all(records.size());
  CUDA_CHECK(cudaMemcpy(all.data(), records.get(), records.bytes(), cudaMemcpyDeviceToHost));
  std::vector<Record> host;
  for (const Record& r : all)
    if (r.t1 != 0) host.push_back(r);
  std::sort(host.begin(), host.end(), [](const Record& a, const Record& b) { return a.t0 < b.t0; });
  Summary s;
  s.recorded = host.size();
  uint64_t t_min = UINT64_MAX, t_max = 0;
  for (const Record& r : host) {
    t_min = std::min(t_min, r.t0);
    t_max = std::max(t_max, r.t1);
  }
  if (!host.empty()) s.span_us = double(t_max - t_min) / 1e3;
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw Error("cannot write the trace to " + path);
  fmt::print(f, "{{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
  for (size_t i = 0; i < host.size(); ++i) {
    const Record& r = host[i];
    fmt::print(f, "{{\"name\": \"{}\", \"cat\": \"{}\", \"ph\": \"X\", \"ts\": {:.3f}, \"dur\": {:.3f}, \"pid\": {}, "
                  "\"tid\": {}, \"args\": {{\"block\": {}, \"wg\": {}, \"kt\": {}}}}}{}\n",
               kind_name(r.kind), r.kind, double(r.t0 - t_min) / 1e3, double(r.t1 - r.t0) / 1e3, r.sm,
               uint64_t(r.block) * kSlotsPerBlock + r.wg, r.block, r.wg, r.kt, i + 1 < host.size() ? "," : "");
  }
  fmt::print(f, "]}}\n");
  if (std::fclose(f) != 0) throw Error("cannot write the trace to " + path);
  return s;
}

}  // namespace gemm::trace
