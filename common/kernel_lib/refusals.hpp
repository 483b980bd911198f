// Shape refusals shared by several steps: each returns the reason a shape cannot run (naming the
// constraint and the numbers), or std::nullopt. A step's `unsupported` predicate combines them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace gemm {

/// Names the limit when ceil(extent / tile) blocks exceed the CUDA grid-dimension limit of `axis`
/// (0 = x: 2^31-1; 1 = y and 2 = z: 65535; CUDA C Programming Guide, "Compute Capabilities", table
/// of technical specifications). `what` names the extent ("M", "N"). tile >= 1.
std::optional<std::string> grid_refusal(const char* what, int64_t extent, int64_t tile, int axis);

/// The predicate of the fp32 steps with 16-byte (float4 / 16-byte cp.async) row accesses, 06-09b:
/// K % 4 == 0 (rows of A), N % 4 == 0 (rows of B and C), and ceil(M / bm) blocks on grid y.
std::optional<std::string> float4_rows_refusal(int m, int n, int k, int bm);

/// The shape predicate shared by the TMA steps (C = A * B^T, A m x k, B n x k, tiles bm x bn with
/// M tiles on grid x and N tiles on grid y): K % 8 == 0 (TMA needs a 16-byte row stride, K * 2
/// bytes), and the grid limits.
std::optional<std::string> tma_gemm_refusal(int m, int n, int k, int bm, int bn);

/// The same for a persistent TMA step (one block per SM looping over the tiles, steps 15 on): K % 8 == 0,
/// M and N at most 2^31 - 256 (the family's plan rounds them up to whole tiles, BM up to 256, in int),
/// and fewer than schedule::kMaxScheduleTiles tiles of bm x bn (the schedules' 32-bit tile index);
/// no grid-axis limit, since the grid is at most one block per SM.
std::optional<std::string> tma_persistent_gemm_refusal(int m, int n, int k, int bm, int bn);

/// The same for a persistent FP8 TMA step (e4m3 A and B, 1 byte per element): K % 16 == 0 (TMA's
/// 16-byte row stride is 16 elements of e4m3), and the schedule's tile limit.
std::optional<std::string> tma_persistent_fp8_gemm_refusal(int m, int n, int k, int bm, int bn);

}  // namespace gemm
