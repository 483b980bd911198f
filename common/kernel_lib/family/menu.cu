// The menu's kernels (family/menu.hpp): one family kernel per entry, each wrapped as an unregistered
// gemm::Step ("menu" and the entry's name), so that the tests run every entry through the harness's
// check as they run a step, and the tuner times them as it times a step. Linked into build/bin/tests and
// build/bin/tune only (not into the step executables). sm_90a.
#include "menu_steps.hpp"

#include <string>
#include <utility>

#include "../refusals.hpp"
#include "menu_launch.cuh"

namespace gemm::family::menu {
namespace {

constexpr char kId[] = "menu";

/// Entry I's plan on `sms` SMs (a cluster's capped at the clusters that fit: plan_sms).
template <size_t I>
Plan plan_of(int m, int n, int k, int sms) { return plan(kBf16[I], m, n, k, plan_sms<Kernel<I>>(sms)); }

template <size_t I>
std::optional<std::string> unsupported_of(int m, int n, int k) {
  constexpr Spec s = kBf16[I].spec;
  if (const char* why = refusal(kBf16[I], m, n, k)) return std::string(why);
  return s.swap ? tma_persistent_gemm_refusal(n, m, k, s.bm, s.bn) : tma_persistent_gemm_refusal(m, n, k, s.bm, s.bn);
}

template <size_t I>
gemm::Step step_of() {
  constexpr Spec s = kBf16[I].spec;
  return {
      .id = kId,
      .name = name(s),
      .parent = "",
      .technique = "the family's menu entry " + name(s),
      .dtype = Dtype::bf16,
      .bf16 = &step_launch<kId, plan_of<I>, Kernel<I>>,
      .unsupported = &unsupported_of<I>,
      .required_cc = 90,
      .workspace_bytes = &step_workspace_bytes<plan_of<I>>,
      .tile = {s.bm, s.bn, bk(s), s.stages},
      .threads = kThreads,
      .persistent = true,
      .caps = {.stream_k = true, .swap_ab = s.swap},
  };
}

template <size_t... I>
std::vector<gemm::Step> all_steps(std::index_sequence<I...>) {
  return {step_of<I>()...};
}

}  // namespace

std::vector<gemm::Step> bf16_steps() { return all_steps(std::make_index_sequence<kBf16.size()>()); }

Plan launch_plan(size_t i, int m, int n, int k) {
  if (i >= kBf16.size()) throw Error("menu::launch_plan: entry " + std::to_string(i) + " past the menu's " + std::to_string(kBf16.size()));
  return plan(kBf16[i], m, n, k, plan_sms_of(i, sm_count()));
}

}  // namespace gemm::family::menu
