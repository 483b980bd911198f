#include "registry.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "check.hpp"

namespace gemm {

const char* dtype_name(Dtype d) {
  switch (d) {
    case Dtype::fp32: return "fp32";
    case Dtype::bf16: return "bf16";
    case Dtype::fp8: return "fp8";
  }
  return "?";
}

const char* scaling_name(Scaling s) { return s == Scaling::per_tensor ? "per_tensor" : "block"; }

const char* accumulation_name(Accumulation a) {
  switch (a) {
    case Accumulation::none: return "";
    case Accumulation::tensor_core: return "tensor_core";
    case Accumulation::promoted: return "promoted";
  }
  return "?";
}

static std::vector<Step>& steps() {
  static std::vector<Step> all;  // function-local: safe during static initialisation
  return all;
}

bool register_step(const Step& step) {
  for (const Step& s : steps())
    if (s.id == step.id) throw Error(fmt::format("step id {} registered twice", step.id));
  if ((step.dtype == Dtype::fp32) != (step.fp32 != nullptr) ||
      (step.dtype == Dtype::bf16) != (step.bf16 != nullptr) || (step.dtype == Dtype::fp8) != (step.fp8 != nullptr))
    throw Error(fmt::format("step {} has no launcher for its dtype", step.id));
  if ((step.dtype == Dtype::fp8) != (step.accumulation != Accumulation::none))
    throw Error(fmt::format("step {}: {}", step.id, step.dtype == Dtype::fp8
                                                        ? "an fp8 step must say what sums its products (.accumulation)"
                                                        : ".accumulation is for fp8 steps only"));
  const Tile& t = step.tile;
  const bool none = t.bm == 0 && t.bn == 0 && t.bk == 0 && t.stages == 0 && step.threads == 0;
  const bool all = t.bm >= 1 && t.bn >= 1 && t.bk >= 1 && t.stages >= 1 && step.threads >= 1;
  if (!none && !all)
    throw Error(fmt::format("step {}: tile {}x{}x{}, {} stages, {} threads: set all of them (>= 1) or none",
                            step.id, t.bm, t.bn, t.bk, t.stages, step.threads));
  if (step.persistent && none) throw Error(fmt::format("step {}: a persistent step must declare its tile", step.id));
  steps().push_back(step);
  return true;
}

std::vector<Step> registered_steps() {
  std::vector<Step> all = steps();
  std::sort(all.begin(), all.end(), [](const Step& a, const Step& b) { return a.id < b.id; });
  return all;
}

Step find_step(const std::string& id) {
  std::string known;
  for (const Step& s : registered_steps()) {
    if (s.id == id) return s;
    known += (known.empty() ? "" : ", ") + s.id;
  }
  throw Error(fmt::format("no step '{}' (registered: {})", id, known));
}

std::optional<std::string> refusal(const Step& step, int m, int n, int k, const Gpu* gpu) {
  if (m < 1 || n < 1 || k < 1)
    return fmt::format("M, N and K must be >= 1 (got M={}, N={}, K={})", m, n, k);
  if (step.unsupported)
    if (auto why = step.unsupported(m, n, k)) return why;
  if (gpu && step.required_cc && gpu->cc_major * 10 + gpu->cc_minor != step.required_cc)
    return fmt::format("step {} is built for compute capability {}.{} only (sm_{}a); this GPU ({}) is {}.{}",
                       step.id, step.required_cc / 10, step.required_cc % 10, step.required_cc, gpu->name,
                       gpu->cc_major, gpu->cc_minor);
  return std::nullopt;
}

}  // namespace gemm
