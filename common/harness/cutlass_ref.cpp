// The table of CUTLASS reference configurations (common/harness/cutlass_ref.hpp). Plain C++ with no CUTLASS
// headers: the configurations (common/harness/cutlass/*.cu) register themselves, so this file is the same
// whether or not they are linked in.
#include "cutlass_ref.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "../kernel_lib/check.hpp"
#include "../kernel_lib/launch.hpp"
#include "cutlass/config.hpp"

namespace gemm::cutlass_ref {
namespace detail {

static std::vector<Config>& configs() {
  static std::vector<Config> all;  // function-local: safe during static initialisation
  return all;
}

bool register_config(const Config& config) {
  std::vector<Config>& all = configs();
  for (const Config& c : all)
    if (std::string(c.name) == config.name)
      throw Error(fmt::format("CUTLASS configuration {} registered twice", config.name));
  all.push_back(config);
  // Ordered by name, so that index i means the same configuration whatever the link order.
  std::sort(all.begin(), all.end(), [](const Config& a, const Config& b) { return std::string(a.name) < b.name; });
  return true;
}

}  // namespace detail

namespace {

const detail::Config& config(int i) {
  const std::vector<detail::Config>& all = detail::configs();
  if (i < 0 || i >= int(all.size()))
    throw Error(fmt::format("no CUTLASS configuration {} (there are {})", i, all.size()));
  return all[size_t(i)];
}

/// The current device and its SM count (gemm::sm_count, the one the steps' launchers ask).
std::pair<int, int> device_and_sm_count() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  return {device, sm_count()};
}

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

}  // namespace

int config_count() { return int(detail::configs().size()); }

const char* config_name(int i) { return config(i).name; }

std::optional<std::string> refusal(int i, const Bf16Gemm& p) {
  const detail::Config& c = config(i);
  if (p.m < 1 || p.n < 1 || p.k < 1)
    return fmt::format("M, N and K must be >= 1 (got M={}, N={}, K={})", p.m, p.n, p.k);
  if (p.k % 8 != 0)
    return fmt::format("K={} is not a multiple of 8: TMA needs 16-byte row strides for A and B", p.k);
  if (p.n % 8 != 0)
    return fmt::format("N={} is not a multiple of 8: TMA needs a 16-byte row stride for D", p.n);
  if (!aligned16(p.a) || !aligned16(p.b) || !aligned16(p.c))
    return std::string("A, B and C must be 16-byte aligned (TMA base addresses)");
  if (auto why = c.refusal(p)) return fmt::format("{}: {}", c.name, *why);
  return std::nullopt;
}

size_t workspace_bytes(int i, const Bf16Gemm& p) {
  const detail::Config& c = config(i);
  const auto [device, sms] = device_and_sm_count();
  return c.workspace_bytes(p, device, sms);
}

void run(int i, const Bf16Gemm& p, void* workspace, cudaStream_t stream) {
  const detail::Config& c = config(i);
  const auto [device, sms] = device_and_sm_count();
  c.run(p, workspace, device, sms, stream);
}

}  // namespace gemm::cutlass_ref
