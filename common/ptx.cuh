// Hopper (sm_90a) PTX wrappers shared by the tensor-core steps (11 and up): mbarriers, proxy fences,
// TMA (cp.async.bulk.tensor), wgmma and its shared-memory descriptors, setmaxnreg, stmatrix, and
// the store of a wgmma accumulator fragment. Each wrapper is one PTX instruction (or a short fixed
// sequence) and cites the PTX ISA section it follows (PTX ISA 8.x/9.0, "Instruction Set" chapter;
// section titles are used because their numbers shift between ISA versions).
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include <cuda.h>  // CUtensorMap (the type only: no driver call is made from device code)
#include <cuda_bf16.h>

#include <cstdint>

namespace ptx {

/// The 32-bit shared-state-space address of a generic pointer into shared memory (what every
/// .shared operand below takes).
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// Rounds a pointer into dynamic shared memory up to `Align` bytes of the shared address space.
/// 128-byte-swizzled TMA tiles must start on a 1024-byte boundary (the swizzle pattern repeats
/// every 8 rows of 128 bytes; CUDA Programming Guide, "Tensor Memory Access", swizzle modes),
/// which `extern __shared__` alone does not promise.
template <uint32_t Align>
__device__ __forceinline__ uint8_t* smem_align_up(uint8_t* p) {
  static_assert((Align & (Align - 1)) == 0, "alignment must be a power of two");
  const uint32_t a = smem_addr(p);
  return p + (((a + Align - 1) & ~(Align - 1)) - a);
}

// ---------------------------------------------------------------------------------------------
// mbarrier: PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier".
// A 64-bit object in shared memory with an expected arrival count and a transaction count;
// a phase completes when both reach zero, and waiters test the parity of the completed phase.
// ---------------------------------------------------------------------------------------------

/// mbarrier.init: sets the expected arrival count of phase 0 ("mbarrier.init").
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(arrivals) : "memory");
}

/// fence.mbarrier_init: makes the preceding mbarrier.init visible to other threads and to the
/// async proxy (TMA completes transactions on the barrier) before they use it
/// ("Parallel Synchronization and Communication Instructions: membar/fence", fence.mbarrier_init;
/// .cluster is its only scope, and a CTA launched without clusters is a cluster of one).
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// mbarrier.arrive.expect_tx: this thread arrives and raises the phase's transaction count by
/// `bytes`, which the TMA copies completing on the barrier count down
/// ("mbarrier.expect_tx", "mbarrier.arrive").
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}

/// mbarrier.arrive: one arrival, no transactions ("mbarrier.arrive").
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

/// mbarrier.try_wait.parity: true once the phase with parity `parity` has completed
/// ("mbarrier.test_wait/mbarrier.try_wait"). A fresh barrier is in phase 0, so waiting on parity 1
/// returns at once: the producer's first pass over the empty barriers relies on that.
__device__ __forceinline__ bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

/// Spins on try_wait until the phase of parity `parity` completes (try_wait itself suspends the
/// thread for a hardware-chosen time before returning false, so this is not a hot spin).
__device__ __forceinline__ void mbarrier_wait_parity(uint64_t* bar, uint32_t parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

/// fence.proxy.async.shared::cta: orders this thread's generic-proxy shared-memory accesses
/// (ordinary loads/stores, stmatrix) with later async-proxy ones (TMA, wgmma) and vice versa
/// ("Memory Consistency Model: Proxies"; "membar/fence", fence.proxy.async).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---------------------------------------------------------------------------------------------
// TMA: PTX ISA, "Data Movement and Conversion Instructions: cp.async.bulk.tensor".
// The tensor map (built on the host, common/tma.hpp) is a __grid_constant__ kernel parameter;
// its generic address is the operand.
// ---------------------------------------------------------------------------------------------

/// cp.async.bulk.tensor.2d global -> shared, tile mode: copies the box at (c0 = inner/column,
/// c1 = row) into `dst` and completes `box bytes` transactions on `bar`. Out-of-bounds elements of
/// the box are written as zeros (the whole box's bytes are always counted).
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
      ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

/// cp.async.bulk.tensor.2d shared -> global, tile mode, bulk-group completion: stores `src` to the
/// box at (c0, c1); elements outside the tensor are not written (the clipping the epilogue needs).
/// `src` must be 128-byte aligned. Used by the epilogue steps; tested by
/// tests/fixtures/hopper_epilogue_probe.cu until then.
/// The shared-memory writes feeding it need fence_proxy_async_shared() first.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(src)), "r"(c0), "r"(c1)
               : "memory");
}

