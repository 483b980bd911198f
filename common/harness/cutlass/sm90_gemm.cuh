// One CUTLASS 3.x Hopper GEMM configuration for the bf16 problem of the steps, built from CUTLASS's
// public API only: CollectiveBuilder for the mainloop and the epilogue, GemmUniversal (with its
// default persistent tile scheduler), GemmUniversalAdapter. Included by common/harness/cutlass/*.cu, one
// configuration per file, so that the expensive instantiations compile in parallel.
//
// Problem (gemm::Bf16Gemm): D = A * B^T, fp32 accumulation, alpha = 1, beta = 0.
//   A: m x k row-major bf16          -> CUTLASS LayoutA = RowMajor,    shape (M, K), stride (k, 1)
//   B: n x k row-major bf16          -> CUTLASS LayoutB = ColumnMajor, shape (N, K), stride (k, 1)
//   D: m x n row-major bf16          -> CUTLASS LayoutD = RowMajor,    shape (M, N), stride (n, 1)
// ElementC is void: the epilogue has no source operand, so C is never read (beta is fixed at 0).
// Alignment 8 elements (16 bytes) for A, B and D: the TMA requirement.
// Everything else is CUTLASS's default, i.e. what a user of the builders gets: the stage count the
// builder fits into shared memory next to the epilogue, the epilogue subtile (EpilogueTileAuto), the
// persistent data-parallel tile scheduler with its heuristic raster order and no tile swizzle.
#pragma once
#include <cuda_runtime.h>

#include <optional>
#include <string>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/kernel_hardware_info.h"
#include "cutlass/util/packed_stride.hpp"

#include "../../kernel_lib/check.hpp"
#include "config.hpp"

namespace gemm::cutlass_ref::detail {

/// TileShape and ClusterShape are cute::Shape<_M, _N, _K> / cute::Shape<_X, _Y, _Z>; KernelSchedule
/// a cutlass::gemm::KernelTmaWarpSpecialized* tag, EpilogueSchedule the matching
/// cutlass::epilogue::TmaWarpSpecialized* tag.
template <class TileShape, class ClusterShape, class KernelSchedule, class EpilogueSchedule>
struct Sm90Bf16Gemm {
  using Element = cutlass::bfloat16_t;  // same bits as __nv_bfloat16
  using Accumulator = float;
  static constexpr int kAlignment = 8;  // elements: 16 bytes

  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, Accumulator, Accumulator,
      void, cutlass::layout::RowMajor, kAlignment,      // C: none
      Element, cutlass::layout::RowMajor, kAlignment,   // D
      EpilogueSchedule>::CollectiveOp;

  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
      Element, cutlass::layout::RowMajor, kAlignment,     // A
      Element, cutlass::layout::ColumnMajor, kAlignment,  // B
      Accumulator, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<
          static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      KernelSchedule>::CollectiveOp;

  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  /// The adapter's arguments for p (batch count 1); sm_count 0 only for host-side checks.
  static typename Gemm::Arguments arguments(const Bf16Gemm& p, int device, int sm_count) {
    using StrideA = typename Gemm::GemmKernel::StrideA;
    using StrideB = typename Gemm::GemmKernel::StrideB;
    using StrideD = typename Gemm::GemmKernel::StrideD;
    typename Gemm::Arguments args{};
    args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    args.problem_shape = {p.m, p.n, p.k, 1};
    args.mainloop.ptr_A = reinterpret_cast<const Element*>(p.a);
    args.mainloop.dA = cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(p.m, p.k, 1));
    args.mainloop.ptr_B = reinterpret_cast<const Element*>(p.b);
    args.mainloop.dB = cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(p.n, p.k, 1));
    args.epilogue.thread.alpha = 1.0f;
    args.epilogue.thread.beta = 0.0f;
    args.epilogue.ptr_C = nullptr;
    args.epilogue.ptr_D = reinterpret_cast<Element*>(p.c);
    args.epilogue.dD = cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(p.m, p.n, 1));
    args.hw_info.device_id = device;
    args.hw_info.sm_count = sm_count;
    return args;
  }

  static std::optional<std::string> refusal(const Bf16Gemm& p) {
    const cutlass::Status status = Gemm::can_implement(arguments(p, 0, 0));
    if (status == cutlass::Status::kSuccess) return std::nullopt;
    return std::string("CUTLASS can_implement: ") + cutlass::cutlassGetStatusString(status);
  }

  static size_t workspace_bytes(const Bf16Gemm& p, int device, int sm_count) {
    return Gemm::get_workspace_size(arguments(p, device, sm_count));
  }

  /// Launches the GEMM on stream. The initialised adapter (its kernel parameters, with the TMA
  /// descriptors encoded on the host) is kept per host thread and reused while the problem, pointers,
  /// device and SM count stay the same and no workspace is needed (none is for these persistent
  /// data-parallel kernels), as an application reusing one GEMM object would: a timed repetition
  /// then costs one launch of host work, like a cuBLAS call. Throws gemm::Error on a CUTLASS status
  /// other than success.
  static void run(const char* name, const Bf16Gemm& p, void* workspace, int device, int sm_count,
                  cudaStream_t stream) {
    struct Key {
      int m, n, k, device, sm_count;
      const void *a, *b, *c, *workspace;
      bool operator==(const Key& o) const {  // C++17: no defaulted comparison
        return m == o.m && n == o.n && k == o.k && device == o.device && sm_count == o.sm_count &&
               a == o.a && b == o.b && c == o.c && workspace == o.workspace;
      }
    };
    thread_local Gemm gemm;
    thread_local std::optional<Key> initialised_for;
    const Key key{p.m, p.n, p.k, device, sm_count, p.a, p.b, p.c, workspace};
    const typename Gemm::Arguments args = arguments(p, device, sm_count);
    const size_t needed = Gemm::get_workspace_size(args);
    if (workspace == nullptr && needed > 0)
      throw Error(std::string(name) + ": the workspace is null but " + std::to_string(needed) +
                  " bytes are needed");
    cutlass::Status status = cutlass::Status::kSuccess;
    if (needed > 0 || !(initialised_for && *initialised_for == key)) {  // a workspace is (re)initialised for every launch
      initialised_for.reset();
      status = gemm.initialize(args, workspace, stream);
      if (status == cutlass::Status::kSuccess) initialised_for = key;
    }
    if (status == cutlass::Status::kSuccess) status = gemm.run(stream);
    if (status != cutlass::Status::kSuccess) {
      const cudaError_t cuda = cudaGetLastError();  // a failed launch leaves its reason here
      throw Error(std::string(name) + ": CUTLASS status " + cutlass::cutlassGetStatusString(status) +
                  (cuda == cudaSuccess ? std::string() : std::string(" (CUDA ") + cudaGetErrorName(cuda) + ")"));
    }
  }
};

}  // namespace gemm::cutlass_ref::detail
