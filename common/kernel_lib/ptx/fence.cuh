// Proxy fences: ordering generic-proxy shared-memory accesses with async-proxy ones (TMA, wgmma).
// Each wrapper is one PTX instruction (or a short fixed sequence) and cites the PTX ISA section it
// follows (PTX ISA 8.x/9.0, "Instruction Set" chapter; section titles, whose numbers shift).
// Device code only: include from kernels/*.cu compiled for sm_90a.
#pragma once

namespace ptx {

/// fence.proxy.async.shared::cta: orders this thread's generic-proxy shared-memory accesses
/// (ordinary loads/stores, stmatrix) with later async-proxy ones (TMA, wgmma) and vice versa
/// ("Memory Consistency Model: Proxies"; "membar/fence", fence.proxy.async).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

}  // namespace ptx
