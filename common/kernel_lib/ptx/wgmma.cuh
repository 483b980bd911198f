// wgmma.mma_async (m64nNk16, bf16 in; m64n128k32, e4m3 in; fp32 accumulators), its fences and
// groups, and the shared-memory matrix descriptor of a 128-byte-swizzled K-major tile.
// Each wrapper is one PTX instruction (or a short fixed sequence) and cites the PTX ISA section it
// follows (PTX ISA 8.x/9.0, "Instruction Set" chapter; section titles, whose numbers shift).
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include <cstdint>

#include "smem.cuh"

namespace ptx {

// ---------------------------------------------------------------------------------------------
// wgmma: PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions".
// Issued by a warpgroup (4 consecutive warps, the first one's index divisible by 4); A and B come
// from shared memory through 64-bit matrix descriptors, D lives in registers.
// ---------------------------------------------------------------------------------------------

/// wgmma.fence: required before the first wgmma.mma_async and whenever the accumulator
/// registers were touched by other instructions since ("wgmma.fence").
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

/// wgmma.commit_group: closes the group of this warpgroup's uncommitted wgmma.mma_async
/// ("wgmma.commit_group").
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

/// wgmma.wait_group N: waits until at most N committed groups are pending; their accumulators
/// may be read, and their shared-memory operands overwritten, only after this ("wgmma.wait_group").
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/// Keeps the compiler from moving reads or writes of the accumulators across the asynchronous
/// wgmma window (it does not know that the registers are in use until wgmma.wait_group). Emits
/// no instruction. Without it ptxas may have to serialize the wgmma sequence (it says so in a
/// C7515 line of the -Xptxas -v report; tests/sass_twins/hopper_serialized_wgmma.cu shows one).
template <int R>
__device__ __forceinline__ void wgmma_fence_operands(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

/// Shared-memory matrix descriptor ("Asynchronous Warpgroup Level Matrix Shared Memory Layout:
/// Matrix Descriptor") for a K-major tile that TMA wrote with CU_TENSOR_MAP_SWIZZLE_128B:
/// rows of 128 bytes (64 bf16 or 128 e4m3), row r's 16-byte chunks XOR-permuted by r % 8, and the
/// tile 1024-byte aligned. Every field is in bytes, so the element size does not enter. Fields:
///   bits  0-13  start address >> 4 (the 18-bit shared address, in 16-byte units)
///   bits 16-29  leading-dimension byte offset >> 4: unused for swizzled K-major layouts whose K
///               extent (32 bytes per wgmma: 16 bf16 or 32 e4m3) lies within one swizzle row; set to 1
///   bits 32-45  stride-dimension byte offset >> 4: 8 rows x 128 bytes = 1024 between 8-row groups
///   bits 49-51  base offset: 0, the tile starts on the 1024-byte swizzle-pattern boundary
///   bits 62-63  layout/swizzle: 1 = 128-byte swizzle
/// The k-th 16-wide slice of a bf16 tile (and the k-th 32-wide slice of an e4m3 tile: 32 one-byte
/// elements) starts 32*k bytes further on: the hardware applies the swizzle to the final address
/// bits, so advancing the start address is enough.
__device__ __forceinline__ uint64_t make_desc_k_sw128(const void* smem_tile) {
  const uint64_t addr = smem_addr(smem_tile);
  return ((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}

// wgmma.mma_async .m64nNk16 .f32.bf16.bf16, for the N used by the steps (8, 16, 32, 64, 128, 256).
// Written out once per N (the operand lists are the only difference); same contract for each:
/// D(64x8, fp32, registers) += A(64x16, bf16, smem) * B(8x16, bf16, smem)^T, both K-major.
/// `d` holds the 4 fp32 accumulators of this thread in the wgmma D-fragment order (PTX ISA,
/// "Register Fragments and Shared Memory Matrix Layouts", .m64nNk16 D fragment); see above.
__device__ __forceinline__ void wgmma_m64n8k16_bf16(float (&d)[4], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3"
      "}, %4, %5, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/// D(64x16, fp32, registers) += A(64x16, bf16, smem) * B(16x16, bf16, smem)^T, both K-major.
/// `d` holds the 8 fp32 accumulators of this thread in the wgmma D-fragment order (PTX ISA,
/// "Register Fragments and Shared Memory Matrix Layouts", .m64nNk16 D fragment); see above.
__device__ __forceinline__ void wgmma_m64n16k16_bf16(float (&d)[8], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7"
      "}, %8, %9, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/// D(64x32, fp32, registers) += A(64x16, bf16, smem) * B(32x16, bf16, smem)^T, both K-major.
/// `d` holds the 16 fp32 accumulators of this thread in the wgmma D-fragment order (PTX ISA,
/// "Register Fragments and Shared Memory Matrix Layouts", .m64nNk16 D fragment); see above.
__device__ __forceinline__ void wgmma_m64n32k16_bf16(float (&d)[16], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
      "}, %16, %17, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/// D(64x64, fp32, registers) += A(64x16, bf16, smem) * B(64x16, bf16, smem)^T, both K-major.
/// `d` holds the 32 fp32 accumulators of this thread in the wgmma D-fragment order (PTX ISA,
/// "Register Fragments and Shared Memory Matrix Layouts", .m64nNk16 D fragment); see above.
__device__ __forceinline__ void wgmma_m64n64k16_bf16(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/// D(64x128, fp32, registers) += A(64x16, bf16, smem) * B(128x16, bf16, smem)^T, both K-major.
/// `d` holds the 64 fp32 accumulators of this thread in the wgmma D-fragment order (PTX ISA,
/// "Register Fragments and Shared Memory Matrix Layouts", .m64nNk16 D fragment); see above.
__device__ __forceinline__ void wgmma_m64n128k16_bf16(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/// D(64x256, fp32, registers) += A(64x16, bf16, smem) * B(256x16, bf16, smem)^T, both K-major.
/// `d` holds the 128 fp32 accumulators of this thread in the wgmma D-fragment order (PTX ISA,
/// "Register Fragments and Shared Memory Matrix Layouts", .m64nNk16 D fragment); see above.
__device__ __forceinline__ void wgmma_m64n256k16_bf16(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// wgmma.mma_async .m64n128k32 .f32.e4m3.e4m3 (PTX ISA, "wgmma.mma_async", .kind of 8-bit floating
// point: .atype/.btype .e4m3 or .e5m2, K = 32 per instruction, fp16 or fp32 accumulators). Unlike
// the bf16 form there are no transpose immediates (imm-trans-a/b apply to .f16/.bf16 only): both
// operands must be K-major in shared memory, and the instruction ends after imm-scale-a/b.
/// D(64x128, fp32, registers) += A(64x32, e4m3, smem) * B(128x32, e4m3, smem)^T, both K-major.
/// `d` holds the 64 fp32 accumulators of this thread in the D-fragment order of every m64n128
/// wgmma (PTX ISA, "Register Fragments and Shared Memory Matrix Layouts": D's layout depends on M
/// and N only, so it is the m64n128k16 one). The tensor cores add each k32 group with reduced
/// precision (about 14 significant bits; common/harness/compare.hpp, kUnitRoundoffFp8Accum).
__device__ __forceinline__ void wgmma_m64n128k32_e4m3(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/// The m64nNk16 wrapper above whose N is 2R: one call site for a kernel templated on its tile's N
/// (step 24: n128 for its 128x128 tile, n64 for the swapped small-M tile; step 27: n8 ... n32 for a
/// swapped tile sized to M). R is the fragment's fp32 accumulators per thread, N/2 (PTX ISA, .m64nNk16
/// D fragment); only the wrapped N (8, 16, 32, 64, 128, 256) compile.
template <int R>
__device__ __forceinline__ void wgmma_m64nNk16_bf16(float (&d)[R], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  static_assert(R == 4 || R == 8 || R == 16 || R == 32 || R == 64 || R == 128,
                "wrapped wgmma N: 8, 16, 32, 64, 128, 256 (R = N / 2 accumulators)");
  if constexpr (R == 4) wgmma_m64n8k16_bf16(d, desc_a, desc_b, scale_d);
  else if constexpr (R == 8) wgmma_m64n16k16_bf16(d, desc_a, desc_b, scale_d);
  else if constexpr (R == 16) wgmma_m64n32k16_bf16(d, desc_a, desc_b, scale_d);
  else if constexpr (R == 32) wgmma_m64n64k16_bf16(d, desc_a, desc_b, scale_d);
  else if constexpr (R == 64) wgmma_m64n128k16_bf16(d, desc_a, desc_b, scale_d);
  else wgmma_m64n256k16_bf16(d, desc_a, desc_b, scale_d);
}

}  // namespace ptx
