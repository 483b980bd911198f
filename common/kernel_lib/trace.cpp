// The kernel side's registration of a traced kernel (common/kernel_lib/trace.hpp).
#include "trace.hpp"

#include "check.hpp"

namespace gemm::trace {

namespace {
ArmFn& arm_fn() {
  static ArmFn fn = nullptr;
  return fn;
}
}  // namespace

const char* kind_name(uint16_t kind) {
  switch (kind) {
    case producer_wait: return "producer: wait empty";
    case consumer_wait: return "wait full";
    case mma: return "wgmma";
    case epilogue: return "epilogue";
    default: return "?";
  }
}

bool register_arm(ArmFn arm) {
  arm_fn() = arm;
  return true;
}

bool available() { return arm_fn() != nullptr; }

void arm(Record* records, unsigned per_slot, unsigned slots) {
  if (!available())
    throw Error("this binary was built without tracing: build the traced one with `make trace STEP=NN`");
  arm_fn()(records, per_slot, slots);
}

}  // namespace gemm::trace
