// Host side of TMA: 2D tensor maps for bf16 or e4m3 row-major matrices, encoded with the driver's
// cuTensorMapEncodeTiled, with every requirement of that call checked first so that a bad shape or
// pointer is refused with a message naming the requirement instead of a driver error code.
//
// The driver library is not linked (binaries must load where there is no driver: CI's CPU tests);
// the entry point is fetched at run time through cudaGetDriverEntryPointByVersion.
#pragma once
#include <cuda.h>  // CUtensorMap, CUtensorMapSwizzle (types only)

#include <cstdint>
#include <optional>
#include <string>

namespace gemm {

/// The element type of a TMA matrix: bf16 (2 bytes, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16) or e4m3 (1 byte;
/// encoded as CU_TENSOR_MAP_DATA_TYPE_UINT8: TMA copies bytes and has no FP8 type on sm_90).
enum class TmaElem { bf16, e4m3 };
/// Bytes per element: 2 or 1.
uint32_t tma_elem_bytes(TmaElem e);

/// A row-major matrix of rows x cols elements of type `elem` (row stride = pitch elements; pitch 0:
/// cols, no padding), read or written by TMA in boxes of box_rows x box_cols elements. Columns from
/// cols to pitch - 1 are never read: TMA zero-fills a box past cols.
struct TmaMatrix {
  const void* base = nullptr;
  uint64_t rows = 0, cols = 0;
  uint32_t box_rows = 0, box_cols = 0;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  TmaElem elem = TmaElem::bf16;
  uint64_t pitch = 0;  ///< elements from one row to the next; 0 means cols (step 28 pads it)
  /// How many bytes L2 fetches from DRAM around a miss of this map's loads (cuTensorMapEncodeTiled's
  /// l2Promotion): 64, 128 or 256; 0 means the library's default, 256 (step 39 asks for 128).
  uint32_t l2_promotion_bytes = 0;
};

/// The first requirement of cuTensorMapEncodeTiled (CUDA Driver API reference, "Tensor Map Object
/// Management") that `t` breaks, or std::nullopt:
///   - base address 16-byte aligned;
///   - each extent in [1, 2^32];
///   - row stride (pitch, or cols, * element bytes) a multiple of 16 (bf16: pitch or cols % 8 == 0;
///     e4m3: % 16 == 0) and below 2^40; a pitch, when given, at least cols;
///   - each box extent in [1, 256]; the inner box extent in bytes a multiple of 16;
///   - with a swizzle, the inner box extent in bytes at most the swizzle span (32, 64 or 128);
///   - an L2 promotion of 0, 64, 128 or 256 bytes.
std::optional<std::string> tma_refusal(const TmaMatrix& t);

/// Encodes the tensor map (interleave none, zero fill out of bounds, t.l2_promotion_bytes of L2
/// promotion, default 256).
/// Throws gemm::Error with tma_refusal's message, or with the driver's status when the driver
/// rejects it anyway or the entry point is missing (driver older than CUDA 12.0).
CUtensorMap make_tma_2d(const TmaMatrix& t);

}  // namespace gemm
