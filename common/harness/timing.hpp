// Honest timing: warm-up, CUDA events, L2 flushed before every repetition, median; and paired
// timing, where a step and its references alternate launch by launch so that they meet the same
// power state (the H200 runs large bf16 GEMMs at its 700 W cap, with the SM clock moving between
// about 1.2 and 1.7 GHz from one second to the next; docs/machine.md).
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "telemetry.hpp"

namespace gemm {

using Launch = std::function<void(cudaStream_t)>;

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  std::vector<double> samples_ms;
};

/// Median, min and max of `samples_ms` (which it keeps, in launch order).
Timing make_timing(std::vector<double> samples_ms);

/// Runs `launch` `warmup` times untimed, then `reps` times, each preceded (outside the timed region)
/// by a read of a buffer twice the L2 size so that no repetition finds its inputs in L2.
/// Each repetition is bracketed by its own pair of CUDA events on `stream`. Throws gemm::Error on a
/// CUDA failure, including one raised by the launched kernel.
Timing time_launch(const Launch& launch, int warmup, int reps, cudaStream_t stream = nullptr);

/// One kernel in a paired measurement.
struct Contender {
  std::string name;    ///< "step", "cublas", "cublaslt_best", "cutlass_coop_128x256x64_c2x1", ...
  std::string detail;  ///< e.g. the cuBLASLt algorithm; free text for tables
  Launch launch;
};

/// Result of time_paired: contender i's launch in round r is timing[i].samples_ms[r].
struct PairedTiming {
  std::vector<Timing> timing;                  ///< per contender
  std::vector<std::vector<double>> clock_mhz;  ///< per contender, per round: the probe's SM clock
  TelemetrySummary nvml;                       ///< NVML over the whole loop (available = false without NVML)
};

/// Paired timing. Every contender is warmed up `warmup` times; then, for `settle_s` seconds (0: no
/// settling), whole untimed rounds run exactly as the timed ones will, so that the timed rounds meet
/// the power state this loop settles into rather than whatever the GPU was left in (on the H200 a
/// bf16 GEMM at 8192^3 reaches the 700 W cap within a fraction of a second; a process that starts
/// on an idle GPU otherwise times its first rounds at up to 1.98 GHz and a later one at 1.6, and
/// kernels with different bottlenecks do not scale alike with the clock: docs/benchmarking.md).
/// Then `rounds` rounds each launch
/// every contender once, in the order given (A B C A B C ...), each launch preceded by the same L2
/// flush as time_launch and bracketed by its own events, and followed (outside the events) by a
/// 30-microsecond probe kernel that measures the SM clock as %clock64 cycles over %globaltimer
/// nanoseconds (PTX ISA, "Special Registers": %clock64, %globaltimer). The probe runs right after the
/// GEMM, before the power controller (which acts on a millisecond scale) has moved the clock.
/// `sampler` (may be null) polls NVML meanwhile. Throws gemm::Error on a CUDA failure.
PairedTiming time_paired(const std::vector<Contender>& contenders, int warmup, double settle_s, int rounds,
                         Sampler* sampler, cudaStream_t stream = nullptr);

/// Per-round ratios t_ref / t_step (the step's speed over the reference's: > 1 means the step is
/// faster) of two contenders of one paired measurement: median and quartiles.
struct RatioStats {
  double median = 0, q25 = 0, q75 = 0, min = 0, max = 0;
};
RatioStats paired_ratio(const Timing& step, const Timing& ref);

/// Quantile q in [0, 1] of `v` (linear interpolation between order statistics); 0 when empty.
double quantile(std::vector<double> v, double q);

/// Back-to-back launches of one kernel, with no flush (as in a training loop), for `seconds`.
/// Statistics cover the settled part: launches that started after `settle_s` seconds.
struct Sustained {
  int launches = 0;          ///< in the settled part
  double ms_per_gemm = 0;    ///< GPU time (events) per launch over the settled part
  TelemetrySummary nvml;     ///< NVML over the settled part
  double joules_per_gemm = 0;  ///< energy counter over the settled part / launches (0 without NVML)
  std::vector<TelemetrySample> series;  ///< every NVML sample of the run (time from the run's start)
};
Sustained time_sustained(const Launch& launch, double seconds, double settle_s, Sampler& sampler,
                         cudaStream_t stream = nullptr);

/// TFLOP/s of an m x n x k GEMM that took `ms`: 2*m*n*k FLOPs, counted in double.
double tflops(int m, int n, int k, double ms);

}  // namespace gemm
