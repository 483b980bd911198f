// The menu's kernels as steps (family/menu.cu): host declarations for the tests and the tuner, which
// link build/obj/family/menu.o. No device code here.
#pragma once
#include <cstddef>
#include <vector>

#include "../registry.hpp"
#include "menu.hpp"

namespace gemm::family::menu {

/// Entry i of kBf16 as an unregistered gemm::Step: id "menu", name name(spec), its launcher running
/// the entry's plan on this GPU (gemm::sm_count()), its workspace and its refusals (menu::refusal), the
/// tile it runs. Index i of the result is entry i. Needs nothing of the GPU to build the list.
std::vector<gemm::Step> bf16_steps();

/// The plan entry i of kBf16 launches for C = A * B^T (m x n x k) on this GPU: menu::plan at
/// gemm::sm_count(), a cluster entry's units capped at the clusters that fit at once
/// (cudaOccupancyMaxActiveClusters). Needs the GPU; throws gemm::Error for i past the menu.
Plan launch_plan(size_t i, int m, int n, int k);

}  // namespace gemm::family::menu
