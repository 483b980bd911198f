// Shared by the test files: GPU skipping that the summary line counts.
#pragma once
#include <catch2/catch.hpp>

namespace gemm_test {

/// True when a CUDA device is present. Otherwise records the current test case as skipped
/// (printing "skipped: no CUDA device") so the summary line counts it as skipped, not passed.
bool have_gpu();

/// Records the current test case as skipped with `why`.
void mark_skipped(const char* why);

/// True when device 0 has compute capability `cc` (e.g. 90); otherwise records the current test
/// case as skipped ("needs compute capability 9.0"). Call after have_gpu().
bool have_cc(int cc);

}  // namespace gemm_test

/// First line of every GPU test case.
#define REQUIRE_GPU_OR_SKIP()            \
  do {                                   \
    if (!gemm_test::have_gpu()) return;  \
  } while (0)

/// First line of every test case that runs sm_90a code (Hopper steps).
#define REQUIRE_HOPPER_OR_SKIP()                                   \
  do {                                                             \
    if (!gemm_test::have_gpu() || !gemm_test::have_cc(90)) return; \
  } while (0)