/// cp.async.bulk.commit_group: closes the bulk group of this thread's preceding TMA stores
/// ("cp.async.bulk.commit_group").
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

/// cp.async.bulk.wait_group.read N: waits until at most N bulk groups still read their shared
/// source ("cp.async.bulk.wait_group"); N = 0 before the source buffer is reused.
template <int N>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// ---------------------------------------------------------------------------------------------
// Clusters (steps 17 on): PTX ISA, "Special Registers: %cluster_ctarank", "Data Movement and
// Conversion Instructions: mapa", "Parallel Synchronization and Communication Instructions:
// barrier.cluster" and "mbarrier.arrive" with .shared::cluster, and cp.async.bulk.tensor's
// .multicast::cluster. The blocks of a cluster run at the same time on one GPC and may read, write
// and arrive on each other's shared memory (distributed shared memory) through .shared::cluster
// addresses; an address of this CTA's own shared memory (smem_addr) is also a valid
// .shared::cluster address, naming this CTA's copy.
// ---------------------------------------------------------------------------------------------

/// %cluster_ctarank: this CTA's rank in its cluster, 0 .. cluster size - 1.
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

/// mapa.shared::cluster: the .shared::cluster address of the variable at `local` (this CTA's shared
/// memory) in the shared memory of the CTA with rank `cta` of the cluster ("mapa").
__device__ __forceinline__ uint32_t mapa_shared(const void* local, uint32_t cta) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(local)), "r"(cta));
  return remote;
}

/// barrier.cluster.arrive.release: this thread arrives on the cluster barrier; its earlier memory
/// operations (mbarrier inits, remote arrives) are released to the threads that pass the matching
/// wait ("barrier.cluster"). .aligned: every thread of the warp executes it together (call it from
/// converged code).
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}

/// barrier.cluster.wait.acquire: waits until every non-exited thread of every CTA of the cluster has
/// arrived ("barrier.cluster").
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

/// Both: a cluster-wide barrier (a superset of __syncthreads for the CTAs of the cluster).
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

/// mbarrier.arrive.shared::cluster: one arrival on the mbarrier at the same offset as `bar` in the
/// shared memory of cluster CTA `cta` (this CTA's own when `cta` is its rank) ("mbarrier.arrive"; the
/// remote form returns no state, hence the sink `_`). Default semantics (.release at .cta scope), as
/// CUTLASS's ClusterBarrier::arrive(cta_id): what it hands over is a stage whose readers were wgmmas
/// (async proxy) already retired by wgmma.wait_group, not generic-proxy writes, so no cluster-scope
/// release is needed; .release.cluster would cost a MEMBAR.ALL.GPU before every arrive (seen in SASS).
__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(mapa_shared(bar, cta)) : "memory");
}

