// Command line of every step executable (parsed with CLI11).
#pragma once
#include <cstdint>
#include <string>
#include <string>
#include <vector>

namespace gemm {

/// Largest K for --exact: 64 * K + 32 (|alpha * sum| + |beta * c0|) must stay below 2^24.
inline constexpr int kMaxExactK = 262143;

struct Options {
  int m = 4096, n = 4096, k = 4096;
  float alpha = 1.0f, beta = 0.0f;  ///< fp32 steps only (bf16 steps compute C = A * B^T)
  int reps = 20;                    ///< timed repetitions; the median is reported (>= 20 enforced)
  int warmup = 3;                   ///< untimed launches of the same step and shape before timing
  double settle_s = 0.5;            ///< untimed paired rounds for this long before the timed ones
  uint64_t seed = 2026;
  bool check_only = false;  ///< check against the reference, do not time
  bool no_check = false;    ///< time without checking (the row's check column says "skipped")
  bool exact = false;       ///< small-integer inputs, compared with == (catches indexing bugs)
  /// fp8 steps: what the inputs are drawn from before quantization, "normal" (N(0, 1)) or "llm" (outlier
  /// channels in A, weights whose size changes per 128 x 128 block: fp8.hpp, Dist). With "llm" the run
  /// also prints each kernel's error against the fp64 product of the unquantized inputs.
  std::string dist = "normal";
  std::string csv;          ///< append result rows (one per kernel and mode) to this file
  /// References timed beside the step, paired: any of "cublas", "cublaslt" (best of the top
  /// lt_algos heuristic algorithms), "cutlass" (bf16 only; every compiled configuration), "none".
  std::vector<std::string> refs{"cublas", "cublaslt", "cutlass"};
  int lt_algos = 8;          ///< cuBLASLt heuristic algorithms to try for "cublaslt"
  double energy_s = 0.6;     ///< back-to-back seconds per kernel for the burst rows' energy (0: skip)
  double sustained_s = 0;    ///< > 0: also loop each kernel this long and report the settled state
  std::string series;        ///< sustained mode: write every NVML sample to this CSV
  std::string trace;         ///< check, then run the step once with tracing into this Chrome-trace
                             ///< JSON (binaries of `make trace` only; common/kernel_lib/trace.hpp)
  std::string profile_once;  ///< "step", "cublas" or "cublaslt" (fp8: cuBLASLt FP8 of the step's scaling;
                             ///< cuBLAS has none): check, then run it once between
                             ///< cudaProfilerStart/Stop (for ncu --profile-from-start off), no timing
};

/// Parses argv into Options. Returns std::nullopt-like via `exit_code`: on --help, prints usage and
/// sets exit_code = 0; on an unknown flag, a non-numeric or out-of-range value, or conflicting
/// flags, prints the reason to stderr and sets exit_code = 2. exit_code stays -1 when the run
/// should go on. `program` names the step in the usage text.
Options parse_options(int argc, const char* const* argv, const std::string& program, int& exit_code);

/// Same as parse_options on a vector (for tests): throws gemm::Error carrying the message instead
/// of printing, for any refusal, and for --help.
Options parse_options_or_throw(const std::vector<std::string>& args);

}  // namespace gemm
