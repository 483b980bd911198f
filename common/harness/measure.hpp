// The measurement of one step executable after its check passed: the step and its references
// (cuBLAS, cuBLASLt best-of-N, CUTLASS) timed paired, with the SM clock, power and energy beside
// every number, and optionally the sustained (power-capped) steady state.
#pragma once
#include <string>

#include "../kernel_lib/registry.hpp"
#include "device_info.hpp"
#include "options.hpp"
#include "problem.hpp"

namespace gemm {

/// Measures `step` on the buffers of `ws` (whose check already passed) as `o` asks: references
/// checked against cuBLAS first (fp8: against the fp64 oracle, all but the per-tensor stand-in timed
/// where cuBLASLt has no block-scaled algorithm, results.hpp kLtStandIn; one that fails is dropped
/// with one "reference dropped: ..." line and is not timed; the exit code speaks of the step alone);
/// paired burst timing; energy per GEMM from back-to-back blocks; sustained mode. Prints the table
/// and appends rows to o.csv. Returns 0.
/// Throws gemm::Error on a CUDA, cuBLAS or CUTLASS failure, or where the step fails its second check.
int measure_step(const Step& step, ProblemBuffers& ws, const Options& o, const DeviceInfo& dev,
                 const std::string& program, const std::string& check);

/// --profile-once: runs `what` once inside cudaProfilerStart/Stop: "step", "cublas" (cuBLAS's default
/// heuristic; fp32 and bf16 only: cuBLAS has no FP8 GEMM, and step_main refuses it for an fp8 step) or
/// "cublaslt" (the first algorithm of cuBLASLt's heuristic, the one a caller gets without timing a list;
/// for an fp8 problem cuBLASLt FP8 of the problem's scaling, the step's, default accumulation:
/// scripts/profile.py's reference for an fp8 step). Throws gemm::Error where cuBLASLt has no algorithm.
void profile_once(const Step& step, ProblemBuffers& ws, const std::string& what);

/// Runs the step once with its pipeline trace armed and writes the trace to `path` (Chrome-trace
/// JSON, trace_run.hpp), printing one summary line. Throws gemm::Error when the binary has no
/// traced kernel (it was not built by `make trace`) or on a CUDA error.
void trace_once(const Step& step, ProblemBuffers& ws, const std::string& path);

}  // namespace gemm
