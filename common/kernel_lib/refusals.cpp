#include "refusals.hpp"

#include <fmt/format.h>

#include "schedule.hpp"

namespace gemm {

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

std::optional<std::string> tma_gemm_refusal(int m, int n, int k, int bm, int bn) {
  if (k % 8 != 0)
    return fmt::format("K % 8 == 0 is required (TMA needs a 16-byte row stride: K * 2 bytes); K={}", k);
  if (auto why = grid_refusal("M", m, bm, 0)) return why;
  return grid_refusal("N", n, bn, 1);
}

/// The largest M or N a persistent TMA step takes: 2^31 - 256, so that the plan's round-up to whole
/// tiles (BM up to 256) stays inside a 32-bit int (family/plan.hpp computes tile counts in int).
constexpr int kMaxTiledExtent = 2147483647 - 255;

std::optional<std::string> tma_persistent_gemm_refusal(int m, int n, int k, int bm, int bn) {
  if (k % 8 != 0)
    return fmt::format("K % 8 == 0 is required (TMA needs a 16-byte row stride: K * 2 bytes); K={}", k);
  // The family's plan rounds M and N up to whole tiles (BM up to 256 rows) in 32-bit integers.
  if (m > kMaxTiledExtent || n > kMaxTiledExtent)
    return fmt::format("M={} N={}: each must be at most {} (2^31 - 256), so that rounding up to whole tiles stays "
                       "inside a 32-bit int", m, n, kMaxTiledExtent);
  // ... and K up to whole K tiles (family/plan.hpp's k_tiles).
  if (k > kMaxTiledExtent)
    return fmt::format("K={}: must be at most {} (2^31 - 256), so that rounding up to whole K tiles stays inside a "
                       "32-bit int", k, kMaxTiledExtent);
  const long long tiles = ((m + 0LL + bm - 1) / bm) * ((n + 0LL + bn - 1) / bn);
  if (tiles >= schedule::kMaxScheduleTiles)
    return fmt::format("M={} N={} make {} tiles of {}x{}, at or over the schedule's limit of {} (32-bit tile index)",
                       m, n, tiles, bm, bn, schedule::kMaxScheduleTiles);
  return std::nullopt;
}

std::optional<std::string> tma_persistent_fp8_gemm_refusal(int m, int n, int k, int bm, int bn) {
  if (k % 16 != 0)
    return fmt::format("K % 16 == 0 is required (TMA needs a 16-byte row stride: K * 1 byte of e4m3); K={}", k);
  // Past K's rule the limits are the bf16 kernel's (K % 16 == 0 implies its K % 8 == 0).
  return tma_persistent_gemm_refusal(m, n, k, bm, bn);
}

}  // namespace gemm
