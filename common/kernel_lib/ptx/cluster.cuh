// Clusters (steps 17 on): cluster rank, distributed shared memory addresses, the cluster barrier,
// remote mbarrier arrivals and the TMA multicast load. Each wrapper is one PTX instruction (or a short
// fixed sequence) and cites the PTX ISA section it follows (PTX ISA 8.x/9.0, "Instruction Set" chapter;
// section titles, whose numbers shift). Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once
#include <cuda.h>  // CUtensorMap (the type only: no driver call is made from device code)

#include <cstdint>

#include "smem.cuh"

namespace ptx {

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

}  // namespace ptx
