// Honest timing in one function: warm-up, CUDA events, L2 flushed before every repetition, median.
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <vector>

namespace gemm {

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  std::vector<double> samples_ms;
};

/// Runs `launch` `warmup` times untimed, then `reps` times, each preceded (outside the timed region)
/// by a read of a buffer twice the L2 size so that no repetition finds its inputs in L2.
/// Each repetition is bracketed by its own pair of CUDA events on `stream`. Throws gemm::Error on a
/// CUDA failure, including one raised by the launched kernel.
Timing time_launch(const std::function<void(cudaStream_t)>& launch, int warmup, int reps,
                   cudaStream_t stream = nullptr);

/// TFLOP/s of an m x n x k GEMM that took `ms`: 2*m*n*k FLOPs, counted in double.
double tflops(int m, int n, int k, double ms);

}  // namespace gemm
