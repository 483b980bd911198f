// Step 39's rule for the L2 promotion of A's and B's tensor maps (TmaMatrix::l2_promotion_bytes, the
// cuTensorMapEncodeTiled argument of that name: how many bytes L2 fetches from DRAM around a miss).
// Host code: pure, checked on the CPU (tests/test_family.cpp).
#pragma once
#include <cstdint>

#include "../tile_menu.hpp"  // kSectorBytes
#include "plan.hpp"

namespace gemm::family {

inline constexpr int kMisalignedPromotionBytes = 128;  ///< what step 39 asks for where rows start inside a sector

/// The promotion for plan p's A and B maps: 128 bytes where the rows its kernel reads start inside a
/// 32-byte sector (read in place, no padded copy, and K's row of elem_bytes-byte elements not a whole
/// number of sectors: K % 16 == 8 for bf16 under the harness's K % 8 == 0), else 0 (the maps' default,
/// 256 bytes).
inline int misaligned_l2_promotion(const Plan& p) {
  const bool in_sector = p.pitch == 0 && int64_t(p.shape.k) * elem_bytes(p.spec) % tile_menu::kSectorBytes != 0;
  return in_sector ? kMisalignedPromotionBytes : 0;
}

}  // namespace gemm::family