/// cp.async.bulk.tensor.2d ... .multicast::cluster: tma_load_2d whose box is written to `dst`'s offset
/// in the shared memory of every CTA whose bit is set in `cta_mask` (bit r: cluster rank r), each copy
/// completing `box bytes` transactions on the mbarrier at `bar`'s offset in that same CTA
/// ("cp.async.bulk.tensor", .multicast::cluster). So every destination CTA's barrier must expect the
/// bytes that other CTAs multicast into it, and `dst` and `bar` must lie at the same offsets in every CTA.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, int c0, int c1,
                                                      uint64_t* bar, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;"
      ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar)),
        "h"(cta_mask)
      : "memory");
}

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
/// Matrix Descriptor") for a K-major bf16 tile that TMA wrote with CU_TENSOR_MAP_SWIZZLE_128B:
/// rows of 64 bf16 = 128 bytes, row r's 16-byte chunks XOR-permuted by r % 8, and the tile
/// 1024-byte aligned. Fields:
///   bits  0-13  start address >> 4 (the 18-bit shared address, in 16-byte units)
///   bits 16-29  leading-dimension byte offset >> 4: unused for swizzled K-major layouts whose K
///               extent (16 elements = 32 bytes per wgmma) lies within one swizzle row; set to 1
///   bits 32-45  stride-dimension byte offset >> 4: 8 rows x 128 bytes = 1024 between 8-row groups
///   bits 49-51  base offset: 0, the tile starts on the 1024-byte swizzle-pattern boundary
///   bits 62-63  layout/swizzle: 1 = 128-byte swizzle
/// The k-th 16-wide slice of the tile starts 32*k bytes further on: the hardware applies the
/// swizzle to the final address bits, so advancing the start address is enough.
__device__ __forceinline__ uint64_t make_desc_k_sw128(const void* smem_tile) {
  const uint64_t addr = smem_addr(smem_tile);
  return ((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}

// wgmma.mma_async .m64nNk16 .f32.bf16.bf16, for the N used by the steps (64, 128, 256).
// Written out once per N (the operand lists are the only difference); same contract for each:
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


/// Stores the D fragment of one m64nNk16 wgmma (this thread's N/2 fp32 accumulators) as bf16 into
/// row-major C (M x N, leading dimension N) at (row0, col0), clipping rows >= M and columns >= N.
/// Fragment layout ("Register Fragments and Shared Memory Matrix Layouts", wgmma .m64nNk16 D):
/// warp w of the warpgroup holds rows 16w..16w+15; accumulator i of lane l sits at
///   row 16w + l/4 + 8*((i/2) % 2),  column 8*(i/4) + 2*(l%4) + i%2,
/// so each pair (i, i+1) with i even is two adjacent columns: one 4-byte bf16x2 store when N is
/// even (then the pair's address is 4-byte aligned), two 2-byte stores otherwise.
template <int R>
__device__ __forceinline__ void store_d_fragment_bf16(const float (&d)[R], __nv_bfloat16* C, int M, int N,
                                                      int64_t row0, int64_t col0) {
  static_assert(R % 4 == 0, "an m64nNk16 fragment holds N/2 accumulators per thread, N a multiple of 8");
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  const int64_t r_base = row0 + 16 * warp + lane / 4;
  const int64_t c_base = col0 + 2 * (lane % 4);
  const bool pairs = N % 2 == 0;
#pragma unroll
  for (int j = 0; j < R / 4; ++j) {
    const int64_t col = c_base + 8 * j;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = r_base + 8 * h;
      if (row >= M || col >= N) continue;
      const float v0 = d[4 * j + 2 * h], v1 = d[4 * j + 2 * h + 1];
      __nv_bfloat16* p = C + row * N + col;
      if (pairs) {  // col even and N even: col + 1 < N as well
        *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(v0, v1);
      } else {
        p[0] = __float2bfloat16_rn(v0);
        if (col + 1 < N) p[1] = __float2bfloat16_rn(v1);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Register reallocation: PTX ISA, "Miscellaneous Instructions: setmaxnreg".
// Every warp of a warpgroup executes the same setmaxnreg; the kernel must start with a register
// cap (__launch_bounds__(threads, 1) or -maxrregcount) for ptxas to honour it (else warning C7508).
// The count is a multiple of 8 in [24, 256].
// ---------------------------------------------------------------------------------------------

/// setmaxnreg.inc: blocks until the CTA's register pool can grow this warp to `Regs` per thread.
template <int Regs>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(Regs % 8 == 0 && Regs >= 24 && Regs <= 256, "setmaxnreg takes a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Regs));
}

/// setmaxnreg.dec: shrinks this warp to `Regs` per thread, returning the rest to the CTA's pool.
template <int Regs>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(Regs % 8 == 0 && Regs >= 24 && Regs <= 256, "setmaxnreg takes a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Regs));
}

// ---------------------------------------------------------------------------------------------
// stmatrix: PTX ISA, "Data Movement and Conversion Instructions: stmatrix".
// ---------------------------------------------------------------------------------------------

/// stmatrix.sync.aligned.m8n8.x4.shared.b16: the warp stores four 8x8 b16 matrices; lane l holds
/// row l/4, columns 2*(l%4)..+1 of each (one 32-bit register per matrix), and lanes 8i..8i+7 give
/// the 16-byte row addresses of matrix i. Tested by tests/fixtures/hopper_epilogue_probe.cu.
__device__ __forceinline__ void stmatrix_x4(void* row_addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(smem_addr(row_addr)),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

}  // namespace ptx
