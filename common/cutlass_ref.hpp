// PLACEHOLDER until the CUTLASS reference lands (branch cutlass-ref).
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "registry.hpp"

namespace gemm::cutlass_ref {
int config_count();
const char* config_name(int i);
std::optional<std::string> refusal(int i, const Bf16Gemm& p);
size_t workspace_bytes(int i, const Bf16Gemm& p);
void run(int i, const Bf16Gemm& p, void* workspace, cudaStream_t stream);
}  // namespace gemm::cutlass_ref
