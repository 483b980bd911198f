// The position in a ring of shared-memory stages (steps 15 on): which stage the next K tile uses and
// the parity of that stage's current round. A persistent kernel's producer and consumers walk the ring
// across tile boundaries, so the position is carried state, not a function of the K-tile index
// (steps 13-14 computed kt % STAGES and (kt / STAGES) & 1, which restart at every tile).
// Device code only: include from kernels/*.cu.
#pragma once
#include <cstdint>

namespace pipe {

/// Stage `stage` of a ring of `Stages`; `phase` is the parity of the round the ring is in: it flips
/// each time `stage` wraps to 0. An mbarrier of the stage completes one phase per round, so a waiter
/// for round r tests parity r & 1: the consumer waits for `phase` on full[stage], the producer for
/// `phase ^ 1` on empty[stage] (a fresh barrier is in phase 0, so the producer's first round passes
/// at once; ptx::mbarrier_try_wait_parity).
template <int Stages>
struct PipeState {
  int stage = 0;
  uint32_t phase = 0;
  __device__ __forceinline__ void advance() {
    if (++stage == Stages) {
      stage = 0;
      phase ^= 1;
    }
  }
  /// Moves on by n >= 0 K tiles, as n calls of advance() would: a ping-pong consumer skipping the
  /// other consumer's tile or stream-K piece (steps 22-23).
  __device__ __forceinline__ void advance_by(int n) {
    const int next = stage + n % Stages;
    phase ^= uint32_t((n / Stages) & 1);  // one flip per whole round ...
    if (next >= Stages) {                 // ... and one more if the rest wraps
      stage = next - Stages;
      phase ^= 1;
    } else {
      stage = next;
    }
  }
};

}  // namespace pipe
