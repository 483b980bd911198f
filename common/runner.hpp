// What a step executable does, as functions the tests call too.
#pragma once
#include <string>

#include "compare.hpp"
#include "options.hpp"
#include "registry.hpp"
#include "workspace.hpp"

namespace gemm {

enum class Oracle { cublas, cpu_fp64 };

/// Enqueues the step's kernel(s) on the workspace's buffers.
void launch_step(const Step& step, const Workspace& ws, cudaStream_t stream);
/// Enqueues cuBLAS on the workspace's buffers (same shape, same C).
void launch_cublas(const Workspace& ws, cudaStream_t stream);

/// Refusal reason for running `step` on this device and shape, or std::nullopt: the device's
/// compute capability (Hopper steps need exactly 9.0) and the step's shape predicate.
std::optional<std::string> refusal(const Step& step, int m, int n, int k);

/// Refusal reason for running `step` on a GPU of compute capability cc_major.cc_minor (called
/// `gpu_name` in the message), or std::nullopt. Needs no GPU: refusal() calls it with the device's
/// numbers, and the CPU tests call it with any (the wrong-capability path without such a GPU).
std::optional<std::string> capability_refusal(const Step& step, int cc_major, int cc_minor,
                                              const std::string& gpu_name = "this GPU");

/// Fills C with NaN (or C0), runs the step once and compares with the oracle.
/// Throws gemm::Error on a refused shape or a CUDA failure.
CheckReport check_step(const Step& step, const Problem& problem, Oracle oracle = Oracle::cublas);
CheckReport check_step(const Step& step, Workspace& ws, Oracle oracle = Oracle::cublas);

/// The whole run of one step executable: parse, refuse, check, time, print, append CSV.
/// Exit codes: 0 success; 1 wrong answer or CUDA failure; 2 refused input (bad flag, unsupported
/// shape, wrong GPU, no GPU).
int step_main(int argc, const char* const* argv);

}  // namespace gemm
