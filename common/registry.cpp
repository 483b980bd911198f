#include "registry.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "check.hpp"

namespace gemm {

const char* dtype_name(Dtype d) { return d == Dtype::fp32 ? "fp32" : "bf16"; }

static std::vector<Step>& steps() {
  static std::vector<Step> all;  // function-local: safe during static initialisation
  return all;
}

bool register_step(const Step& step) {
  for (const Step& s : steps())
    if (s.id == step.id) throw Error(fmt::format("step id {} registered twice", step.id));
  if ((step.dtype == Dtype::fp32) != (step.fp32 != nullptr) ||
      (step.dtype == Dtype::bf16) != (step.bf16 != nullptr))
    throw Error(fmt::format("step {} has no launcher for its dtype", step.id));
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

std::optional<std::string> shape_refusal(const Step& step, int m, int n, int k) {
  if (m < 1 || n < 1 || k < 1)
    return fmt::format("M, N and K must be >= 1 (got M={}, N={}, K={})", m, n, k);
  if (step.unsupported) return step.unsupported(m, n, k);
  return std::nullopt;
}

std::optional<std::string> grid_refusal(const char* what, int64_t extent, int64_t tile, int axis) {
  const int64_t limit = axis == 0 ? 2147483647LL : 65535LL;
  const int64_t blocks = (extent + tile - 1) / tile;
  if (blocks <= limit) return std::nullopt;
  return fmt::format("{}={} needs {} blocks of {} along grid axis {}, over the limit of {}", what,
                     extent, blocks, tile, "xyz"[axis], limit);
}

std::optional<std::string> float4_rows_refusal(int m, int n, int k, int bm) {
  if (k % 4 != 0)
    return fmt::format("K={} is not a multiple of 4: rows of A must be 16-byte aligned for 16-byte loads", k);
  if (n % 4 != 0)
    return fmt::format("N={} is not a multiple of 4: rows of B and C must be 16-byte aligned for 16-byte "
                       "loads and stores", n);
  return grid_refusal("M", m, bm, 1);
}

}  // namespace gemm
