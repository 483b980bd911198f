#include "tma.hpp"

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000
#include <cuda_runtime.h>
#include <fmt/format.h>

#include "check.hpp"

namespace gemm {

namespace {

uint32_t swizzle_span(CUtensorMapSwizzle s) {
  switch (s) {
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64;
    case CU_TENSOR_MAP_SWIZZLE_128B: return 128;
    default: return 0;  // none
  }
}

PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  // A function-local static: looked up once; if the lookup throws, the next call tries again.
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || p == nullptr)
      throw Error("the CUDA driver has no cuTensorMapEncodeTiled (TMA needs a driver for CUDA 12.0 or newer)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

/// Elements from one row to the next: the pitch where one is set, else the column count.
uint64_t row_elems(const TmaMatrix& t) { return t.pitch != 0 ? t.pitch : t.cols; }

}  // namespace

uint32_t tma_elem_bytes(TmaElem e) { return e == TmaElem::e4m3 ? 1 : 2; }

// The L2 promotion of a map that names none (how much L2 fetches from DRAM on a miss): 256 bytes, two K
// tiles of a 128-byte row. GEMM_TMA_L2_PROMOTION overrides it for an A/B (make promotion-variant: 128
// bytes, as CUTLASS's maps ask, results/profiles/nvidia_h200_pitch_source.md).
#ifndef GEMM_TMA_L2_PROMOTION
#define GEMM_TMA_L2_PROMOTION CU_TENSOR_MAP_L2_PROMOTION_L2_256B
#endif

// The driver's enum for an L2 promotion of `bytes` (0: the default above); nullopt where the driver
// has none (only 64, 128 and 256 bytes, CUtensorMapL2promotion).
static std::optional<CUtensorMapL2promotion> l2_promotion(uint32_t bytes) {
  switch (bytes) {
    case 0: return GEMM_TMA_L2_PROMOTION;
    case 64: return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    case 128: return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    case 256: return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    default: return std::nullopt;
  }
}

std::optional<std::string> tma_refusal(const TmaMatrix& t) {
  const uint32_t kElemBytes = tma_elem_bytes(t.elem);
  const char* type = t.elem == TmaElem::e4m3 ? "e4m3" : "bf16";
  const uint64_t addr = reinterpret_cast<uint64_t>(t.base);
  if (addr % 16 != 0)
    return fmt::format("TMA needs a 16-byte aligned base address; got {:#x}", addr);
  if (t.rows < 1 || t.cols < 1 || t.rows > (1ULL << 32) || t.cols > (1ULL << 32))
    return fmt::format("TMA extents must be in [1, 2^32]; got {} x {}", t.rows, t.cols);
  if (t.pitch != 0 && t.pitch < t.cols)
    return fmt::format("TMA pitch of {} elements is below the row's {} columns", t.pitch, t.cols);
  const uint64_t stride = row_elems(t) * kElemBytes;
  if (stride % 16 != 0 && t.pitch != 0)
    return fmt::format("TMA needs a row stride that is a multiple of 16 bytes: a pitch of {} elements of {} is {} "
                       "bytes (the pitch must be a multiple of {})", t.pitch, type, stride, 16 / kElemBytes);
  if (stride % 16 != 0)
    return fmt::format("TMA needs a row stride that is a multiple of 16 bytes: {} columns of {} are {} bytes "
                       "(the column count must be a multiple of {})", t.cols, type, stride, 16 / kElemBytes);
  if (stride >= (1ULL << 40)) return fmt::format("TMA row stride {} bytes is not below 2^40", stride);
  if (t.box_rows < 1 || t.box_rows > 256 || t.box_cols < 1 || t.box_cols > 256)
    return fmt::format("TMA box extents must be in [1, 256]; got {} x {}", t.box_rows, t.box_cols);
  const uint32_t inner = t.box_cols * kElemBytes;
  if (inner % 16 != 0)
    return fmt::format("TMA box inner extent must be a multiple of 16 bytes; got {} bytes", inner);
  const uint32_t span = swizzle_span(t.swizzle);
  if (span != 0 && inner > span)
    return fmt::format("TMA box inner extent of {} bytes exceeds the {}-byte swizzle span", inner, span);
  if (!l2_promotion(t.l2_promotion_bytes))
    return fmt::format("TMA L2 promotion must be 64, 128 or 256 bytes (0: the default, 256); got {}", t.l2_promotion_bytes);
  return std::nullopt;
}

CUtensorMap make_tma_2d(const TmaMatrix& t) {
  if (auto why = tma_refusal(t)) throw Error(*why);
  const uint32_t kElemBytes = tma_elem_bytes(t.elem);  // 2 (bf16) or 1 (e4m3)
  // TMA copies bytes: e4m3 travels as UINT8 (sm_90's tensor maps have no FP8 type).
  const CUtensorMapDataType type = t.elem == TmaElem::e4m3 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  CUtensorMap map;
  const cuuint64_t dims[2] = {t.cols, t.rows};             // innermost (contiguous) first
  const cuuint64_t strides[1] = {row_elems(t) * kElemBytes};  // bytes; dimension 0's stride is implied
  const cuuint32_t box[2] = {t.box_cols, t.box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUtensorMapL2promotion promotion = *l2_promotion(t.l2_promotion_bytes);  // tma_refusal checked it
  CU_CHECK(encode_tiled()(&map, type, 2, const_cast<void*>(t.base), dims, strides,
                          box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, t.swizzle,
                          promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

}  // namespace gemm
