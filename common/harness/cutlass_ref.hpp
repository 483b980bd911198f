// CUTLASS reference GEMMs for the benchmark: what a user would pick instead of our bf16 steps.
// A reference only, never a step: nothing here is registered in the step registry, dumped by the
// SASS tooling or reported by ptxas.
//
// The problem is the bf16 steps' own (gemm::Bf16Gemm): D = A * B^T with A m x k row-major, B n x k
// row-major ("K-major"), D m x n row-major bf16, fp32 accumulation, alpha = 1, beta = 0 (C is never
// read). In CUTLASS terms a "TN" GEMM: LayoutA RowMajor, LayoutB ColumnMajor (B^T is k x n), D RowMajor.
//
// Each configuration is one CUTLASS 3.x Hopper warp-specialized persistent kernel (CollectiveBuilder
// mainloop and epilogue, GemmUniversal, GemmUniversalAdapter) compiled for sm_90a in its own
// common/harness/cutlass/*.cu. Those objects are linked only into the bf16 step binaries and the test binary;
// everywhere else (fp32 steps, a build without the CUTLASS headers) config_count() is 0.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <optional>
#include <string>

#include "../kernel_lib/registry.hpp"

namespace gemm::cutlass_ref {

/// Number of compiled CUTLASS configurations (0 when the project was built without CUTLASS headers).
int config_count();

/// Short stable name of configuration i, e.g. "cutlass_coop_128x256x64_c2x1",
/// "cutlass_pingpong_128x128x64_c1x1". Configurations are ordered by name. Throws gemm::Error when
/// i is not in [0, config_count()).
const char* config_name(int i);

/// std::nullopt when configuration i can run problem p, else the reason: M, N, K >= 1; K % 8 == 0
/// and N % 8 == 0 (TMA needs 16-byte row strides for A, B and D); a, b and c 16-byte aligned (null
/// pointers pass, so shapes can be checked before allocating); then CUTLASS's own can_implement.
/// Needs no GPU. Throws gemm::Error when i is out of range.
std::optional<std::string> refusal(int i, const Bf16Gemm& p);

/// Bytes of device scratch memory configuration i needs for p (GemmUniversalAdapter::
/// get_workspace_size; depends on the SM count, so it queries the current device once).
size_t workspace_bytes(int i, const Bf16Gemm& p);

/// Enqueues configuration i on `stream`; `workspace` points at workspace_bytes(i, p) bytes of device
/// memory (may be null when that is 0). The persistent tile scheduler is sized with the current
/// device's SM count (queried once per device, then cached). Assumes refusal(i, p) is std::nullopt.
/// The initialised CUTLASS operator (kernel parameters with their TMA descriptors) is kept per host
/// thread and configuration and reused while p's shape and pointers, the workspace and the device
/// stay the same, so a repeated call costs one kernel launch of host work.
/// Throws gemm::Error on any CUTLASS status other than success (naming the configuration and the
/// status, and the CUDA error when a launch failed) and when a needed workspace is null.
void run(int i, const Bf16Gemm& p, void* workspace, cudaStream_t stream);

}  // namespace gemm::cutlass_ref
