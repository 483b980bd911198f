// Pipeline traces (opt-in), the harness side: one launch of a traced step (common/kernel_lib/trace.hpp,
// `make trace STEP=NN`) written as Chrome-trace JSON (chrome://tracing, Perfetto).
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <string>

#include "../kernel_lib/trace.hpp"

namespace gemm::trace {

struct Summary {
  size_t recorded = 0;  ///< intervals written to the file
  double span_us = 0;                ///< first t0 to last t1
};

/// Arms a zeroed buffer of `blocks` x kSlotsPerBlock slots of kKinds * (k_tiles + 1) records, `k_tiles`
/// being the K tiles one block runs (all its tiles' in a persistent step; K tiles beyond and blocks
/// beyond are not recorded), runs `launch` once on the default stream, synchronizes, disarms, and
/// writes the records that were filled as Chrome-trace JSON to `path` ("X" events, one process per
/// SM, one thread per block and warpgroup, timestamps in microseconds from the first record). Throws
/// gemm::Error when no traced kernel is linked, on a CUDA error, or when the file cannot be written.
Summary run_traced(const std::function<void(cudaStream_t)>& launch, const std::string& path, unsigned blocks,
                   unsigned k_tiles);

}  // namespace gemm::trace
