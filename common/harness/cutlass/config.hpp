// Internal interface between common/harness/cutlass_ref.cpp (the table) and the per-configuration objects
// common/harness/cutlass/*.cu. Plain C++: no CUTLASS headers, so the table compiles without them.
//
// Each configuration object registers itself at static-initialisation time, like the steps do. The
// table therefore has no link-time reference to any configuration: a binary linked without the
// objects (an fp32 step, a build without the CUTLASS headers) simply has config_count() == 0.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <optional>
#include <string>

#include "../../kernel_lib/registry.hpp"

namespace gemm::cutlass_ref::detail {

struct Config {
  const char* name;  ///< e.g. "cutlass_coop_128x256x64_c2x1"
  /// The reason the configuration cannot run p, or std::nullopt (host only, no GPU needed).
  std::optional<std::string> (*refusal)(const Bf16Gemm& p);
  /// Device scratch bytes for p when the persistent scheduler is sized for sm_count SMs.
  size_t (*workspace_bytes)(const Bf16Gemm& p, int device, int sm_count);
  /// Enqueues the GEMM on stream; throws gemm::Error on a CUTLASS status other than success.
  void (*run)(const Bf16Gemm& p, void* workspace, int device, int sm_count, cudaStream_t stream);
};

/// Adds a configuration; returns true (for `static const bool registered = ...`). Throws gemm::Error
/// on a duplicate name.
bool register_config(const Config& config);

}  // namespace gemm::cutlass_ref::detail
