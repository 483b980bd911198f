// Pipeline traces (opt-in), the kernel side's contract: what a traced kernel records (one Record per
// interval of a warpgroup's role, %globaltimer stamps) and how the harness points it at a buffer.
// Kernels built with -DGEMM_TRACE_BUILD (`make trace STEP=NN`, binaries under build/trace/bin/) record
// through common/kernel_lib/ptx/trace.cuh; common/harness/trace_run.hpp runs one launch traced and
// writes Chrome-trace JSON. The timed binaries under build/bin/ are compiled without GEMM_TRACE_BUILD:
// their kernels contain no trace code at all (ptx/trace.cuh expands to nothing).
#pragma once
#include <cstdint>

namespace gemm::trace {

/// One interval of one warpgroup's role (32 bytes). t0/t1: %globaltimer, nanoseconds.
struct Record {
  uint32_t sm, block;  ///< %smid; the block's linear index (blockIdx.x + blockIdx.y * gridDim.x)
  uint16_t wg, kind;   ///< warpgroup in the block; a Kind
  uint32_t kt;         ///< K tile; in a persistent step counted across the block's tiles (its i-th tile's
                       ///< K tile kt is i * k_tiles + kt). Epilogue: k_tiles, or its tile's last K tile
  uint64_t t0, t1;
};
static_assert(sizeof(Record) == 32, "the device writes Records as 32-byte structs");

/// What an interval is. producer_wait: the producer waiting for an empty stage; consumer_wait: a
/// consumer (or, in a step without roles, the whole warpgroup) waiting for a full stage; mma: from
/// the first wgmma of a K tile to its wgmma.wait_group; epilogue: the stores of C.
enum Kind : uint16_t { producer_wait = 0, consumer_wait = 1, mma = 2, epilogue = 3 };
inline constexpr uint32_t kKinds = 4;          ///< places per K tile in a slot: one per Kind
inline constexpr uint32_t kSlotsPerBlock = 4;  ///< slots per block: one per warpgroup (a block has at most 4)
const char* kind_name(uint16_t kind);

/// SMs whose blocks record (%smid < kTracedSMs): a whole 8192^3 GEMM on every SM would be millions
/// of records; two SMs show every block that ran there, from start to end.
inline constexpr uint32_t kTracedSMs = 2;

/// A traced kernel's translation unit registers how to point its device-side buffer at ours: `slots`
/// slots of `per_slot` records, slot = block * kSlotsPerBlock + warpgroup, place = K tile * kKinds +
/// kind (slots 0:
/// disarmed, the kernel records nothing; that is its state until run_traced arms it).
using ArmFn = void (*)(Record* records, unsigned per_slot, unsigned slots);
bool register_arm(ArmFn arm);
/// True when a traced kernel is linked into this binary (build/trace/bin/), false in build/bin/.
bool available();

/// Points the registered kernel's buffer at `records` (nullptr, 0, 0: disarmed). Throws gemm::Error
/// when no traced kernel is linked.
void arm(Record* records, unsigned per_slot, unsigned slots);

}  // namespace gemm::trace
