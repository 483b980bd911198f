// Step 29's policy as a part: the plan the measured table picks (family/dispatch.hpp over this GPU's
// table, family/tuned_bf16.hpp), for the steps built on 29 (39 adds its maps' L2 promotion). Host code,
// compiled by nvcc with the menu's kernels it plans for.
#pragma once
#include <array>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "../refusals.hpp"
#include "../tile_menu.hpp"
#include "dispatch.hpp"
#include "menu_launch.cuh"
#include "tuned_bf16.hpp"

namespace gemm::family {

/// What a plan on this device reads, looked up once per (device, SM count): the table tuned on its GPU
/// (dispatch::tuned_for by cudaGetDeviceProperties' name; the H200's where none was: an entry's speed
/// against cuBLAS, and so the winner, differs between GPUs), and the SMs each entry's plans run on
/// (menu::plan_sms_of: a cluster's, those its clusters cover). Thread-safe.
struct MeasuredHere {
  dispatch::TunedTable table;
  std::array<int, menu::kBf16.size()> entry_sms;
};
inline MeasuredHere measured_here(int sms) {
  static std::mutex mu;
  static std::map<std::pair<int, int>, MeasuredHere> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find({device, sms}); it != cache.end()) return it->second;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  MeasuredHere h{dispatch::tuned_for(prop.name), {}};
  for (size_t i = 0; i < h.entry_sms.size(); ++i) h.entry_sms[i] = menu::plan_sms_of(i, sms);
  cache[{device, sms}] = h;
  return h;
}

/// The plan for C = A * B^T (M x N x K) on `sms` SMs: the measured table's pick (dispatch::pick over
/// this GPU's table), planned as the menu plans that entry (its split policy, no copy; a cluster's units
/// capped at the clusters that fit), or step 28's hand rule (menu::hand_plan, copy included) where the
/// table says so, has no row, or the picked tile would pass the schedule's tile limit.
inline Plan measured_plan(int m, int n, int k, int sms) {
  const MeasuredHere h = measured_here(sms);
  const int e = dispatch::pick(h.table.rows, h.table.size, menu::kBf16, m, n, k, sms, &h.entry_sms);
  if (e == dispatch::kHandRule) return menu::hand_plan(m, n, k, sms);
  const Spec s = menu::kBf16[size_t(e)].spec;
  if (s.swap ? tma_persistent_gemm_refusal(n, m, k, s.bm, s.bn) : tma_persistent_gemm_refusal(m, n, k, s.bm, s.bn))
    return menu::hand_plan(m, n, k, sms);
  return menu::plan(menu::kBf16[size_t(e)], m, n, k, menu::plan_sms_of(size_t(e), sms));
}

/// The shapes a measured plan refuses: step 28's limits, since its hand rule (menu::hand_plan) is every
/// shape's fallback (tma_persistent_gemm_refusal: K % 8 != 0, an empty matrix, 2^30 tiles or more).
inline std::optional<std::string> measured_unsupported(int m, int n, int k) {
  if (m <= tile_menu::kSwapMaxM) return tma_persistent_gemm_refusal(n, m, k, kBM, tile_menu::kSwapMaxM);
  return tma_persistent_gemm_refusal(m, n, k, kBM, 64);
}

}  // namespace gemm::family
