// The menu's kernels (family/menu.hpp) for a launcher: entry I's configuration as a type, and the SMs a
// plan for a configuration may count on. Host code, compiled by nvcc with the kernels it names
// (family/menu.cu, step 29).
#pragma once
#include <algorithm>
#include <cstddef>
#include <utility>

#include "launch.cuh"
#include "menu.hpp"

namespace gemm::family::menu {

/// Entry I's configuration: its kernel reads gemm_kernel<gemm::family::menu::Kernel<I>> in the SASS.
template <size_t I>
struct Kernel : Config<kBf16[I].spec> {};

/// The SMs a plan for configuration C may count on out of `sms`: all of them, or for a cluster those the
/// clusters that fit at once cover (cudaOccupancyMaxActiveClusters, as step 17 sizes its grid): a GPC
/// with an odd number of free SMs holds one block fewer, and units past the cap would run as a second,
/// nearly empty wave. Throws gemm::Error where no cluster of C fits.
template <class C>
int plan_sms(int sms) {
  if constexpr (C::CLUSTER > 1) {
    opt_in_dynamic_smem(gemm_kernel<C>, C::SMEM_BYTES);
    return std::min(sms, C::CLUSTER * max_active_clusters(gemm_kernel<C>, kThreads, C::SMEM_BYTES, C::CLUSTER));
  }
  return sms;
}

namespace detail {
template <size_t... I>
int plan_sms_at(size_t i, int sms, std::index_sequence<I...>) {
  using Fn = int (*)(int);
  static constexpr Fn fns[] = {&plan_sms<Kernel<I>>...};
  return fns[i](sms);
}
template <const char* Id, Policy policy, size_t... I>
constexpr Bf16Launcher bf16_launcher_at(std::index_sequence<I...>) {
  return &step_launch<Id, policy, Kernel<I>...>;
}
}  // namespace detail

/// plan_sms for entry i of kBf16 (i < kBf16.size(), unchecked). A template only so that a file which
/// includes this header for plan_sms alone (step 35) does not instantiate every cluster entry's kernel.
template <int = 0>
int plan_sms_of(size_t i, int sms) { return detail::plan_sms_at(i, sms, std::make_index_sequence<kBf16.size()>()); }

/// Step::bf16 of a family step whose plans name the menu's kernels (steps 29 and 39): C = A * B^T as
/// `policy` plans it, launched with the entry the plan names (step_launch: its errors). `Id` is the
/// step's id, for the messages. Instantiates every entry's kernel.
template <const char* Id, Policy policy>
constexpr Bf16Launcher bf16_launcher() {
  return detail::bf16_launcher_at<Id, policy>(std::make_index_sequence<kBf16.size()>());
}

}  // namespace gemm::family::menu
