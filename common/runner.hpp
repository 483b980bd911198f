// What a step executable does, as functions the tests call too.
#pragma once
#include <string>

#include "compare.hpp"
#include "options.hpp"
#include "registry.hpp"
#include "problem.hpp"

namespace gemm {

enum class Oracle { cublas, cpu_fp64 };

/// Bytes of workspace `step` needs for (m, n, k): step.workspace_bytes(m, n, k), or 0 when it declares
/// none. May query the current device.
size_t step_workspace_bytes(const Step& step, int m, int n, int k);
/// Reserves the step's workspace on `buffers` for their problem's shape (ProblemBuffers::reserve_workspace):
/// allocates and zeroes it when it is missing or too small. Synchronizes then; call outside timing.
void reserve_workspace(const Step& step, ProblemBuffers& buffers);

/// Enqueues the step's kernel(s) on the buffers (and the step workspace reserved on them).
void launch_step(const Step& step, const ProblemBuffers& ws, cudaStream_t stream);
/// Enqueues cuBLAS on the buffers (same shape, same C).
void launch_cublas(const ProblemBuffers& ws, cudaStream_t stream);

/// Refusal reason for running `step` on this device and shape, or std::nullopt: the device's
/// compute capability (Hopper steps need exactly 9.0) and the step's shape predicate.
std::optional<std::string> refusal(const Step& step, int m, int n, int k);

/// Refusal reason for running `step` on a GPU of compute capability cc_major.cc_minor (called
/// `gpu_name` in the message), or std::nullopt. Needs no GPU: refusal() calls it with the device's
/// numbers, and the CPU tests call it with any (the wrong-capability path without such a GPU).
std::optional<std::string> capability_refusal(const Step& step, int cc_major, int cc_minor,
                                              const std::string& gpu_name = "this GPU");

/// Reserves the step workspace, fills C with NaN (or C0), runs the step once and compares with the oracle.
/// Throws gemm::Error on a refused shape or a CUDA failure.
CheckReport check_step(const Step& step, const Problem& problem, Oracle oracle = Oracle::cublas);
CheckReport check_step(const Step& step, ProblemBuffers& ws, Oracle oracle = Oracle::cublas);

/// The whole run of one step executable: parse, refuse, check, time, print, append CSV.
/// Exit codes: 0 success; 1 wrong answer or CUDA failure; 2 refused input (bad flag, unsupported
/// shape, wrong GPU, no GPU).
int step_main(int argc, const char* const* argv);

}  // namespace gemm
